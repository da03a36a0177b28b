"""Mallows shape score of match instances (Özdemir et al. 2010, §4.2, eq. 7–13).

For a match instance, ``U`` are the pixels of its reference objects and ``V``
those of its submitted objects (Özdemir et al. 2010, §4.2). Each pixel's mass is its
Euclidean distance to the boundary of its own object, normalised to sum to 1
per side; the Mallows distance is the earth mover's distance (EMD) between the
two distributions with Euclidean ground distance between pixel centres; the
instance score is eq. 12, ``1 − EMD / max_{u∈U, v∈V} ‖u − v‖``, and the scene
score eq. 13, the mean over instances.

How it is computed
------------------
* Masses: ``scipy.ndimage.distance_transform_edt`` of each object's own mask in
  its bounding box padded by one background pixel (exactly the transform of the
  whole mask: nearest outside pixel is never beyond the pad), with
  ``sampling = (row step, column step)`` so masses are **CRS distances**. A
  boundary pixel weighs one pixel step (the distance between its centre and the
  neighbouring outside pixel's centre); outside the raster is background.
* Transport: with a metric ground cost the EMD equals the EMD between the
  positive and the negative parts of ``μ − ν`` (Kantorovich–Rubinstein), so the
  mass two distributions share on a pixel stays put and both sides shrink.
  That smaller problem is solved exactly by POT's network simplex
  (:func:`geoeval.measures.transport.transport`): on the dense cost matrix for
  small problems, on a sparse set of candidate pairs certified optimal by
  duality for large ones; ``numItermax`` is set high and the result code
  checked (:class:`~geoeval.errors.SolverError` otherwise).
* Normaliser: the largest distance between a pixel centre of ``U`` and one of
  ``V`` is attained at vertices of their convex hulls; the hulls are built from
  the first and last pixel of each row (the only hull-vertex candidates).
* Instances are independent: they run in a process pool (``n_jobs``), which
  receives only the per-object mask windows, never the rasters.
* Approximation (never silent): when a side of ``μ − ν`` has more than
  :data:`EXACT_LIMIT` pixels (or always, with ``approximate=True``) the masses
  are pooled into ``k × k`` blocks of the grid, ``k`` being the smallest giving
  at most :data:`POOL_TARGET` cells per side, each block's mass sitting at its
  centre. Moving every unit of mass by at most half a block diagonal on each
  side changes the EMD by at most ``(k − 1)·√(Δr² + Δc²)`` (``√2·(k − 1)``
  pixel steps for square pixels); that bound divided by the normaliser is
  reported per instance as ``error_bound``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.errors import InputError
from geoeval.matching.result import Instance, InstanceArrays, Matching
from geoeval.measures.rasterize import Window, WorkGrid, choose_grid, mask_source
from geoeval.measures.transport import DENSE_LIMIT, transport
from geoeval.objects import ObjectSet
from geoeval.sums import exact_sum

#: Exact EMD while both sides of ``μ − ν`` have at most this many pixels
#: (``approximate=None``). Larger instances are pooled and flagged.
EXACT_LIMIT = 10_000
#: A pooled problem has at most this many cells per side.
POOL_TARGET = 3_000
#: Largest |pooled score − exact score| measured on the test set of
#: ``benchmarks/bench_mallows.py --approx`` (pooling forced on every instance).
MEASURED_POOLING_ERROR = 2.7e-4
#: Description of that test set.
MEASURED_ON = (
    "benchmarks/bench_mallows.py --approx: max 3.1e-5 with POOL_TARGET=3000 (k=2) on 8 "
    "synthetic instances of 3 600-9 000 px per object; max 2.6e-4 on 266 sample-scene MOM "
    "instances pooled with k=2..7 (targets 200 and 100 cells)"
)
#: Below this estimated work (pixel pairs ``|U|·|V|`` summed over instances) one process is used.
SERIAL_WORK = 2_000_000

METHOD = "distance-transform EMD on mu - nu (POT network simplex, exact)"


@dataclass(frozen=True)
class MallowsResult:
    """Mallows scores of match instances (Özdemir et al. 2010, eq. 12–13).

    Attributes
    ----------
    scores : numpy.ndarray
        Eq. 12 per instance, in the order given; NaN where undefined (a side
        covers no pixel centre of the grid).
    scene : float or None
        Eq. 13, the mean of the defined instance scores; ``None`` without any.
    approximated : numpy.ndarray of bool
        Instances whose masses were pooled into blocks.
    emd : numpy.ndarray
        The Mallows distance (EMD, CRS units) of each instance.
    max_distance : numpy.ndarray
        The normaliser ``max ‖u − v‖`` (CRS units).
    block : numpy.ndarray of int
        Pooling block size ``k`` (1 = exact).
    error_bound : numpy.ndarray
        Guaranteed bound on ``|score − exact score|`` (0 when exact).
    solver : numpy.ndarray of str
        ``dense`` (``ot.emd2``), ``lazy`` (``ot.emd2_lazy``) or ``none``
        (nothing to move).
    grid : str
        Where the grid came from: ``reference``, ``submission`` or ``resolution``.
    pixel_steps : tuple of float
        Row and column step of the grid (CRS units).
    approximation : dict
        ``mode`` (``auto``/``on``/``off``), ``exact_limit``, ``pool_target``,
        ``measured_error`` and ``measured_on``.
    n_jobs : int
        Processes used.
    """

    scores: np.ndarray
    scene: float | None
    approximated: np.ndarray
    emd: np.ndarray
    max_distance: np.ndarray
    block: np.ndarray
    error_bound: np.ndarray
    solver: np.ndarray
    grid: str
    pixel_steps: tuple[float, float]
    approximation: dict[str, Any] = field(default_factory=dict)
    n_jobs: int = 1
    method: str = METHOD

    def __repr__(self) -> str:
        from geoeval.reprs import counted, number

        return (f"<MallowsResult {counted(self.scores.size, 'instance')}, scene score "
                f"{number(self.scene)}>")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (instance lists in the order given)."""

        def num(v: float) -> float | None:
            return None if not np.isfinite(v) else float(v)

        solvers, counts = np.unique(self.solver, return_counts=True)
        return {
            **details(self.scene, self.grid, self.pixel_steps, int(np.isnan(self.scores).sum()),
                      {str(s): int(c) for s, c in zip(solvers, counts, strict=True)},
                      self.approximation, int(self.approximated.sum()),
                      float(self.error_bound.max()) if self.error_bound.size else 0.0,
                      self.method),
            "instances": [
                {
                    "mallows": num(s),
                    "emd": num(e),
                    "max_distance": num(m),
                    "approximated": bool(a),
                    "block": int(k),
                    "error_bound": float(b),
                }
                for s, e, m, a, k, b in zip(
                    self.scores,
                    self.emd,
                    self.max_distance,
                    self.approximated,
                    self.block,
                    self.error_bound,
                    strict=True,
                )
            ],
        }


