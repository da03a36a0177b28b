"""Candidate box pairs within groups (images, frames, frame × class), vectorised.

Neovision2 compares boxes only inside one group (a frame, or a frame and
class). :func:`overlapping_pairs` lists the intersecting pairs of a whole data
set at once, without a Python loop over groups and without an all × all array:
one STRtree query after laying the groups out side by side on a grid so that
boxes of different groups can never meet. (Every pair of a group, intersecting
or not, comes from :func:`geoeval.challenges._pairs.group_pairs`.)
"""

from __future__ import annotations

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
    ``chunk_pairs`` pairs and kept when the boxes intersect. Otherwise each
    group is translated to its own cell of a ``⌈√G⌉ × ⌈√G⌉`` grid of cells one
    data-set extent plus one unit apart, so one STRtree query over all boxes
    returns only same-group candidates (the translation affects candidate
    search only; callers compute areas and IoU on the original coordinates).
    The result is sorted by ``(i, j)``.
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
    return _tree_pairs(ga, a, gb, b, n_groups)


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


def _tree_pairs(
    ga: np.ndarray, a: np.ndarray, gb: np.ndarray, b: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """Same-group intersecting pairs from one STRtree query (groups on a grid)."""
    import shapely

    both = np.concatenate([a, b])
    x0, y0 = both[:, 0].min(), both[:, 1].min()
    width = float(both[:, 2].max() - x0) + 1.0
    height = float(both[:, 3].max() - y0) + 1.0
    side = int(np.ceil(np.sqrt(n_groups)))

    def shifted(boxes: np.ndarray, g: np.ndarray) -> np.ndarray:
        dx = (g % side) * width - x0
        dy = (g // side) * height - y0
        return shapely.box(boxes[:, 0] + dx, boxes[:, 1] + dy, boxes[:, 2] + dx, boxes[:, 3] + dy)

    tree = shapely.STRtree(shifted(b, gb))
    i, j = tree.query(shifted(a, ga), predicate="intersects")
    keep = ga[i] == gb[j]
    i, j = i[keep].astype(np.int64), j[keep].astype(np.int64)
    order = np.lexsort((j, i))
    return i[order], j[order]


def pair_intersection(a: np.ndarray, b: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Intersection area of the pairs ``(a[ia[k]], b[ib[k]])``.

    Computed directly (:func:`geoeval.overlap.box_intersection_areas`), never
    rebuilt from an IoU: ``IoU · (|A| + |B|) / (1 + IoU)`` is exact only up to
    rounding, which is enough to move a ratio such as 20/100 across a
    threshold.
    """
    from geoeval.overlap import box_intersection_areas

    return box_intersection_areas(a, b, ia, ib)
