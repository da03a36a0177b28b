"""Confidence intervals: a spatial block bootstrap of the scene's measures.

Neighbouring errors are correlated (one badly segmented field, one cloud), so
objects are not resampled one by one: the scene is cut into square blocks and
the blocks are resampled with replacement, the moving/fixed block bootstrap of
Künsch (1989, Ann. Statist. 17:1217-1241) in its spatial form (Lahiri 2003,
*Resampling Methods for Dependent Data*, ch. 12).

* Blocks: a grid of square cells of side ``block_size`` (CRS units) over the
  reference's bounds; default ``max(width, height) / 10``, about 10 × 10
  blocks. Every cell of the grid is a block, empty ones included (so that
  all submissions of a contest share the blocks: a paired bootstrap).
* Each object belongs to the block of its representative point
  (``shapely.point_on_surface``); a point outside the grid goes to the nearest
  cell. Each instance (match) belongs to the block of its first reference.
* A replicate draws as many blocks as the grid has, uniformly with
  replacement; a block drawn ``k`` times counts ``k`` times.

Decomposition. The measures are ratios of sums over objects and instances:
precision ``Σ matched submitted / Σ submitted``, recall likewise, F1 from
them, the Hoover and IoU accuracies ``Σ instance score / Σ instances``, the
Mallows scene score ``Σ instance Mallows / Σ defined instances`` (Özdemir et
al. 2010, eq. 13-15, eq. 2) and BGM's ``Σ matched overlap / Σ union area``
(eq. 1, union ``Σ areas − Σ C_ij`` when no two objects of one side overlap).
So each block keeps these sums once (its *sufficient statistics*) and a
replicate's measures are the block sums weighted by the multiplicities: one
matrix product for all replicates, no re-matching. It equals re-scoring the
replicate scene (the drawn blocks' objects side by side, copies apart) exactly
when no instance and no overlapping pair crosses a block border, since the
matching of each block is then that of the scene; otherwise the replicate
keeps the whole scene's matches (the usual conditional bootstrap of a fixed
matching). BGM's interval is null when objects of one side overlap (its union
is then not a sum).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval import validate
from geoeval.matching import registry
from geoeval.matching.registry import MATCHED_AREA
from geoeval.measures.counts import MEASURES, SUMS, measures_from_sums
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap
from geoeval.reprs import number
from geoeval.scoring.result import MatcherResult
from geoeval.sums import as_float, exact_sums

#: Default number of blocks along the longer side of the reference bounds.
BLOCKS_PER_SIDE = 10
#: Columns of the per-block statistics: the measures' sufficient statistics.
STATS = SUMS


@dataclass(frozen=True)
class BlockGrid:
    """Square blocks over the reference bounds: origin, side and shape."""

    x0: float
    y0: float
    size: float
    nx: int
    ny: int
    rule: str

    @property
    def n_blocks(self) -> int:
        return self.nx * self.ny

    def block_of(self, objects: ObjectSet) -> np.ndarray:
        """Block of each object's representative point (clipped into the grid)."""
        import shapely

        if len(objects) == 0:
            return np.zeros(0, np.int64)
        xy = shapely.get_coordinates(shapely.point_on_surface(objects.polygons))
        ix = np.clip(np.floor((xy[:, 0] - self.x0) / self.size), 0, self.nx - 1).astype(np.int64)
        iy = np.clip(np.floor((xy[:, 1] - self.y0) / self.size), 0, self.ny - 1).astype(np.int64)
        return iy * self.nx + ix


def block_grid(reference: ObjectSet, submission: ObjectSet,
               block_size: float | None = None) -> BlockGrid:
    """The block grid over the reference's bounds (the submission's without references).

    ``block_size`` in CRS units; default the longer side of the bounds over
    :data:`BLOCKS_PER_SIDE`.
    """
    import shapely

    validate.positive("block_size", block_size)
    objects = reference if len(reference) else submission
    if len(objects) == 0:
        return grid_over(None, block_size)
    return grid_over(tuple(shapely.total_bounds(objects.polygons)), block_size)


def grid_over(bounds: tuple[float, float, float, float] | None,
              block_size: float | None = None) -> BlockGrid:
    """The block grid over ``bounds`` (``None``: no objects, one block); :func:`block_grid`
    over the objects' bounds, also for the Dask engine, which knows only the bounds."""
    if bounds is None:
        return BlockGrid(0.0, 0.0, block_size or 1.0, 1, 1, "no objects: one block")
    x0, y0, x1, y1 = bounds
    side = max(x1 - x0, y1 - y0)
    if block_size is None:
        size = side / BLOCKS_PER_SIDE if side > 0 else 1.0
        rule = f"longer side of the reference bounds / {BLOCKS_PER_SIDE}"
    else:
        size, rule = float(block_size), "given"
    nx = max(1, int(np.ceil((x1 - x0) / size - 1e-9)))
    ny = max(1, int(np.ceil((y1 - y0) / size - 1e-9)))
    return BlockGrid(float(x0), float(y0), float(size), nx, ny, rule)