def details(scene: float | None, grid: str, pixel_steps: tuple[float, float],
            n_undefined: int, solver: dict[str, int], approximation: dict[str, Any],
            n_approximated: int, max_error_bound: float, method: str = METHOD
            ) -> dict[str, Any]:
    """The report's ``mallows_details`` (:meth:`MallowsResult.to_dict` without the
    instances) from its parts: the scene score (eq. 13), where the grid came from and
    its steps, undefined instances, instances per solver, the approximation settings
    (:func:`approximation_info`) with the pooled instances and their largest bound."""
    approx = dict(approximation)
    approx["n_approximated"] = int(n_approximated)
    approx["max_error_bound"] = float(max_error_bound)
    measured = approx.get("measured_error", float("nan"))
    approx["measured_error"] = float(measured) if np.isfinite(measured) else None
    return {"scene": scene, "method": method, "grid": grid, "pixel_steps": list(pixel_steps),
            "n_undefined": int(n_undefined), "solver": dict(solver), "approximation": approx}


def mallows_sums(mal: MallowsResult) -> dict[str, Any]:
    """The additive part of a :class:`MallowsResult`, with its grid: the exact sum and
    number of the defined instance scores (eq. 13 is their ratio), undefined instances,
    instances per solver, pooled instances and their largest error bound, and the grid,
    its steps, the approximation settings and the method (the same in every part of a
    scene). Parts of a scene add up (:func:`add_mallows_sums`) to the scene's."""
    scores = mal.scores[~np.isnan(mal.scores)]
    solvers, n = np.unique(mal.solver, return_counts=True)
    return {"sum": exact_sum(scores), "n": int(scores.size),
            "undefined": int(mal.scores.size - scores.size),
            "solver": {str(k): int(v) for k, v in zip(solvers, n, strict=True)},
            "approximated": int(mal.approximated.sum()),
            "max_error_bound": float(mal.error_bound.max()) if mal.error_bound.size else 0.0,
            "grid": mal.grid, "pixel_steps": list(mal.pixel_steps),
            "approximation": dict(mal.approximation), "method": mal.method}


