"""Candidate box pairs within groups (images, frames, frame × class), vectorised.

The box challenges compare boxes only inside one group (ROBIN: one image;
Neovision2: one frame and class). These helpers produce the pairs of a whole
data set at once, without a Python loop over groups and without ever building
an all-references × all-detections array of the data set:

* :func:`group_pairs` — every pair sharing a group (dense *per group* only);
* :func:`overlapping_pairs` — only pairs whose boxes intersect, found with one
  STRtree query after laying the groups out side by side on a grid so that
  boxes of different groups can never meet.
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


def group_pairs(ga: np.ndarray, gb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``(i, j)`` with ``ga[i] == gb[j]``.

    The cost is ``Σ_g n_a(g) · n_b(g)``: dense inside each group, nothing across
    groups.
    """
    ga = np.asarray(ga, dtype=np.int64)
    gb = np.asarray(gb, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    if ga.size == 0 or gb.size == 0:
        return empty, empty
    oa = np.argsort(ga, kind="stable")
    ob = np.argsort(gb, kind="stable")
    ua, start_a, count_a = np.unique(ga[oa], return_index=True, return_counts=True)
    ub, start_b, count_b = np.unique(gb[ob], return_index=True, return_counts=True)
    _, xa, xb = np.intersect1d(ua, ub, assume_unique=True, return_indices=True)
    ca, cb = count_a[xa], count_b[xb]
    sa, sb = start_a[xa], start_b[xb]
    p = ca * cb
    total = int(p.sum())
    if total == 0:
        return empty, empty
    grp = np.repeat(np.arange(p.size), p)
    local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(p) - p, p)
    i = oa[sa[grp] + local // cb[grp]]
    j = ob[sb[grp] + local % cb[grp]]
    return i, j


def overlapping_pairs(
    ga: np.ndarray, a: np.ndarray, gb: np.ndarray, b: np.ndarray
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
    Each group is translated to its own cell of a ``⌈√G⌉ × ⌈√G⌉`` grid of cells
    one data-set extent plus one unit apart, so one STRtree query over all boxes
    returns only same-group candidates. The translation affects candidate
    search only; callers compute areas and IoU on the original coordinates.
    The result is sorted by ``(i, j)``.
    """
    import shapely

    ga = np.asarray(ga, dtype=np.int64)
    gb = np.asarray(gb, dtype=np.int64)
    a = np.asarray(a, dtype=float).reshape(-1, 4)
    b = np.asarray(b, dtype=float).reshape(-1, 4)
    empty = np.zeros(0, dtype=np.int64)
    if ga.size == 0 or gb.size == 0:
        return empty, empty
    both = np.concatenate([a, b])
    x0, y0 = both[:, 0].min(), both[:, 1].min()
    width = float(both[:, 2].max() - x0) + 1.0
    height = float(both[:, 3].max() - y0) + 1.0
    n_groups = int(max(ga.max(), gb.max())) + 1
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
    """Intersection area of the pairs ``(a[ia[k]], b[ib[k]])``, via :mod:`geoeval.overlap`.

    ``|A ∩ B| = IoU · (|A| + |B|) / (1 + IoU)`` from :func:`geoeval.overlap.box_iou_pairs`
    (exact up to rounding, and 0 when the union is empty).
    """
    from geoeval.overlap import box_area, box_iou_pairs

    iou = box_iou_pairs(a, b, ia, ib)
    total = box_area(np.asarray(a)[ia]) + box_area(np.asarray(b)[ib])
    return iou * total / (1.0 + iou)
