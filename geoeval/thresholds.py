"""One rule for every decision on a ratio of areas: "at least ``t``" and "strictly above ``t``".

Every threshold of geoeval that compares a ratio of two areas with a number goes
through :func:`at_least` or :func:`above`: the IoU matcher (``IoU ≥ t``), Panoptic
Quality (``IoU > ½``, Kirillov et al. 2019, §4.1), Hoover's ``T`` (``C ≥ T·|O|`` and
``C ≥ T·|R|``, Hoover et al. 1996, §3.1), MOM's minimum overlap
(``C ≥ m·min(|R|, |O|)``), Clinton et al.'s (2010) 50 % subsets (``C/|y| > ½``),
Hoover's classes of the localisation metrics, the Neovision2 rules (``IoU ≥ t``,
merging at ``IoU > t``, don't-care regions at more than 20 % inside) and ROBIN's
completeness ``m2 = |A_d − A_gt| / max(A_d, A_gt) ≤ ε2`` (:func:`at_most`).

Two ways of deciding, by what the areas are:

* **Counts** (``unit`` given: both labelled rasters on one grid, every area a whole
  number of pixels of area ``unit``). The areas are turned back into integer pixel
  counts ``n = round(num / unit)`` and ``d = round(den / unit)``, the threshold into
  the fraction ``p/q`` it was written as (the simplest fraction with ``q ≤ 10⁶``
  that rounds to the same double: ``0.5 → 1/2``, ``0.7 → 7/10``, ``1/3 → 1/3``), and
  the decision is taken in integers: ``q·n ≥ p·d`` ("at least") or ``q·n > p·d``
  ("strictly above"). It is exact and never depends on the pixel size: a pair
  sharing 6 of 12 pixels has IoU exactly ½ at 1 m, 0.3 m or 0.15 m pixels.
* **Areas** (vector layers, boxes, a raster against a vector layer). Areas of
  polygons are floating-point numbers with rounding errors of a few units in the
  last place, so a ratio within a relative ``1e-12`` of ``t`` counts as exactly
  ``t``: "at least" is ``num ≥ t·den·(1 − 1e-12)`` (a ratio that equals ``t`` up
  to rounding passes) and "strictly above" is ``num > t·den·(1 + 1e-12)`` (it
  fails). The slack is far below any difference a real area can make (one
  square millimetre in a square kilometre is ``1e-12``).

The box challenges that reproduce an official evaluator bit for bit (COCO's
``pycocotools``, the PASCAL VOC devkit, DOTA's horizontal-box task) keep the
evaluator's own floating-point comparisons instead, so that their numbers agree
with it to the last digit.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import numpy as np

#: Relative slack of a decision on floating-point areas (see the module docstring).
RELATIVE_SLACK = 1e-12
#: Largest denominator a threshold is read with on integer counts.
MAX_DENOMINATOR = 10**6
_INT_LIMIT = 2**62


@lru_cache(maxsize=64)
def as_fraction(t: float) -> tuple[int, int]:
    """The fraction ``(p, q)`` a threshold was written as.

    The simplest fraction with ``q ≤ 10⁶`` whose nearest double is ``t`` (``0.7``
    is ``7/10``, not the double's exact binary value); a double no such fraction
    rounds to is taken as its exact binary value.

    Examples
    --------
    >>> as_fraction(0.5), as_fraction(0.7), as_fraction(1 / 3), as_fraction(0.2)
    ((1, 2), (7, 10), (1, 3), (1, 5))
    """
    t = float(t)
    exact = Fraction(t)
    near = exact.limit_denominator(MAX_DENOMINATOR)
    f = near if float(near) == t else exact
    return f.numerator, f.denominator


def pixel_counts(area: np.ndarray, unit: float) -> np.ndarray:
    """Areas that are whole numbers of pixels of area ``unit``, as int64 counts.

    Examples
    --------
    >>> pixel_counts(np.array([9 * 0.09, 12 * 0.09]), 0.09).tolist()
    [9, 12]
    """
    return np.rint(np.asarray(area, dtype=float) / unit).astype(np.int64)


def at_least(num: np.ndarray, den: np.ndarray, t: float, *,
             unit: float | None = None) -> np.ndarray:
    """``num / den ≥ t``, decided by geoeval's one rule (module docstring).

    Parameters
    ----------
    num, den : array_like
        Areas (square CRS units), broadcast together; ``den ≤ 0`` is never at
        least anything.
    t : float
        The threshold.
    unit : float, optional
        The pixel area when every area is a whole number of pixels (both sides
        labelled rasters on one grid): the decision is then taken on integer
        counts, exactly.

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> at_least(np.array([6 * 0.09]), np.array([12 * 0.09]), 0.5, unit=0.09).tolist()
    [True]
    >>> at_least(np.array([0.3]), np.array([0.1 + 0.2]), 1.0).tolist()  # 0.1+0.2 != 0.3
    [True]
    """
    return _decide(num, den, t, unit, strict=False)


def above(num: np.ndarray, den: np.ndarray, t: float, *,
          unit: float | None = None) -> np.ndarray:
    """``num / den > t``, decided by geoeval's one rule (module docstring).

    Parameters are those of :func:`at_least`.

    Examples
    --------
    >>> # a 1 x 9 strip and the same strip shifted 3 pixels, at 0.3 m pixels: IoU = 6/12
    >>> above(np.array([6 * 0.09]), np.array([9 * 0.09 + 9 * 0.09 - 6 * 0.09]), 0.5,
    ...       unit=0.09).tolist()
    [False]
    >>> above(np.array([6.0]), np.array([11.0]), 0.5).tolist()
    [True]
    """
    return _decide(num, den, t, unit, strict=True)


def at_most(num: np.ndarray, den: np.ndarray, t: float, *,
            unit: float | None = None) -> np.ndarray:
    """``num / den ≤ t``: not :func:`above` (a ratio equal to ``t`` up to rounding is
    at most ``t``), and never for an undefined ratio (``den ≤ 0`` or NaN).

    Examples
    --------
    >>> at_most(np.array([0.1 + 0.2, 0.4, np.nan]), np.array([1.0, 1.0, 1.0]), 0.3).tolist()
    [True, False, False]
    """
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    defined = (den > 0) & np.isfinite(num)
    return defined & ~_decide(np.where(defined, num, 0.0), np.where(defined, den, 1.0), t,
                              unit, strict=True)


def _decide(num: np.ndarray, den: np.ndarray, t: float, unit: float | None,
            strict: bool) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    if unit is None:
        if strict:
            return (num > t * den * (1 + RELATIVE_SLACK)) & (den > 0)
        return (num >= t * den * (1 - RELATIVE_SLACK)) & (den > 0)
    n, d = pixel_counts(num, unit), pixel_counts(den, unit)
    p, q = as_fraction(t)
    top = max(int(np.abs(n).max(initial=0)), int(np.abs(d).max(initial=0)))
    if top * max(p, q) < _INT_LIMIT:
        lhs, rhs = n * q, d * p
    else:  # products beyond int64: exact Python integers (rare: huge objects, fine p/q)
        lhs, rhs = n.astype(object) * q, d.astype(object) * p
    out = (lhs > rhs) if strict else (lhs >= rhs)
    return np.asarray(out, dtype=bool) & (d > 0)
