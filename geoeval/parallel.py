"""Vectorised work split over threads: every core for shapely's array functions.

shapely 2 releases the GIL inside its vectorised GEOS calls, so an array
operation cut into slices runs on several cores in threads (no pickling, no
processes). :func:`chunked` does that for any function of aligned arrays whose
result is one value per element; small inputs run in the calling thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

#: Below this many elements the work runs in the calling thread.
MIN_CHUNK = 20_000


def workers() -> int:
    """Threads to use: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def chunked(func: Callable[..., np.ndarray], *arrays: Any, n_jobs: int | None = None) -> Any:
    """``func(*arrays)`` computed on slices of the arrays in threads, concatenated.

    ``func`` must map aligned arrays to one result per element (e.g.
    ``lambda a, b: shapely.area(shapely.intersection(a, b))``); the result equals
    the single call exactly.

    Examples
    --------
    >>> import shapely
    >>> a = shapely.box(np.arange(5.0), 0, np.arange(5.0) + 2, 1)
    >>> chunked(lambda x, y: shapely.area(shapely.intersection(x, y)), a, a[::-1]).tolist()
    [0.0, 0.0, 2.0, 0.0, 0.0]
    """
    n = len(arrays[0])
    jobs = min(n_jobs or workers(), max(1, n // MIN_CHUNK))
    if jobs <= 1:
        return func(*arrays)
    bounds = np.linspace(0, n, 2 * jobs + 1).astype(np.int64)  # 2 slices per thread
    slices = [slice(int(s), int(e)) for s, e in zip(bounds[:-1], bounds[1:], strict=True)]
    with ThreadPoolExecutor(jobs) as pool:
        parts = list(pool.map(lambda s: func(*(x[s] for x in arrays)), slices))
    return np.concatenate(parts)


def query(tree: Any, geoms: np.ndarray, predicate: str, n_jobs: int | None = None) -> np.ndarray:
    """``tree.query(geoms, predicate=...)`` (a shapely ``STRtree``) with the query
    geometries split over threads: the same ``2 × k`` index array, in the same order.

    Examples
    --------
    >>> import shapely
    >>> boxes = shapely.box(np.arange(4.0), 0, np.arange(4.0) + 1.5, 1)
    >>> query(shapely.STRtree(boxes), boxes, "intersects").tolist()[1][:4]
    [0, 1, 0, 1]
    """
    n = len(geoms)
    jobs = min(n_jobs or workers(), max(1, n // MIN_CHUNK))
    if jobs <= 1:
        return tree.query(geoms, predicate=predicate)
    bounds = np.linspace(0, n, 2 * jobs + 1).astype(np.int64)

    def part(k: int) -> np.ndarray:
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        pairs = tree.query(geoms[lo:hi], predicate=predicate)
        pairs[0] += lo
        return pairs

    with ThreadPoolExecutor(jobs) as pool:
        return np.concatenate(list(pool.map(part, range(len(bounds) - 1))), axis=1)
