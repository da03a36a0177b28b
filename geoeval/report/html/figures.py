"""The HTML report's figures as inline SVG: the existing figure code, drawn small.

Every figure is drawn by the functions the PNG/SVG outputs use
(:func:`geoeval.report.figures_ranking.plot_hasse`,
:func:`~geoeval.report.figures_ranking.plot_rank_frequencies`,
:func:`geoeval.report.status_figure.plot_status_map`,
:func:`geoeval.report.breakdown.breakdown_figure`) and saved as SVG text with:

* text kept as ``<text>`` (``svg.fonttype: none``): small, selectable, read by
  screen readers, no glyph definitions whose ids would collide between figures;
* ids salted per figure (``svg.hashsalt``), so two figures of one page never
  share an id, and the page is the same from run to run;
* the map's polygons rasterised inside the SVG (``rasterized=True``, one PNG
  image per map at a fixed pixel size): a 100,000-building scene costs the same
  bytes as a 1,000-building one;
* a ``<title>`` and ``<desc>`` as the SVG's first children and ``role="img"``:
  the figure's text alternative.
"""

from __future__ import annotations

import io
import re
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np

from geoeval.report.objects import FALSE_ALARM, MISSED, object_tables

if TYPE_CHECKING:  # pragma: no cover
    from geoeval.ranking.api import RankingResult
    from geoeval.scoring import ScoreResult

#: Pixels per inch of the rasterised map layers (the maps are 3.4 inches wide).
MAP_DPI = 110
#: Cells per side of the grid in which the worst area is looked for.
WORST_GRID = 6


def svg(fig: Any, key: str, title: str, desc: str) -> str:
    """``fig`` as SVG markup for inline use, with ``<title>``/``<desc>`` first.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    key : str
        Unique on the page: the salt of the figure's ids and the prefix of its
        title's id.
    title, desc : str
        Short name and a sentence or two saying what the figure shows.
    """
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": key,
                                "font.family": ["DejaVu Sans", "sans-serif"]}):
        fig.savefig(buf, format="svg", dpi=MAP_DPI, metadata={"Date": None})
    text = buf.getvalue()
    start = text.index("<svg")
    text = text[start:]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, count=1, flags=re.S)
    # every id (matplotlib's axes_1, patch_2 ...) and reference to one, prefixed: unique
    # on a page of many figures
    text = re.sub(r'(\sid=")([^"]+")', rf"\1{key}-\2", text)
    text = re.sub(r'((?:xlink:)?href="#|url\(#)', rf"\1{key}-", text)
    head_end = text.index(">") + 1
    tid = f"fig-{key}"
    head = text[:head_end]
    head = re.sub(r'\swidth="([\d.]+)pt"\s+height="([\d.]+)pt"', "", head, count=1)
    head = head[:-1] + f' role="img" aria-labelledby="{tid}-t {tid}-d">'
    return (head + f'<title id="{tid}-t">{escape(title)}</title>'
            f'<desc id="{tid}-d">{escape(desc)}</desc>' + text[head_end:])


def hasse_svg(result: RankingResult) -> str:
    """The Hasse diagram (:func:`~geoeval.report.figures_ranking.plot_hasse`)."""
    from matplotlib.figure import Figure

    from geoeval.report.figures_ranking import plot_hasse

    levels = result.levels()
    width = max(4.5, 1.7 * max(len(lv) for lv in levels))
    height = max(2.5, 1.1 * len(levels) + 0.8)
    fig = Figure(figsize=(width, height), layout="constrained")
    plot_hasse(result, fig.subplots())
    edges = result.hasse_edges()
    words = "; ".join(f"{b} above {a}" for a, b in edges) or "no entry dominates another"
    return svg(fig, "hasse", "Hasse diagram of the indicator order",
               f"{len(levels)} levels, best at the top; an edge joins an entry to the one "
               f"directly above it (better on every indicator): {words}.")


def rank_frequency_svg(result: RankingResult) -> str:
    """The rank-frequency heat map
    (:func:`~geoeval.report.figures_ranking.plot_rank_frequencies`)."""
    from matplotlib.figure import Figure

    from geoeval.report.figures_ranking import plot_rank_frequencies

    n = len(result.names)
    fig = Figure(figsize=(max(3.5, 0.42 * n + 2.2), max(2.6, 0.3 * n + 1.2)),
                 layout="constrained")
    ax = fig.subplots()
    image = plot_rank_frequencies(result, ax)
    fig.colorbar(image, ax=ax, shrink=0.8, label="share of orderings")
    return svg(fig, "rankfreq", "Rank frequencies",
               "Heat map: one row per entry in final order, one column per rank; the shade is "
               "the share of the orderings compatible with the indicators that give the entry "
               "that rank (lighter is more).")


