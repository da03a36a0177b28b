"""Two label mosaics scored by blocks on a Dask cluster; the client holds summaries.

The pipeline (``docs/scale.md``, *A label mosaic on the cluster*):

1. **scan**: the grid is cut into rectangular *blocks* of whole windows
   (:func:`plan_blocks`); each block is scanned on a worker, window by window,
   with the local engine's kernel (:func:`geoeval.io.windowed.scan_window`,
   merged by :func:`~geoeval.io.windowed.merge_scans`): per label its pixel
   count (and bounding box when the Mallows score is wanted), per label pair its
   pixel count, and the pixels labelled on either side. The scan stays on the
   worker; the client gets its sizes.
2. **stitch**: an object cut by block edges appears in several blocks, with a
   part of its pixels in each. Each block sends its labels, split by
   ``label mod L`` into ``L`` buckets, to the bucket tasks; a bucket task finds
   the labels held by more than one block (*cut* labels) and their owner. Only
   the cut labels (a thin margin along the block edges) come back to the blocks.
3. **solve**: each block builds, from its own counts, the components of its
   label-pair graph. A component without a cut label is *interior*: every object
   of it lies wholly in the block, so its counts are complete there; the block
   matches it with the local engine's code (each matcher's registry entry, sent with the
   task in :attr:`Config.entries`, on an
   :class:`~geoeval.overlap.Overlap` with ``pixel_area``, as
   :func:`geoeval.overlap.overlap_from_scan` builds it) and computes the
   Mallows score of its instances from each object's window
   (:meth:`geoeval.grid.LabelGrid.read` of its bounding box, the files read on
   the worker; :func:`geoeval.measures.mallows.mallows_scores`).
4. **boundary**: the other components (each holds a cut label) are sent as
   partial counts to one task, which stitches them by label (counts add, boxes
   take the min/max: :func:`~geoeval.io.windowed.merge_scans`) and deals them,
   whole components, into groups (about :data:`BOUNDARY_GROUP_OBJECTS` objects
   each); each group is solved once, in its own task, with the same code.
5. **reduce**: the client receives per block and for the boundary a summary
   (counts, sums, kinds, solver counts, Mallows sums) and adds them up.

Ownership rule (every pixel, pair, component and object counted once): an
object (a label of one side) is owned by the first block, in row-major order of
blocks, holding a pixel of it; a pair is owned by its reference's owner. A
component is interior when every label of it is held by one block only (all of
them are then in the same block: a pair's pixels lie in a block holding both
labels), and that block solves and counts it; else it is a boundary component,
solved and counted by the boundary task. Pixels (the union area) belong to the
block holding them. Complete: a component holding a cut label is seen as such
by every block holding any of its pairs (a path from a label held by one block
to the first cut label on it stays in that block), so no block solves part of
a boundary component.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from geoeval.arrays import SizedByArrays
from geoeval.io.windowed import RasterSource, Scan
from geoeval.measures.mallows import mallows_sums
from geoeval.parallel import gc_paused
from geoeval.sums import ExactSum, exact_sum

#: Target pixels per block (a block is a rectangle of whole windows; 64 Mpixels:
#: 8192 × 8192 at the default window size).
BLOCK_PIXELS = 1 << 26
#: Smallest target of a block when the grid is cut into more blocks than it has
#: by :data:`BLOCK_PIXELS` (about four blocks a worker, for small grids).
MIN_BLOCK_PIXELS = 1 << 20
#: Target objects per task solving the boundary components (at most four tasks a
#: worker; a component is never split).
BOUNDARY_GROUP_OBJECTS = 20_000
#: Target labels (both sides, summed over blocks) per label bucket of the stitch.
LABELS_PER_BUCKET = 2_000_000

Block = tuple[int, int, int, int]  # row0, row1, col0, col1 (ends exclusive)
#: What one task scans: a rectangle, or rectangles that are consecutive in row-major
#: order (the written parts of a sparse mosaic, :func:`written_blocks`).
Blocks = Block | tuple[Block, ...]


def plan_blocks(shape: tuple[int, int], block_shape: tuple[int, int],
                block_pixels: int | None = None) -> list[Block]:
    """Rectangles of whole file blocks covering the grid, about ``block_pixels`` each
    (default :data:`BLOCK_PIXELS`), in row-major order (the ownership order).

    Examples
    --------
    >>> plan_blocks((10, 10), (2, 2), 16)
    [(0, 4, 0, 4), (0, 4, 4, 8), (0, 4, 8, 10), (4, 8, 0, 4), (4, 8, 4, 8), (4, 8, 8, 10), \
(8, 10, 0, 4), (8, 10, 4, 8), (8, 10, 8, 10)]
    """
    target = BLOCK_PIXELS if block_pixels is None else int(block_pixels)
    h, w = (int(v) for v in shape)
    if h == 0 or w == 0:
        return []
    bh, bw = max(1, min(int(block_shape[0]), h)), max(1, min(int(block_shape[1]), w))
    side = math.sqrt(max(target, 1))
    rstep = bh * max(1, round(side / bh))
    cstep = bw * max(1, round(side / bw))
    return [(r, min(r + rstep, h), c, min(c + cstep, w))
            for r in range(0, h, rstep) for c in range(0, w, cstep)]


def written_blocks(sources: Sequence[RasterSource], blocks: list[Block],
                   groups: int) -> list[Blocks]:
    """``blocks`` cut to the file blocks the sources have written
    (:func:`geoeval.io.windowed.written_windows`; the others read as background and
    are left out: no task for the empty rest of a huge sparse mosaic), then, when
    they cover less than half of the grid and more of them remain than ``groups``,
    dealt in row-major order into ``groups``
    runs of about equal pixel counts, each run one task (a task per written file
    block would be thousands of tiny tasks). The runs keep the row-major order,
    which the ownership rule needs.
    """
    from geoeval.io.windowed import written_windows

    spans = written_windows(sources, blocks)
    pixels = np.array([(r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in spans], float)
    planned = sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in blocks)
    if len(spans) <= groups or pixels.sum() > planned / 2:  # not a sparse mosaic
        return list(spans)
    cuts = np.searchsorted(np.cumsum(pixels), pixels.sum() * np.arange(1, groups) / groups)
    return [tuple(tuple(int(v) for v in rect) for rect in run)
            for run in np.split(np.array(spans, dtype=np.int64), cuts) if len(run)]


# --- tasks that run on the workers -----------------------------------------------------

@gc_paused
def scan_block(sources: Sequence[RasterSource], block: Blocks, boxes: bool,
               window_pixels: int | None = None) -> Scan:
    """One block's counts (runs on a worker): :func:`~geoeval.io.windowed.scan_window` over
    its windows (whole file blocks; of each of its rectangles), merged. Per-label counts
    of both sides, their boxes when ``boxes``, the label pairs and the union pixels."""
    import rasterio

    from geoeval.grid import windows
    from geoeval.io.windowed import (
        SCAN_CACHE_MB,
        empty_scan,
        merge_scans,
        release_window_buffers,
        scan_window,
    )

    rects = [block] if isinstance(block[0], int | np.integer) else block
    wins = [(a + r0, b + r0, c + c0, d + c0) for r0, r1, c0, c1 in rects
            for a, b, c, d in windows((int(r1 - r0), int(c1 - c0)), sources[0].block_shape,
                                      window_pixels)]
    if not wins:
        return empty_scan(sources, boxes)
    try:
        with rasterio.Env(GDAL_CACHEMAX=SCAN_CACHE_MB):
            return merge_scans([scan_window(sources, w, True, boxes, reuse=True)
                                for w in wins])
    finally:
        release_window_buffers()


def scan_sizes(found: Scan) -> tuple[int, int, int, int]:
    """Labels of each side, pairs and union pixels of a block's scan (for the client)."""
    assert found.pair_a is not None
    return int(found.ids[0].size), int(found.ids[1].size), int(found.pair_a.size), \
        int(found.union)


