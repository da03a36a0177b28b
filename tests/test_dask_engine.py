"""The Dask engine gives the in-memory engine's report, byte for byte.

One real ``distributed.LocalCluster`` (2 worker processes, 1 thread each) per
module; scenes are cut into at least 16 partitions / windows with objects
straddling partition edges, a self-overlapping submission (and reference), and
the edge cases (nothing detected, nothing to detect, one object).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import shapely
from dask_cluster import local_cluster

from geoeval.engine import client_overlap
from geoeval.errors import InputError
from geoeval.grid import windows
from geoeval.io.raster import objects_from_labels
from geoeval.objects import ObjectSet
from geoeval.overlap import compute_overlap
from geoeval.scoring.scene import score_objects

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as c:
        yield c


@pytest.fixture(autouse=True)
def small_partitions(monkeypatch):
    """Many partitions on small scenes: 8 objects per partition, 16-pixel windows."""
    monkeypatch.setattr(client_overlap, "OBJECTS_PER_PARTITION", 8)
    monkeypatch.setattr(client_overlap, "WINDOW", 16)


def city(seed: int = 0, n: int = 144) -> tuple[ObjectSet, ObjectSet]:
    """Buildings on a jittered grid, long strips across many of them (they straddle any
    partition), detections shifted, some missed, some repeated (self-overlap)."""
    rng = np.random.default_rng(seed)
    side = int(np.sqrt(n))
    gx, gy = np.meshgrid(np.arange(side), np.arange(side))
    cx = gx.ravel() * 20.0 + rng.uniform(-3, 3, n)
    cy = gy.ravel() * 20.0 + rng.uniform(-3, 3, n)
    w, h = rng.uniform(6, 12, n), rng.uniform(6, 12, n)
    ref = shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    strips = shapely.box([5.0, 100.0], [40.0, 0.0], [200.0, 104.0], [43.0, 220.0])
    ref = np.concatenate([ref, strips, [shapely.box(0, 0, 30, 30)]])  # the last overlaps refs
    dx, dy = rng.normal(0, 1.0, n), rng.normal(0, 1.0, n)
    det = shapely.box(cx - w / 2 + dx, cy - h / 2 + dy, cx + w / 2 + dx, cy + h / 2 + dy)
    det = det[rng.random(n) > 0.1]
    dup = shapely.transform(det[::7], lambda xy: xy + 1.5)
    long = shapely.box([0.0, 60.0], [60.0, 0.0], [240.0, 66.0], [64.0, 240.0])
    det = np.concatenate([det, dup, long])
    return ObjectSet.from_geometries(ref), ObjectSet.from_geometries(det)


def same_report(ref: ObjectSet, sub: ObjectSet, address: str, **kw) -> None:
    """The Dask engine's report is the local engine's, byte for byte."""
    local = score_objects(ref, sub, **kw).to_json()
    dask = score_objects(_fresh(ref), _fresh(sub), engine="dask", scheduler=address,
                         **kw).to_json()
    assert dask == local


def _fresh(objects: ObjectSet) -> ObjectSet:
    """A copy without cached properties (the Dask engine computes them itself)."""
    from dataclasses import replace

    return replace(objects)


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_vector_overlap_identical_and_owned_once(cluster, client):
    ref, sub = city()
    local = compute_overlap(ref, sub)
    runs = client_overlap._runs(ref.polygons, workers=2)
    assert len(runs) >= 16
    [own] = client.scatter([ref.polygons], hash=False)
    [layer] = client.scatter([sub.polygons], hash=False)
    tasks = client_overlap._run_tasks(client, runs, own, sub.polygons, layer, same_side=False)
    done = client.gather(tasks)
    rows = np.concatenate([d[0] for d in done])
    cols = np.concatenate([d[1] for d in done])
    # every pair computed exactly once although submissions go to several partitions
    assert np.unique(rows * len(sub) + cols).size == rows.size == local.n_pairs
    hulls = np.array([h for _, h in runs], dtype=object)
    sent = np.bincount(shapely.STRtree(hulls).query(sub.polygons, predicate="intersects")[0],
                       minlength=len(sub))
    assert sent.max() >= 4  # the long detections straddle many partitions
    # the pair is kept by the partition owning its reference: each reference's pairs in one
    owner = np.concatenate([np.full(d[0].size, k) for k, d in enumerate(done)])
    assert all(np.unique(owner[rows == r]).size == 1 for r in np.unique(rows))
    ov = client_overlap.dask_overlap(_fresh(ref), _fresh(sub), client)
    for name in ("rows", "cols", "values"):
        assert np.array_equal(getattr(ov, name), getattr(local, name))
    assert ov.values.tobytes() == local.values.tobytes()
    assert ov.union_area == local.union_area  # bitwise: both sides overlap themselves
    assert not local.union_is_sum


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_vector_report_identical(cluster):
    ref, sub = city(1, n=64)
    same_report(ref, sub, cluster.scheduler_address, mallows=True, resolution=1.0, n_jobs=2)


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_vector_edge_cases(cluster):
    ref, sub = city(2, n=16)
    none = ObjectSet.from_geometries([])
    addr = cluster.scheduler_address
    same_report(ref, none, addr)  # nothing detected
    same_report(none, sub, addr)  # nothing to detect
    same_report(ref.subset(np.array([3])), sub, addr, mallows=True, resolution=1.0)  # one
    same_report(ref.subset(np.array([3])), sub.subset(np.array([3])), addr)


def rasters(seed: int = 0) -> tuple[ObjectSet, ObjectSet]:
    rng = np.random.default_rng(seed)
    a = np.zeros((64, 80), dtype=np.int32)
    b = np.zeros_like(a)
    k = 1
    for r in range(2, 60, 9):
        for c in range(2, 76, 11):
            a[r:r + 7, c:c + 9] = k  # windows of 16 px cut most of them
            dr, dc = rng.integers(-2, 3, 2)
            if rng.random() > 0.1:
                b[max(r + dr, 0):r + dr + 7, max(c + dc, 0):c + dc + 9] = 100 + k
            k += 1
    b[30:34, :] = 999  # one long detection across every window column
    return objects_from_labels(a), objects_from_labels(b)


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_raster_report_identical(cluster, client):
    ref, sub = rasters()
    assert len(windows(ref.grid.shape, (16, 16), 16 * 16)) >= 16
    local = compute_overlap(ref, sub)
    ov = client_overlap.dask_cooccurrence(ref, sub, client, size=16)
    assert ov.method == local.method == "co-occurrence"
    assert ov.rows.tolist() == local.rows.tolist() and ov.cols.tolist() == local.cols.tolist()
    assert ov.values.tobytes() == local.values.tobytes() and ov.union_area == local.union_area
    same_report(ref, sub, cluster.scheduler_address, mallows=True, n_jobs=2)


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_raster_edge_cases(cluster):
    ref, sub = rasters(1)
    empty = objects_from_labels(np.zeros((64, 80), dtype=np.int32))
    addr = cluster.scheduler_address
    same_report(ref, empty, addr)
    same_report(empty, sub, addr)
    one = np.zeros((64, 80), dtype=np.int32)
    one[10:40, 5:70] = 7
    same_report(objects_from_labels(one), sub, addr, mallows=True)


def test_window_kernel_against_brute_force():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 4, (20, 30)), rng.integers(0, 3, (20, 30))
    found = client_overlap.pair_scan(a, b, 0, 0)
    la, lb, n, u = found.pair_a, found.pair_b, found.pair_counts, found.union
    brute = {(i, j): int(np.sum((a == i) & (b == j))) for i in range(1, 4) for j in range(1, 3)}
    assert dict(zip(zip(la.tolist(), lb.tolist(), strict=True), n.tolist(), strict=True)) == \
        {k: v for k, v in brute.items() if v}
    assert u == int(np.sum((a > 0) | (b > 0)))


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_local_cluster_started_for_the_run(tmp_path):
    """Without a scheduler the engine starts (and closes) its own LocalCluster."""
    import geoeval

    ref, sub = city(4, n=25)
    res = geoeval.score(ref, sub, engine="dask", n_jobs=2, matchers=["bgm"])
    local = geoeval.score(ref, sub, matchers=["bgm"])
    assert res.to_json() == local.to_json()


def test_bad_engine_options():
    ref, sub = city(5, n=4)
    with pytest.raises(InputError, match="unknown engine"):
        score_objects(ref, sub, engine="spark")
    with pytest.raises(InputError, match="--scheduler"):
        score_objects(ref, sub, scheduler="tcp://127.0.0.1:9")


def test_unreachable_scheduler_cli(tmp_path):
    import geopandas as gpd

    ref, sub = city(6, n=4)
    for name, objs in (("ref.gpkg", ref), ("sub.gpkg", sub)):
        gpd.GeoDataFrame(geometry=objs.polygons, crs="EPSG:32631").to_file(tmp_path / name)
    done = subprocess.run(
        [sys.executable, "-m", "geoeval.cli", "score", str(tmp_path / "ref.gpkg"),
         str(tmp_path / "sub.gpkg"), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = [line for line in done.stderr.strip().splitlines()  # progress lines aside
             if not line.startswith("geoeval: ") or line.startswith("geoeval: error")]
    assert len(lines) == 1 and "--scheduler tcp://127.0.0.1:9" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_mallows_executor_gets_batches():
    """The Mallows hook sends batches of instances to the executor it is given (never
    one task per instance) and gives the scores of the serial run."""
    from concurrent.futures import ThreadPoolExecutor

    from geoeval.matching import match
    from geoeval.measures.mallows import mallows_scores

    ref, sub = rasters(2)
    m = match(compute_overlap(ref, sub), "mom")

    class Counting(ThreadPoolExecutor):
        calls = 0

        def submit(self, fn, *args, **kwargs):
            Counting.calls += 1
            return super().submit(fn, *args, **kwargs)

    with Counting(2) as pool:
        hooked = mallows_scores(ref, sub, m, n_jobs=1, executor=pool)
    serial = mallows_scores(ref, sub, m, n_jobs=1)
    assert len(m.arrays) > 20 and 1 <= Counting.calls <= 8 < len(m.arrays)
    assert hooked.scores.tobytes() == serial.scores.tobytes()


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_raster_files_are_scanned_window_by_window_on_the_cluster(cluster, client, tmp_path,
                                                                  monkeypatch):
    """Two tiled GeoTIFFs (16 x 16 blocks, one block per window): geoeval.score with the
    Dask engine, not by blocks (``partitioned=False``; by blocks: test_dask_mosaic), opens
    them on the workers window by window (the client reads no pixel for the scan) and gives
    the local report, byte for byte apart from the engine."""
    import rasterio
    from rasterio.transform import from_origin

    import geoeval
    from geoeval import grid as grid_module

    monkeypatch.setattr(grid_module, "WINDOW_PIXELS", 256)
    paths = []
    for name, obj in zip(("ref.tif", "sub.tif"), rasters(2), strict=True):
        labels = obj.grid.read((0, 64, 0, 80)) if not obj.grid.in_memory else obj.grid.labels
        p = tmp_path / name
        with rasterio.open(p, "w", driver="GTiff", width=80, height=64, count=1,
                           dtype="int32", crs="EPSG:32651", tiled=True, blockxsize=16,
                           blockysize=16, transform=from_origin(570000, 1450000, 0.5, 0.5)) as d:
            d.write(labels, 1)
        paths.append(p)
    seen = []
    original = client.map

    def counting_map(func, *args, **kw):
        seen.append(getattr(func, "func", func).__name__)
        return original(func, *args, **kw)

    from geoeval.engine import cluster as cluster_module

    real = cluster_module.dask_client

    def reuse(scheduler, n_jobs, memory_limit=None):  # hand the fixture's client over
        from contextlib import nullcontext

        return nullcontext(client)

    monkeypatch.setattr(client, "map", counting_map)
    monkeypatch.setattr(cluster_module, "dask_client", reuse)
    res = geoeval.score(*map(str, paths), engine="dask", scheduler=cluster.scheduler_address,
                        mallows=True, n_jobs=2, partitioned=False)
    monkeypatch.setattr(cluster_module, "dask_client", real)
    local = geoeval.score(*map(str, paths), mallows=True)
    assert "scan_window" in seen  # the windows went to the workers
    assert res.to_json() == local.to_json()


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_scenes_share_one_engine(tmp_path, monkeypatch):
    """Several scenes with ``engine="dask"``: one LocalCluster for the whole run (it
    was started once per scene), every scene's report equal to the local engine's."""
    import geopandas as gpd

    import geoeval
    from geoeval.engine import cluster as cluster_module

    for name, seed in (("a", 6), ("b", 7), ("c", 8)):
        ref, sub = city(seed, n=16)
        for side, objs in (("ref", ref), ("sub", sub)):
            (tmp_path / side).mkdir(exist_ok=True)
            gpd.GeoDataFrame(geometry=objs.polygons, crs="EPSG:32631").to_file(
                tmp_path / side / f"{name}.gpkg")
    started = []
    real = cluster_module.dask_client

    def counting(*args, **kwargs):
        started.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(cluster_module, "dask_client", counting)
    dask = geoeval.score_scenes(tmp_path / "ref", tmp_path / "sub", matchers=["bgm", "iou"],
                                engine="dask", n_jobs=2)
    local = geoeval.score_scenes(tmp_path / "ref", tmp_path / "sub", matchers=["bgm", "iou"])
    assert len(started) == 1
    assert [s.results for s in dask.scenes] == [s.results for s in local.scenes]
    assert dask.pooled == local.pooled
