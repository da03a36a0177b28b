"""Threaded shapely work (geoeval.parallel) gives exactly the single-call result."""

from __future__ import annotations

import numpy as np
import shapely

from geoeval import parallel


def _boxes(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 2000, n), rng.uniform(0, 2000, n)
    return shapely.box(x, y, x + rng.uniform(1, 9, n), y + rng.uniform(1, 9, n))


def test_chunked_and_query_equal_one_call():
    a, b = _boxes(60_000, 1), _boxes(60_000, 2)
    tree = shapely.STRtree(b)
    want = tree.query(a, predicate="intersects")
    got = parallel.query(tree, a, "intersects", n_jobs=3)
    np.testing.assert_array_equal(got, want)
    i, j = want
    area = lambda x, y: shapely.area(shapely.intersection(x, y))  # noqa: E731
    np.testing.assert_array_equal(parallel.chunked(area, a[i], b[j], n_jobs=3),
                                  area(a[i], b[j]))
    assert i.size > parallel.MIN_CHUNK or a.size > parallel.MIN_CHUNK  # threads were used
    np.testing.assert_array_equal(parallel.chunked(shapely.is_valid, a, n_jobs=4),
                                  shapely.is_valid(a))
