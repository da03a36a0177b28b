"""The one Hilbert partitioner of the Dask engine (:mod:`geoeval.engine.hilbert`): keys
checked by brute force against what a Hilbert curve is (every cell once, each step to
a neighbouring cell)."""

from __future__ import annotations

import numpy as np
import pytest

from geoeval.engine.hilbert import hilbert_distance, hilbert_keys, runs


@pytest.mark.parametrize("level", [1, 2, 3, 5])
def test_every_cell_once_and_each_step_to_a_neighbour(level):
    n = 1 << level
    x, y = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n)))
    d = hilbert_distance(x, y, level)
    assert sorted(d.tolist()) == list(range(n * n))
    order = np.argsort(d)
    steps = np.abs(np.diff(x[order])) + np.abs(np.diff(y[order]))
    assert (steps == 1).all()


def test_keys_of_boxes_and_runs():
    """Keys of box centres: clipped into the bounds, empty boxes at 0; runs of keys are
    about equal, every object in one run, and spatially compact."""
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 1000, (2000, 2))
    boxes = np.hstack([xy, xy + 5])
    bounds = (0.0, 0.0, 1005.0, 1005.0)
    keys = hilbert_keys(boxes, bounds)
    parts = runs(keys, 8)
    assert sorted(np.concatenate(parts).tolist()) == list(range(2000))
    assert max(p.size for p in parts) - min(p.size for p in parts) <= 1
    # compact: a run's boxes cover far less than the whole extent
    areas = [np.ptp(xy[p, 0]) * np.ptp(xy[p, 1]) for p in parts]
    assert max(areas) < 0.4 * 1000 * 1000
    assert hilbert_keys(np.array([[np.nan] * 4, [-50, -50, -40, -40]]), bounds).tolist() \
        == [0, 0]
