"""Small array primitives the pipeline stages share.

:func:`unique` exists because ``numpy.unique`` called without ``return_index``,
``return_inverse`` or ``return_counts`` finds integer and text values with a hash
table since numpy 2.3, which is much slower than one sort when most values are
distinct (numpy 2.4, measured here: one million distinct int64 ids 0.6 s instead
of 6 ms; 37,000 annotation ids 2.5 ms instead of 0.1 ms).
"""

from __future__ import annotations

import sys
from dataclasses import fields
from typing import Any

import numpy as np


def unique(values: Any) -> np.ndarray:
    """The sorted distinct values of an array (flattened), as ``numpy.unique`` gives them.

    Integers, booleans and text are sorted once and their runs of equal values
    cut; other dtypes (floats, whose NaNs ``numpy.unique`` merges, objects) go to
    ``numpy.unique``.

    Examples
    --------
    >>> unique(np.array([3, 1, 3, 2, 1])).tolist()
    [1, 2, 3]
    >>> unique([]).size
    0
    """
    a = np.asarray(values)
    if a.dtype.kind not in "biuUS":
        return np.unique(a)
    a = np.sort(a, axis=None)
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def has_duplicates(values: Any) -> bool:
    """Whether some value occurs more than once (as :func:`unique` tells them apart)."""
    return unique(values).size != np.asarray(values).size


def expand(owner: np.ndarray, start: np.ndarray, stop: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(owner[i], j)`` for ``j`` in ``start[i]:stop[i]``, in order (ranges of a
    CSR layout listed at once, with ``numpy.repeat``).

    Examples
    --------
    >>> o, j = expand(np.array([7, 8]), np.array([0, 5]), np.array([2, 8]))
    >>> o.tolist(), j.tolist()
    ([7, 7, 8, 8, 8], [0, 1, 5, 6, 7])
    """
    k = np.maximum(stop - start, 0)
    j = np.repeat(start, k) + (np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k))
    return np.repeat(owner, k), j


def lookup(ids: Any, values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Position of each of ``values`` in ``ids`` (sorted, distinct integers) and whether
    it is there.

    Where a value is found, ``ids[pos] == value``; elsewhere ``pos`` is some valid
    position. One table over the ids' range (a gather) when that range and the ids
    are at most a few times as many as the values, else a binary search. Integers are
    compared in the values' dtype (the ids must fit it): never through floats.

    Examples
    --------
    >>> pos, found = lookup(np.array([3, 5, 9]), np.array([9, 4, 3]))
    >>> pos[found].tolist(), found.tolist()
    ([2, 0], [True, False, True])
    """
    ids = np.asarray(ids)
    values = np.asarray(values)
    if ids.size == 0:
        return np.zeros(values.shape, np.intp), np.zeros(values.shape, bool)
    integers = values.dtype.kind in "iu"
    if integers and ids.dtype != values.dtype:
        ids = ids.astype(values.dtype)
    lo, hi = int(ids[0]), int(ids[-1])
    if integers and max(hi - lo, ids.size) <= 4 * values.size + 1024:
        wide = np.int64 if ids.dtype.kind == "i" else np.uint64
        table = np.full(hi - lo + 2, -1, dtype=np.intp)  # last slot: outside the range
        table[(ids.astype(wide) - wide(lo)).astype(np.intp)] = np.arange(ids.size)
        inside = (values >= lo) & (values <= hi)
        with np.errstate(over="ignore"):  # wrapped offsets are outside, and not used
            offset = np.where(inside, values.astype(wide) - wide(lo), wide(hi - lo + 1))
        pos = table[offset.astype(np.intp)]
        found = pos >= 0
        return np.maximum(pos, 0), found
    pos = np.minimum(np.searchsorted(ids, values), ids.size - 1)
    return pos, ids[pos] == values


def nbytes(value: Any) -> int:
    """Memory held by ``value``: arrays (an object array's items estimated from 64 of
    them: WKB, text ids), and the dicts, lists and tuples of them the tasks return.

    Dask sizes a task's result with ``sizeof`` (``sys.getsizeof`` for a dataclass:
    a few bytes) to decide what to spill to disk; the dataclasses that hold a task's
    arrays (:class:`SizedByArrays`) report this instead, so a worker holding many
    partitions or block scans spills them rather than growing past its memory limit."""
    if value is None:
        return 0
    if isinstance(value, np.ndarray):
        if value.dtype != object or value.size == 0:
            return int(value.nbytes)
        flat = value.ravel()
        sample = flat[:: max(1, flat.size // 64)]
        return int(value.nbytes + flat.size * sum(map(sys.getsizeof, sample)) / sample.size)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v) for v in value)
    if hasattr(value, "schema") and hasattr(value, "nbytes"):  # an Arrow table
        return int(value.nbytes)
    return sys.getsizeof(value)


class SizedByArrays:
    """Mixin for a dataclass of arrays: ``sys.getsizeof`` (hence Dask's ``sizeof``, which
    decides what a worker spills) is its fields' :func:`nbytes`."""

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + sum(nbytes(getattr(self, f.name))
                                             for f in fields(self))  # type: ignore[arg-type]
