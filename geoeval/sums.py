"""Exact sums: the same number whatever the order of the terms or the partitioning.

A float sum depends on the order of its terms (``(a + b) + c`` need not equal
``a + (b + c)``), so a scene summed whole and the same scene summed by partitions
and then added used to differ in the 15th digit. Every sum a report shows is
therefore taken exactly and rounded once (the *correctly rounded* sum, as Python's
``math.fsum`` gives, Shewchuk 1997):

* every finite double is an integer multiple of ``2**-1074``, so an exact sum of
  doubles is a Python integer of such quanta (:class:`ExactSum`); two of them add
  exactly, so the sums of partitions, blocks or tasks add up to the sum of the
  whole, and the float shown is that integer rounded once;
* areas on one label grid are whole numbers of pixels: they are summed as integer
  pixel counts and multiplied by the pixel area once (``unit``).

The terms are turned into integers column by column (``numpy.frexp``, integer
``reduceat``), with a Python step per distinct binary exponent, never per term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Every finite double is an integer multiple of ``2**-QUANTUM``.
QUANTUM = 1074
_HALF = 26  # mantissas (< 2**53) are summed as two int64 halves of 27 and 26 bits


@dataclass(frozen=True)
class ExactSum:
    """An exact sum of doubles, or of whole pixels of area ``unit``.

    Attributes
    ----------
    units : int
        The sum in quanta of ``2**-1074`` (``unit`` is ``None``) or in pixels.
    unit : float or None
        The pixel area when the terms were areas on one label grid.
    special : float
        The sum of the non-finite terms (NaN, infinities); 0 when there are none.

    Examples
    --------
    >>> a = exact_sum([0.1, 0.2]); b = exact_sum([0.3])
    >>> float(a + b) == math.fsum([0.1, 0.2, 0.3])
    True
    >>> float(exact_sum([3 * 0.36, 0.36], unit=0.36)) == 4 * 0.36  # 4 pixels, one product
    True
    """

    units: int = 0
    unit: float | None = None
    special: float = 0.0

    def __add__(self, other: Any) -> ExactSum:
        if isinstance(other, int | np.integer) and other == 0:
            return self
        if not isinstance(other, ExactSum):
            return NotImplemented
        unit = self.unit
        if self.units == 0 and not self.special:  # zero takes the other's unit
            unit = other.unit
        elif other.unit != unit and (other.units or other.special):
            raise ValueError(f"exact sums in different units ({unit} and {other.unit})")
        return ExactSum(self.units + other.units, unit, self.special + other.special)

    __radd__ = __add__

    def __neg__(self) -> ExactSum:
        return ExactSum(-self.units, self.unit, -self.special)

    def __sub__(self, other: Any) -> ExactSum:
        if not isinstance(other, ExactSum):
            return NotImplemented
        return self + (-other)

    def __float__(self) -> float:
        if self.special or self.special != self.special:  # NaN is not 0 either
            return float(self.special)
        if self.unit is not None:
            return float(self.units) * self.unit
        if not self.units:
            return 0.0
        return self.units / (1 << QUANTUM)  # int / int: correctly rounded in Python

    @property
    def value(self) -> float:
        """The sum, rounded once (to the nearest double, ties to even)."""
        return float(self)

    def __repr__(self) -> str:
        unit = "" if self.unit is None else f" pixels of {self.unit:g}"
        return f"<ExactSum {float(self)!r}{unit}>"


ZERO = ExactSum()


def exact_sum(values: Any, unit: float | None = None) -> ExactSum:
    """The exact sum of ``values`` (:class:`ExactSum`).

    Parameters
    ----------
    values : array_like of float
    unit : float, optional
        The pixel area when every value is a whole number of pixels of one grid: the
        values are counted in pixels (:func:`geoeval.thresholds.pixel_counts`).

    Examples
    --------
    >>> v = [1e16, 1.0, -1e16, 1e-300]
    >>> float(exact_sum(v)) == math.fsum(v), sum(v)
    (True, 1e-300)
    """
    v = np.asarray(values, dtype=float).ravel()
    if unit is not None:
        return ExactSum(int(_pixels(v, unit).sum()), float(unit),
                        _special(v))
    return ExactSum(_quanta(v), None, _special(v))


def exact_sums(values: Any, group: Any, n_groups: int,
               unit: float | None = None) -> np.ndarray:
    """:func:`exact_sum` of the values of each group: an object array of ``n_groups``
    :class:`ExactSum` (a Python step per group and distinct exponent, not per value)."""
    v = np.asarray(values, dtype=float).ravel()
    g = np.asarray(group, dtype=np.int64).ravel()
    out = np.empty(n_groups, dtype=object)
    special = np.zeros(n_groups)
    bad = ~np.isfinite(v)
    if bad.any():
        np.add.at(special, g[bad], v[bad])
        v, g = v[~bad], g[~bad]
    if unit is not None:
        counts = np.zeros(n_groups, np.int64)
        np.add.at(counts, g, _pixels(v, unit))
        for k in range(n_groups):
            out[k] = ExactSum(int(counts[k]), float(unit), float(special[k]))
        return out
    units = [0] * n_groups
    for k, total in _grouped_quanta(v, g):
        units[k] = total
    for k in range(n_groups):
        out[k] = ExactSum(units[k], None, float(special[k]))
    return out


def as_float(value: Any) -> Any:
    """A sum as a float (an array of them as a float array); other values unchanged."""
    if isinstance(value, ExactSum):
        return float(value)
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.array([float(x) for x in value.ravel()], dtype=float).reshape(value.shape)
    return value


def _special(v: np.ndarray) -> float:
    bad = ~np.isfinite(v)
    return float(v[bad].sum()) if bad.any() else 0.0


def _pixels(v: np.ndarray, unit: float) -> np.ndarray:
    from geoeval.thresholds import pixel_counts

    return pixel_counts(v[np.isfinite(v)], unit)


def _quanta(v: np.ndarray) -> int:
    return sum(total for _, total in _grouped_quanta(v, np.zeros(v.size, np.int64)))


def _grouped_quanta(v: np.ndarray, group: np.ndarray) -> list[tuple[int, int]]:
    """``(group, exact sum in quanta)`` of the finite values of each group that has one."""
    keep = np.isfinite(v) & (v != 0)
    v, group = v[keep], group[keep]
    if not v.size:
        return []
    m, e = np.frexp(v)  # v = m * 2**e, 0.5 <= |m| < 1
    mant = np.ldexp(m, 53).astype(np.int64)  # exact integer, |mant| < 2**53
    shift = e.astype(np.int64) + (QUANTUM - 53)  # v = mant * 2**(shift - QUANTUM)
    low, span = int(shift.min()), int(shift.max() - shift.min()) + 1
    n_groups = int(group.max()) + 1
    if n_groups * span <= _CELLS:
        return _binned(mant, group * span + (shift - low), n_groups, span, low)
    order = np.lexsort((shift, group))
    group, shift, mant = group[order], shift[order], mant[order]
    starts = np.flatnonzero(np.r_[True, (group[1:] != group[:-1]) | (shift[1:] != shift[:-1])])
    hi = np.add.reduceat(mant >> _HALF, starts)  # each < 2**27 in size: no overflow below
    lo = np.add.reduceat(mant & ((1 << _HALF) - 1), starts)  # 2**36 terms per cell
    out: dict[int, int] = {}
    for k, s, h, low in zip(group[starts].tolist(), shift[starts].tolist(), hi.tolist(),
                            lo.tolist(), strict=True):
        total = (h << _HALF) + low
        # a subnormal's mantissa is a multiple of 2**-shift: the shift is exact
        total = total << s if s >= 0 else total >> -s
        out[k] = out.get(k, 0) + total
    return list(out.items())


#: Largest (groups × distinct exponents) table summed by ``bincount`` (else by sorting).
_CELLS = 1 << 22
#: Terms per ``bincount`` pass: float sums of integers below ``2**27`` stay exact.
_CHUNK = 1 << 25


def _binned(mant: np.ndarray, cell: np.ndarray, n_groups: int, span: int,
            low: int) -> list[tuple[int, int]]:
    """:func:`_grouped_quanta` by ``bincount`` over (group, exponent) cells: integer
    halves below ``2**27`` summed as floats stay exact for :data:`_CHUNK` terms."""
    size = n_groups * span
    hi = np.zeros(size, dtype=np.int64)  # below 2**63 up to 2**36 terms
    lo = np.zeros(size, dtype=np.int64)
    for a in range(0, mant.size, _CHUNK):
        part, where = mant[a:a + _CHUNK], cell[a:a + _CHUNK]
        h = np.bincount(where, weights=(part >> _HALF).astype(float), minlength=size)
        lw = np.bincount(where, weights=(part & ((1 << _HALF) - 1)).astype(float),
                         minlength=size)
        hi += h.astype(np.int64)
        lo += lw.astype(np.int64)
    used = np.flatnonzero((hi != 0) | (lo != 0))
    out: dict[int, int] = {}
    for c, h_c, lo_c in zip(used.tolist(), hi[used].tolist(), lo[used].tolist(), strict=True):
        k, s = divmod(c, span)
        s += low
        total = (h_c << _HALF) + lo_c
        total = total << s if s >= 0 else total >> -s
        out[k] = out.get(k, 0) + total
    return list(out.items())


def fsum(values: Any) -> float:
    """The correctly rounded sum of ``values`` (``math.fsum``; :func:`exact_sum` agrees)."""
    return math.fsum(np.asarray(values, dtype=float).ravel().tolist())