def worst_area(result: ScoreResult, matcher: str,
               tables: Any = None) -> tuple[tuple[float, float, float, float], int, int] | None:
    """The cell of a ``WORST_GRID`` × ``WORST_GRID`` grid over the scene with the most
    errors: missed and split or merged references and false alarms, each counted at
    the centre of its bounding box.

    Returns
    -------
    (bounds, errors, objects) or None
        The cell's ``(xmin, ymin, xmax, ymax)``, its error count and its number of
        objects; None when the scene has no error.
    """
    import shapely

    from geoeval.matching.result import MANY_TO_ONE, ONE_TO_MANY

    tables = object_tables(result, matcher) if tables is None else tables
    ref = np.asarray(result.reference.polygons, dtype=object)
    sub = np.asarray(result.submission.polygons, dtype=object)
    kind = np.asarray(tables.reference["kind"], dtype=object)
    ref_err = (tables.reference["status"] == MISSED) | np.isin(kind, [ONE_TO_MANY, MANY_TO_ONE])
    sub_err = tables.submission["status"] == FALSE_ALARM
    boxes = np.concatenate([shapely.bounds(ref), shapely.bounds(sub)]).reshape(-1, 4)
    err = np.concatenate([ref_err, sub_err]).astype(bool)
    ok = np.isfinite(boxes).all(axis=1)
    if not (err & ok).any():
        return None
    boxes, err = boxes[ok], err[ok]
    if result.reference.grid is not None:
        x0, y0, x1, y1 = result.reference.grid.bounds
    else:
        x0, y0 = boxes[:, 0].min(), boxes[:, 1].min()
        x1, y1 = boxes[:, 2].max(), boxes[:, 3].max()
    side = max(x1 - x0, y1 - y0) / WORST_GRID or 1.0
    cx = (boxes[:, 0] + boxes[:, 2]) / 2
    cy = (boxes[:, 1] + boxes[:, 3]) / 2
    nx = max(1, int(np.ceil((x1 - x0) / side)))
    ny = max(1, int(np.ceil((y1 - y0) / side)))
    ix = np.clip(((cx - x0) // side).astype(np.int64), 0, nx - 1)
    iy = np.clip(((cy - y0) // side).astype(np.int64), 0, ny - 1)
    cell = iy * nx + ix
    errors = np.bincount(cell[err], minlength=nx * ny)
    objects = np.bincount(cell, minlength=nx * ny)
    best = int(np.argmax(errors))
    by, bx = divmod(best, nx)
    bounds = (x0 + bx * side, y0 + by * side, x0 + (bx + 1) * side, y0 + (by + 1) * side)
    return (tuple(float(v) for v in bounds), int(errors[best]), int(objects[best]))


def status_map_svg(result: ScoreResult, matcher: str, key: str, name: str) -> tuple[str, Any]:
    """The scene's status map and its worst area zoomed, side by side
    (:func:`~geoeval.report.status_figure.plot_status_map` twice).

    The polygon layers are rasterised at :data:`MAP_DPI` inside the SVG; split
    and merged references are hatched so that they stay apart from missed ones
    in greyscale. Returns the SVG and :func:`worst_area`'s answer.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import PathPatch, Rectangle

    from geoeval.report.status_figure import plot_status_map

    tables = object_tables(result, matcher)
    worst = worst_area(result, matcher, tables)
    fig = Figure(figsize=(7.0, 4.0), layout="constrained")
    ax_all, ax_zoom = fig.subplots(1, 2)
    plot_status_map(result, ax_all, matcher)
    ax_all.set_title("whole scene", fontsize=9)
    if worst is not None:
        (zx0, zy0, zx1, zy1), n_err, _ = worst
        pad = 0.04 * (zx1 - zx0)
        plot_status_map(result, ax_zoom, matcher,
                        bounds=(zx0 - pad, zy0 - pad, zx1 + pad, zy1 + pad))
        legend = ax_zoom.get_legend()
        if legend is not None:
            legend.remove()
        ax_zoom.set_title(f"worst area: {n_err} errors", fontsize=9)
        ax_all.add_patch(Rectangle((zx0, zy0), zx1 - zx0, zy1 - zy0, fill=False,
                                   edgecolor="black", linewidth=1.6, zorder=7))
    else:
        ax_zoom.set_axis_off()
        ax_zoom.text(0.5, 0.5, "no errors to zoom on", ha="center", va="center",
                     transform=ax_zoom.transAxes)
    hatches = {"split": "////", "merged": "\\\\\\\\", "many-to-many": "...."}
    for ax in (ax_all, ax_zoom):
        ax.tick_params(labelsize=6)
        for patch in ax.patches:
            if isinstance(patch, PathPatch):
                patch.set_rasterized(True)
    legend = ax_all.get_legend()
    labels = [t.get_text() for t in legend.get_texts()] if legend is not None else []
    for label, handle in zip(labels, legend.legend_handles if legend is not None else [],
                             strict=False):
        hatch = next((h for k, h in hatches.items() if f"reference {k}" in label
                      or (k == "many-to-many" and k in label)), None)
        if hatch is not None:
            handle.set_hatch(hatch)
    for ax in (ax_all, ax_zoom):
        fills = [p for p in ax.patches if isinstance(p, PathPatch) and p.get_fill()]
        for patch, label in zip(fills, [lb for lb in labels if lb.startswith("reference")],
                                strict=False):
            hatch = next((h for k, h in hatches.items() if f"reference {k}" in label
                          or (k == "many-to-many" and k in label)), None)
            if hatch is not None:
                patch.set_hatch(hatch)
    counts = ", ".join(labels)
    where = ("" if worst is None else
             f" The right panel zooms on the cell of a {WORST_GRID} by {WORST_GRID} grid with "
             f"the most errors ({worst[1]} of its {worst[2]} objects).")
    out = svg(fig, key, f"Status map of {name}",
              f"Reference objects filled by what happened to them and submitted objects "
              f"outlined ({matcher} matcher): {counts}.{where}")
    return out, worst


def breakdown_svg(result: ScoreResult, matcher: str, key: str, name: str) -> str:
    """The error breakdown's bars (:func:`geoeval.report.breakdown.breakdown_figure`)."""
    from geoeval.report.breakdown import breakdown_figure

    fig = breakdown_figure(result, matcher=matcher)
    fig.set_size_inches(fig.get_figwidth() * 0.85, fig.get_figheight() * 0.85)
    return svg(fig, key, f"Error breakdown of {name}",
               "Bars: how much F1 (and the matcher's accuracy) would gain if one type of error "
               "were fixed and everything else stayed as it is; the same numbers are in the "
               "table next to it.")
