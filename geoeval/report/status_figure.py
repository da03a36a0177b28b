"""Figure of a scored scene: status map (legend, scale bar) and a bar chart of scores.

The map fills reference objects by status (matched / missed) and outlines
submitted objects (matched / false alarm) in the colours of the QGIS styles
(:mod:`geoeval.report.qgis_styles`). All polygons of one status are drawn as a
single compound path built with numpy from the rings' coordinates (no Python
loop over objects). matplotlib is imported inside the functions (slow to
import, figures only), object-oriented API only.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from geoeval.errors import OutputError
from geoeval.matching.result import MANY_TO_ONE, ONE_TO_MANY, ONE_TO_ONE
from geoeval.report.objects import (
    FALSE_ALARM,
    MATCHED,
    MISSED,
    ObjectTables,
    choose_matcher,
    object_tables,
)
from geoeval.report.qgis_styles import (
    KIND_COLOURS,
    STATUS_COLOURS,
    SUBMISSION_MATCHED,
    hex_colour,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from geoeval.scoring import ScoreResult

FORMATS = {".png": "png", ".svg": "svg"}
SCORES = ("precision", "recall", "f1", "accuracy")


def polygons_path(geoms: np.ndarray) -> Any:
    """One matplotlib ``Path`` holding every ring of ``geoms`` (holes included).

    MultiPolygons (what GeoPackages and Shapefiles hold) are split into their
    polygons first. Rings are oriented (exterior counter-clockwise, holes
    clockwise) so the non-zero fill rule leaves holes empty.
    """
    import shapely
    from matplotlib.path import Path as MplPath

    geoms = np.asarray(geoms, dtype=object)
    if geoms.size == 0:
        return MplPath(np.zeros((0, 2)))
    geoms = shapely.orient_polygons(shapely.get_parts(geoms))
    rings = shapely.get_rings(geoms)
    coords, ring = shapely.get_coordinates(rings, return_index=True)
    codes = np.full(ring.size, MplPath.LINETO, dtype=np.uint8)
    if ring.size:
        first = np.r_[True, ring[1:] != ring[:-1]]
        last = np.r_[ring[1:] != ring[:-1], True]
        codes[first] = MplPath.MOVETO
        codes[last] = MplPath.CLOSEPOLY
    return MplPath(coords, codes)


def nice_length(span: float) -> float:
    """A round scale-bar length (1, 2 or 5 × 10^k) of about a fifth of ``span``."""
    if not span > 0:
        return 1.0
    target = span / 5.0
    base = 10.0 ** math.floor(math.log10(target))
    return max(m * base for m in (1.0, 2.0, 5.0) if m * base <= target)


def crs_unit(crs: Any) -> str:
    """Short name of the CRS's horizontal unit (``m``, ``ft``, ``°``) or ``units``."""
    if crs is None:
        return "units"
    try:
        from pyproj import CRS

        info = CRS.from_user_input(crs).axis_info
    except Exception:
        return "units"
    name = info[0].unit_name if info else ""
    return {"metre": "m", "meter": "m", "degree": "°", "foot": "ft",
            "US survey foot": "ft"}.get(name, name or "units")


def scale_bar(ax: Axes, unit: str, geoms: np.ndarray | None = None
               ) -> tuple[float, float, float, float]:
    """Draw the scale bar in its white box where the box hides nothing: the first
    corner of the map (lower left, lower right, upper right, upper left) whose box
    meets none of ``geoms``; else in a band added below the data. Returns the
    box (``x0, y0, x1, y1``)."""
    from matplotlib.patches import Rectangle

    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    length = nice_length(x1 - x0)
    label_len, label_unit = length, unit
    if unit == "m" and length >= 1000:
        label_len, label_unit = length / 1000.0, "km"
    h = (y1 - y0) * 0.012
    width, height = length + (x1 - x0) * 0.03, h * 6.5
    margin_x, margin_y = (x1 - x0) * 0.025, (y1 - y0) * 0.025
    corners = [(x0 + margin_x, y0 + margin_y), (x1 - margin_x - width, y0 + margin_y),
               (x1 - margin_x - width, y1 - margin_y - height), (x0 + margin_x,
                                                                 y1 - margin_y - height)]
    free = None
    if geoms is None or len(geoms) == 0:
        free = corners[0]
    else:
        import shapely

        tree = shapely.STRtree(geoms)
        for bx, by in corners:
            if not tree.query(shapely.box(bx, by, bx + width, by + height),
                              predicate="intersects").size:
                free = (bx, by)
                break
    if free is None:  # every corner covers something: a band of its own below the map
        ax.set_ylim(y0 - height - 2 * margin_y, y1)
        free = (x0 + margin_x, y0 - height - margin_y)
    bx, by = free
    x, y = bx + (x1 - x0) * 0.015, by + h * 1.5
    ax.add_patch(Rectangle((bx, by), width, height, facecolor="white", edgecolor="none",
                           alpha=0.8, zorder=4))
    ax.add_patch(Rectangle((x, y), length / 2, h, facecolor="black", edgecolor="black",
                           zorder=5))
    ax.add_patch(Rectangle((x + length / 2, y), length / 2, h, facecolor="white",
                           edgecolor="black", zorder=5))
    ax.text(x + length / 2, y + h * 1.6, f"{label_len:g} {label_unit}", ha="center",
            va="bottom", fontsize=8, zorder=6)
    return (bx, by, bx + width, by + height)


