"""What every command prints besides its tables: warnings (``--strict`` makes them an
error), notes on how the run ran, the tables laid out for the terminal, the ``--json``
report, and the command line as typed (the HTML page's provenance); the end every
command shares (:class:`Reporting`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def command_line() -> str:
    """The command as it was typed (``geoeval …``), for the HTML page's provenance."""
    import shlex

    import click

    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    from geoeval.errors import printable

    argv = obj.get("argv") if isinstance(obj, dict) else None
    return printable(shlex.join(["geoeval", *(sys.argv[1:] if argv is None else argv)]))


def terminal(stderr: bool = False) -> Any:
    """The console geoeval prints on (stdout, or stderr): text is taken as it is, never
    as rich markup (a file named ``s[x].gpkg`` was printed ``s.gpkg``)."""
    from rich.console import Console

    return Console(stderr=stderr, markup=False)


def warn(warnings: Any, *, strict: bool = False, prefix: str = "") -> None:
    """The one warning printer: each warning as a line on stderr, cut to a readable
    length (:func:`geoeval.errors.cut`: a class name of megabytes from a file); with
    ``--strict`` they are then an error (exit 2), and the run's outputs are not
    written."""
    from rich.text import Text

    from geoeval.errors import MESSAGE_CHARS, StrictError, cut

    lines = [f"{prefix}{w}" for w in warnings]
    err = terminal(stderr=True)
    for line in lines:
        err.print(Text.assemble(("warning:", "yellow"), " ", cut(line, MESSAGE_CHARS)),
                  highlight=False, soft_wrap=True)
    if strict and lines:
        raise StrictError(lines)


@contextmanager
def strict_printed() -> Iterator[None]:
    """``--strict`` refused the run as soon as its warnings were known (before the
    matching, for those of reading): each printed, then the refusal (re-raised as it
    came, naming ``--strict``), as at the end."""
    from geoeval.errors import StrictError

    try:
        yield
    except StrictError as exc:
        warn(exc.warnings)
        raise


def note(notes: Any, *, quiet: bool = False) -> None:
    """Notes on how a run ran (where the work went, and why) on stderr: not warnings
    (``--strict`` ignores them), not part of the report; none with ``--quiet``."""
    if quiet:
        return
    from geoeval.errors import MESSAGE_CHARS, cut

    err = terminal(stderr=True)
    for line in notes:
        err.print(f"note: {cut(str(line), MESSAGE_CHARS)}", highlight=False, soft_wrap=True)


def show(renderables: Any, *, quiet: bool = False) -> None:
    """Print tables and text on stdout, laid out for its width (no number cut)."""
    if quiet:
        return
    from geoeval.report.layout import show as layout

    layout(terminal(), list(renderables))


def write_report(json_path: Path | None, report: Any) -> None:
    """``--json``: the result's report written atomically by
    :func:`geoeval.report.json_report.write_report` (every output goes through the
    report layer)."""
    if json_path is None:
        return
    from geoeval.report.json_report import write_report as write_json_report

    write_json_report(report, json_path)


@dataclass(frozen=True)
class Reporting:
    """``--json``, ``--quiet`` and ``--strict``, and the end every command shares."""

    json_path: Path | None = None
    quiet: bool = False
    strict: bool = False

    def finish(self, result: Any, tables: Callable[[Any], Any] | None = None) -> None:
        """The result's warnings (with ``--strict`` an error, before anything is
        written), its ``--json`` report, then its ``tables(result)`` unless ``--quiet``."""
        note(getattr(result, "notes", ()), quiet=self.quiet)
        warn(getattr(result, "warnings", ()), strict=self.strict)
        write_report(self.json_path, result)
        if tables is not None and not self.quiet:
            show(tables(result))
