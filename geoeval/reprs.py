"""Pieces of the results' reprs: what a result is, how many, its headline numbers,
in one line of a few hundred characters at most (never its arrays).

>>> number(0.87760695), number(None), number(float("nan"))
('0.8776', 'null', 'null')
>>> listed(["car", "truck", "person", "bus", "bike", "van"])
'car, truck, person, bus, …, van (6)'
>>> warned(("a", "b"))
'; 2 warnings'
>>> counted(1, "partition"), counted(12000, "block")
('1 partition', '12,000 blocks')
>>> result_repr("ScoreResult", 3, 1, {"partitions": 1}, {"bgm": (0.5, 0.25)}, ())
'<ScoreResult 3 reference vs 1 submitted objects in 1 partition; bgm: F1 0.5, accuracy 0.25>'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def number(x: float | None) -> str:
    """A headline number: four significant digits, ``null`` when undefined."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "null"
    return f"{float(x):.4g}"


def listed(items: Sequence[object], limit: int = 5) -> str:
    """``a, b, c`` or, past ``limit`` items, the first ones, ``…``, the last and the
    count."""
    names = [str(x) for x in items]
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join([*names[:limit - 1], "…", names[-1]]) + f" ({len(names)})"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``n`` (thousands separated) and ``word``, in the plural (``plural``, default
    ``word + "s"``) unless ``n`` is 1."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def warned(warnings: Sequence[str]) -> str:
    """``; 1 warning`` (``r.warnings`` holds them), or nothing."""
    n = len(warnings)
    return "" if not n else f"; {counted(n, 'warning')}"


def result_repr(kind: str, n_reference: int, n_submission: int,
                partitions: Mapping[str, int], scores: Mapping[str, tuple[float | None,
                                                                          float | None]],
                warnings: Sequence[str]) -> str:
    """The one line of a scene's result, whatever engine scored it: the objects of each
    side, how a Dask run cut the work (``partitions``: its ``blocks`` or
    ``partitions``), each matcher's F1 and accuracy, the warnings' count."""
    unit = "block" if "blocks" in partitions else "partition"
    n_parts = partitions.get(unit + "s")
    cut = "" if n_parts is None else f" in {counted(n_parts, unit)}"
    text = ", ".join(f"{name}: F1 {number(f1)}, accuracy {number(acc)}"
                     for name, (f1, acc) in scores.items())
    return (f"<{kind} {n_reference:,} reference vs {n_submission:,} submitted objects{cut}; "
            f"{text}{warned(warnings)}>")
