"""Figures of a ranking: the Hasse diagram in levels and a rank-frequency heat map.

matplotlib is imported inside the functions (it is slow to import and only
needed here), and only its object-oriented API is used (no pyplot global state).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from geoeval.errors import OutputError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from geoeval.ranking.api import RankingResult

FORMATS = {".png": "png", ".svg": "svg"}


def ranking_rows(result: RankingResult) -> tuple[list[list[Any]], list[list[Any]]]:
    """Sugiyama-style rows: the items by level (the longest chain above each,
    best at the top, :meth:`Poset.levels`), a placeholder in every row a cover
    edge passes, and each row ordered by the mean position of its neighbours
    above, then below, then above again (barycentre sweeps: fewer crossings).

    Returns the rows (item names and ``("via", edge, row)`` placeholders) and,
    per cover edge, its chain from the worse item up to the better one.
    """
    poset = result.poset
    names = poset.names
    final = result.final_rank
    levels = poset.levels()
    level = {a: k for k, items in enumerate(levels) for a in items}
    rows: list[list[Any]] = [[names[a] for a in items] for items in levels]
    chains: list[list[Any]] = []
    for e, (worse, better) in enumerate(poset.hasse_edges()):
        chain: list[Any] = [names[worse]]
        for k in range(level[worse] - 1, level[better], -1):
            via = ("via", e, k)
            rows[k].append(via)
            chain.append(via)
        chains.append([*chain, names[better]])
    up: dict[Any, list[Any]] = {}
    down: dict[Any, list[Any]] = {}
    for chain in chains:
        for lower, upper in zip(chain, chain[1:], strict=False):
            up.setdefault(lower, []).append(upper)
            down.setdefault(upper, []).append(lower)

    def place(row: list[Any], neighbours: dict[Any, list[Any]], x: dict[Any, float]) -> None:
        def key(item: Any) -> tuple[float, int, int]:
            near = [x[n] for n in neighbours.get(item, []) if n in x]
            rank = final.get(item, 0) if isinstance(item, str) else 0
            return (float(np.mean(near)) if near else x.get(item, 0.0), rank,
                    0 if isinstance(item, str) else 1)

        row.sort(key=key)
        for i, item in enumerate(row):
            x[item] = i - (len(row) - 1) / 2.0

    x: dict[Any, float] = {}
    rows[0].sort(key=lambda item: final.get(item, 0))
    for sweep in ("down", "up", "down"):
        order = range(len(rows)) if sweep == "down" else range(len(rows) - 1, -1, -1)
        for k in order:
            place(rows[k], up if sweep == "down" else down, x)
    return rows, chains


def hasse_layout(result: RankingResult) -> dict[str, tuple[float, float]]:
    """Node positions: one row per level (best at the top, ``y = −level``, the
    level being the longest chain above an item), in a row ordered by
    barycentre sweeps, the cover edges' bends taking a place of their own."""
    rows, _ = ranking_rows(result)
    return {item: (i - (len(row) - 1) / 2.0, -float(k))
            for k, row in enumerate(rows) for i, item in enumerate(row)
            if isinstance(item, str)}


def _label(result: RankingResult, name: str) -> str:
    vals = []
    for col in result.indicators:
        v = result.values[name].get(col)
        vals.append("–" if v is None else f"{v:.3g}")
    return f"{name}\n{' / '.join(vals)}"


def plot_hasse(result: RankingResult, ax: Axes) -> None:
    """Draw the Hasse diagram of the indicator order on ``ax``: levels, best at
    the top, one arrow per cover (worse → better), nodes labelled with name and
    indicators. No edge passes through a box it does not end at (an edge
    spanning several levels bends through a place kept free in each row it
    crosses, and runs between the rows of boxes, from a box's top to a box's
    bottom)."""
    hasse_drawing(result, ax)