def add_mallows_sums(a: dict[str, Any] | None,
                     b: dict[str, Any] | None) -> dict[str, Any] | None:
    """Two :func:`mallows_sums` added (``None`` when neither was computed); the grid's
    description is ``a``'s."""
    if a is None or b is None:
        return a if b is None else b
    solver = dict(a["solver"])
    for k, v in b["solver"].items():
        solver[k] = solver.get(k, 0) + v
    return {**a, "sum": a["sum"] + b["sum"], "n": a["n"] + b["n"],
            "undefined": a["undefined"] + b["undefined"], "solver": dict(sorted(solver.items())),
            "approximated": a["approximated"] + b["approximated"],
            "max_error_bound": max(a["max_error_bound"], b["max_error_bound"])}


def details_from_sums(sums: dict[str, Any], scene: float | None) -> dict[str, Any]:
    """The report's ``mallows_details`` from :func:`mallows_sums` (of a scene, or added
    over its parts) and the scene score: :func:`details`."""
    return details(scene, sums["grid"], tuple(sums["pixel_steps"]), sums["undefined"],
                   sums["solver"], sums["approximation"], sums["approximated"],
                   sums["max_error_bound"], sums["method"])


def approximation_info(approximate: bool | None) -> dict[str, Any]:
    """The approximation settings a run reports (``mode``: ``auto``, ``on``, ``off``)."""
    return {
        "mode": {None: "auto", True: "on", False: "off"}[approximate],
        "exact_limit": EXACT_LIMIT,
        "pool_target": POOL_TARGET,
        "measured_error": MEASURED_POOLING_ERROR,
        "measured_on": MEASURED_ON,
    }


@dataclass(frozen=True)
class _Params:
    """What a worker needs besides the windows (small, pickled once per chunk)."""

    affine: tuple[float, float, float, float, float, float]
    sampling: tuple[float, float]
    mode: str  # auto | on | off
    exact_limit: int
    pool_target: int
    dense_limit: int


# (score, emd, max_distance, block, error_bound, solver)
_Out = tuple[float, float, float, int, float, str]
# (instance position, reference windows, submission windows)
_Item = tuple[int, list[Window], list[Window]]