def block_statistics(result: MatcherResult, overlap: Overlap, ref_block: np.ndarray,
                     sub_block: np.ndarray, n_blocks: int) -> np.ndarray:
    """Per-block sums (:data:`STATS` columns, ``n_blocks`` rows) of one matcher's result,
    exact (an object array: counts as integers, the other sums as
    :class:`geoeval.sums.ExactSum`), so that the tables of a scene's parts add up to the
    scene's whatever the partitioning (:func:`replicate_measures` rounds them once)."""
    m = result.matching
    a = m.arrays
    out = np.empty((n_blocks, len(STATS)), dtype=object)
    out[:] = 0
    areas = ("matched_area", "union_area")

    def add(col: str, blocks: np.ndarray, weights: Any = None) -> None:
        j = STATS.index(col)
        if weights is None:
            got = np.bincount(blocks, minlength=n_blocks).astype(object)
        elif weights.dtype == bool:
            got = np.bincount(blocks[weights], minlength=n_blocks).astype(object)
        else:
            got = exact_sums(weights, blocks, n_blocks,
                             overlap.pixel_area if col in areas else None)
        out[:, j] = out[:, j] + got

    ref_matched = np.ones(m.n_reference, bool)
    ref_matched[m.missed] = False
    sub_matched = np.ones(m.n_submission, bool)
    sub_matched[m.false_alarms] = False
    add("n_ref", ref_block)
    add("n_sub", sub_block)
    add("matched_ref", ref_block, ref_matched)
    add("matched_sub", sub_block, sub_matched)
    n = len(a)
    if n:
        nref = np.diff(a.ref_ptr)
        first_ref = a.ref_idx[np.minimum(a.ref_ptr[:-1], max(a.ref_idx.size - 1, 0))] \
            if a.ref_idx.size else np.zeros(n, np.int64)
        first_sub = a.sub_idx[np.minimum(a.sub_ptr[:-1], max(a.sub_idx.size - 1, 0))] \
            if a.sub_idx.size else np.zeros(n, np.int64)
        inst_block = np.where(nref > 0, ref_block[first_ref] if ref_block.size else 0,
                              sub_block[first_sub] if sub_block.size else 0).astype(np.int64)
        scored = ~np.isnan(a.score)
        add("score_sum", inst_block[scored], a.score[scored])
        add("score_n", inst_block[scored])
        add("matched_area", inst_block, a.overlap)
        if result.mallows is not None:
            mal = np.asarray(result.mallows.scores, float)
            ok = ~np.isnan(mal)
            add("mallows_sum", inst_block[ok], mal[ok])
            add("mallows_n", inst_block[ok])
    add("union_area", np.concatenate([ref_block, sub_block, ref_block[overlap.rows]]),
        np.concatenate([overlap.ref_area, overlap.sub_area, -overlap.values]))
    return out


def replicate_measures(name: str, stats: np.ndarray, weights: np.ndarray,
                       has_mallows: bool) -> dict[str, np.ndarray]:
    """Measures of each replicate (rows of ``weights``, block multiplicities):
    the block sums weighted, then :func:`geoeval.measures.counts.measures_from_sums`
    with the matcher's accuracy rule.

    NaN where a measure is undefined (no submitted object, no instance, ...),
    as ``None`` is in the scene's report.
    """
    s = np.atleast_2d(weights) @ as_float(stats)
    return measures_from_sums(registry.accuracy_rule(name),
                              {c: s[:, i] for i, c in enumerate(STATS)}, mallows=has_mallows)


