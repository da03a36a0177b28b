"""The status map's scale-bar box hides no object: the first free corner, else a
band of its own below the map."""

from __future__ import annotations

import numpy as np
import shapely
from matplotlib.figure import Figure

from geoeval.report.status_figure import scale_bar


def axes(xmax=1000.0, ymax=1000.0):
    ax = Figure(figsize=(5, 5)).subplots()
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, ymax)
    return ax


def test_a_busy_lower_left_corner_moves_the_box():
    geoms = np.array([shapely.box(0, 0, 400, 150)])  # the dense corner
    ax = axes()
    b = scale_bar(ax, "m", geoms)
    assert not shapely.box(*b).intersects(geoms[0])
    assert ax.get_ylim() == (0, 1000)  # a free corner: the map is unchanged


def test_every_corner_busy_puts_the_box_below_the_data():
    grid = [shapely.box(x, y, x + 40, y + 40) for x in range(0, 1000, 50)
            for y in range(0, 1000, 50)]
    geoms = np.array(grid)
    ax = axes()
    b = scale_bar(ax, "m", geoms)
    tree = shapely.STRtree(geoms)
    assert not tree.query(shapely.box(*b), predicate="intersects").size
    assert b[3] < 0 and ax.get_ylim()[0] <= b[1]  # inside the enlarged map, under the data


def test_an_empty_map_keeps_the_lower_left_corner():
    b = scale_bar(axes(), "m", np.array([], dtype=object))
    assert b[0] < 100 and b[1] < 100