def mallows_scores(
    reference: ObjectSet,
    submission: ObjectSet,
    instances: Matching | InstanceArrays | Sequence[Instance],
    *,
    resolution: float | None = None,
    approximate: bool | None = None,
    n_jobs: int | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    executor: Any = None,
) -> MallowsResult:
    """Mallows score of every match instance and their scene mean.

    Parameters
    ----------
    reference, submission : ObjectSet
        The two sides, in one CRS; ``Instance.reference``/``.submission`` index them.
    instances : Matching, InstanceArrays or sequence of Instance
        Match instances of any matcher (a matching's instances in their order).
    resolution : float, optional
        Grid step (CRS units) when neither side is a raster (required then).
        Otherwise vectors are rasterised on the reference grid (or on the
        submission grid when only the submission is a raster).
    approximate : bool, optional
        ``None``: exact unless a side of ``μ − ν`` exceeds :data:`EXACT_LIMIT`
        pixels (then pooled and flagged). ``True``: pool every instance above
        :data:`POOL_TARGET`. ``False``: always exact.
    n_jobs : int, optional
        Worker processes; default every core this process may use.
    progress : callable, optional
        ``progress(done, total, fraction)`` as instances are scored; ``fraction`` is
        the share of the estimated work (``|U|·|V|`` per instance) done.
    executor : concurrent.futures.Executor, optional
        Run the chunks of instances there instead of in a local process pool
        (e.g. ``distributed.Client.get_executor()``: the Dask engine); ``n_jobs``
        then sets how many chunks to aim for per worker. The same batches (chunks
        of instances by estimated work, at most 256 each) are submitted, never one
        task per instance; the executor is not shut down.

    Returns
    -------
    MallowsResult

    Raises
    ------
    InputError
        Both sides are vectors and ``resolution`` is missing; a sheared grid;
        an instance index out of range.
    SolverError
        POT's network simplex did not reach optimality.

    Notes
    -----
    Özdemir et al. (2010), §4.2: masses from the distance transform, eq. 7–11
    (Mallows distance = EMD), eq. 12 (instance score) and eq. 13 (scene mean);
    conventions in ``docs/mallows.md``.

    Examples
    --------
    >>> import numpy as np
    >>> from geoeval.io.raster import objects_from_labels
    >>> from geoeval.matching.result import Instance, InstanceArrays, Matching
    >>> a = np.zeros((6, 6), dtype=np.int32); a[1:5, 1:5] = 1
    >>> ref = objects_from_labels(a); sub = objects_from_labels(a)
    >>> mallows_scores(ref, sub, [Instance((0,), (0,), 16.0, "one-to-one")]).scene
    1.0
    """
    arrays = _as_arrays(instances)
    grid = choose_grid(reference, submission, resolution)
    mode = {None: "auto", True: "on", False: "off"}[approximate]
    params = _params(grid, mode)
    jobs = _jobs(n_jobs)
    approx_info = approximation_info(approximate)
    n = len(arrays)
    nr, ns = len(reference), len(submission)
    ref_idx, sub_idx, ref_ptr, sub_ptr = (arrays.ref_idx, arrays.sub_idx, arrays.ref_ptr,
                                          arrays.sub_ptr)
    bad = np.flatnonzero(np.bincount(arrays.ref_instance()[(ref_idx < 0) | (ref_idx >= nr)],
                                     minlength=n)
                         + np.bincount(arrays.sub_instance()[(sub_idx < 0) | (sub_idx >= ns)],
                                       minlength=n))
    if bad.size:
        k = int(bad[0])
        raise InputError(f"instance {k} (references {ref_idx[ref_ptr[k]:ref_ptr[k + 1]].tolist()}"
                         f", submitted objects {sub_idx[sub_ptr[k]:sub_ptr[k + 1]].tolist()}) "
                         "refers to objects that do not exist")
    ref_src = mask_source(reference, grid)
    sub_src = mask_source(submission, grid)
    # work estimate |U|·|V| in pixels from the object areas: chunks are formed (and
    # their windows cut) before anything is rasterised, so cutting overlaps solving
    pixel_area = abs(grid.transform.a * grid.transform.e - grid.transform.b * grid.transform.d)
    ref_mass = np.bincount(arrays.ref_instance(), weights=reference.areas[ref_idx], minlength=n)
    sub_mass = np.bincount(arrays.sub_instance(), weights=submission.areas[sub_idx],
                           minlength=n)
    work = ref_mass * sub_mass / (pixel_area * pixel_area)

    def item(i: int) -> _Item:
        return (
            i,
            [ref_src.window(k) for k in ref_idx[ref_ptr[i]:ref_ptr[i + 1]].tolist()],
            [sub_src.window(k) for k in sub_idx[sub_ptr[i]:sub_ptr[i + 1]].tolist()],
        )

    if executor is not None and n:
        jobs_used = jobs
        outs = _run_pool(params, item, work, jobs, progress, executor=executor)
    elif jobs == 1 or n < 2 or work.sum() < SERIAL_WORK:
        jobs_used = 1
        outs = {}
        done_work, total_work = 0.0, max(float(work.sum()), 1e-300)
        for i in range(n):
            outs[i] = instance_mallows(*item(i)[1:], params)
            done_work += work[i]
            if progress is not None:
                progress(i + 1, n, done_work / total_work)
    else:
        jobs_used = jobs
        outs = _run_pool(params, item, work, jobs, progress)
    cols = list(zip(*(outs[i] for i in range(n)), strict=True)) if n else [()] * 6
    scores = np.asarray(cols[0], dtype=float)
    block = np.asarray(cols[3], dtype=np.int64)
    return MallowsResult(
        scores=scores,
        scene=scene_score(scores),
        approximated=block > 1,
        emd=np.asarray(cols[1], dtype=float),
        max_distance=np.asarray(cols[2], dtype=float),
        block=block,
        error_bound=np.asarray(cols[4], dtype=float),
        solver=np.asarray(cols[5], dtype=str) if n else np.zeros(0, dtype=str),
        grid=grid.source,
        pixel_steps=grid.sampling,
        approximation=approx_info,
        n_jobs=jobs_used,
    )


