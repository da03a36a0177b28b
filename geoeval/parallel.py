"""Vectorised work split over threads: every core for shapely's array functions.

shapely 2 releases the GIL inside its vectorised GEOS calls, so an array
operation cut into slices runs on several cores in threads (no pickling, no
processes). :func:`chunked` does that for any function of aligned arrays whose
result is one value per element; small inputs run in the calling thread.
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from geoeval.cancel import threads

#: Below this many elements the work runs in the calling thread.
MIN_CHUNK = 20_000
#: With a progress reporter, slices of about this many elements (at most 64 per call).
REPORT_CHUNK = 50_000

_REPORTER: ContextVar[Callable[[str, int, int], None] | None] = ContextVar(
    "geoeval_parallel_reporter", default=None)
_REMOTE: ContextVar[Callable[[Callable[[Any], Any], list[Any]], list[Any]] | None] = ContextVar(
    "geoeval_parallel_remote", default=None)
#: The threads one task may use (set to 1 for the tasks :func:`concurrently` runs).
_JOBS: ContextVar[int | None] = ContextVar("geoeval_parallel_jobs", default=None)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused within the block, then restored.

    Reading a layer makes one tracked Python object per geometry; with the
    collector on, its full collections walk every object made so far again and
    again, which made reading a million polygons about twice as slow. geoeval
    makes no reference cycles in bulk, so nothing piles up meanwhile. Nested
    blocks are fine (only the outermost restores the collector).

    Examples
    --------
    >>> import gc
    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def gc_paused(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` run inside :func:`collector_paused`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with collector_paused():
            return func(*args, **kwargs)

    return wrapper


@contextmanager
def remote(mapper: Callable[[Callable[[Any], Any], list[Any]], list[Any]] | None
           ) -> Iterator[None]:
    """Within the block, work that can leave this process (the windowed raster
    scan, :func:`geoeval.io.windowed.scan`) is run as ``mapper(func, items)``, e.g.
    on a Dask cluster (:mod:`geoeval.engine`); ``func`` and the items are
    picklable. ``None`` keeps the work here."""
    token = _REMOTE.set(mapper)
    try:
        yield
    finally:
        _REMOTE.reset(token)


def remote_mapper() -> Callable[[Callable[[Any], Any], list[Any]], list[Any]] | None:
    """The mapper set by :func:`remote`, or ``None``."""
    return _REMOTE.get()


@contextmanager
def reporting(callback: Callable[[str, int, int], None] | None) -> Iterator[None]:
    """Within the block, :func:`chunked` and :func:`query` call
    ``callback(what, done, total)`` as their slices finish (``done = 0`` when a
    call starts), cutting large inputs into more slices so that progress is seen.

    Examples
    --------
    >>> seen = []
    >>> with reporting(lambda what, done, total: seen.append((what, done, total))):
    ...     _ = chunked(np.sqrt, np.arange(120_000.0))
    >>> seen[0], seen[-1]
    (('geometry operations', 0, 4), ('geometry operations', 4, 4))
    """
    token = _REPORTER.set(callback)
    try:
        yield
    finally:
        _REPORTER.reset(token)


def counted(items: Iterable[Any], total: int, what: str) -> Iterator[Any]:
    """``items`` passed through, reported to :func:`reporting`'s callback as
    ``(what, done, total)`` while they are consumed (no-op without a callback)."""
    report = _REPORTER.get()
    if report is None:
        yield from items
        return
    report(what, 0, total)
    for done, item in enumerate(items, start=1):
        yield item
        report(what, done, total)


def _bounds(n: int, n_jobs: int | None, max_slice: int | None = None,
            min_slice: int | None = None) -> tuple[int, np.ndarray | None]:
    """Threads and slice bounds for ``n`` elements (``None``: one call, no slicing)."""
    jobs = min(n_jobs or workers(), max(1, n // (min_slice or MIN_CHUNK)))
    report = _REPORTER.get() is not None and n >= 2 * MIN_CHUNK
    cut = max_slice is not None and n > max_slice
    if jobs <= 1 and not report and not cut:
        return 1, None
    parts = 2 * jobs  # 2 slices per thread
    if report:
        parts = max(parts, min(64, -(-n // REPORT_CHUNK)))
    if cut:
        parts = max(parts, -(-n // max_slice))
    return jobs, np.linspace(0, n, parts + 1).astype(np.int64)


def _run(work: Callable[[int], Any], parts: int, jobs: int, what: str) -> list[Any]:
    """``work(k)`` for ``k < parts`` over ``jobs`` threads, in order, reporting each."""
    if jobs <= 1:
        return list(counted(map(work, range(parts)), parts, what))
    with threads(jobs) as pool:  # queued slices dropped if interrupted
        return list(counted(pool.map(work, range(parts)), parts, what))


def workers() -> int:
    """Threads to use: the cores this process may run on (1 within a task of
    :func:`concurrently`)."""
    cap = _JOBS.get()
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        cores = max(1, os.cpu_count() or 1)
    return cores if cap is None else min(cap, cores)


def concurrently(*tasks: Callable[[], Any]) -> list[Any]:
    """The results of ``task()`` for each task, computed side by side on the cores
    (threads), each task on one thread: its :func:`chunked` calls and other
    :func:`workers`-sized work stay in it. For independent steps of a run that
    each let go of the interpreter (shapely, numpy): without the cap, every step
    would cut its arrays for every core and twice as many threads would wait on
    each other (the CrowdAI table on two cores, mean of three runs: 4.5 s and 7.0 s
    of CPU without the cap, 4.1 s and 6.5 s with it).

    Tasks start in the order given (put the longest first); the first failure is
    raised once all have stopped, and tasks not yet started then never start.

    Examples
    --------
    >>> concurrently(lambda: workers(), lambda: sum(range(10)))
    [1, 45]
    """
    from contextvars import copy_context

    jobs = min(workers(), len(tasks))

    def one(task: Callable[[], Any]) -> Any:
        token = _JOBS.set(1)
        try:
            return task()
        finally:
            _JOBS.reset(token)

    if jobs <= 1:
        return [one(task) for task in tasks]
    with threads(jobs) as pool:
        futures = [pool.submit(copy_context().run, one, task) for task in tasks]
        return [f.result() for f in futures]


def chunked(func: Callable[..., np.ndarray], *arrays: Any, n_jobs: int | None = None,
            max_slice: int | None = None, min_slice: int | None = None) -> Any:
    """``func(*arrays)`` computed on slices of the arrays in threads, concatenated.

    ``func`` must map aligned arrays to one result per element (e.g.
    ``lambda a, b: shapely.area(shapely.intersection(a, b))``); the result equals
    the single call exactly. ``max_slice`` caps the elements of one call, for work
    whose temporary arrays are many times its input (they then stay in cache);
    ``min_slice`` is the least worth a thread (default :data:`MIN_CHUNK`; lower it
    for costly elements, such as overlays of polygons).

    Examples
    --------
    >>> import shapely
    >>> a = shapely.box(np.arange(5.0), 0, np.arange(5.0) + 2, 1)
    >>> chunked(lambda x, y: shapely.area(shapely.intersection(x, y)), a, a[::-1]).tolist()
    [0.0, 0.0, 2.0, 0.0, 0.0]
    """
    n = len(arrays[0])
    jobs, bounds = _bounds(n, n_jobs, max_slice, min_slice)
    if bounds is None:
        return func(*arrays)

    def part(k: int) -> Any:
        sl = slice(int(bounds[k]), int(bounds[k + 1]))
        return func(*(x[sl] for x in arrays))

    return np.concatenate(_run(part, len(bounds) - 1, jobs, "geometry operations"))


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
    jobs, bounds = _bounds(n, n_jobs)
    if bounds is None:
        return tree.query(geoms, predicate=predicate)

    def part(k: int) -> np.ndarray:
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        pairs = tree.query(geoms[lo:hi], predicate=predicate)
        pairs[0] += lo
        return pairs

    return np.concatenate(_run(part, len(bounds) - 1, jobs, "spatial index queries"), axis=1)
