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


def hasse_layout(result: RankingResult) -> dict[str, tuple[float, float]]:
    """Node positions: one row per level (best at the top, ``y = −level``); in a
    row, items ordered by the mean position of the items covering them
    (barycentre heuristic, fewer crossings), then by final rank."""
    poset = result.poset
    final = result.final_rank
    covers = poset.covers
    pos: dict[int, tuple[float, float]] = {}
    for depth, level in enumerate(poset.levels()):

        def key(a: int) -> tuple[float, int]:
            above = [pos[b][0] for b in np.flatnonzero(covers[a]).tolist() if b in pos]
            return (float(np.mean(above)) if above else 0.0, final[poset.names[a]])

        ordered = sorted(level, key=key) if depth else sorted(level, key=lambda a: key(a)[1])
        m = len(ordered)
        for i, a in enumerate(ordered):
            pos[a] = (i - (m - 1) / 2.0, -float(depth))
    return {poset.names[a]: xy for a, xy in pos.items()}


def _label(result: RankingResult, name: str) -> str:
    vals = []
    for col in result.indicators:
        v = result.values[name].get(col)
        vals.append("–" if v is None else f"{v:.3g}")
    return f"{name}\n{' / '.join(vals)}"


def plot_hasse(result: RankingResult, ax: Axes) -> None:
    """Draw the Hasse diagram of the indicator order on ``ax``: levels, best at
    the top, one arrow per cover (worse → better), nodes labelled with name and
    indicators."""
    import networkx as nx  # deferred: only figures and the GraphML export need it

    xy = hasse_layout(result)
    nx.draw_networkx_edges(result.hasse(), xy, ax=ax, edge_color="0.45", width=1.2,
                           arrows=True, arrowstyle="-|>", arrowsize=10, node_size=1800)
    boot = getattr(result, "bootstrap", None)
    if boot is not None:  # covers that hold in >= confidence of the paired replicates
        robust = {(b, a) for a, b in boot["robust_edges"]}  # graph edges run worse -> better
        keep = [e for e in result.hasse().edges if tuple(e) in robust]
        nx.draw_networkx_edges(result.hasse(), xy, edgelist=keep, ax=ax, edge_color="black",
                               width=3.0, arrows=True, arrowstyle="-|>", arrowsize=12,
                               node_size=1800)
    final = result.final_rank
    for name, (x, y) in xy.items():
        first = "" if boot is None else f"\nP(first) {boot['p_first'][name]:.2f}"
        ax.text(
            x,
            y,
            f"#{final[name]} {_label(result, name)}{first}",
            ha="center",
            va="center",
            fontsize=8,
            zorder=2,
            bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": "0.3"},
        )
    xs = [p[0] for p in xy.values()] or [0.0]
    ys = [p[1] for p in xy.values()] or [0.0]
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(min(ys) - 0.6, max(ys) + 0.6)
    ax.set_axis_off()
    ax.set_title(f"Hasse diagram ({' / '.join(result.indicators)}); #k = final rank", fontsize=9)
    if boot is not None:
        ax.set_title(f"Hasse diagram ({' / '.join(result.indicators)});\n#k = final rank; "
                     f"bold: dominance in ≥ {boot['confidence']:.0%}\nof {boot['n']} paired "
                     "bootstrap replicates", fontsize=9)


def plot_rank_frequencies(result: RankingResult, ax: Axes) -> Any:
    """Heat map of ``Pr(rank = r)`` (rows: submissions in final order; columns:
    ranks 1..n) on ``ax``; returns the image (for a colour bar)."""
    order = list(result.ranking)
    index = {n: i for i, n in enumerate(result.names)}
    stats = result.deciding_stats  # the round that decided the order, as the table shows
    prob = stats.probabilities()[[index[n] for n in order]]
    n = len(order)
    image = ax.imshow(prob, cmap="viridis", vmin=0.0, vmax=max(float(prob.max()), 1e-12))
    ax.set_xticks(range(n), [str(r) for r in range(1, n + 1)], fontsize=7)
    ax.set_yticks(range(n), order, fontsize=7)
    ax.set_xlabel("rank")
    method = "exact" if stats.exact else "sampled"
    where = "" if result.deciding_round == 0 else f", CRF round {result.deciding_round}"
    ax.set_title(f"Rank frequencies ({method}{where})", fontsize=9)
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


def save_ranking_figure(result: RankingResult, path: str | os.PathLike[str]) -> Path:
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
    target = Path(path)
    fmt = FORMATS.get(target.suffix.lower())
    if fmt is None:
        raise OutputError("figure must be .png or .svg", target)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError("folder does not exist", folder)
    from matplotlib.figure import Figure  # deferred: heavy, figures only

    from geoeval.outputs import atomic_path

    n = len(result.names)
    width = max(4.0, 1.6 * max(len(lv) for lv in result.levels()))
    height = max(3.0, 1.1 * len(result.levels()), 0.35 * n + 1.5)
    fig = Figure(figsize=(width + 0.45 * n + 3.0, height), layout="constrained")
    ax_h, ax_f = fig.subplots(1, 2, width_ratios=[width, 0.45 * n + 2.0])
    plot_hasse(result, ax_h)
    image = plot_rank_frequencies(result, ax_f)
    fig.colorbar(image, ax=ax_f, shrink=0.8)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=fmt, dpi=150)
    return target
