"""The Dask engine's readers, progress and failures (docs/scale.md, *A layer on the cluster*).

Fast tests: a layer of tiles read by pieces gives the in-memory reader's objects in
its order; bounds from a GeoParquet bbox covering column; the one progress count of
a run. Slow tests (a ``distributed.LocalCluster`` of two worker processes): tiles
scored on the cluster as locally with no feature read in the client, repeated ids
across tiles refused with the local message, one progress bar in ``GEOEVAL_PROGRESS=jsonl``
lines, and a corrupt row group named in one line (exit 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import shapely
from dask_cluster import local_cluster

from geoeval import progress
from geoeval.engine import gather as gathering
from geoeval.engine import layers
from geoeval.errors import InputError
from geoeval.io import pieces as io_pieces
from geoeval.io.layer_files import is_tile_pattern
from geoeval.io.pieces import layer_bounds, plan_pieces, read_piece

CRS = "EPSG:32631"


def city(seed: int, n: int, shift: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    """Buildings on a jittered grid and detections shifted, some missed, some doubled."""
    rng = np.random.default_rng(seed)
    side = int(np.sqrt(n))
    gx, gy = np.meshgrid(np.arange(side), np.arange(side))
    cx = gx.ravel() * 15.0 + rng.uniform(-2, 2, side * side)
    cy = gy.ravel() * 15.0 + rng.uniform(-2, 2, side * side)
    w = rng.uniform(5, 9, cx.size)
    ref = shapely.box(cx - w / 2, cy - w / 2, cx + w / 2, cy + w / 2)
    d = rng.normal(0, shift, (cx.size, 2))
    sub = shapely.box(cx - w / 2 + d[:, 0], cy - w / 2 + d[:, 1], cx + w / 2 + d[:, 0],
                      cy + w / 2 + d[:, 1])
    doubled = shapely.transform(sub[::9], lambda xy: xy + 2.0)
    sub = np.concatenate([sub[rng.random(cx.size) > 0.1], doubled])
    return ref, sub


def write_tiles(folder, geoms, kind: str, tiles: int = 4, ids: np.ndarray | None = None,
                extra=None):
    """Cut a layer into tiles by x (files ``t0.<kind>`` …); ``extra`` objects appended
    to the last tile (e.g. a point: read, skipped, counted)."""
    import geopandas as gpd

    folder.mkdir(parents=True, exist_ok=True)
    order = np.argsort(shapely.get_x(shapely.centroid(geoms)), kind="stable")
    chunks = np.array_split(order, tiles)
    for i, chunk in enumerate(chunks):
        g = list(geoms[chunk])
        cols = {} if ids is None else {"bid": list(ids[chunk])}
        if extra is not None and i == tiles - 1:
            g += list(extra)
            if ids is not None:
                cols["bid"] += [10_000_000 + k for k in range(len(extra))]
        frame = gpd.GeoDataFrame(cols, geometry=g, crs=CRS)
        path = folder / f"t{i}.{kind}"
        if kind == "parquet":
            frame.to_parquet(path, row_group_size=25)
        else:
            frame.to_file(path)
    return np.concatenate(chunks)


# --- fast: planning and reading tiles ----------------------------------------------------

@pytest.mark.parametrize("kind", ["gpkg", "fgb", "parquet"])
def test_tiles_read_by_pieces_as_the_in_memory_reader(tmp_path, kind):
    """A pattern of tiles is one layer: pieces planned per file from its metadata, ids
    the row numbers across tiles (or the id field), the reader's counts summed; the
    local reader of the same pattern gives the same objects in the same order."""
    from geoeval.io import read

    ref, _ = city(1, 100)
    ids = np.arange(ref.size) * 7 + 3
    order = write_tiles(tmp_path / "tiles", ref, kind, ids=ids, extra=[shapely.Point(0, 0)])
    pattern = str(tmp_path / "tiles" / f"*.{kind}")
    assert is_tile_pattern(pattern) and not is_tile_pattern(tmp_path / "tiles")
    pieces, crs = plan_pieces(pattern, features=10)
    assert crs == CRS and {p.path for p in pieces} == {str(f) for f in
                                                       (tmp_path / "tiles").glob("t*")}
    assert sum(p.rows for p in pieces) == ref.size + 1
    assert [p.first_row for p in pieces] == np.r_[0, np.cumsum([p.rows for p in
                                                                pieces])[:-1]].tolist()
    got = [read_piece(p) for p in pieces]
    whole = read(pattern)
    assert np.array_equal(np.concatenate([g.ids for g in got]), whole.ids)
    assert np.array_equal(whole.ids, np.arange(ref.size))  # row numbers, the point skipped
    assert sum(g.counts["lines"] + g.counts["zero"] + g.counts["missing"] for g in got) == 1
    geoms = np.concatenate([g.geometry for g in got])
    assert shapely.equals(geoms, whole.polygons).all()
    by_field = read(pattern, id_field="bid")
    pieces_f, _ = plan_pieces(pattern, id_field="bid", features=10)
    assert np.array_equal(np.concatenate([read_piece(p).ids for p in pieces_f]),
                          by_field.ids)
    # the tiles' objects are the layer's, each with its own id (FlatGeobuf's spatial
    # index reorders the features of a file: the order is the file's)
    at = np.argsort(by_field.ids)
    assert np.array_equal(by_field.ids[at], np.sort(ids))
    assert shapely.equals(geoms[at], ref[np.argsort(ids)]).all()
    if kind != "fgb":
        assert np.array_equal(by_field.ids, ids[order])
    box = layer_bounds(pattern)
    assert box is not None and np.allclose(box, shapely.total_bounds(
        np.concatenate([ref, [shapely.Point(0, 0)]])))


def test_tiles_errors_name_the_file(tmp_path):
    import geopandas as gpd

    with pytest.raises(InputError, match=r"nothing/\*\.gpkg: matches no file"):
        plan_pieces(tmp_path / "nothing" / "*.gpkg")
    ref, _ = city(2, 16)
    write_tiles(tmp_path / "t", ref, "gpkg", tiles=2)
    gpd.GeoDataFrame(geometry=ref[:2], crs="EPSG:3857").to_file(tmp_path / "t" / "t9.gpkg")
    with pytest.raises(InputError, match=r"t9\.gpkg: is in EPSG:3857 .*, another CRS"):
        plan_pieces(tmp_path / "t" / "*.gpkg")
    with pytest.raises(InputError, match=r"t0\.gpkg: --id-field 'nope' is not a field \(f"):
        plan_pieces(tmp_path / "t" / "t[01].gpkg", id_field="nope")


def test_a_field_error_crosses_from_a_worker_whole():
    """A FieldError raised on a worker (a tile planned there) reaches the client as
    itself, so that the client can still name the side and the option as given."""
    import pickle

    from geoeval.errors import FieldError

    error = FieldError("id_field", "bid", "is not a field", "t0.gpkg", detail=" (fields: a)")
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is FieldError and str(back) == str(error)
    assert str(back.on("submission", own=True)) == (
        "t0.gpkg: --sub-id-field 'bid' is not a field of the submission (fields: a)")
    assert str(pickle.loads(pickle.dumps(back.on("reference")))) == (
        "t0.gpkg: --id-field 'bid' is not a field of the reference (fields: a); "
        "--ref-id-field / --sub-id-field name one side's field")


def test_bounds_from_a_bbox_covering_column(tmp_path):
    """Without a ``bbox`` in the geo metadata, the layer's bounds come from the row-group
    statistics of its bbox covering column (GeoParquet 1.1), no geometry read; without
    either, none (the run then reads before keying)."""
    import geopandas as gpd
    import pyarrow.parquet as pq

    ref, _ = city(3, 400)
    gpd.GeoDataFrame(geometry=ref, crs=CRS).to_parquet(tmp_path / "a.parquet",
                                                       write_covering_bbox=True,
                                                       row_group_size=50)
    for name, covering in (("nobbox.parquet", True), ("bare.parquet", False)):
        table = pq.read_table(tmp_path / "a.parquet")
        geo = json.loads(table.schema.metadata[b"geo"])
        del geo["columns"]["geometry"]["bbox"]
        if not covering:
            del geo["columns"]["geometry"]["covering"]
        meta = {**table.schema.metadata, b"geo": json.dumps(geo).encode()}
        pq.write_table(table.replace_schema_metadata(meta), tmp_path / name,
                       row_group_size=50)
    want = shapely.total_bounds(ref)
    assert np.allclose(layer_bounds(tmp_path / "a.parquet"), want)
    assert np.allclose(layer_bounds(tmp_path / "nobbox.parquet"), want)
    assert layer_bounds(tmp_path / "bare.parquet") is None
    # per row group: the bounds of exactly those rows
    meta = pq.ParquetFile(tmp_path / "nobbox.parquet").metadata
    column = json.loads(meta.schema.to_arrow_schema().metadata[b"geo"])["columns"]["geometry"]
    assert np.allclose(io_pieces.covering_bounds(meta, column, [2]),
                       shapely.total_bounds(ref[100:150]))


def test_one_progress_count_for_the_whole_run(monkeypatch):
    """The run is one count (pieces, partitions matched, the boundary, parts written)
    that only grows, reaches its total, and gives a time left from the throughput
    after the warm-up."""
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    texts: list[str] = []
    meter = gathering.Meter(texts.append, pieces=4, partitions=10, writes=True)
    assert meter.total == 4 + 10 + 1 + (10 + 1)  # writing: a part a partition + the boundary's
    for i in range(4):
        clock[0] += 1.0
        meter.add(f"reading {i + 1}/4 pieces")
    meter.partitions(6)  # the cuts are known: 6 partitions, not the 10 estimated
    for stage, n in (("matching", 6), ("solving the boundary", 1), ("writing objects", 7)):
        for i in range(n):
            clock[0] += 0.5
            meter.add(f"{stage} {i + 1}/{n}")
    counts = [tuple(int(v) for v in t.split(": ")[1].split(" ")[0].rstrip(",").split("/"))
              for t in texts]
    assert all(t.startswith("scoring on the cluster: ") for t in texts)
    assert [d for d, _ in counts] == sorted(d for d, _ in counts)
    assert counts[-1] == (18, 18) and {t for _, t in counts[4:]} == {18}
    assert "left" not in texts[0] and "left" not in texts[2]  # warm-up: no guess
    # after the warm-up (3 units at t=3): 1 unit a second, then 2 a second
    assert texts[3] == "scoring on the cluster: 4/26, about 22 s left (reading 4/4 pieces)"
    assert texts[9] == "scoring on the cluster: 10/18, about 5 s left (matching 6/6)"  # 8 / 1.75
    assert "left" not in texts[-2]  # under a second: no guess
    assert "left" not in texts[-1]


# --- slow: on a cluster -------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as c:
        yield c


_READERS = [("pyogrio", "read_dataframe"), ("pyogrio", "read_arrow"), ("pyogrio.raw", "read"),
            ("geopandas", "read_file"), ("geopandas", "read_parquet"),
            ("pyarrow.parquet", "read_table")]


def refuse_feature_reads(m) -> None:
    """Every call that reads features fails in this process (the client)."""
    import importlib

    import pyarrow.parquet as pq

    def refuse(*a, **k):
        raise AssertionError("the client read features")

    for module, name in _READERS:
        m.setattr(importlib.import_module(module), name, refuse)
    for name in ("read", "read_row_groups", "read_row_group", "iter_batches"):
        m.setattr(pq.ParquetFile, name, refuse)
    m.setattr(io_pieces, "_read_parquet_piece", refuse)
    m.setattr(io_pieces, "_read_ogr_piece", refuse)


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_tiles_scored_on_the_cluster_as_locally(cluster, tmp_path, monkeypatch):
    """A reference of GeoPackage tiles (with an id field) against a submission of
    FlatGeobuf tiles: the Dask engine's report is the local engine's, and the client
    reads no feature; a building repeated in two tiles (same id) is refused with the
    local engine's message, found on the workers."""
    import geoeval

    ref, sub = city(5, 900)
    ids = np.arange(ref.size) + 500
    write_tiles(tmp_path / "ref", ref, "gpkg", ids=ids, extra=[shapely.Point(1, 1)])
    write_tiles(tmp_path / "sub", sub, "fgb", tiles=3)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 60)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 70)
    refs, subs = str(tmp_path / "ref" / "*.gpkg"), str(tmp_path / "sub" / "*.fgb")
    options = dict(matchers=["bgm", "iou"], id_field=None,
                   reference_options={"id_field": "bid"})
    texts: list[str] = []
    planned: list[str] = []  # tiles planned in the client (the rest on the workers)
    real_plan = io_pieces._ogr_plan

    def plan_here(p, *a, **k):
        planned.append(str(p))
        return real_plan(p, *a, **k)

    with monkeypatch.context() as m:
        refuse_feature_reads(m)
        m.setattr(io_pieces, "_ogr_plan", plan_here)
        res = geoeval.score(refs, subs, engine="dask", scheduler=cluster.scheduler_address,
                            progress=texts.append, **options)
    # only each side's first tile, for its CRS: the 4 + 3 tiles are planned on the workers
    assert sorted(planned) == [str(tmp_path / "ref" / "t0.gpkg"),
                               str(tmp_path / "sub" / "t0.fgb")]
    assert isinstance(res, geoeval.ScoreResult) and not res.objects_held
    k = res.partitions["partitions"]
    pieces = res.partitions["reference_pieces"] + res.partitions["submission_pieces"]
    assert k >= 20 and res.partitions["reference_pieces"] >= 16
    # one progress count: pieces read, partitions matched, the boundary; only growing
    counts = [tuple(map(int, t.split(": ")[1].split(" ")[0].rstrip(",").split("/")))
              for t in texts if t.startswith("scoring on the cluster: ")]
    assert [d for d, _ in counts] == sorted(d for d, _ in counts)
    assert counts[-1] == (pieces + k + 1,) * 2
    local = geoeval.score(refs, subs, **options).to_json()
    got = res.to_dict()
    assert got["reference"]["objects"] == ref.size and got["reference"]["skipped"] == 1
    assert res.to_json() == local  # byte for byte, the per-object lists included
    # the same building in two tiles: the local engine's error, from the workers
    dup = np.arange(ref.size) + 500
    x = shapely.get_x(shapely.centroid(ref))
    dup[np.argmax(x)] = dup[np.argmin(x)]
    write_tiles(tmp_path / "dup", ref, "gpkg", ids=dup)
    pattern = str(tmp_path / "dup" / "*.gpkg")
    with pytest.raises(InputError) as local_error:
        geoeval.score(pattern, subs, **options)
    with monkeypatch.context() as m, pytest.raises(InputError) as dask_error:
        refuse_feature_reads(m)
        geoeval.score(pattern, subs, engine="dask", scheduler=cluster.scheduler_address,
                      **options)
    assert str(dask_error.value) == str(local_error.value)
    assert "--ref-id-field 'bid' is not unique in the reference: 1 value(s) repeat (e.g. " \
        in str(dask_error.value)
    assert str(dask_error.value).startswith(pattern)
    # a field the submission's tiles lack: the side and its own option named, both engines
    missing = dict(options, submission_options={"id_field": "nope"})
    with pytest.raises(InputError) as local_error:
        geoeval.score(refs, subs, **missing)
    with monkeypatch.context() as m, pytest.raises(InputError) as dask_error:
        refuse_feature_reads(m)
        geoeval.score(refs, subs, engine="dask", scheduler=cluster.scheduler_address,
                      **missing)
    assert str(dask_error.value) == str(local_error.value) == (
        f"{tmp_path / 'sub' / 't0.fgb'}: --sub-id-field 'nope' is not a field of the "
        "submission (fields: none)")


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "geoeval.cli", "score", *args],
                          capture_output=True, text=True, timeout=300, env=environ)


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_progress_is_one_bar_and_a_corrupt_row_group_is_one_line(cluster, tmp_path):
    """``GEOEVAL_PROGRESS=jsonl``: the cluster's work is one step whose ``done`` only
    grows to its ``total`` (no series of separate counts). A dataset with a corrupt row
    group in one file: exit 2, one line naming the file and its row groups, no
    traceback."""
    import geopandas as gpd
    import pyarrow.parquet as pq

    ref, sub = city(7, 2500)
    folder = tmp_path / "ref_dataset"
    folder.mkdir()
    for i, chunk in enumerate(np.array_split(ref, 4)):
        gpd.GeoDataFrame(geometry=chunk, crs=CRS).to_parquet(folder / f"p{i}.parquet",
                                                            row_group_size=100)
    subfile = tmp_path / "sub.fgb"
    gpd.GeoDataFrame(geometry=sub, crs=CRS).to_file(subfile)
    run = _cli(str(folder), str(subfile), "-m", "iou", "--engine", "dask", "--scheduler",
               cluster.scheduler_address, "--json", str(tmp_path / "r.json"),
               env={"GEOEVAL_PROGRESS": "jsonl"})
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stderr.splitlines() if line.startswith("{")]
    bar = [x for x in lines if x["step"] == "scoring on the cluster"]
    assert bar and all(x["done"] is not None for x in bar)
    assert [x["done"] for x in bar] == sorted(x["done"] for x in bar)
    assert bar[-1]["done"] == bar[-1]["total"] and bar[-1]["total"] >= 4
    first, last = lines.index(bar[0]), lines.index(bar[-1])
    assert lines[first:last + 1] == bar  # one step from the first piece to the last part
    # row group 1 of the third file: its data pages overwritten, the footer intact
    victim = folder / "p2.parquet"
    meta = pq.ParquetFile(victim).metadata
    col = meta.row_group(1).column(0)
    start = col.dictionary_page_offset or col.data_page_offset
    data = bytearray(victim.read_bytes())
    data[start:start + col.total_compressed_size] = b"\x13" * col.total_compressed_size
    victim.write_bytes(bytes(data))
    run = _cli(str(folder), str(subfile), "-m", "iou", "--engine", "dask", "--scheduler",
               cluster.scheduler_address, "-q")
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    errors = run.stderr.strip().splitlines()
    assert len(errors) == 1, run.stderr
    assert errors[0].startswith(f"geoeval: error: {victim}: cannot read row groups 0..6: "
                                "row group 1 ("), errors[0]


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_a_failed_partition_task_is_named(cluster):
    """A task that fails on a worker is one InputError naming its partition (pieces:
    the file and rows, above), whatever the exception was."""
    import operator

    import distributed

    with distributed.Client(cluster.scheduler_address) as client:  # as geoeval's client
        futures = client.map(operator.truediv, [1.0, 1.0, 1.0], [1.0, 0.0, 2.0], pure=False)
        with pytest.raises(InputError, match=r"^matching failed on partition 1: "
                                             r"ZeroDivisionError: float division by zero$"):
            gathering.gather(client, futures, [0, 1, 2], "matching", None, label="partitions")
        texts: list[str] = []
        meter = gathering.Meter(texts.append, pieces=0, partitions=2, writes=False)
        good = client.map(operator.mul, [1, 2], [3, 4], pure=False)
        assert gathering.gather(client, good, [0, 1], "matching", meter, "partitions") == [3, 8]
        assert texts[-1].startswith("scoring on the cluster: 2/3 (matching 2/2 partitions)")