def scene_score(scores: np.ndarray) -> float | None:
    """Scene Mallows score (Özdemir et al. 2010, eq. 13): the mean of the instance
    scores (eq. 12) that are defined (NaN ones left out); ``None`` with none.

    Examples
    --------
    >>> scene_score(np.array([0.5, np.nan, 1.0])), scene_score(np.zeros(0))
    (0.75, None)
    """
    defined = np.asarray(scores, float)
    defined = defined[~np.isnan(defined)]
    # the exact sum rounded once (geoeval.sums): the same for a scene scored by parts
    return float(exact_sum(defined)) / defined.size if defined.size else None


def pooling_warning(matcher: str, n_pooled: int, max_bound: float) -> str:
    """The warning of a run where ``n_pooled`` instances of ``matcher`` were pooled,
    naming the option as the caller knows it (:func:`geoeval.validate.spelled`)."""
    from geoeval.validate import spelled

    return (f"{matcher}: {n_pooled} large instance(s) scored by block pooling (above "
            f"{EXACT_LIMIT} pixels a side; error bound {max_bound:.2g}); pass "
            f"{spelled('approximate=False', '--exact')} for exact scores")


def _as_arrays(instances: Matching | InstanceArrays | Sequence[Instance]) -> InstanceArrays:
    if isinstance(instances, Matching):
        return instances.arrays
    if isinstance(instances, InstanceArrays):
        return instances
    return InstanceArrays.from_instances(tuple(instances))


def _params(grid: WorkGrid, mode: str) -> _Params:
    t = grid.transform
    return _Params(
        affine=(t.a, t.b, t.c, t.d, t.e, t.f),
        sampling=grid.sampling,
        mode=mode,
        exact_limit=EXACT_LIMIT,
        pool_target=POOL_TARGET,
        dense_limit=DENSE_LIMIT,
    )


def _jobs(n_jobs: int | None) -> int:
    if n_jobs is None:
        from geoeval.parallel import workers

        return workers()
    if n_jobs < 1:
        raise InputError(f"n_jobs must be at least 1, got {n_jobs}")
    return int(n_jobs)