def hasse_drawing(result: RankingResult, ax: Axes) -> dict[str, Any]:
    """:func:`plot_hasse`, returning what it drew: ``boxes`` (name → x0, y0, x1,
    y1 in data units, as rendered) and ``edges`` (``(worse, better, points)``,
    the polyline of each cover edge)."""
    rows, chains = ranking_rows(result)
    xy = {item: (i - (len(row) - 1) / 2.0, -float(k))
          for k, row in enumerate(rows) for i, item in enumerate(row)}
    width = max((len(row) for row in rows), default=1)
    ax.set_xlim(-(width - 1) / 2.0 - 0.6, (width - 1) / 2.0 + 0.6)
    ax.set_ylim(-(len(rows) - 1) - 0.6, 0.6)
    ax.set_axis_off()
    from matplotlib.patches import FancyBboxPatch

    boot = getattr(result, "bootstrap", None)
    final = result.final_rank
    tied = {p.name for p in result.places if p.by_tie_breaker}  # ‡: above the next by one
    texts, boxes = {}, {}
    for name in result.names:
        x, y = xy[name]
        first = "" if boot is None else f"\nundominated {100 * boot['undominated'][name]:.0f}%"
        boxes[name] = (x - BOX[0] / 2, y - BOX[1] / 2, x + BOX[0] / 2, y + BOX[1] / 2)
        ax.add_patch(FancyBboxPatch((x - BOX[0] / 2, y - BOX[1] / 2), BOX[0], BOX[1],
                                    boxstyle="round,pad=0,rounding_size=0.03", fc="white",
                                    ec="0.3", zorder=3))
        mark = "‡" if name in tied else ""
        texts[name] = ax.text(x, y, f"#{final[name]}{mark} {_label(result, name)}{first}",
                              ha="center", va="center", fontsize=8, zorder=4)
    _fit_text(ax, texts)
    robust: set[tuple[str, str]] = set()
    if boot is not None:  # covers that hold in >= confidence of the paired replicates
        robust = {(b, a) for a, b in boot["robust_edges"]}  # edges run worse -> better
    edges = []
    for chain in chains:
        worse, better = chain[0], chain[-1]
        points = [(xy[worse][0], boxes[worse][3])]
        for via in chain[1:-1]:
            x, y = xy[via]  # through the row at a place of its own, as high as a box
            points += [(x, y - BOX[1] / 2), (x, y + BOX[1] / 2)]
        points.append((xy[better][0], boxes[better][1]))
        edges.append((worse, better, points))
        strong = (worse, better) in robust
        color, lw = ("black", 3.0) if strong else ("0.45", 1.2)
        if len(points) > 2:
            ax.plot([p[0] for p in points[:-1]], [p[1] for p in points[:-1]], color=color,
                    lw=lw, zorder=1, solid_capstyle="round")
        ax.annotate("", xy=points[-1], xytext=points[-2], zorder=2,
                    arrowprops={"arrowstyle": "-|>", "color": color, "lw": lw,
                                "shrinkA": 0, "shrinkB": 0, "mutation_scale": 10})
    rule = f"{result.tie_break}, then name" if result.tie_break else "name"
    marked = f";\n#k‡: above the next only by a tie-breaker ({rule})" if tied else ""
    ax.set_title(f"Hasse diagram ({' / '.join(result.indicators)}); #k = final rank{marked}",
                 fontsize=9)
    if boot is not None:
        ax.set_title(f"Hasse diagram ({' / '.join(result.indicators)}); #k = final rank;\n"
                     f"undominated: share of {boot['n']} paired bootstrap replicates;\n"
                     f"bold: dominance in ≥ {boot['confidence']:.0%} of them{marked}",
                     fontsize=9)
    return {"boxes": boxes, "edges": edges}


#: A label box's width and height in data units (places are 1 apart, rows 1 apart):
#: boxes never touch, and edges run in the free band between two rows.
BOX = (0.9, 0.36)