def block_weights(n_blocks: int, n: int, seed: int) -> np.ndarray:
    """``n`` replicates × ``n_blocks`` multiplicities: ``n_blocks`` blocks drawn
    uniformly with replacement (a multinomial draw), from ``numpy``'s PCG64 at ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_blocks, np.full(n_blocks, 1.0 / n_blocks), size=n).astype(float)


@dataclass(frozen=True)
class BootstrapResult:
    """Percentile intervals of every measure of every matcher.

    ``replicates`` holds each replicate's measures (matcher -> measure -> array)
    for callers such as the contest's rank probabilities; not in the JSON.
    """

    n: int
    seed: int
    confidence: float
    grid: BlockGrid
    intervals: dict[str, dict[str, list[float] | None]]
    notes: tuple[str, ...] = ()
    replicates: dict[str, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        def iv(m: str, key: str) -> str:
            v = self.intervals[m].get(key)
            return "null" if v is None else f"[{number(v[0])}, {number(v[1])}]"

        f1 = ", ".join(f"{m} {iv(m, 'f1')}" for m in self.intervals)
        return (f"<BootstrapResult {self.n} replicates, blocks of {self.grid.size:g} "
                f"({self.grid.nx} × {self.grid.ny}), seed {self.seed}; {self.confidence:.0%} "
                f"intervals of F1: {f1}>")

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's ``bootstrap`` object (``docs/confidence.md``)."""
        g = self.grid
        return {"n": self.n, "seed": self.seed, "confidence": self.confidence,
                "block_size": g.size, "blocks": [g.nx, g.ny], "block_rule": g.rule,
                "origin": [g.x0, g.y0], "method": "percentile, spatial block bootstrap",
                "notes": list(self.notes), "intervals": self.intervals}


def percentile_interval(values: np.ndarray, confidence: float) -> list[float] | None:
    """``[low, high]`` percentiles of the defined replicates; ``None`` if none is."""
    v = values[~np.isnan(values)]
    if v.size == 0:
        return None
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(v, [alpha, 1 - alpha])
    return [float(lo), float(hi)]


def check_bootstrap(bootstrap: int | None, confidence: float, seed: int,
                    block_size: float | None) -> None:
    """:class:`InputError` naming the first bad bootstrap keyword."""
    validate.count("bootstrap", bootstrap)
    validate.fraction("confidence", confidence, low_open=True, high_open=True)
    validate.count("seed", seed, minimum=0)
    validate.positive("block_size", block_size)


def bootstrap_scene(reference: ObjectSet, submission: ObjectSet, overlap: Overlap,
                    results: dict[str, MatcherResult], *, n: int, seed: int = 0,
                    confidence: float = 0.95, block_size: float | None = None,
                    grid: BlockGrid | None = None) -> BootstrapResult:
    """The spatial block bootstrap of a scored scene (module docstring).

    Parameters
    ----------
    reference, submission, overlap, results
        The scored scene.
    n : int
        Replicates.
    seed : int
        Seed of the block draws: the same seed gives the same intervals.
    confidence : float
        Central coverage of the percentile intervals (0.95: 2.5 % and 97.5 %).
    block_size : float, optional
        Block side in CRS units (default :func:`block_grid`).
    grid : BlockGrid, optional
        A ready grid (shared by the submissions of a contest).
    """
    check_bootstrap(n, confidence, seed, block_size)
    if grid is None:
        grid = block_grid(reference, submission, block_size)
    rb, sb = grid.block_of(reference), grid.block_of(submission)
    stats = {name: block_statistics(res, overlap, rb, sb, grid.n_blocks)
             for name, res in results.items()}
    return bootstrap_from_statistics(
        stats, {name: res.mallows is not None for name, res in results.items()},
        overlap.union_is_sum, n=n, seed=seed, confidence=confidence, grid=grid)


def bootstrap_from_statistics(stats: dict[str, np.ndarray], has_mallows: dict[str, bool],
                              union_is_sum: bool, *, n: int, seed: int, confidence: float,
                              grid: BlockGrid) -> BootstrapResult:
    """:func:`bootstrap_scene` from the per-block sums of each matcher
    (:func:`block_statistics`; of one scene, or added over its parts by the Dask engine):
    the replicates' block draws at ``seed``, their measures, percentile intervals."""
    weights = block_weights(grid.n_blocks, n, seed)
    notes = []
    area_rule = [name for name in stats if registry.accuracy_rule(name) == MATCHED_AREA]
    if not union_is_sum and area_rule:
        notes.append("objects of one side overlap: BGM's union area is not a sum over "
                     "blocks, its accuracy interval is null")
    intervals: dict[str, dict[str, list[float] | None]] = {}
    reps: dict[str, dict[str, np.ndarray]] = {}
    for name, st in stats.items():
        values = replicate_measures(name, st, weights, has_mallows[name])
        if name in area_rule and not union_is_sum:
            values["accuracy"] = np.full(n, np.nan)
        reps[name] = values
        intervals[name] = {k: percentile_interval(values[k], confidence) for k in MEASURES}
    return BootstrapResult(n, seed, confidence, grid, intervals, tuple(notes), reps)


__all__ = ["BlockGrid", "BootstrapResult", "block_grid", "block_statistics",
           "block_weights", "bootstrap_from_statistics", "bootstrap_scene", "grid_over",
           "replicate_measures"]
