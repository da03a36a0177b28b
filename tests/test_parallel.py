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


def test_collector_paused_restores_and_nests():
    import gc

    assert gc.isenabled()
    with parallel.collector_paused():
        assert not gc.isenabled()
        with parallel.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost block restores
    assert gc.isenabled()
    try:
        with parallel.collector_paused():
            raise KeyError
    except KeyError:
        pass
    assert gc.isenabled()


def test_reader_equals_pyogrio_read_dataframe(tmp_path):
    """The vector reader (raw features, WKB parsed on every core) gives the
    geometries, feature ids and fields of ``pyogrio.read_dataframe``."""
    import geopandas as gpd
    import pyogrio

    from geoeval.io.vector import read_vector

    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1000, 30_000)  # above parallel.MIN_CHUNK: sliced over threads
    geoms = shapely.buffer(shapely.points(x, x[::-1]), rng.uniform(1, 3, x.size))
    frame = gpd.GeoDataFrame({"name": [f"b{i}" for i in range(x.size)]}, geometry=geoms,
                             crs="EPSG:32631")
    path = tmp_path / "l.gpkg"
    frame.to_file(path, engine="pyogrio")
    ours = read_vector(path, id_field="name")
    ref = pyogrio.read_dataframe(path, fid_as_index=True)
    assert shapely.equals_exact(ours.geometry, ref.geometry.values, tolerance=0).all()
    assert ours.ids.tolist() == ref["name"].tolist()
    assert read_vector(path).ids.tolist() == ref.index.tolist()
