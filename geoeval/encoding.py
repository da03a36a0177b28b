"""Report text: JSON with stable keys (``docs/report.md``), numbers written as
Python writes them, NaN and infinities as null.

:func:`dumps` and :func:`dump_pieces` lay a report out (short objects on one
line, one line per list item); :class:`Rows` holds many already-encoded rows
assembled column by column; :func:`number` and :func:`clean` turn values into
what a report holds. Writing the text to a file is :mod:`geoeval.outputs`'s job.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np


def number(x: Any) -> float | None:
    """A float for a report, ``None`` (JSON null) when NaN or infinite: undefined
    values are null, never guessed."""
    x = float(x)
    return x if math.isfinite(x) else None


def clean(value: Any) -> Any:
    """JSON-safe copy: numpy scalars to Python, NaN/inf to None."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return clean(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class Rows:
    """JSON objects already encoded as text, written one per line by :func:`dumps`.

    The JSON report's instances come this way
    (:func:`geoeval.scoring.summary.instance_rows`). A row is the concatenation of
    ``segments``, each one of:

    * a ``str``: the same text in every row;
    * a sequence of ``n`` strings: one text per row;
    * a pair ``(texts, ptr)``: a JSON array per row, row ``i`` holding
      ``texts[ptr[i]:ptr[i + 1]]`` (CSR pointers).

    The whole list is assembled in one ``str.join`` over a flat array of pieces
    placed with numpy, without a Python step per row; iterating yields each row's
    text.

    Examples
    --------
    >>> rows = Rows(3, ['{"a": ', (["1", "2", "3"], np.array([0, 2, 2, 3])), "}"])
    >>> list(rows)
    ['{"a": [1, 2]}', '{"a": []}', '{"a": [3]}']
    """

    def __init__(self, n: int, segments: list[Any]) -> None:
        self.n = int(n)
        self.segments: list[Any] = []
        for seg in segments:
            if isinstance(seg, tuple):
                texts = np.asarray(seg[0], dtype=object)
                ptr = np.asarray(seg[1], dtype=np.int64)
                if np.array_equal(ptr, np.arange(ptr[0], ptr[0] + self.n + 1)):  # one each
                    self._add("[")
                    self._add(texts[int(ptr[0]):int(ptr[-1])])
                    self._add("]")
                else:
                    self._add((texts, ptr))
            else:
                self._add(seg if isinstance(seg, str) else np.asarray(seg, dtype=object))

    def _add(self, seg: Any) -> None:
        """Append a segment, merging neighbouring constant texts (fewer pieces)."""
        if isinstance(seg, str) and self.segments and isinstance(self.segments[-1], str):
            self.segments[-1] += seg
        else:
            self.segments.append(seg)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[str]:
        # no JSON text holds a raw NUL (json escapes it in strings): a safe cut
        return iter(self.join("\0").split("\0") if self.n else [])

    def join(self, sep: str) -> str:
        """The rows' texts joined by ``sep``."""
        return sep.join(self.blocks(sep))

    def blocks(self, sep: str, size: int = 1 << 16) -> Iterator[str]:
        """The rows' texts joined by ``sep``, ``size`` rows at a time (the blocks
        themselves are to be joined by ``sep``): bounded extra memory."""
        for lo in range(0, self.n, size):
            yield self._block(lo, min(lo + size, self.n), sep)

    def _block(self, lo: int, hi: int, sep: str) -> str:
        n = hi - lo
        counts = [1 + 2 * np.diff(seg[1][lo:hi + 1]) if isinstance(seg, tuple) else 1
                  for seg in self.segments]
        per_row = np.zeros(n, np.int64) + sum(counts) + 1  # + the separator after each row
        start = np.concatenate([[0], np.cumsum(per_row)])
        flat = np.empty(int(start[-1]), dtype=object)
        at = start[:-1].copy()
        for seg, count in zip(self.segments, counts, strict=True):
            if isinstance(seg, str):
                flat[at] = seg
            elif isinstance(seg, tuple):
                texts, ptr = seg[0], seg[1][lo:hi + 1]
                size = np.diff(ptr)
                flat[at] = np.where(size > 0, "[", "[]")
                m = int(ptr[-1] - ptr[0])
                if m:
                    k = np.arange(m) - np.repeat(ptr[:-1] - ptr[0], size)  # index in its row
                    pos = np.repeat(at, size) + 1 + 2 * k
                    flat[pos] = texts[int(ptr[0]):int(ptr[-1])]
                    flat[pos + 1] = np.where(k == np.repeat(size, size) - 1, "]", ", ")
            else:
                flat[at] = seg[lo:hi]
            at += count
        flat[at] = sep
        return "".join(flat[:-1].tolist())


