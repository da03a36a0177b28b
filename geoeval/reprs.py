"""Pieces of the results' reprs: what a result is, how many, its headline numbers,
in one line of a few hundred characters at most (never its arrays).

>>> number(0.87760695), number(None), number(float("nan"))
('0.8776', 'null', 'null')
>>> listed(["car", "truck", "person", "bus", "bike", "van"])
'car, truck, person, bus, …, van (6)'
>>> warned(("a", "b"))
'; 2 warnings'
"""

from __future__ import annotations

import math
from collections.abc import Sequence


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


def warned(warnings: Sequence[str]) -> str:
    """``; 1 warning`` (``r.warnings`` holds them), or nothing."""
    n = len(warnings)
    return "" if not n else f"; {n} warning{'s' if n != 1 else ''}"
