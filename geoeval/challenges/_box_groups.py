"""Candidate box pairs within groups (images, frames, frame × class), vectorised.

Neovision2 compares boxes only inside one group (a frame, or a frame and
class). :func:`overlapping_pairs` lists the intersecting pairs of a whole data
set at once, without a Python loop over groups and without an all × all array:
every pair of small groups, or the pairs that share a cell of a uniform grid.
(Every pair of a group, intersecting or not, comes from
:func:`geoeval.challenges._pairs.group_pairs`.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def group_codes(*columns: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense integer code of each row's tuple of keys, and the number of codes."""
    if not columns or columns[0].size == 0:
        return np.zeros(0 if not columns else columns[0].size, dtype=np.int64), 0
    code = np.zeros(columns[0].size, dtype=np.int64)
    for col in columns:
        _, inv = np.unique(col, return_inverse=True)
        size = int(inv.max()) + 1 if inv.size else 1
        code = code * size + inv.reshape(-1).astype(np.int64)
        _, code = np.unique(code, return_inverse=True)
        code = code.reshape(-1).astype(np.int64)
    return code, int(code.max()) + 1 if code.size else 0


def overlapping_pairs(
    ga: np.ndarray, a: np.ndarray, gb: np.ndarray, b: np.ndarray, *,
    max_group_pairs: int = 100_000, chunk_pairs: int = 2_000_000,
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)`` of the same group whose boxes intersect (touching included).

    Parameters
    ----------
    ga, gb : array of int
        Group code of each box.
    a, b : numpy.ndarray
        ``(n, 4)`` boxes ``(x1, y1, x2, y2)``.

    Notes
    -----
    Small groups (every group with at most ``max_group_pairs`` pairs, the usual
    case: a frame holds tens of boxes): every pair of a group is listed
    (:func:`geoeval.challenges._pairs.group_pairs`) in chunks of at most
    ``chunk_pairs`` pairs and kept when the boxes intersect. Otherwise (an
    aerial image with hundreds of vehicles) only the pairs of boxes that share a
    cell of a uniform grid are listed (:func:`_grid_pairs`). The result is
    sorted by ``(i, j)``.
    """
    ga = np.asarray(ga, dtype=np.int64)
    gb = np.asarray(gb, dtype=np.int64)
    a = np.asarray(a, dtype=float).reshape(-1, 4)
    b = np.asarray(b, dtype=float).reshape(-1, 4)
    empty = np.zeros(0, dtype=np.int64)
    if ga.size == 0 or gb.size == 0:
        return empty, empty
    n_groups = int(max(ga.max(), gb.max())) + 1
    ca = np.bincount(ga, minlength=n_groups)
    cb = np.bincount(gb, minlength=n_groups)
    if int((ca * cb).max()) <= max_group_pairs:
        return _dense_pairs(ga, a, gb, b, cb, chunk_pairs)
    return _grid_pairs(ga, a, gb, b)


def _dense_pairs(
    ga: np.ndarray, a: np.ndarray, gb: np.ndarray, b: np.ndarray, cb: np.ndarray,
    chunk_pairs: int,
) -> tuple[np.ndarray, np.ndarray]:
    """All same-group pairs that intersect, listed in chunks of rows of ``a``."""
    from geoeval.challenges._pairs import group_pairs

    order = np.argsort(ga, kind="stable")
    cum = np.cumsum(cb[ga[order]])  # pairs listed up to each row of `a`
    cuts = np.searchsorted(cum, np.arange(chunk_pairs, int(cum[-1]), chunk_pairs), side="right")
    cuts = np.unique(np.r_[0, cuts, order.size])
    out_i, out_j = [], []
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):  # a few chunks, not groups
        rows = order[lo:hi]
        i, j = group_pairs(ga[rows], gb)
        i = rows[i]
        ai, bj = a[i], b[j]
        hit = ((np.maximum(ai[:, 0], bj[:, 0]) <= np.minimum(ai[:, 2], bj[:, 2]))
               & (np.maximum(ai[:, 1], bj[:, 1]) <= np.minimum(ai[:, 3], bj[:, 3])))
        out_i.append(i[hit])
        out_j.append(j[hit])
    i = np.concatenate(out_i) if out_i else np.zeros(0, dtype=np.int64)
    j = np.concatenate(out_j) if out_j else np.zeros(0, dtype=np.int64)
    srt = np.lexsort((j, i))
    return i[srt].astype(np.int64), j[srt].astype(np.int64)


@dataclass(frozen=True)
class _Grid:
    """A uniform grid over boxes of many groups: cell keys ``(group, row, column)``.

    Cells are 1.5 times the 90th percentile of the boxes' larger side, so a box
    covers one to four cells (on a DOTA-sized set 30 % less work than 1×, and
    less than 2× or 3×), and at most 4096 a side (keys fit in int64).
    """

    x0: float
    y0: float
    side: float
    nx: int
    ny: int

    @classmethod
    def over(cls, both: np.ndarray, n_groups: int) -> _Grid:
        x0, y0 = float(both[:, 0].min()), float(both[:, 1].min())
        side = 1.5 * float(np.percentile(np.maximum(both[:, 2] - both[:, 0],
                                                    both[:, 3] - both[:, 1]), 90))
        extent = max(float(both[:, 2].max() - x0), float(both[:, 3].max() - y0))
        per_axis = min(4096, math.isqrt((2**62) // n_groups) - 1)
        side = max(side, extent / per_axis, 1e-300)
        return cls(x0, y0, side, int(np.floor((both[:, 2].max() - x0) / side)) + 1,
                   int(np.floor((both[:, 3].max() - y0) / side)) + 1)

    def key(self, g: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The key of the cell holding each point ``(x, y)`` of group ``g``."""
        cx = np.floor((x - self.x0) / self.side).astype(np.int64)
        cy = np.floor((y - self.y0) / self.side).astype(np.int64)
        return (g * self.ny + cy) * self.nx + cx

    def covered(self, boxes: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One entry per box and cell it covers: the box's row and the cell's key."""
        lo = self.key(np.zeros(boxes.shape[0], dtype=np.int64), boxes[:, 0], boxes[:, 1])
        hi = self.key(np.zeros(boxes.shape[0], dtype=np.int64), boxes[:, 2], boxes[:, 3])
        wx = hi % self.nx - lo % self.nx + 1
        wy = hi // self.nx - lo // self.nx + 1
        count = wx * wy
        row = np.repeat(np.arange(boxes.shape[0], dtype=np.int64), count)
        k = np.arange(row.size, dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
        return row, g[row] * self.nx * self.ny + lo[row] + (k // wx[row]) * self.nx \
            + k % wx[row]


def _grid_pairs(
    ga: np.ndarray, a: np.ndarray, gb: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Same-group intersecting pairs by a uniform grid: boxes meet only in cells they share.

    Each box is listed in every cell it covers (:class:`_Grid`); the entries of
    one group and cell are paired (every pair of the cell, ``numpy.repeat``),
    tested, and a pair is kept in one cell only: the one holding the lower-left
    corner of the two boxes' intersection.
    """
    from geoeval.challenges._pairs import group_pairs

    grid = _Grid.over(np.concatenate([a, b]), int(max(ga.max(), gb.max())) + 1)
    ra, ka = grid.covered(a, ga)
    rb, kb = grid.covered(b, gb)
    p, q = group_pairs(ka, kb)
    i, j = ra[p], rb[q]
    ai, bj = a[i], b[j]
    lx, ly = np.maximum(ai[:, 0], bj[:, 0]), np.maximum(ai[:, 1], bj[:, 1])
    hit = ((lx <= np.minimum(ai[:, 2], bj[:, 2])) & (ly <= np.minimum(ai[:, 3], bj[:, 3]))
           & (grid.key(ga[i], lx, ly) == ka[p]))
    i, j = i[hit], j[hit]
    order = np.argsort(i * b.shape[0] + j)  # by (i, j): one integer key
    return i[order], j[order]


def centred_pairs(
    ga: np.ndarray, a: np.ndarray, gb: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)`` of the same group where each box holds the other's centre.

    Two axis-aligned boxes with IoU above one half always do: ``I > U / 2 ≥
    max(|A|, |B|) / 2`` with ``I = I_x I_y``, ``I_x ≤ w_A``, ``I_y ≤ h_A`` gives
    ``I_x > w_A / 2`` and ``I_y > h_A / 2``, so A's centre lies in B (and B's in
    A). The candidates of a protocol that matches above one half are these
    pairs: each box of ``a`` is listed once, by the cell of its centre
    (:class:`_Grid`), where it meets the boxes of ``b`` covering that cell.
    Containment is tested closed (a centre on an edge counts). Sorted by
    ``(i, j)``.
    """
    from geoeval.challenges._pairs import group_pairs

    ga = np.asarray(ga, dtype=np.int64)
    gb = np.asarray(gb, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    if ga.size == 0 or gb.size == 0:
        return empty, empty
    grid = _Grid.over(np.concatenate([a, b]), int(max(ga.max(), gb.max())) + 1)
    ca, cb = (a[:, :2] + a[:, 2:]) / 2, (b[:, :2] + b[:, 2:]) / 2
    rb, kb = grid.covered(b, gb)
    i, q = group_pairs(grid.key(ga, ca[:, 0], ca[:, 1]), kb)
    j = rb[q]
    hit = ((b[j, 0] <= ca[i, 0]) & (ca[i, 0] <= b[j, 2]) & (b[j, 1] <= ca[i, 1])
           & (ca[i, 1] <= b[j, 3]) & (a[i, 0] <= cb[j, 0]) & (cb[j, 0] <= a[i, 2])
           & (a[i, 1] <= cb[j, 1]) & (cb[j, 1] <= a[i, 3]))
    return i[hit], j[hit]


def pair_intersection(a: np.ndarray, b: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Intersection area of the pairs ``(a[ia[k]], b[ib[k]])``.

    Computed directly (:func:`geoeval.overlap.box_intersection_areas`), never
    rebuilt from an IoU: ``IoU · (|A| + |B|) / (1 + IoU)`` is exact only up to
    rounding, which is enough to move a ratio such as 20/100 across a
    threshold.
    """
    from geoeval.overlap import box_intersection_areas

    return box_intersection_areas(a, b, ia, ib)