def _fit_text(ax: Axes, texts: dict[str, Any]) -> None:
    """Make the labels' font smaller until each fits its box (as the figure is laid
    out now; at most eight tries)."""
    figure = ax.figure
    for _ in range(8):
        if hasattr(figure, "draw_without_rendering"):
            figure.draw_without_rendering()  # runs the layout engine: final axes size
        renderer = figure._get_renderer()
        inverse = ax.transData.inverted()
        scale = 1.0
        for text in texts.values():
            extent = text.get_window_extent(renderer)
            (x0, y0), (x1, y1) = inverse.transform([[extent.x0, extent.y0],
                                                    [extent.x1, extent.y1]])
            wide, tall = abs(x1 - x0), abs(y1 - y0)
            scale = min(scale, 0.92 * BOX[0] / wide if wide else 1.0,
                        0.9 * BOX[1] / tall if tall else 1.0)
        if scale >= 1.0:
            return
        for text in texts.values():
            text.set_fontsize(max(text.get_fontsize() * scale * 0.98, 3.0))


def plot_rank_frequencies(result: RankingResult, ax: Axes) -> Any:
    """Heat map of ``Pr(rank = r)`` over the orderings the indicators allow (the
    linear extensions of the dominance order, round 0: later CRF rounds only
    resolve it, their frequencies end on the diagonal); rows: submissions in
    final order, columns: ranks 1..n, drawn on ``ax``. Returns the image (for a
    colour bar)."""
    order = list(result.ranking)
    index = {n: i for i, n in enumerate(result.names)}
    stats = result.stats
    prob = stats.probabilities()[[index[n] for n in order]]
    n = len(order)
    image = ax.imshow(prob, cmap="viridis", vmin=0.0, vmax=max(float(prob.max()), 1e-12))
    ax.set_xticks(range(n), [str(r) for r in range(1, n + 1)], fontsize=7)
    ax.set_yticks(range(n), order, fontsize=7)
    ax.set_xlabel("rank")
    count = (f"{stats.linear_extensions:,}" if stats.exact else "sampled")
    ax.set_title(f"Share of the orderings the indicators allow\n({count}) giving each rank",
                 fontsize=9)
    if n <= 12:
        for i in range(n):
            for j in range(n):
                if prob[i, j] > 0:
                    ax.text(
                        j,
                        i,
                        f"{prob[i, j]:.2f}",
                        ha="center",
                        va="center",
                        fontsize=6,
                        color="white" if prob[i, j] < 0.6 * prob.max() else "black",
                    )
    return image


def save_ranking_figure(result: RankingResult, path: str | os.PathLike[str]) -> Path | str:
    """Save the Hasse diagram and the rank-frequency heat map side by side.

    Parameters
    ----------
    result : RankingResult
    path : path-like
        ``.png`` or ``.svg``; written atomically (temp file, then ``os.replace``).

    Returns
    -------
    Path
    """
    from geoeval.output_targets import output_target, suffix_of
    from geoeval.outputs import atomic_path

    target = output_target(path)
    fmt = FORMATS.get(suffix_of(target))
    if fmt is None:
        raise OutputError("figure must be .png or .svg", target)
    if isinstance(target, Path):  # a URL's bucket was checked before the work
        folder = target.parent if str(target.parent) else Path(".")
        if not folder.is_dir():
            raise OutputError("folder does not exist", folder)
    from matplotlib.figure import Figure  # deferred: heavy, figures only

    n = len(result.names)
    rows, _ = ranking_rows(result)
    width = max(4.0, 1.6 * max(len(row) for row in rows))
    height = max(3.0, 1.1 * len(rows), 0.35 * n + 1.5)
    fig = Figure(figsize=(width + 0.45 * n + 3.0, height), layout="constrained")
    ax_h, ax_f = fig.subplots(1, 2, width_ratios=[width, 0.45 * n + 2.0])
    image = plot_rank_frequencies(result, ax_f)
    fig.colorbar(image, ax=ax_f, shrink=0.8)
    plot_hasse(result, ax_h)  # last: its labels are fitted to the laid-out figure
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=fmt, dpi=150)
    return target
