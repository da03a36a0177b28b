"""The HTML report's figures as inline SVG: the existing figure code, drawn small.

Every figure is drawn by the functions the PNG/SVG outputs use
(:func:`geoeval.report.figures_ranking.plot_hasse`,
:func:`~geoeval.report.figures_ranking.plot_rank_frequencies`,
:func:`geoeval.report.status_figure.plot_status_map`) and saved as SVG text with:

* text kept as ``<text>`` (``svg.fonttype: none``): small, selectable, read by
  screen readers, no glyph definitions whose ids would collide between figures;
* ids salted per figure (``svg.hashsalt``), so two figures of one page never
  share an id, and the page is the same from run to run;
* a map's polygon layers rasterised inside the SVG (one image an axes at
  :data:`MAP_DPI`, stored with a palette of :data:`PALETTE` colours), and a
  scene of more than :data:`OUTLINE_LIMIT` objects drawn one pixel per object:
  a 100,000-building map costs about what a 3,000-building one does;
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

#: Pixels per inch of the rasterised map layers (each map is about 3.3 inches wide).
MAP_DPI = 90
#: Cells per side of the grid in which the worst area is looked for.
WORST_GRID = 6
#: Above this many objects (both sides) the whole-scene panel is an image, one pixel per
#: object (:func:`plot_status_image`): outlines would be below a pixel anyway.
OUTLINE_LIMIT = 20_000
#: Colours of the maps' embedded images (:func:`_fewer_colours`).
PALETTE = 48
#: Pixels across the scene in that image.
IMAGE_PIXELS = 300


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
    # matplotlib spells out its whole sans-serif fallback list on every text
    text = re.sub(r"font-family: [^;\"]*", "font-family: 'DejaVu Sans', Arial, sans-serif", text)
    text = re.sub(r"data:image/png;base64,([A-Za-z0-9+/=\s]+)", _fewer_colours, text)
    # every id (matplotlib's axes_1, patch_2 ...) and reference to one, prefixed: unique
    # on a page of many figures
    text = re.sub(r'(\sid=")([^"]+")', rf"\1{key}-\2", text)
    text = re.sub(r'((?:xlink:)?href="#|url\(#)', rf"\1{key}-", text)
    head_end = text.index(">") + 1
    tid = f"fig-{key}"
    head = text[:head_end]
    head = head[:-1] + f' role="img" aria-labelledby="{tid}-t {tid}-d">'
    return (head + f'<title id="{tid}-t">{escape(title)}</title>'
            f'<desc id="{tid}-d">{escape(desc)}</desc>' + text[head_end:])


def _fewer_colours(match: re.Match[str]) -> str:
    """An embedded PNG (a rasterised map layer) re-encoded with a palette of at most
    :data:`PALETTE` colours: the maps' few flat colours and their anti-aliased edges
    survive, the bytes drop about threefold."""
    import base64

    from PIL import Image  # matplotlib's own image library

    image = Image.open(io.BytesIO(base64.b64decode(match.group(1))))
    out = io.BytesIO()
    image.convert("RGBA").quantize(colors=PALETTE, method=Image.Quantize.FASTOCTREE).save(
        out, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def hasse_svg(result: RankingResult) -> str:
    """The Hasse diagram (:func:`~geoeval.report.figures_ranking.plot_hasse`)."""
    from matplotlib.figure import Figure

    from geoeval.report.figures_ranking import plot_hasse, ranking_rows

    # sized as save_ranking_figure sizes it: its rows hold the items and the edges' bends
    rows, _ = ranking_rows(result)
    levels = result.levels()
    width = max(4.0, 1.6 * max(len(row) for row in rows))
    height = max(2.0, 1.1 * len(rows) + 0.6)
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

    tables = object_tables(result, matcher, instances=False, attributes=False) \
        if tables is None else tables
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


def _hatch(label: str) -> str | None:
    """Hatching of a reference layer (by its legend label): split and merged
    references stay apart from missed ones in greyscale."""
    for key, hatch in (("split", "////"), ("merged", "\\\\\\\\"), ("many-to-many", "....")):
        if key in label:
            return hatch
    return None


def _status_layers(result: ScoreResult, tables: Any) -> list[tuple[str, Any, str, np.ndarray]]:
    """The map's layers as (side, colour, label, selection), in drawing order:
    the fills and outlines of :func:`~geoeval.report.status_figure.plot_status_map`."""
    from geoeval.matching.result import MANY_TO_ONE, ONE_TO_MANY, ONE_TO_ONE
    from geoeval.report.objects import MATCHED
    from geoeval.report.qgis_styles import (
        KIND_COLOURS,
        STATUS_COLOURS,
        SUBMISSION_MATCHED,
        hex_colour,
    )

    kind = np.asarray(tables.reference["kind"], dtype=object)
    status = tables.reference["status"]
    sub = tables.submission["status"]
    other = (status == MATCHED) & ~np.isin(kind, [ONE_TO_ONE, ONE_TO_MANY, MANY_TO_ONE])
    layers = [
        ("reference", STATUS_COLOURS[MATCHED], "reference matched one-to-one", kind == ONE_TO_ONE),
        ("reference", KIND_COLOURS[ONE_TO_MANY], "reference split (over-detection)",
         kind == ONE_TO_MANY),
        ("reference", KIND_COLOURS[MANY_TO_ONE], "reference merged (under-detection)",
         kind == MANY_TO_ONE),
        ("reference", (120, 120, 120), "reference in a many-to-many instance", other),
        ("reference", STATUS_COLOURS[MISSED], "reference missed", status == MISSED),
        ("submission", SUBMISSION_MATCHED, "submission matched", sub == MATCHED),
        ("submission", STATUS_COLOURS[FALSE_ALARM], "submission false alarm",
         sub == FALSE_ALARM),
    ]
    return [(side, hex_colour(rgb), label, sel) for side, rgb, label, sel in layers
            if sel.any() or "many-to-many" not in label]


def plot_status_image(result: ScoreResult, ax: Any, tables: Any,
                      pixels: int = IMAGE_PIXELS) -> None:
    """The whole scene's status map as an image for scenes too large to outline
    each object: each object is the pixel under the centre of its bounding box
    (``pixels`` across the scene), coloured as
    :func:`~geoeval.report.status_figure.plot_status_map` fills it (errors drawn
    over matches, false alarms last); matched submitted objects are left out.
    """
    import shapely
    from matplotlib.colors import to_rgb
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from geoeval.report.status_figure import crs_unit, map_bounds, scale_bar

    ref = np.asarray(result.reference.polygons, dtype=object)
    sub = np.asarray(result.submission.polygons, dtype=object)
    bounds = map_bounds(result, ref, sub)
    layers = _status_layers(result, tables)
    handles: list[Any] = []
    if bounds is not None:
        x0, y0, x1, y1 = bounds
        size = max(x1 - x0, y1 - y0, 1e-9) / pixels
        nx, ny = max(1, int(np.ceil((x1 - x0) / size))), max(1, int(np.ceil((y1 - y0) / size)))
        image = np.ones((ny, nx, 3))
        centres = {}
        for side, geoms in (("reference", ref), ("submission", sub)):
            b = shapely.bounds(geoms).reshape(-1, 4)
            with np.errstate(invalid="ignore"):
                ix = np.clip(((b[:, 0] + b[:, 2]) / 2 - x0) // size, 0, nx - 1)
                iy = np.clip(((b[:, 1] + b[:, 3]) / 2 - y0) // size, 0, ny - 1)
            ok = np.isfinite(ix) & np.isfinite(iy)
            centres[side] = (np.nan_to_num(ix).astype(np.int64),
                             np.nan_to_num(iy).astype(np.int64), ok)
        for side, colour, label, sel in layers:
            if label == "submission matched":
                continue
            ix, iy, ok = centres[side]
            pick = sel & ok
            alpha = 0.6 if side == "reference" else 1.0
            image[iy[pick], ix[pick]] = 1.0 - alpha * (1.0 - np.asarray(to_rgb(colour)))
        ax.imshow(image, extent=(x0, x0 + nx * size, y0, y0 + ny * size), origin="lower",
                  interpolation="nearest", zorder=1)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
    for side, colour, label, sel in layers:
        if side == "reference":
            handles.append(Patch(facecolor=colour, alpha=0.6, hatch=_hatch(label),
                                 label=f"{label} ({int(sel.sum())})"))
        else:
            handles.append(Line2D([], [], color=colour, lw=1.5,
                                  label=f"{label} ({int(sel.sum())})"))
    ax.set_aspect("equal")
    ax.ticklabel_format(useOffset=False, style="plain")
    scale_bar(ax, crs_unit(result.reference.crs))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.06), ncol=2,
              fontsize=8, frameon=False)


def status_map_svg(result: ScoreResult, matcher: str, key: str, name: str) -> tuple[str, Any]:
    """The scene's status map and its worst area zoomed, side by side.

    Both panels are :func:`~geoeval.report.status_figure.plot_status_map`
    (the zoom draws only the objects it shows), except the whole scene of a
    scene of more than :data:`OUTLINE_LIMIT` objects: there each object is a
    pixel (:func:`plot_status_image`). The polygon layers are rasterised at
    :data:`MAP_DPI` inside the SVG; split and merged references are hatched.
    Returns the SVG and :func:`worst_area`'s answer.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import PathPatch, Rectangle

    from geoeval.report.status_figure import plot_status_map

    tables = object_tables(result, matcher, instances=False, attributes=False)
    worst = worst_area(result, matcher, tables)
    # a fixed layout (constrained layout costs a third of the drawing): two square maps
    # side by side, the legend under them
    fig = Figure(figsize=(7.0, 4.4))
    ax_all = fig.add_axes((0.02, 0.2, 0.47, 0.72))
    ax_zoom = fig.add_axes((0.51, 0.2, 0.47, 0.72))
    if len(result.reference) + len(result.submission) > OUTLINE_LIMIT:
        plot_status_image(result, ax_all, tables)
    else:
        plot_status_map(result, ax_all, matcher, tables=tables)
    ax_all.set_title("whole scene", fontsize=9)
    if worst is not None:
        (zx0, zy0, zx1, zy1), n_err, _ = worst
        pad = 0.04 * (zx1 - zx0)
        plot_status_map(result, ax_zoom, matcher, tables=tables,
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
    # one legend under both maps, the whole figure wide (an axes' legend would narrow its map)
    legend = ax_all.get_legend()
    labels = [t.get_text() for t in legend.get_texts()] if legend is not None else []
    handles = list(legend.legend_handles) if legend is not None else []
    if legend is not None:
        legend.remove()
    for label, handle in zip(labels, handles, strict=True):
        if _hatch(label) is not None:
            handle.set_hatch(_hatch(label))
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    from matplotlib.colors import to_rgb

    hatches = {tuple(np.round(to_rgb(colour), 3)): _hatch(label)
               for side, colour, label, _ in _status_layers(result, tables)
               if side == "reference" and _hatch(label) is not None}
    for ax in (ax_all, ax_zoom):
        ax.set_xticks([])  # the scale bar gives the size; coordinates would crowd a small map
        ax.set_yticks([])
        # the map's layers (image 1, fills 2, outlines 3 moved to 2.6) become one image an
        # axes; text (3) and the scale bar (4-6) stay vector
        ax.set_rasterization_zorder(2.8)
        for patch in (p for p in ax.patches if isinstance(p, PathPatch)):
            if patch.get_zorder() == 3:
                patch.set_zorder(2.6)
            hatch = hatches.get(tuple(np.round(patch.get_facecolor()[:3], 3)))
            if patch.get_fill() and hatch is not None:
                patch.set_hatch(hatch)
    counts = ", ".join(labels)
    where = ("" if worst is None else
             f" The right panel zooms on the cell of a {WORST_GRID} by {WORST_GRID} grid with "
             f"the most errors ({worst[1]} of its {worst[2]} objects).")
    out = svg(fig, key, f"Status map of {name}",
              f"Reference objects filled by what happened to them and submitted objects "
              f"outlined ({matcher} matcher): {counts}.{where}")
    return out, worst