def number_texts(values: Any) -> list[str]:
    """The JSON text of each number of an array (shortest round-trip form, NaN and
    infinity as ``null``), encoded by orjson in one call.

    Examples
    --------
    >>> number_texts(np.array([2.5, np.nan, 3.0]))
    ['2.5', 'null', '3.0']
    >>> number_texts(np.array([7, 12], dtype=np.uint32))
    ['7', '12']
    """
    import orjson

    arr = np.ascontiguousarray(values)
    if arr.size == 0:
        return []
    if arr.dtype.kind == "f" and arr.dtype != np.float64:
        arr = arr.astype(np.float64)
    elif arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    text = orjson.dumps(arr, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    return text[1:-1].split(",")


def _default(value: Any) -> Any:
    """numpy values for the C encoder (NaN inside them is caught by the caller)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


_ENCODE = json.JSONEncoder(allow_nan=False, default=_default, separators=(", ", ": ")).encode


def _one_line(value: Any) -> str:
    """``value`` as one line of JSON (C encoder; NaN/inf cleaned to null if present)."""
    try:
        return _ENCODE(value)
    except (ValueError, TypeError):  # NaN, inf or numpy keys somewhere: the cleaning path
        return _ENCODE(clean(value))


def _is_leaf(value: Any) -> bool:
    """Scalars, and containers of scalars only (written on one line)."""
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list | tuple):
        return True
    # the distinct types, collected in C: long lists of ids are checked at C speed
    return not any(issubclass(t, dict | list | tuple) for t in set(map(type, value)))


def _rows(items: list[Any]) -> list[str] | None:
    """A long list of flat records (the instances), one line each, or ``None``.

    The whole list is encoded in one C-encoder call and cut between records;
    the cut is used only when it finds exactly one boundary per record pair
    (a string holding ``"}, {"`` makes the count differ: then ``None``).
    """
    if len(items) < 2 or not all(type(x) is dict for x in items[:1]):
        return None
    text = _one_line(items)
    rows = text[2:-2].split("}, {")
    if len(rows) != len(items):
        return None
    return ["{" + r + "}" for r in rows]


def _emit(value: Any, level: int, out: list[str]) -> None:
    pad = "  " * (level + 1)
    if isinstance(value, Rows):
        if not len(value):
            out.append("[]")
            return
        sep = ",\n" + pad
        out.append("[\n" + pad)
        for k, block in enumerate(value.blocks(sep)):
            out.extend((sep, block) if k else (block,))
        out.append("\n" + "  " * level + "]")
        return
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict) and value and not _is_leaf(value):
        out.append("{\n")
        for i, (k, v) in enumerate(value.items()):
            out.append(f"{pad}{json.dumps(str(k))}: ")
            _emit(v, level + 1, out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append("  " * level + "}")
    elif isinstance(value, list | tuple) and value and not _is_leaf(value):
        rows = _rows(value) if isinstance(value, list) else None
        if rows is not None:
            out.append("[\n" + pad + (",\n" + pad).join(rows) + "\n" + "  " * level + "]")
            return
        out.append("[\n")
        for i, v in enumerate(value):
            out.append(pad)
            _emit(v, level + 1, out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append("  " * level + "]")
    else:
        out.append(_one_line(value))


def dumps(report: dict[str, Any]) -> str:
    """The report as JSON text: nested objects indented by two spaces, every
    list or object of plain values on one line (one line per instance, per
    scene …), NaN and infinity written as null, numpy values as numbers.

    Examples
    --------
    >>> print(dumps({"f1": float("nan"), "ids": np.arange(3),
    ...              "instances": [{"reference": [1], "overlap": 2.5},
    ...                            {"reference": [2, 3], "overlap": 1.0}]}), end="")
    {
      "f1": null,
      "ids": [0, 1, 2],
      "instances": [
        {"reference": [1], "overlap": 2.5},
        {"reference": [2, 3], "overlap": 1.0}
      ]
    }
    """
    return "".join(dump_pieces(report))


def dump_pieces(report: dict[str, Any]) -> list[str]:
    """:func:`dumps` as a list of pieces to write one after the other (the long
    list of instances in blocks, never one string of the whole report)."""
    out: list[str] = []
    _emit(report, 0, out)
    out.append("\n")
    return out


