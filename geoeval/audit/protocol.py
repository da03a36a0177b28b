"""The audit protocol of Hemery et al. (2010), §3: alter ground truths, score, check properties.

For each ground truth and alteration the altered masks are drawn in chunks on a
crop holding every altered object (``card(I)`` stays 256 × 256); each chunk
becomes one batched :class:`~geoeval.measures.localization.MaskPair`, whose
contours, distance maps and boxes are shared by all metrics, and every metric
is evaluated both ways, ``M(I_gt, I_alt)`` and ``M(I_alt, I_gt)`` (symmetry).
The triangle inequality is checked on translated triples (Hemery et al. 2010: translation
only) sampled with a fixed seed: half of them with the middle result at the
midpoint of the two translations (the case that breaks squared distances),
half at random.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.audit import properties as prop
from geoeval.audit.alterations import ALTERATIONS, Grid, make_grid, render, window
from geoeval.audit.shapes import IMAGE_SIZE, SHAPE_NAMES, GroundTruth, ground_truths
from geoeval.errors import InputError
from geoeval.measures.localization.pairs import BoxPair, MaskPair, mask_box
from geoeval.measures.localization.registry import METRICS, Metric, get_metric
from geoeval.progress import TimeLeft

#: shapes of the quick mode: the two squares (scale), the two rectangles (shape),
#: the border square and two silhouettes
QUICK_SHAPES: tuple[str, ...] = ("gt1", "gt2", "gt4", "gt5", "gt8", "gt9_car", "gt14_star")
GROUPS: tuple[str, ...] = ("distance",) + ALTERATIONS
#: ground truths on which opposite alterations give mirror-image results (boxes away
#: from the border): the axial-symmetry check counts these only
AXIAL_SHAPES: tuple[str, ...] = ("gt1", "gt2", "gt3", "gt4", "gt5", "gt6", "gt7")


@dataclass(frozen=True)
class Curve:
    """Values of one metric over one alteration grid of one ground truth.

    ``forward`` is ``M(I_gt, I_alt)`` and ``backward`` ``M(I_alt, I_gt)``, both as
    dissimilarities; ``raw`` is ``M(I_gt, I_alt)`` in the metric's own
    convention; ``identical`` flags results equal to the ground truth in the
    metric's representation. All have the grid's shape.
    """

    axis: np.ndarray
    forward: np.ndarray
    backward: np.ndarray
    raw: np.ndarray
    identical: np.ndarray


@dataclass
class AuditResult:
    """Everything an audit run produced; tables via :mod:`geoeval.audit.tables`."""

    metrics: tuple[str, ...]
    alterations: tuple[str, ...]
    shapes: tuple[str, ...]
    settings: dict[str, Any]
    curves: dict[tuple[str, str, str], Curve]
    triangles: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]
    verdicts: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    n_results: int = 0
    seconds: float = 0.0

    def __repr__(self) -> str:
        from geoeval.reprs import listed

        return (f"<AuditResult {len(self.metrics)} metrics ({listed(self.metrics, 4)}) × "
                f"{len(self.alterations)} alterations × {len(self.shapes)} shapes: "
                f"{self.n_results:,} altered results in {self.seconds:.1f} s>")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (see ``docs/audit.md``)."""
        from geoeval.audit.summary import result_dict

        return result_dict(self)

    def to_markdown(self) -> str:
        """Tables 3–8 of Hemery et al. (2010) as Markdown."""
        from geoeval.audit.summary import markdown

        return markdown(self)


def _metrics(names: Sequence[str] | None) -> list[Metric]:
    if not names:
        return [m for m in METRICS.values() if not m.slow]
    return [get_metric(n) for n in dict.fromkeys(names)]


def _pairs(ref: np.ndarray, masks: np.ndarray, ref_box: np.ndarray) -> dict[str, Any]:
    n_pixels = IMAGE_SIZE * IMAGE_SIZE
    mp = MaskPair(ref, masks, n_pixels)
    return {"mask": mp, "contour": mp.contours, "box": BoxPair(ref_box, mask_box(masks))}


def _identical(pairs: dict[str, Any]) -> dict[str, np.ndarray]:
    mp, cp, bp = pairs["mask"], pairs["contour"], pairs["box"]
    flat = lambda a: a.reshape(a.shape[0], -1)  # noqa: E731
    return {
        "mask": (flat(mp.result) == flat(mp.reference)).all(axis=1),
        "contour": (flat(cp.result) == flat(cp.reference)).all(axis=1),
        "box": (bp.result == bp.reference).all(axis=1),
    }


