"""Hilbert keys: the one spatial order the Dask engine cuts layers into partitions by.

An object's key is the distance, along a Hilbert curve of ``2**level`` cells a side
laid over ``bounds``, of the cell holding the centre of its bounding box (Hilbert
1891; the iterative ``xy → d`` conversion, Warren 2013, *Hacker's Delight*, §16-2).
Nearby objects get nearby keys, so a run of consecutive keys is a compact region:
both Dask routes that partition vector layers (by partitions on the workers,
:mod:`geoeval.engine.layers`; the overlap of layers held by the client,
:mod:`geoeval.engine.client_overlap`) cut the key order into runs.
"""

from __future__ import annotations

import numpy as np

#: Level of the curve: ``2**16`` cells a side.
LEVEL = 16


def hilbert_keys(boxes: np.ndarray, bounds: tuple[float, float, float, float],
                 level: int = LEVEL) -> np.ndarray:
    """The Hilbert key (int64) of each bounding box ``(xmin, ymin, xmax, ymax)``.

    Centres outside ``bounds`` are clipped onto them (bounds from metadata may be a
    little too small); a box without coordinates (an empty geometry) gets key 0.

    Examples
    --------
    >>> hilbert_keys(np.array([[0, 0, 0, 0], [0, 3, 0, 3], [3, 3, 3, 3], [3, 0, 3, 0.]]),
    ...              (0, 0, 3, 3), level=1).tolist()  # the four cells in curve order
    [0, 1, 2, 3]
    """
    boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
    side = (1 << level) - 1
    cells = []
    for lo, hi, mid in ((bounds[0], bounds[2], (boxes[:, 0] + boxes[:, 2]) / 2),
                        (bounds[1], bounds[3], (boxes[:, 1] + boxes[:, 3]) / 2)):
        width = hi - lo
        with np.errstate(invalid="ignore"):
            v = (mid - lo) * (side / width) if width > 0 else np.zeros_like(mid)
        v = np.clip(np.nan_to_num(v, nan=0.0), 0, side)
        cells.append(v.astype(np.int64))
    return hilbert_distance(cells[0], cells[1], level)


def hilbert_distance(x: np.ndarray, y: np.ndarray, level: int = LEVEL) -> np.ndarray:
    """Distance along the Hilbert curve of cells ``(x, y)`` in ``[0, 2**level)``.

    Examples
    --------
    >>> hilbert_distance(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 0]), 1).tolist()
    [0, 1, 2, 3]
    """
    n = 1 << level
    x = np.asarray(x, dtype=np.int64).copy()
    y = np.asarray(y, dtype=np.int64).copy()
    d = np.zeros(x.shape, dtype=np.int64)
    s = n >> 1
    while s > 0:
        rx = (x & s) > 0
        ry = (y & s) > 0
        d += s * s * ((3 * rx.astype(np.int64)) ^ ry.astype(np.int64))
        flip = rx & ~ry  # rotate the quadrant so the sub-curve starts where it should
        x = np.where(flip, n - 1 - x, x)
        y = np.where(flip, n - 1 - y, y)
        x, y = np.where(ry, x, y), np.where(ry, y, x)
        s >>= 1
    return d


def runs(keys: np.ndarray, k: int) -> list[np.ndarray]:
    """Positions of the objects in ``k`` runs of consecutive keys of about equal size
    (a stable order: equal keys keep their layer order)."""
    order = np.argsort(np.asarray(keys), kind="stable")
    return [part for part in np.array_split(order, max(1, k)) if part.size]