def plot_status_map(result: ScoreResult, ax: Axes, matcher: str | None = None, *,
                    bounds: tuple[float, float, float, float] | None = None,
                    tables: ObjectTables | None = None) -> None:
    """Draw the status map of ``result`` on ``ax`` (legend and scale bar included).

    ``bounds`` (``xmin, ymin, xmax, ymax``) shows part of the scene (default all
    of it): only the objects whose bounding box meets it are drawn, and the
    legend counts those. ``tables``: :func:`~geoeval.report.objects.object_tables`
    already built for ``matcher``.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, PathPatch

    if tables is None:
        tables = object_tables(result, matcher, attributes=False)
    ref_geoms = np.asarray(result.reference.polygons, dtype=object)
    sub_geoms = np.asarray(result.submission.polygons, dtype=object)
    ref_status = tables.reference["status"]
    sub_status = tables.submission["status"]
    ref_kind = np.asarray(tables.reference["kind"], dtype=object)
    if bounds is not None:  # a zoom on a large scene draws only what it shows
        ref_in, sub_in = _meets(ref_geoms, bounds), _meets(sub_geoms, bounds)
        ref_geoms, ref_status, ref_kind = ref_geoms[ref_in], ref_status[ref_in], ref_kind[ref_in]
        sub_geoms, sub_status = sub_geoms[sub_in], sub_status[sub_in]
    handles = []
    # references by what happened to them: matched one-to-one, split by the detector
    # (one-to-many: over-detection), merged with others (many-to-one: under-detection),
    # missed; the fills are the QGIS styles' colours
    fills = (
        (ref_kind == ONE_TO_ONE, STATUS_COLOURS[MATCHED], "reference matched one-to-one"),
        (ref_kind == ONE_TO_MANY, KIND_COLOURS[ONE_TO_MANY], "reference split (over-detection)"),
        (ref_kind == MANY_TO_ONE, KIND_COLOURS[MANY_TO_ONE], "reference merged (under-detection)"),
        ((ref_status == MATCHED) & ~np.isin(ref_kind, [ONE_TO_ONE, ONE_TO_MANY, MANY_TO_ONE]),
         (120, 120, 120), "reference in a many-to-many instance"),
        (ref_status == MISSED, STATUS_COLOURS[MISSED], "reference missed"),
    )
    for sel, rgb, label in fills:
        if not sel.any() and label.endswith("many-to-many instance"):
            continue
        colour = hex_colour(rgb)
        _add_layer(ax, PathPatch(polygons_path(ref_geoms[sel]), facecolor=colour, alpha=0.6,
                                 edgecolor="none", zorder=2))
        handles.append(Patch(facecolor=colour, alpha=0.6, label=f"{label} ({int(sel.sum())})"))
    for status, rgb, lw in ((MATCHED, SUBMISSION_MATCHED, 0.5),
                            (FALSE_ALARM, STATUS_COLOURS[FALSE_ALARM], 0.9)):
        sel = sub_status == status
        colour = hex_colour(rgb)
        _add_layer(ax, PathPatch(polygons_path(sub_geoms[sel]), facecolor="none",
                                 edgecolor=colour, linewidth=lw, zorder=3))
        handles.append(Line2D([], [], color=colour, lw=1.5,
                              label=f"submission {status.replace('_', ' ')} ({int(sel.sum())})"))
    if bounds is None:
        bounds = map_bounds(result, ref_geoms, sub_geoms)
    if bounds is not None:
        pad = 0.01 * max(bounds[2] - bounds[0], bounds[3] - bounds[1], 1e-9)
        ax.set_xlim(bounds[0] - pad, bounds[2] + pad)
        ax.set_ylim(bounds[1] - pad, bounds[3] + pad)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=7)
    ax.ticklabel_format(useOffset=False, style="plain")
    shown = np.concatenate([ref_geoms, sub_geoms])
    scale_bar(ax, crs_unit(result.reference.crs), shown[~_empty(shown)])
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.06), ncol=2,
              fontsize=8, frameon=False)
    ax.set_title(f"{Path(result.submission.path).name} vs {Path(result.reference.path).name}"
                 f" — {tables.matcher}", fontsize=9)


def _empty(geoms: np.ndarray) -> np.ndarray:
    import shapely

    return shapely.is_missing(geoms) | shapely.is_empty(geoms)


def _meets(geoms: np.ndarray, bounds: tuple[float, float, float, float]) -> np.ndarray:
    """Which geometries' bounding boxes meet ``bounds`` (empty ones: none)."""
    import shapely

    b = shapely.bounds(geoms).reshape(-1, 4)
    with np.errstate(invalid="ignore"):
        return ((b[:, 0] <= bounds[2]) & (b[:, 2] >= bounds[0]) & (b[:, 1] <= bounds[3])
                & (b[:, 3] >= bounds[1]))