def _bucket_of(ids: np.ndarray, n: int) -> np.ndarray:
    if n == 1:
        return np.zeros(ids.size, np.int64)
    if ids.dtype.kind == "u":
        return (ids.astype(np.uint64) % np.uint64(n)).astype(np.int64)
    return np.mod(ids.astype(np.int64), n)


def label_split(found: Scan, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """A block's labels of each side split into ``n`` buckets by ``label mod n``."""
    out = []
    which = [_bucket_of(ids, n) for ids in found.ids]
    for q in range(n):
        out.append((found.ids[0][which[0] == q], found.ids[1][which[1] == q]))
    return out


def take(split: list[Any], q: int) -> Any:
    return split[q]


def cut_labels(blocks: Sequence[int], *pieces: tuple[np.ndarray, np.ndarray]
               ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The labels of one bucket held by more than one block, per side, sorted, each with
    its owner (the first of those blocks in row-major order)."""
    out = []
    for s in (0, 1):
        ids = [p[s] for p in pieces]
        if not ids or not sum(i.size for i in ids):
            dtype = ids[0].dtype if ids else np.int64
            out.append((np.zeros(0, dtype), np.zeros(0, np.int64)))
            continue
        lab = np.concatenate(ids)
        owner = np.concatenate([np.full(i.size, b, np.int64)
                                for i, b in zip(ids, blocks, strict=True)])
        order = np.lexsort((owner, lab))
        lab, owner = lab[order], owner[order]
        first = np.r_[True, lab[1:] != lab[:-1]]
        starts = np.flatnonzero(first)
        held = np.diff(np.r_[starts, lab.size])
        multi = starts[held > 1]
        out.append((lab[multi], owner[multi]))
    return out[0], out[1]


def distinct_labels(*pieces: tuple[np.ndarray, np.ndarray]) -> tuple[int, int]:
    """The distinct labels of one bucket (its blocks' pieces), per side: the bucket's
    objects, each counted once however many blocks hold it."""
    if not pieces:
        return 0, 0
    ref, sub = (np.unique(np.concatenate([p[s] for p in pieces])).size for s in (0, 1))
    return int(ref), int(sub)


def all_cut(*buckets: Any) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Every bucket's cut labels, per side sorted by label."""
    out = []
    for s in (0, 1):
        lab = np.concatenate([b[s][0] for b in buckets])
        owner = np.concatenate([b[s][1] for b in buckets])
        order = np.argsort(lab, kind="stable")
        out.append((lab[order], owner[order]))
    return out[0], out[1]


@dataclass(frozen=True)
class Config:
    """What every block task needs besides its scan (small, sent once per task)."""

    sources: tuple[RasterSource, RasterSource]
    transform: tuple[float, ...]
    crs: Any
    matchers: tuple[str, ...]
    params: dict[str, dict[str, Any]]
    mallows: tuple[str, ...]
    approximate: bool | None
    #: Whether the solved blocks return their per-object lists
    #: (:class:`~geoeval.matching.lists.MatchLists`) for the report.
    lists: bool = False
    #: The matchers' registry entries (:func:`geoeval.matching.registry.entries`; those
    #: of ``matchers`` when not given), sent with the tasks: a matcher registered in the
    #: client alone runs on the workers too.
    entries: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.entries:
            from geoeval.matching import registry

            object.__setattr__(self, "entries", registry.entries(self.matchers))


class _Inline:
    """A ``concurrent.futures`` executor running each call at once, in this thread
    (a worker process may not start a process pool of its own)."""

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the caller through the future
            fut.set_exception(exc)
        return fut


def _is_in(ids: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    if not sorted_ids.size or not ids.size:
        return np.zeros(ids.size, bool)
    k = np.minimum(np.searchsorted(sorted_ids, ids), sorted_ids.size - 1)
    return sorted_ids[k] == ids


def _objects(config: Config, side: int, ids: np.ndarray, counts: np.ndarray,
             boxes: np.ndarray | None) -> Any:
    """An :class:`~geoeval.objects.ObjectSet` of some labels of one side: areas from
    their pixel counts, a windowed grid on the side's file (with the labels' boxes)."""
    from affine import Affine

    from geoeval.grid import LabelGrid
    from geoeval.objects import ObjectSet

    src = config.sources[side]
    grid = LabelGrid(None, Affine(*config.transform[:6]), config.crs, src.background,
                     source=src, shape=src.shape, dtype=src.dtype, boxes=boxes)
    return ObjectSet(ids=ids, areas=counts.astype(float) * grid.pixel_area, crs=config.crs,
                     grid=grid, path=src.shown, input_type="raster")


def solve(found: Scan, config: Config) -> dict[str, Any]:
    """Match the objects of ``found`` (whole components, complete counts) with the local
    engine's code and return the additive summary of the result."""
    from geoeval.grid import label_index
    from geoeval.overlap import Overlap

    assert found.pair_a is not None and found.pair_b is not None
    assert found.pair_counts is not None
    ref = _objects(config, 0, found.ids[0], found.counts[0], found.boxes[0])
    sub = _objects(config, 1, found.ids[1], found.counts[1], found.boxes[1])
    assert ref.grid is not None
    pa = ref.grid.pixel_area
    rows = label_index(ref.ids, found.pair_a).astype(np.int64)
    cols = label_index(sub.ids, found.pair_b).astype(np.int64)
    order = np.lexsort((cols, rows))
    rows, cols, pc = rows[order], cols[order], found.pair_counts[order]
    union = int(found.counts[0].sum() + found.counts[1].sum() - pc.sum())
    ov = Overlap(ref, sub, rows, cols, pc.astype(float) * pa, ExactSum(union, pa),
                 "co-occurrence", pa)
    per: dict[str, Any] = {}
    lists: dict[str, Any] = {}
    for name in config.matchers:
        m = config.entries[name].run(ov, **config.params.get(name, {}))
        scores = m.arrays.score[~np.isnan(m.arrays.score)]
        out = {"missed": int(m.missed.size), "false_alarms": int(m.false_alarms.size),
               "matched_overlap": m.matched_sum, "kinds": m.kind_counts(),
               "score_sum": exact_sum(scores), "score_n": int(scores.size),
               "solver": dict(m.solver_stats), "params": dict(m.params), "mallows": None}
        mal = None
        if name in config.mallows:
            mal = _mallows(ref, sub, m, config)
            out["mallows"] = mallows_sums(mal)
        if config.lists:  # positions: the labels (the order of the local engine's objects)
            from geoeval.matching.lists import MatchLists

            lists[name] = MatchLists.of(m, ref.ids, sub.ids,
                                        None if mal is None else mal.scores, ref.ids, sub.ids)
        per[name] = out
    summary = {"n_reference": len(ref), "n_submission": len(sub), "pairs": int(rows.size),
               "components": ov.n_components, "matchers": per}
    if config.lists:
        summary["lists"] = lists
    return summary


def _mallows(ref: Any, sub: Any, m: Any, config: Config) -> Any:
    """The Mallows scores of ``m``'s instances (on this worker, each object's window read
    from the files)."""
    from geoeval.measures.mallows import mallows_scores

    return mallows_scores(ref, sub, m, approximate=config.approximate, n_jobs=1,
                          executor=_Inline())


def _restrict(found: Scan, keep_r: np.ndarray, keep_s: np.ndarray,
              keep_p: np.ndarray) -> Scan:
    def sel(b: np.ndarray | None, k: np.ndarray) -> np.ndarray | None:
        return None if b is None else b[k]

    assert found.pair_a is not None and found.pair_b is not None
    assert found.pair_counts is not None
    return Scan([found.ids[0][keep_r], found.ids[1][keep_s]],
                [found.counts[0][keep_r], found.counts[1][keep_s]],
                [sel(found.boxes[0], keep_r), sel(found.boxes[1], keep_s)],
                found.pair_a[keep_p], found.pair_b[keep_p], found.pair_counts[keep_p], 0)


@dataclass
class BlockResult(SizedByArrays):
    """What a block task keeps on its worker: its summary and its boundary part."""

    index: int
    summary: dict[str, Any]
    boundary: Scan


@gc_paused
def solve_block(index: int, found: Scan, cut: Any, config: Config) -> BlockResult:
    """Runs on a worker: the interior components of block ``index`` solved, the rest
    (components holding a cut label) kept as partial counts for the boundary."""
    from geoeval.grid import label_index
    from geoeval.overlap import edge_components

    assert found.pair_a is not None and found.pair_b is not None
    nr, ns = found.ids[0].size, found.ids[1].size
    rows = label_index(found.ids[0], found.pair_a).astype(np.int64)
    cols = label_index(found.ids[1], found.pair_b).astype(np.int64)
    _, nodes, edges = edge_components(rows, cols, nr, ns)
    is_cut = np.concatenate([_is_in(found.ids[0], cut[0][0]), _is_in(found.ids[1], cut[1][0])])
    foreign = np.zeros(int(nodes.max()) + 1 if nodes.size else 0, bool)
    foreign[nodes[is_cut]] = True
    outer = foreign[nodes]
    outer_p = foreign[edges] if edges.size else np.zeros(0, bool)
    inner = _restrict(found, ~outer[:nr], ~outer[nr:], ~outer_p)
    summary = solve(inner, config)
    summary["boundary_objects"] = int(outer.sum())
    summary["cut_objects"] = int(is_cut.sum())
    return BlockResult(index, summary, _restrict(found, outer[:nr], outer[nr:], outer_p))


def summary_of(result: BlockResult) -> dict[str, Any]:
    return result.summary


def boundary_of(result: BlockResult) -> Scan:
    return result.boundary


@gc_paused
def stitch_boundary(config: Config, n_groups: int, *parts: Scan) -> list[Scan]:
    """Runs on one worker: the blocks' boundary parts stitched by label (counts add, boxes
    take the min/max: :func:`~geoeval.io.windowed.merge_scans`), their components found
    and dealt into ``n_groups`` groups of whole components (component number mod
    ``n_groups``), each solved by its own task (:func:`solve_group`)."""
    from geoeval.grid import label_index
    from geoeval.io.windowed import empty_scan, merge_scans
    from geoeval.overlap import edge_components

    found = merge_scans(parts) if parts else empty_scan(config.sources, bool(config.mallows))
    assert found.pair_a is not None and found.pair_b is not None
    nr, ns = found.ids[0].size, found.ids[1].size
    rows = label_index(found.ids[0], found.pair_a).astype(np.int64)
    _, nodes, _ = edge_components(
        rows, label_index(found.ids[1], found.pair_b).astype(np.int64), nr, ns)
    group = nodes % n_groups
    return [_restrict(found, group[:nr] == g, group[nr:] == g, group[rows] == g)
            for g in range(n_groups)]


@gc_paused
def solve_group(config: Config, groups: list[Scan], g: int) -> dict[str, Any]:
    """Runs on a worker: group ``g`` of the boundary components, solved with the same
    code as the blocks' (Mallows scores included)."""
    found = groups[g]
    summary = solve(found, config)
    summary["objects"] = int(found.ids[0].size + found.ids[1].size)
    return summary


# --- the client's side -------------------------------------------------------------------

@dataclass
class MosaicScore:
    """What the client holds at the end: summaries only (sizes bounded by the blocks).

    Attributes
    ----------
    n_reference, n_submission : int
    pairs, components : int
    union_pixels : int
        Pixels labelled on either side (exact).
    matchers : dict
        Per matcher: ``missed``, ``false_alarms``, ``matched_overlap``, ``kinds``,
        ``score_sum``, ``score_n``, ``solver``, ``params``, ``mallows`` (sums, or ``None``).
    blocks : int
    cut_objects : int
        Objects held by more than one block.
    boundary_objects : int
        Objects of components holding a cut object (solved by the boundary task).
    """

    n_reference: int
    n_submission: int
    pairs: int
    components: int
    union_pixels: int
    matchers: dict[str, dict[str, Any]]
    blocks: int
    cut_objects: int
    boundary_objects: int
    lists: dict[str, Any] | None = None


def _where(block: Blocks) -> str:
    """Rows and columns of a block (of its rectangles' extent), for messages."""
    b = np.array([block] if isinstance(block[0], int | np.integer) else block).reshape(-1, 4)
    r0, r1, c0, c1 = int(b[:, 0].min()), int(b[:, 1].max()), int(b[:, 2].min()), \
        int(b[:, 3].max())
    pieces = "" if len(b) == 1 else f"{len(b)} pieces in "
    return f"{pieces}rows {r0}..{r1 - 1}, columns {c0}..{c1 - 1}"


def score_mosaic(client: Any, sources: tuple[RasterSource, RasterSource], transform: Any,
                 crs: Any, *, matchers: Sequence[str], params: dict[str, dict[str, Any]],
                 mallows: Sequence[str] = (), approximate: bool | None = None,
                 block_pixels: int | None = None, window_pixels: int | None = None,
                 progress: Callable[[str], None] | None = None,
                 lists: bool = False) -> MosaicScore:
    """Score two label rasters on one grid by blocks on the cluster of ``client``.

    Parameters
    ----------
    client : distributed.Client
    sources : pair of RasterSource
        The reference's and the submission's band (same shape; the workers open the
        files themselves, so they must see the paths).
    transform, crs
        The grid's.
    matchers, params
        Matcher names and their keywords.
    mallows : sequence of str
        The matchers whose instances get the Mallows score.
    approximate : bool, optional
        As :func:`geoeval.measures.mallows.mallows_scores`.
    block_pixels, window_pixels : int, optional
        Pixels per block (default :data:`BLOCK_PIXELS`, less on a grid of fewer than four
        such blocks a worker, down to :data:`MIN_BLOCK_PIXELS`) and per window read
        (:data:`geoeval.grid.WINDOW_PIXELS`).
    progress : callable, optional
        Called with step texts, blocks done / total and the time left.
    lists : bool
        Gather each matcher's per-object lists for the report when the report lists
        them: at most :data:`~geoeval.matching.lists.LIST_LIMIT` objects
        (:func:`~geoeval.matching.lists.listable`, decided on the distinct labels once
        the blocks are scanned); past it nothing per object reaches the client.
    """
    from geoeval.engine.gather import Meter, add_summaries, gather

    ref, sub = sources
    workers = max(1, len(client.scheduler_info()["workers"]))
    if block_pixels is None:  # about four blocks a worker on a small grid
        block_pixels = min(BLOCK_PIXELS, max(ref.shape[0] * ref.shape[1] // (4 * workers),
                                             MIN_BLOCK_PIXELS))
    blocks = written_blocks((ref, sub), plan_blocks(ref.shape, ref.block_shape, block_pixels),
                            4 * workers)
    k = len(blocks)
    names = [f"block {i} ({_where(b)}) of {ref.path} and {sub.path}"
             for i, b in enumerate(blocks)]
    meter = Meter(progress, k, k, False)  # blocks scanned, blocks solved, the boundary
    need_boxes = bool(mallows)
    config = Config((ref, sub), tuple(transform)[:6], crs, tuple(matchers), params,
                    tuple(mallows), approximate, lists)
    meter.report(f"scanning {k} blocks of {ref.shape[0]:,} x {ref.shape[1]:,} pixels")
    scans = client.map(scan_block, [[ref, sub]] * k, blocks, [need_boxes] * k,
                       [window_pixels] * k, pure=False)
    sizes = gather(client, client.map(scan_sizes, scans), names, "scanning", meter,
                    "blocks")
    labels = sum(s[0] + s[1] for s in sizes)  # counted once per block holding them
    union = sum(s[3] for s in sizes)
    n_buckets = max(1, min(k, -(-labels // LABELS_PER_BUCKET)))
    splits = client.map(label_split, scans, [n_buckets] * k, pure=False)
    buckets, distinct = [], []
    for q in range(n_buckets):
        pieces = [client.submit(take, s, q, pure=False) for s in splits]
        buckets.append(client.submit(cut_labels, list(range(k)), *pieces, pure=False))
        if lists:
            distinct.append(client.submit(distinct_labels, *pieces, pure=False))
    del splits
    if lists:  # the report's rule on the objects, each once: past it, no list is gathered
        from geoeval.matching.lists import listable

        lists = listable(sum(sum(d) for d in client.gather(distinct)))
        config = replace(config, lists=lists)
    del distinct
    cut = client.submit(all_cut, *buckets, pure=False)
    del buckets
    results = client.map(solve_block, list(range(k)), scans, [cut] * k, [config] * k,
                         pure=False)
    del scans
    summaries = gather(client, client.map(summary_of, results), names, "matching", meter,
                        "blocks")
    n_boundary = sum(s["boundary_objects"] for s in summaries)
    meter.report(f"solving the components that cross blocks ({n_boundary:,} objects)")
    parts = client.map(boundary_of, results)
    n_groups = max(1, min(4 * workers, -(-n_boundary // BOUNDARY_GROUP_OBJECTS)))
    meter.total += n_groups - 1  # the boundary is solved in n_groups tasks
    groups = client.submit(stitch_boundary, config, n_groups, *parts, pure=False)
    solved = [client.submit(solve_group, config, groups, g, pure=False)
              for g in range(n_groups)]
    last = gather(client, solved, [f"the components crossing blocks of {ref.path} and "
                                    f"{sub.path} (group {g} of {n_groups})"
                                    for g in range(n_groups)], "solving the boundary",
                   meter, "tasks")
    total = add_summaries([*summaries, *last], matchers,
                          ("n_reference", "n_submission", "pairs", "components"))
    gathered = None
    if lists:
        from geoeval.matching.lists import MatchLists

        gathered = {name: MatchLists.concat([s["lists"][name] for s in [*summaries, *last]])
                    for name in matchers}
    return MosaicScore(total["n_reference"], total["n_submission"], total["pairs"],
                       total["components"], union, total["matchers"], k,
                       sum(s["cut_objects"] for s in summaries), n_boundary, gathered)
