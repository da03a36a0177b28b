"""Threaded shapely work (geoeval.parallel) gives exactly the single-call result."""

from __future__ import annotations

import threading

import numpy as np
import shapely

from geoeval import parallel


def _boxes(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 2000, n), rng.uniform(0, 2000, n)
    return shapely.box(x, y, x + rng.uniform(1, 9, n), y + rng.uniform(1, 9, n))


class _RecordingTree:
    """An STRtree whose queries note the thread that ran them."""

    def __init__(self, tree, threads):
        self.tree, self.threads = tree, threads

    def query(self, geoms, predicate=None):
        self.threads.append(threading.get_ident())
        return self.tree.query(geoms, predicate=predicate)


def test_chunked_and_query_equal_one_call(monkeypatch):
    """Slices above MIN_CHUNK go to worker threads (each slice's thread is noted:
    none is the caller's) and the result equals the single call exactly."""
    monkeypatch.setattr(parallel, "MIN_CHUNK", 500)  # 3 threads for 1,500 items: fast
    a, b = _boxes(6_000, 1), _boxes(6_000, 2)
    tree = shapely.STRtree(b)
    want = tree.query(a, predicate="intersects")
    threads: list[int] = []
    got = parallel.query(_RecordingTree(tree, threads), a, "intersects", n_jobs=3)
    np.testing.assert_array_equal(got, want)
    main = threading.get_ident()
    assert len(threads) == 6 and main not in threads  # 2 slices per thread, none in the caller
    i, j = want
    i, j = np.concatenate([i, np.arange(a.size)]), np.concatenate([j, np.arange(b.size)])
    calls: list[int] = []

    def area(x, y):
        calls.append(threading.get_ident())
        return shapely.area(shapely.intersection(x, y))

    np.testing.assert_array_equal(parallel.chunked(area, a[i], b[j], n_jobs=3),
                                  shapely.area(shapely.intersection(a[i], b[j])))
    assert len(calls) == 6 and main not in calls
    calls.clear()
    parallel.chunked(area, a[:10], b[:10], n_jobs=3)  # below MIN_CHUNK: one call, here
    assert calls == [main]
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


def test_reader_equals_pyogrio_read_dataframe(tmp_path, monkeypatch):
    """The vector reader (raw features, WKB parsed on every core) gives the
    geometries, feature ids and fields of ``pyogrio.read_dataframe``."""
    monkeypatch.setattr(parallel, "MIN_CHUNK", 500)  # sliced over threads at 3,000 features
    import geopandas as gpd
    import pyogrio

    from geoeval.io.vector import read_vector

    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1000, 3_000)  # above parallel.MIN_CHUNK: sliced over threads
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
