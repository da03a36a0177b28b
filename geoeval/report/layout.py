"""Terminal tables laid out for the width there is: a number is never cut.

rich shrinks every column of a table wider than the console and ends the cut
cells with ``…`` -- a score of ``0.6…``. :func:`fit` instead keeps a table whole
when it fits, and otherwise splits its value columns into bands that each fit,
repeating the key columns (the row labels) in every band, as a printed page
continues a wide table on the next one. A band too narrow for even one value
column is shown as one block per row (``header  value`` lines). Labels may
wrap; numbers never do.
"""

from __future__ import annotations

import copy
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

#: Width used when nothing says otherwise (rich's own default for a pipe).
DEFAULT_WIDTH = 80


def natural_width(renderable: Any) -> int:
    """Columns ``renderable`` takes when nothing limits it (longest printed line)."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=10_000, color_system=None, legacy_windows=False,
                      force_terminal=False, highlight=False)
    console.print(renderable)
    from rich.cells import cell_len

    return max((cell_len(line) for line in buffer.getvalue().splitlines()), default=0)


def _keys(table: Any) -> int:
    """Key columns of ``table``: ``table.geoeval_keys`` if set, else the leading
    columns holding labels (left-justified)."""
    if getattr(table, "geoeval_keys", None):
        return int(table.geoeval_keys)
    n = 0
    for col in table.columns:
        if col.justify in ("right", "center"):
            break
        n += 1
    return max(1, min(n, len(table.columns) - 1))


def _sub_table(table: Any, columns: Sequence[int], *, first: bool, last: bool) -> Any:
    """A copy of ``table`` with only ``columns`` (its rows, styles and sections kept);
    the title on the first band only, the caption on the last only."""
    from dataclasses import replace

    new = copy.copy(table)
    new.columns = [replace(table.columns[i], _index=k) for k, i in enumerate(columns)]
    new.rows = list(table.rows)
    new.min_width = None
    if not first:
        new.title = None
    if not last:
        new.caption = None
    return new


def _plain(cell: Any) -> str:
    from rich.text import Text

    if isinstance(cell, Text):
        return cell.plain
    return str(cell)


def records(table: Any, keys: int | None = None) -> Any:
    """``table`` as one block per row: the row's key cells as a heading, then one
    ``header  value`` line per other column. Fits any width a label fits."""
    from rich.table import Table
    from rich.text import Text

    k = _keys(table) if keys is None else keys
    out = Table(title=table.title, caption=table.caption, show_header=False,
                title_style=table.title_style, box=None, pad_edge=False)
    out.add_column("what", overflow="fold")
    out.add_column("value", justify="right", no_wrap=True)
    cells = [col._cells for col in table.columns]
    for r in range(len(table.rows)):
        heading = " ".join(_plain(cells[c][r]) for c in range(k) if _plain(cells[c][r]))
        out.add_row(Text(heading, style="bold"), "")
        for c in range(k, len(table.columns)):
            header = " ".join(_plain(table.columns[c].header).split())
            out.add_row("  " + header, cells[c][r], end_section=c == len(table.columns) - 1)
    return out


def fit(table: Any, width: int | None = None, keys: int | None = None) -> list[Any]:
    """``table`` as renderables of at most ``width`` columns, no cell cut.

    Parameters
    ----------
    table : rich.table.Table
        Its leading left-justified columns are the keys (row labels), repeated in
        every band; the others are values.
    width : int, optional
        Columns available (default 80).
    keys : int, optional
        Number of key columns, if not the leading left-justified ones.

    Returns
    -------
    list
        ``[table]`` when it fits; else the bands of its value columns, left to
        right, each a table that fits; else :func:`records`.
    """
    width = DEFAULT_WIDTH if width is None else width
    k = _keys(table) if keys is None else keys
    for col in table.columns[k:]:  # values never wrap nor end in an ellipsis
        col.no_wrap = True
    if natural_width(table) <= width:
        return _loose_words(table)
    key_cols = list(range(k))
    values = list(range(k, len(table.columns)))
    bands: list[list[int]] = []
    current: list[int] = []
    for c in values:
        trial = _sub_table(table, key_cols + current + [c], first=True, last=True)
        trial.title = trial.caption = None
        if natural_width(trial) <= width or not current:
            current.append(c)
        else:
            bands.append(current)
            current = [c]
    if current:
        bands.append(current)
    even = _even(values, len(bands))  # as many bands, of (nearly) equal size, if they fit
    if all(natural_width(_sub_table(table, key_cols + b, first=False, last=False)) <= width
           for b in even):
        bands = even
    out = [_sub_table(table, key_cols + band, first=i == 0, last=False)
           for i, band in enumerate(bands)]
    if any(natural_width(_sub_table(table, key_cols + band, first=False, last=False)) > width
           for band in bands):  # even one value column beside the keys is too wide
        return [records(table, k)]
    if table.caption:  # under the last band, as wide as the console
        from rich.text import Text

        caption = table.caption
        out.append(Text(caption, style=table.caption_style or "dim") if isinstance(caption, str)
                   else caption)
    return out


def _loose_words(table: Any) -> list[Any]:
    """``table`` with a title or caption wider than its columns taken out as text:
    the title above and the caption below, left-aligned and wrapped to the
    console's width, instead of centred and wrapped to the table's (a title on
    two lines, a caption as a narrow centred column)."""
    from rich.text import Text

    bare = copy.copy(table)
    bare.title = bare.caption = None
    wide = natural_width(bare)
    above: list[Any] = []
    below: list[Any] = []
    for attr, words, style in (("title", table.title, table.title_style or "bold"),
                               ("caption", table.caption, table.caption_style or "dim")):
        if words is None:
            continue
        text = words if isinstance(words, Text) else Text(str(words), style=style)
        if text.cell_len <= wide:
            setattr(bare, attr, words)  # fits: centred over (under) the table as usual
        else:
            (above if attr == "title" else below).append(text)
    return [*above, bare, *below] if above or below else [table]


def _even(values: list[int], n: int) -> list[list[int]]:
    size, extra = divmod(len(values), n)
    out, start = [], 0
    for i in range(n):
        stop = start + size + (1 if i < extra else 0)
        out.append(values[start:stop])
        start = stop
    return out


def show(console: Any, renderables: Iterable[Any]) -> None:
    """Print ``renderables`` on ``console``, every table laid out by :func:`fit`
    for the console's width."""
    from rich.table import Table

    parts: list[Any] = []
    for item in renderables:
        parts += fit(item, console.width) if isinstance(item, Table) else [item]
    for part in parts:
        with console.capture() as captured:
            console.print(part)
        # rich pads centred titles and wrapped lines with spaces: none at a line's end
        console.file.write(_TRAILING.sub(r"\1", captured.get()))
    console.file.flush()


#: Spaces at the end of a line, before any closing colour codes.
_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)