def _run_pool(
    params: _Params, item: Callable[[int], _Item], work: np.ndarray, jobs: int,
    progress: Callable[[int, int, float], None] | None = None,
    executor: Any = None,
) -> dict[int, _Out]:
    """Chunks of instances, biggest first, spread over ``jobs`` processes (or over
    ``executor``'s workers when one is given; it is left running).

    Each chunk carries only its instances' mask windows, cut just before it is
    submitted (so cutting overlaps the workers' solving).
    """
    import multiprocessing as mp

    # fork: no interpreter start-up, and no re-import of the caller's __main__ (which
    # spawn/forkserver need, and which breaks scripts without a main guard). The
    # children only run numpy/scipy/POT on the windows they receive, so threads of
    # the parent (e.g. a progress bar) are harmless. Elsewhere: spawn.
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    order = np.argsort(-work, kind="stable")
    budget = max(float(work.sum()) / (8 * jobs), 1.0)
    chunks: list[list[int]] = [[]]
    acc = 0.0
    for i in order.tolist():
        chunks[-1].append(i)
        acc += work[i]
        if acc >= budget or len(chunks[-1]) >= 256:
            chunks.append([])
            acc = 0.0
    outs: dict[int, _Out] = {}
    from concurrent.futures import as_completed

    total_work = max(float(work.sum()), 1e-300)
    done_work = 0.0
    from contextlib import nullcontext

    from geoeval.cancel import process_pool

    # an owned pool's workers are stopped at once if the run fails or is interrupted
    with process_pool(jobs, ctx) if executor is None else nullcontext(executor) as pool:
        futures = {pool.submit(_run_chunk, params, [item(i) for i in c]): c
                   for c in chunks if c}
        for fut in as_completed(futures):
            outs.update(fut.result())
            done_work += float(work[futures[fut]].sum())
            if progress is not None:
                progress(len(outs), work.size, done_work / total_work)
    return outs


def _run_chunk(params: _Params, items: list[_Item]) -> list[tuple[int, _Out]]:
    return [(i, instance_mallows(ref, sub, params)) for i, ref, sub in items]


