"""All (detection, ground truth) pairs that share a group key (image, or image × class).

The box protocols compare a detection only with the ground truth of its own
image (and class). Instead of one small dense IoU matrix per image in a Python
loop, the pairs of every group are listed at once with ``numpy.repeat`` and
scored by one vectorised IoU call; no array spans the whole data set in both
dimensions (the pair count is ``Σ_g D_g·G_g``, not ``D·G``).
"""

from __future__ import annotations

import numpy as np


def group_pairs(det_key: np.ndarray, gt_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(d, g)`` with ``det_key[d] == gt_key[g]``.

    Parameters
    ----------
    det_key, gt_key : numpy.ndarray
        Integer group key of each detection and each ground-truth box.

    Returns
    -------
    det_index, gt_index : numpy.ndarray
        int64 arrays, sorted by detection index, and for one detection by
        ground-truth index (file order).

    Examples
    --------
    >>> d, g = group_pairs(np.array([0, 1, 0]), np.array([1, 0, 0]))
    >>> d.tolist(), g.tolist()
    ([0, 0, 1, 2, 2], [1, 2, 0, 1, 2])
    """
    det_key = np.asarray(det_key, dtype=np.int64)
    gt_key = np.asarray(gt_key, dtype=np.int64)
    if det_key.size == 0 or gt_key.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    order = np.argsort(gt_key, kind="stable")
    sorted_keys = gt_key[order]
    start = np.searchsorted(sorted_keys, det_key, side="left")
    count = np.searchsorted(sorted_keys, det_key, side="right") - start
    total = int(count.sum())
    det_index = np.repeat(np.arange(det_key.size, dtype=np.int64), count)
    first = np.cumsum(count) - count
    offset = np.arange(total, dtype=np.int64) - np.repeat(first, count)
    gt_index = order[np.repeat(start, count) + offset]
    return det_index, gt_index
