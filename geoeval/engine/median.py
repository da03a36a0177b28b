"""The exact median of a value spread over a cluster's partitions, with small messages.

The Mallows score of two vector layers rasterises them on a grid whose step comes
from the median reference object's area
(:func:`geoeval.measures.rasterize.auto_resolution`). On a cluster no process
holds every area, so the median is found by narrowing a bracket of values:

1. each partition sends the count of its values below the bracket and in it, and
   either its values in the bracket (at most :data:`VALUES_PER_PART`) or an
   evenly spaced sample of them (:data:`SAMPLE`);
2. if every partition sent its values, the two middle ranks are read off their
   sorted union;
3. else the samples are thresholds: each partition counts its values below and
   up to each threshold; a threshold with fewer values below it than a middle
   rank and more up to it *is* that rank's value (ties too); otherwise the bracket
   becomes the tightest pair of thresholds that still holds both middle ranks.

Every message is bounded by :data:`VALUES_PER_PART` or :data:`SAMPLE` numbers per
partition, whatever the number of objects. The result is ``numpy.median`` of all
the values (the mean of the two middle ones for an even count, computed by
``numpy.median`` on those two), exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: A partition sends its values in the bracket when it holds at most this many.
VALUES_PER_PART = 4096
#: Otherwise an evenly spaced sample of this many of them (its smallest and largest
#: included).
SAMPLE = 64
#: Rounds of narrowing before the values in the bracket are sent whatever their number
#: (never reached in practice: each round divides the bracket by about ``SAMPLE``).
MAX_ROUNDS = 16


def positive_areas(part: Any, side: int) -> np.ndarray:
    """The areas above 0 of side ``side`` of a partition (what the grid step is taken from)."""
    a = np.asarray(part.areas, float)[part.side == side]
    return a[a > 0]


def bracket(part: Any, side: int, lo: float, hi: float, full: bool = False
            ) -> tuple[int, int, np.ndarray, bool]:
    """Runs on a worker: ``(count below lo, count in [lo, hi], values, all sent)``; the
    values in ``[lo, hi]`` if they are few (or ``full``), else a sorted sample of them."""
    a = positive_areas(part, side)
    below = int(np.count_nonzero(a < lo))
    inside = np.sort(a[(a >= lo) & (a <= hi)])
    if full or inside.size <= VALUES_PER_PART:
        return below, int(inside.size), inside, True
    at = np.unique(np.linspace(0, inside.size - 1, SAMPLE).astype(np.int64))
    return below, int(inside.size), inside[at], False


def rank_counts(part: Any, side: int, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs on a worker: per threshold, the values below it and the values up to it."""
    a = np.sort(positive_areas(part, side))
    return (np.searchsorted(a, thresholds, side="left").astype(np.int64),
            np.searchsorted(a, thresholds, side="right").astype(np.int64))


def median(client: Any, parts: list[Any], side: int) -> float | None:
    """``numpy.median`` of the positive areas of side ``side`` over the partitions (futures
    of :class:`~geoeval.engine.parts.Part`); ``None`` when there are none."""
    lo, hi = -np.inf, np.inf
    k1 = k2 = -1
    for rounds in range(MAX_ROUNDS + 1):
        got = client.gather(client.map(bracket, parts, [side] * len(parts), [lo] * len(parts),
                                       [hi] * len(parts), [rounds == MAX_ROUNDS] * len(parts),
                                       pure=False))
        below = sum(g[0] for g in got)
        if rounds == 0:
            n = sum(g[1] for g in got)
            if n == 0:
                return None
            k1, k2 = (n - 1) // 2, n // 2
        if all(g[3] for g in got):
            values = np.sort(np.concatenate([g[2] for g in got]))
            return float(np.median(values[[k1 - below, k2 - below]]))
        thresholds = np.unique(np.concatenate([g[2] for g in got] + [
            np.array([lo, hi])[np.isfinite([lo, hi])]]))
        counts = client.gather(client.map(rank_counts, parts, [side] * len(parts),
                                          [thresholds] * len(parts), pure=False))
        lt = np.sum([c[0] for c in counts], axis=0)
        le = np.sum([c[1] for c in counts], axis=0)
        # a threshold t is the value of rank k when lt(t) <= k < le(t) (ties included)
        hit1 = np.flatnonzero((lt <= k1) & (k1 < le))
        hit2 = np.flatnonzero((lt <= k2) & (k2 < le))
        if hit1.size and hit2.size:
            return float(np.median(thresholds[[hit1[0], hit2[0]]]))
        # the value of rank k1 is at least any t with fewer than k1 + 1 values below it;
        # the value of rank k2 at most any t with more than k2 values up to it
        lo = float(thresholds[np.flatnonzero(lt <= k1)[-1]])
        hi = float(thresholds[np.flatnonzero(le > k2)[0]])
    raise AssertionError("unreachable: the last round sends every value in the bracket")