def _side_masses(
    windows: list[Window], sampling: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows, cols, distance-transform masses, and hull candidates of one side.

    The masses are ``distance_transform_edt`` of each object's mask in its box
    padded by one background pixel (CRS units via ``sampling``).
    """
    from scipy.ndimage import distance_transform_edt

    rows, cols, mass, er, ec = [], [], [], [], []
    for r0, c0, m in windows:
        if m.size == 0 or not m.any():
            continue
        padded = np.zeros((m.shape[0] + 2, m.shape[1] + 2), dtype=bool)
        padded[1:-1, 1:-1] = m
        dt = distance_transform_edt(padded, sampling=sampling)
        rr, cc = np.nonzero(m)
        rows.append(rr + r0)
        cols.append(cc + c0)
        mass.append(dt[rr + 1, cc + 1])
        # first and last pixel of every row: the only convex-hull vertex candidates
        has = np.flatnonzero(m.any(axis=1))
        first = m.argmax(axis=1)[has]
        last = m.shape[1] - 1 - m[:, ::-1].argmax(axis=1)[has]
        er.append(np.concatenate([has, has]) + r0)
        ec.append(np.concatenate([first, last]) + c0)
    if not rows:
        e = np.zeros(0, dtype=np.int64)
        return e, e, np.zeros(0), e, e
    cat = np.concatenate
    return cat(rows), cat(cols), cat(mass), cat(er), cat(ec)


def _to_crs(rows: np.ndarray, cols: np.ndarray, affine: tuple[float, ...]) -> np.ndarray:
    """CRS coordinates of points given in (fractional) grid index coordinates."""
    a, b, c, d, e, f = affine
    return np.column_stack([a * cols + b * rows + c, d * cols + e * rows + f])


def _hull(points: np.ndarray) -> np.ndarray:
    """Vertices of the convex hull of ``points`` (or a superset for degenerate sets)."""
    from scipy.spatial import ConvexHull, QhullError

    pts = np.unique(points, axis=0)
    if pts.shape[0] <= 3:
        return pts
    try:
        return pts[ConvexHull(pts).vertices]
    except QhullError:  # collinear: the segment's ends are extreme in x or in y
        idx = [pts[:, 0].argmin(), pts[:, 0].argmax(), pts[:, 1].argmin(), pts[:, 1].argmax()]
        return pts[np.unique(idx)]


def max_distance(hull_u: np.ndarray, hull_v: np.ndarray) -> float:
    """``max ‖u − v‖`` over two point sets, from their convex hulls (eq. 12 denominator).

    ``hull_u``/``hull_v`` hold candidate points (any superset of the hull
    vertices, e.g. the first and last pixel of each row); the hulls are built
    unless the candidate sets are already small.
    """
    from scipy.spatial.distance import cdist

    if hull_u.shape[0] * hull_v.shape[0] > 4096:  # else a direct scan is cheaper
        hull_u, hull_v = _hull(hull_u), _hull(hull_v)
    return float(cdist(hull_u, hull_v).max())


def instance_mallows(ref: list[Window], sub: list[Window], params: _Params) -> _Out:
    """Eq. 12 for one instance given its objects' mask windows.

    Returns ``(score, emd, max_distance, block, error_bound, solver)``.
    """
    ru, cu, mu, hur, huc = _side_masses(ref, params.sampling)
    rv, cv, mv, hvr, hvc = _side_masses(sub, params.sampling)
    if mu.size == 0 or mv.size == 0:
        return (math.nan, math.nan, math.nan, 1, 0.0, "none")
    aff = params.affine
    dmax = max_distance(_to_crs(hur + 0.5, huc + 0.5, aff), _to_crs(hvr + 0.5, hvc + 0.5, aff))
    # μ − ν on the union of both supports (exact cancellation where they agree)
    r0 = min(int(ru.min()), int(rv.min()))
    c0 = min(int(cu.min()), int(cv.min()))
    width = max(int(cu.max()), int(cv.max())) - c0 + 1
    keys = np.concatenate([(ru - r0) * width + (cu - c0), (rv - r0) * width + (cv - c0)])
    weights = np.concatenate([mu / mu.sum(), -(mv / mv.sum())])
    uniq, inverse = np.unique(keys, return_inverse=True)
    diff = np.bincount(inverse, weights=weights)
    rows = (uniq // width + r0).astype(float) + 0.5
    cols = (uniq % width + c0).astype(float) + 0.5
    size = max(int(np.count_nonzero(diff > 0)), int(np.count_nonzero(diff < 0)))
    block, bound = 1, 0.0
    limit = {"auto": params.exact_limit, "on": params.pool_target}.get(params.mode)
    if limit is not None and size > limit:
        block, rows, cols, diff = _pool(
            uniq // width + r0, uniq % width + c0, diff, size, params.pool_target
        )
        bound = (block - 1) * math.hypot(*params.sampling)
    pos, neg = diff > 0, diff < 0
    emd, solver = transport(
        _to_crs(rows[pos], cols[pos], aff),
        diff[pos],
        _to_crs(rows[neg], cols[neg], aff),
        -diff[neg],
        params.dense_limit,
    )
    if dmax == 0.0:  # U and V are the same single pixel
        return (1.0, emd, 0.0, block, 0.0, solver)
    return (1.0 - emd / dmax, emd, dmax, block, bound / dmax, solver)


def _pool(
    rows: np.ndarray, cols: np.ndarray, diff: np.ndarray, size: int, target: int
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Pool ``μ − ν`` into ``k × k`` grid blocks, smallest ``k ≥ 2`` with ≤ ``target`` cells."""
    k = max(2, int(math.sqrt(size / target)))
    while True:
        br, bc = np.floor_divide(rows, k), np.floor_divide(cols, k)
        b0, c0 = int(br.min()), int(bc.min())
        width = int(bc.max()) - c0 + 1
        uniq, inverse = np.unique((br - b0) * width + (bc - c0), return_inverse=True)
        pooled = np.bincount(inverse, weights=diff)
        n = max(int(np.count_nonzero(pooled > 0)), int(np.count_nonzero(pooled < 0)))
        if n <= target:
            centre = k / 2.0  # block (i, j) spans indices i*k .. i*k + k - 1
            prow = (uniq // width + b0).astype(float) * k + centre
            pcol = (uniq % width + c0).astype(float) * k + centre
            return k, prow, pcol, pooled
        k += 1