def _evaluate(metrics: list[Metric], pairs: dict[str, Any]) -> dict[str, tuple[np.ndarray, ...]]:
    """Forward raw values and both oriented directions for every metric."""
    fwd = {m.name: m.evaluate(pairs[m.representation]) for m in metrics}
    swapped = {k: p.swapped() for k, p in pairs.items()}
    swapped["contour"] = swapped["mask"].contours  # shares the distance maps
    out = {}
    for m in metrics:
        back = m.evaluate(swapped[m.representation])
        out[m.name] = (fwd[m.name], m.as_dissimilarity(fwd[m.name]), m.as_dissimilarity(back))
    return out


def _run_grid(gt: GroundTruth, grid: Grid, metrics: list[Metric], chunk_pixels: float
              ) -> dict[str, Curve]:
    win = window(gt, grid)
    ref = render(gt, grid.alteration, np.zeros((1, grid.ndim)), win)
    ref_box = mask_box(ref)
    n = grid.params.shape[0]
    h, w = ref.shape[1:]
    chunk = max(8, int(chunk_pixels // (h * w)))
    raw = {m.name: np.empty(n) for m in metrics}
    fwd = {m.name: np.empty(n) for m in metrics}
    bwd = {m.name: np.empty(n) for m in metrics}
    ident = {k: np.empty(n, dtype=bool) for k in ("mask", "contour", "box")}
    for start in range(0, n, chunk):
        sl = slice(start, min(n, start + chunk))
        pairs = _pairs(ref, render(gt, grid.alteration, grid.params[sl], win), ref_box)
        for k, v in _identical(pairs).items():
            ident[k][sl] = v
        for name, (r, f, b) in _evaluate(metrics, pairs).items():
            raw[name][sl], fwd[name][sl], bwd[name][sl] = r, f, b
    shape = grid.shape
    return {
        m.name: Curve(grid.axis, fwd[m.name].reshape(shape), bwd[m.name].reshape(shape),
                      raw[m.name].reshape(shape), ident[m.representation].reshape(shape))
        for m in metrics
    }


def _triangles(gt: GroundTruth, metrics: list[Metric], n: int, amplitude: float, seed: int
               ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    a = int(amplitude)
    t2 = rng.integers(-a, a + 1, size=(n, 2)).astype(float)
    t1 = rng.integers(-a, a + 1, size=(n, 2)).astype(float)
    half = n // 2
    t1[:half] = np.round(t2[:half] / 2)
    grid = make_grid("translation", amplitude=amplitude)
    win = window(gt, grid)
    ref = render(gt, "translation", np.zeros((1, 2)), win)
    r1 = render(gt, "translation", t1, win)
    r2 = render(gt, "translation", t2, win)
    ref_box = mask_box(ref)
    p13, p12 = _pairs(ref, r2, ref_box), _pairs(ref, r1, ref_box)
    p23 = _pairs(r1, r2, mask_box(r1))
    out = {}
    for m in metrics:
        vals = [m.as_dissimilarity(m.evaluate(p[m.representation])) for p in (p13, p12, p23)]
        out[m.name] = tuple(vals)
    return out


def audit(
    metrics: Sequence[str] | None = None,
    alterations: Sequence[str] | None = None,
    *,
    quick: bool = False,
    shapes: Sequence[str] | None = None,
    step: float | None = None,
    angle_step: float | None = None,
    amplitude: float = 24.0,
    triangles: int | None = None,
    quorum: float = 0.5,
    axial_rtol: float = 0.01,
    blind_rtol: float = 0.05,
    quadrants: str = "same-sign",
    outer_edge: bool = False,
    chunk_pixels: float = 4e6,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> AuditResult:
    """Run the metric audit of Hemery et al. (2010), §3, and check every property.

    Parameters
    ----------
    metrics : sequence of str, optional
        Registry names (:data:`geoeval.measures.localization.METRICS`); default
        all but the slow ones (Mallows: one EMD per image).
    alterations : sequence of str, optional
        Among ``translation``, ``scale``, ``rotation``, ``perspective`` (default all).
    quick : bool
        Coarse run for tests: 7 ground truths (:data:`QUICK_SHAPES`), 4-pixel and
        5° steps, 16 triangles per ground truth.
    shapes : sequence of str, optional
        Ground truths (:data:`geoeval.audit.shapes.SHAPE_NAMES`); overrides ``quick``'s.
    step, angle_step : float, optional
        Grid steps in pixels and degrees (default 1, quick 4 and 5).
    amplitude : float
        Largest translation / scale / perspective parameter (Hemery et al. 2010: 24 pixels).
    triangles : int, optional
        Triangles per ground truth for the triangle inequality (default 256, quick 16).
    quorum : float
        Share of the ground truths on which a property must hold for the table's
        ✓ (Hemery et al. 2010 are silent; 0.5 is closest to their tables, ``docs/audit.md``).
    axial_rtol : float
        Tolerance of the axial-symmetry check, relative to the curve's amplitude.
    blind_rtol : float
        A curve whose amplitude is at most this share of the metric's largest
        amplitude on the same ground truth (over the run's alterations) is
        *blind*: raster noise, not a response (Hemery et al. 2010 leave such cells blank).
    quadrants : str
        ``"same-sign"`` (Hemery et al. 2010, §3.3: X, Y both positive or both negative) or
        ``"all"`` (the mixed quadrants too) for monotony and continuity.
    outer_edge : bool
        Also require the single step along the grid's outer edge to increase
        (Hemery et al. 2010 do not).
    chunk_pixels : float
        Pixels per batch (memory bound).
    seed : int
        Seed of the triangle sample.
    progress : callable, optional
        Called with a short message after each (ground truth, alteration): ``gt3
        rotation (12/64), about 250 s left`` (the time left from the measured
        throughput, :class:`geoeval.progress.TimeLeft`, once it can be estimated).

    Returns
    -------
    AuditResult

    Notes
    -----
    Protocol and properties: Hemery et al. (2010), §3.1–3.3; choices where it is silent in
    ``docs/audit.md``. The full run (16 ground truths, 1-pixel and 1° steps)
    scores 118,080 altered results per metric and direction.

    Examples
    --------
    >>> r = audit(["pas"], ["translation"], quick=True, shapes=["gt1"])
    >>> r.verdicts["pas"]["translation"]["strict_monotony"]["holds"]
    True
    """
    t0 = time.perf_counter()
    mets = _metrics(metrics)
    alts = tuple(dict.fromkeys(alterations or ALTERATIONS))
    for a in alts:
        if a not in ALTERATIONS:
            raise InputError(f"unknown alteration {a!r}; known: {', '.join(ALTERATIONS)}")
    names = tuple(shapes) if shapes else (QUICK_SHAPES if quick else SHAPE_NAMES)
    gts = ground_truths(names)
    step = step or (4.0 if quick else 1.0)
    angle_step = angle_step or (5.0 if quick else 1.0)
    n_tri = triangles if triangles is not None else (16 if quick else 256)
    if quadrants not in prop.QUADRANT_SETS:
        raise InputError(f"quadrants must be one of {', '.join(prop.QUADRANT_SETS)}, "
                         f"got {quadrants!r}")
    if not 0 <= blind_rtol < 1:
        raise InputError(f"blind_rtol must be in [0, 1), got {blind_rtol}")
    if not 0 < quorum <= 1:
        raise InputError(f"quorum must be in (0, 1], got {quorum}")
    grids = {a: make_grid(a, step, amplitude, angle_step) for a in alts}
    curves: dict[tuple[str, str, str], Curve] = {}
    tri: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    n_results = 0
    steps, done, work = len(gts) * len(alts), 0, 0
    total_work = len(gts) * sum(grids[a].params.shape[0] for a in alts)
    left = TimeLeft()  # over the grids run, each weighted by its altered results
    for gt in gts:
        for a in alts:
            for name, curve in _run_grid(gt, grids[a], mets, chunk_pixels).items():
                curves[(name, a, gt.name)] = curve
            n_results += grids[a].params.shape[0] - 1
            done, work = done + 1, work + grids[a].params.shape[0]
            if progress:
                progress(f"{gt.name} {a} ({done}/{steps})"
                         f"{left.text(done, steps, work / total_work)}")
        if "translation" in alts and n_tri > 0:
            for name, t in _triangles(gt, mets, n_tri, amplitude, seed).items():
                tri[(name, gt.name)] = t
    settings = {
        "quick": quick, "step": step, "angle_step": angle_step, "amplitude": amplitude,
        "triangles": n_tri, "quorum": quorum, "axial_rtol": axial_rtol, "seed": seed,
        "rotation_monotony_limit_deg": 45.0, "continuity_fraction": 1 / 8,
        "continuity_ratio": 4.0, "quadrants": quadrants, "outer_edge": outer_edge,
        "blind_rtol": blind_rtol,
    }
    result = AuditResult(
        metrics=tuple(m.name for m in mets), alterations=alts, shapes=names,
        settings=settings, curves=curves, triangles=tri, n_results=n_results,
    )
    result.verdicts = {m.name: verdicts(result, m.name) for m in mets}
    result.seconds = time.perf_counter() - t0
    return result


def _aggregate(per_shape: dict[str, bool | None], quorum: float) -> dict[str, Any]:
    known = {k: v for k, v in per_shape.items() if v is not None}
    if not known:
        return {"holds": None, "fraction": None, "per_shape": per_shape}
    frac = sum(known.values()) / len(known)
    return {"holds": frac >= quorum - 1e-12, "fraction": frac, "per_shape": per_shape}


def _blind(result: AuditResult, metric: str, shape: str, alteration: str) -> bool:
    """Whether a metric ignores ``alteration`` of ``shape`` (Hemery et al., §4: blank rows).

    The curve's amplitude is compared with the largest amplitude the metric
    shows on the same ground truth over the alterations of the run: at most
    ``blind_rtol`` of it (raster noise, e.g. a rotated mask's area changing by
    a few pixels) counts as blind. A curve that never changes always does.
    """
    amp = prop.amplitude(result.curves[(metric, alteration, shape)].forward)
    ref = max(prop.amplitude(result.curves[(metric, a, shape)].forward)
              for a in result.alterations)
    return amp <= result.settings.get("blind_rtol", 0.0) * ref or amp == 0


def verdicts(result: AuditResult, metric: str) -> dict[str, dict[str, Any]]:
    """Property verdicts of one metric, by group (``distance`` and each alteration).

    A property is checked per ground truth and aggregated with the run's
    ``quorum``; a ground truth to which the metric is blind (:func:`_blind`)
    earns no axial symmetry, monotony or continuity, and a blind pair of
    ground truths no scale or shape dependency (Hemery et al. 2010 leave such cells blank).
    """
    s = result.settings
    q = s["quorum"]
    which = s.get("quadrants", "same-sign")
    out: dict[str, dict[str, Any]] = {}
    dist: dict[str, dict[str, bool | None]] = {"symmetry": {}, "separation": {}, "triangle": {}}
    for shape in result.shapes:
        cs = [result.curves[(metric, a, shape)] for a in result.alterations]
        dist["symmetry"][shape] = all(prop.symmetry(c.forward, c.backward) for c in cs)
        dist["separation"][shape] = all(prop.separation(c.forward, c.identical) for c in cs)
        t = result.triangles.get((metric, shape))
        dist["triangle"][shape] = None if t is None else prop.triangle_inequality(*t)
    out["distance"] = {k: _aggregate(v, q) for k, v in dist.items()}
    for a in result.alterations:
        group: dict[str, Any] = {}
        checks: dict[str, dict[str, bool | None]] = {
            "strict_monotony": {}, "uniform_continuity": {}
        }
        if a != "scale":
            checks = {"axial_symmetry": {}, **checks}
        blind = {sh: _blind(result, metric, sh, a) for sh in result.shapes}
        for shape in result.shapes:
            c = result.curves[(metric, a, shape)]
            centre = int(np.flatnonzero(c.axis == 0)[0])
            responds = not blind[shape]  # a blind metric earns nothing
            if "axial_symmetry" in checks:
                checks["axial_symmetry"][shape] = (
                    None if shape not in AXIAL_SHAPES
                    else responds and prop.axial_symmetry(c.forward, s["axial_rtol"])
                )
            limit = None
            if a == "rotation":
                limit = int(np.count_nonzero((c.axis > 0) & (c.axis <= 45.0)))
            checks["strict_monotony"][shape] = responds and prop.strict_monotony(
                c.forward, centre, limit, which=which, outer_edge=s.get("outer_edge", False),
                identical=c.identical)
            checks["uniform_continuity"][shape] = responds and prop.uniform_continuity(
                c.forward, centre, s["continuity_fraction"], s["continuity_ratio"], which=which
            )
        group.update({k: _aggregate(v, q) for k, v in checks.items()})
        curves = {sh: result.curves[(metric, a, sh)].forward for sh in result.shapes}
        group["scale_dependency"] = (
            ("none" if blind["gt1"] and blind["gt2"]
             else prop.scale_dependency(curves["gt1"], curves["gt2"]))
            if {"gt1", "gt2"} <= curves.keys() else None
        )
        group["shape_dependency"] = (
            (not (blind["gt4"] and blind["gt5"])
             and prop.shape_dependency(curves["gt4"], curves["gt5"]))
            if {"gt4", "gt5"} <= curves.keys() else None
        )
        out[a] = group
    return out
