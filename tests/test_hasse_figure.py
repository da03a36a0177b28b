"""The Hasse figure: levels by the longest chain above an item, and no edge segment
crossing a box it does not end at (an edge spanning levels bends through places
kept free), checked on the drawn geometry of random contests."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from shapely.geometry import LineString, box

from geoeval.ranking.api import rank_table


def contest(tmp_path, values: dict[str, tuple[float, ...]]):
    cols = [f"i{k}" for k in range(len(next(iter(values.values()))))]
    path = tmp_path / "scores.csv"
    path.write_text("name," + ",".join(cols) + "\n" + "".join(
        f"{n}," + ",".join(f"{v:.6f}" for v in vals) + "\n" for n, vals in values.items()))
    return rank_table(path, indicators=cols, tie_break=None)


def drawn(result):
    from matplotlib.figure import Figure

    from geoeval.report.figures_ranking import hasse_drawing

    fig = Figure(figsize=(8, 5), layout="constrained")
    return hasse_drawing(result, fig.subplots())


def check_no_crossing(result, geometry):
    boxes = {n: box(*b) for n, b in geometry["boxes"].items()}
    assert len(geometry["edges"]) == len(result.hasse_edges())
    for worse, better, points in geometry["edges"]:
        assert points[0][1] >= geometry["boxes"][worse][3] - 1e-9  # leaves from the top
        assert points[-1][1] <= geometry["boxes"][better][1] + 1e-9  # ends at the bottom
        for a, b in zip(points, points[1:], strict=False):
            segment = LineString([a, b])
            for name, rect in boxes.items():
                if name in (worse, better):
                    assert not segment.intersects(rect.buffer(-1e-6)), (worse, better, name)
                else:
                    assert not segment.intersects(rect), (worse, better, name)
    names = list(boxes)
    for i, a in enumerate(names):  # boxes never overlap one another
        for b in names[i + 1:]:
            assert not boxes[a].intersects(boxes[b])


def test_an_edge_spanning_levels_goes_round_the_boxes(tmp_path):
    # X < B < A and X < E: the edge X -> E spans two levels, past B's row
    r = contest(tmp_path, {"A": (0.9, 0.9), "B": (0.8, 0.8), "X": (0.1, 0.7),
                           "E": (0.2, 0.95), "F": (0.85, 0.1)})
    geometry = drawn(r)
    check_no_crossing(r, geometry)
    bend = next(p for w, b, p in geometry["edges"] if (w, b) == ("X", "E"))
    assert len(bend) == 4  # top of X, through B's row at a free place, bottom of E


@pytest.mark.parametrize("seed", range(6))
def test_random_contests(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 12))
    values = {f"s{k}": tuple(rng.random(2 + seed % 2).round(3)) for k in range(n)}
    r = contest(tmp_path, values)
    check_no_crossing(r, drawn(r))


def test_levels_are_the_longest_chain_above(tmp_path):
    from geoeval.report.figures_ranking import hasse_layout

    rng = np.random.default_rng(7)
    values = {f"s{k}": tuple(rng.random(2).round(3)) for k in range(10)}
    r = contest(tmp_path, values)
    graph = nx.DiGraph(r.hasse_edges())  # worse -> better
    graph.add_nodes_from(r.names)
    xy = hasse_layout(r)
    for name in r.names:
        above = nx.descendants(graph, name)
        longest = max((nx.dag_longest_path_length(graph.subgraph({name, *above}))
                       if above else 0,), default=0)
        assert -xy[name][1] == longest, name
