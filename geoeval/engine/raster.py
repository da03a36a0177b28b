"""Label co-occurrence of two labelled rasters on one grid, window by window.

:func:`window_cooccurrence` is the whole per-window kernel (pure: two label
blocks in, label pairs with pixel counts out); :func:`dask_cooccurrence` maps
it over the grid's windows on a Dask cluster and reduces the counts to the
client into the same :class:`~geoeval.overlap.Overlap` as the in-memory
``co-occurrence`` method: ``C_ij`` is the number of pixels labelled ``i`` in the
reference and ``j`` in the submission times the pixel area (Özdemir et al.
2010, §4), the union area the number of pixels labelled on either side times
the pixel area.

The blocks are cut from the label grids already read; a windowed reader can
hand its own blocks to the same kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.grid import label_index
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap

#: Window side (pixels) of the map over the grid.
WINDOW = 2048


def window_cooccurrence(ref: np.ndarray, sub: np.ndarray, ref_background: Any,
                        sub_background: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Label pairs of one window: reference label, submission label, pixel count.

    Returns
    -------
    ref_labels, sub_labels : numpy.ndarray
        Each distinct pair of labels found on the same pixel (both not background).
    counts : numpy.ndarray of int64
        Pixels of each pair.
    labelled : int
        Pixels labelled on either side (the window's share of the union).

    Examples
    --------
    >>> r = np.array([[1, 1, 0], [2, 2, 0]]); s = np.array([[5, 0, 5], [5, 5, 0]])
    >>> a, b, n, u = window_cooccurrence(r, s, 0, 0)
    >>> a.tolist(), b.tolist(), n.tolist(), u
    ([1, 2], [5, 5], [1, 2], 5)
    """
    mr, ms = ref != ref_background, sub != sub_background
    both = mr & ms
    a, b = ref[both], sub[both]
    labelled = int(np.count_nonzero(mr | ms))
    if a.size == 0:
        return a, b, np.zeros(0, dtype=np.int64), labelled
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    starts = np.flatnonzero(np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])])
    counts = np.diff(np.r_[starts, a.size]).astype(np.int64)
    return a[starts], b[starts], counts, labelled


def windows(shape: tuple[int, int], size: int = WINDOW) -> list[tuple[slice, slice]]:
    """Row-major ``size × size`` windows covering a grid of ``shape``."""
    h, w = shape
    return [(slice(r, min(r + size, h)), slice(c, min(c + size, w)))
            for r in range(0, h, size) for c in range(0, w, size)]


def dask_cooccurrence(reference: ObjectSet, submission: ObjectSet, client: Any,
                      size: int | None = None) -> Overlap:
    """The co-occurrence overlap of two rasters on one grid, windows mapped on the cluster."""
    rg, sg = reference.grid, submission.grid
    assert rg is not None and sg is not None
    wins = windows(rg.labels.shape, size or WINDOW)
    # the blocks are sent as data (scattered), not inside the task graph
    ref_blocks = client.scatter([rg.labels[w] for w in wins], hash=False)
    sub_blocks = client.scatter([sg.labels[w] for w in wins], hash=False)
    futures = client.map(window_cooccurrence, ref_blocks, sub_blocks,
                         [rg.background] * len(wins), [sg.background] * len(wins), pure=False)
    parts = client.gather(futures)
    pa = rg.pixel_area
    union = float(sum(p[3] for p in parts)) * pa
    a = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
    if a.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Overlap(reference, submission, empty, empty.copy(), np.zeros(0), union,
                       "co-occurrence")
    b = np.concatenate([p[1] for p in parts])
    n = np.concatenate([p[2] for p in parts])
    n_s = max(len(submission), 1)
    ri = label_index(reference.ids, a).astype(np.int64)
    si = label_index(submission.ids, b).astype(np.int64)
    keys, inverse = np.unique(ri * n_s + si, return_inverse=True)
    counts = np.bincount(inverse, weights=n, minlength=keys.size)
    return Overlap(reference, submission, keys // n_s, keys % n_s, counts.astype(float) * pa,
                   union, "co-occurrence")