def _add_layer(ax: Axes, patch: Any) -> None:
    """Add a layer's compound path without ``Axes.add_patch``, whose data-limit
    update walks every segment in Python (10 s for the sample's 3,000 buildings);
    the map sets its limits itself."""
    ax.add_artist(patch)
    patch.set_clip_path(ax.patch)


def map_bounds(result: ScoreResult, ref: np.ndarray,
               sub: np.ndarray) -> tuple[float, float, float, float] | None:
    """The map's extent: the reference grid's bounds, else those of both layers'
    shapes (``None`` when there are none)."""
    if result.reference.grid is not None:
        return result.reference.grid.bounds
    import shapely

    geoms = np.concatenate([ref, sub])
    if geoms.size == 0:
        return None
    b = shapely.bounds(geoms)
    return (float(np.nanmin(b[:, 0])), float(np.nanmin(b[:, 1])),
            float(np.nanmax(b[:, 2])), float(np.nanmax(b[:, 3])))


def plot_scores(result: ScoreResult, ax: Axes) -> None:
    """Grouped bars of precision, recall, F1 and accuracy per matcher (``–`` where null)."""
    names = list(result.results)
    width = 0.8 / len(SCORES)
    # none of the map's status or kind colours: a bar never reads as a status
    colours = ("#1b1b1b", "#8c564b", "#bcbd22", "#e377c2")
    x = np.arange(len(names))
    for k, (score, colour) in enumerate(zip(SCORES, colours, strict=True)):
        vals = [getattr(result.results[n], score) for n in names]
        pos = x - 0.4 + width * (k + 0.5)
        heights = [0.0 if v is None else v for v in vals]
        ax.bar(pos, heights, width, color=colour, label=score)
        for p, v in zip(pos, vals, strict=True):
            ax.text(p, (v or 0.0) + 0.01, "–" if v is None else f"{v:.2f}", ha="center",
                    va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("score")
    ax.legend(fontsize=7, ncol=2, loc="upper right")
    ax.set_title("scores", fontsize=9)
    from geoeval.report.tables import accuracy_label

    ax.set_xlabel("accuracy: " + ", ".join(accuracy_label(n) for n in names),
                  fontsize=7)


def plot_classes(result: ScoreResult, ax: Axes, matcher: str) -> None:
    """F1 of each class scored on its own (``--class-field``), one bar per class,
    with its reference count; ``–`` where F1 is undefined."""
    per_class = result.per_class
    assert per_class is not None
    names = list(per_class.classes)
    f1 = [per_class.classes[c].results[matcher].f1 for c in names]
    y = np.arange(len(names))[::-1]
    ax.barh(y, [0.0 if v is None else v for v in f1], color="#1b1b1b", height=0.6)
    for yy, v in zip(y, f1, strict=True):
        ax.text((v or 0.0) + 0.01, yy, "– (undefined)" if v is None else f"{v:.2f}",
                va="center", fontsize=7)
    labels = [f"{c} ({len(per_class.classes[c].reference)})" for c in names]
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xlim(0, 1.15)
    ax.set_xlabel(f"F1 ({matcher}); class (reference objects)", fontsize=7)
    ax.set_title("each class on its own", fontsize=9)


def save_status_figure(result: ScoreResult, path: str | os.PathLike[str], *,
                       matcher: str | None = None, dpi: int = 150) -> Path | str:
    """Save the status map and the score chart side by side.

    Parameters
    ----------
    result : ScoreResult
    path : path-like
        ``.png`` or ``.svg``; written atomically (temp file, then ``os.replace``).
    matcher : str, optional
        Matcher whose statuses the map (and, with classes, the per-class chart)
        shows (default ``mom`` when it ran).
    dpi : int
        Resolution of a ``.png`` (the figure is 13 × 7.5 inches).

    Returns
    -------
    Path

    Notes
    -----
    Statuses follow Özdemir et al. (2010), §4.1 (missed detections MD, false
    alarms FA); the chart shows eq. 14–15 (precision, recall), F1 and each
    matcher's accuracy.
    """
    from geoeval.output_targets import output_target, suffix_of
    from geoeval.outputs import atomic_path

    target = output_target(path)
    fmt = FORMATS.get(suffix_of(target))
    if fmt is None:
        raise OutputError("figure must be .png or .svg", target)
    choose_matcher(result, matcher)
    from matplotlib.figure import Figure  # deferred: heavy, figures only

    fig = Figure(figsize=(13.0, 7.5), layout="constrained")
    if result.per_class is None or not result.per_class.classes:
        ax_map, ax_bar = fig.subplots(1, 2, width_ratios=[2.2, 1.0])
    else:  # the score chart above the per-class chart, right of the map
        grid = fig.add_gridspec(2, 2, width_ratios=[2.2, 1.0])
        ax_map = fig.add_subplot(grid[:, 0])
        ax_bar = fig.add_subplot(grid[0, 1])
        plot_classes(result, fig.add_subplot(grid[1, 1]), choose_matcher(result, matcher))
    plot_status_map(result, ax_map, matcher)
    plot_scores(result, ax_bar)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=fmt, dpi=dpi)
    return target
