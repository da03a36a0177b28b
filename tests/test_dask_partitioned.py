"""The Dask engine on two vector layers: read, matched and written by partitions.

The fast tests run the engine's orchestration itself (:func:`geoeval.engine.layers.
score_layers`) in this process, every task at once (:class:`geoeval.engine.inline.
InlineClient`), on scenes cut into many partitions, and check the ownership rule and the
report against the in-memory engine: every pair found once, every component solved once
(inside one partition, or once at the boundary), the same report byte for byte. The slow
tests run a real ``distributed.LocalCluster`` (two worker processes) on a GeoParquet
dataset of >= 32 partitions and a GeoPackage, compare report and objects dataset with
the local engine's, and bound what reaches the client.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import shapely
from dask_cluster import kill_a_worker_mid_run, local_cluster, record_gathered

from geoeval.engine import ids as id_check
from geoeval.engine import layers
from geoeval.engine import parts as dist
from geoeval.engine.inline import InlineClient
from geoeval.io.pieces import PieceData
from geoeval.objects import ObjectSet
from geoeval.overlap import compute_overlap


def scene(seed: int = 0, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Buildings on a jittered grid; long strips crossing many partitions; a reference
    overlapping others (the reference overlaps itself); detections shifted, some missed,
    some repeated (the submission overlaps itself); a diagonal chain of overlapping
    reference/detection boxes (one component across the whole scene)."""
    rng = np.random.default_rng(seed)
    side = int(np.sqrt(n))
    gx, gy = np.meshgrid(np.arange(side), np.arange(side))
    cx = gx.ravel() * 20.0 + rng.uniform(-3, 3, n)
    cy = gy.ravel() * 20.0 + rng.uniform(-3, 3, n)
    w, h = rng.uniform(6, 12, n), rng.uniform(6, 12, n)
    ref = shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    strips = shapely.box([5.0, 100.0], [40.0, 0.0], [200.0, 104.0], [43.0, 220.0])
    t = np.arange(0, 36) * 10.0 + 5
    chain_r = shapely.box(t, t + 300, t + 8, t + 308)
    chain_s = shapely.box(t + 4, t + 304, t + 12, t + 312)
    ref = np.concatenate([ref, strips, [shapely.box(0, 0, 30, 30)], chain_r])
    dx, dy = rng.normal(0, 1.0, n), rng.normal(0, 1.0, n)
    det = shapely.box(cx - w / 2 + dx, cy - h / 2 + dy, cx + w / 2 + dx, cy + h / 2 + dy)
    det = det[rng.random(n) > 0.1]
    dup = shapely.transform(det[::7], lambda xy: xy + 1.5)
    long = shapely.box([0.0, 60.0], [60.0, 0.0], [240.0, 66.0], [64.0, 240.0])
    det = np.concatenate([det, dup, long, chain_s])
    return ref, det


class RecordingClient(InlineClient):
    """The in-process client, keeping what each task function returned (by name): the
    run's own partitions, partition results and boundary solution, to look inside."""

    def __init__(self) -> None:
        self.results: dict[str, list] = {}

    def submit(self, fn, *args, pure=True, **kwargs):
        fut = super().submit(fn, *args, **kwargs)
        if fut.error is None:
            self.results.setdefault(getattr(fn, "__name__", str(fn)), []).append(fut.value)
        return fut


def run_inline(monkeypatch, tmp_path, ref, sub, per_partition=12, objects=False, **options):
    """The layers scored by the Dask engine's run, in this process (partitions of about
    ``per_partition`` objects, pieces of 60 features), and by the local engine; with
    ``objects`` the Dask run writes its objects dataset (``objects_dask``). Returns both
    results and the client."""
    import functools

    from geoeval.api import _open_objects
    from geoeval.engine import Engine
    from geoeval.io import pieces as io_pieces
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    folder, gpkg = _write_inputs(tmp_path, ref, sub)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", per_partition)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    client = RecordingClient()
    # the attributes read, as geoeval.score asks for them with objects_dir
    value = score_options(**options, lists=not objects).but(attributes=objects)
    writer = functools.partial(_open_objects, tmp_path / "objects_dask",
                               value.matchers) if objects else None
    res = score(folder, gpkg, value, objects=writer,
                opened=Engine("dask", client=client, n_jobs=1))
    local = score(folder, gpkg, value)
    return res, local, client


def assert_close(got, want, where=""):
    """Nested report values equal, floats exactly (naming the first difference)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for k in want:
            assert_close(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_close(g, w, f"{where}[{i}]")
    else:  # floats too: exact sums, not a digit apart
        assert got == want and type(got) is type(want), where


def test_every_pair_component_and_object_counted_once(monkeypatch, tmp_path):
    """The run's own tasks: every object owned by one partition, every pair found and
    every object solved exactly once (a partition's interior or the boundary), the
    boundary holding a component across at least four partitions (the chain)."""
    ref, sub = scene(0, n=196)
    res, local, client = run_inline(monkeypatch, tmp_path, ref, sub, per_partition=8,
                                    matchers=["bgm", "iou", "hoover"])
    parts = client.results["assemble"]
    results = client.results["solve_partition"]
    (bsol, owner), = client.results["solve_boundary"]
    assert len(parts) >= 32
    for s, geoms in ((0, ref), (1, sub)):
        pos = np.concatenate([p.pos[p.side == s] for p in parts])
        assert np.array_equal(np.sort(pos), np.arange(len(geoms)))
    ov = local.overlap
    pairs = sum(r.interior.summary["pairs"] for r in results) + bsol.summary["pairs"]
    assert pairs == ov.n_pairs
    comps = sum(r.interior.summary["components"] for r in results) + bsol.summary["components"]
    assert comps == ov.n_components
    union = sum(r.interior.summary["union_area"] for r in results) + bsol.summary["union_area"]
    assert float(union) == ov.union_area  # exact sums: not a digit apart
    assert not ov.union_is_sum  # both sides overlap themselves
    for s in (0, 1):
        seen = np.concatenate([r.interior.positions[s] for r in results] + [bsol.positions[s]])
        assert np.array_equal(np.sort(seen), np.arange(len(ref) if s == 0 else len(sub)))
    from geoeval.overlap import edge_components

    nr = bsol.positions[0].size
    bov = compute_overlap(ObjectSet.from_geometries(ref[bsol.positions[0]]),
                          ObjectSet.from_geometries(sub[bsol.positions[1]]))
    _, labels, _ = edge_components(bov.rows, bov.cols, nr, bsol.positions[1].size)
    assert max(np.unique(owner[labels == c]).size for c in np.unique(labels)) >= 4
    assert res.to_json() == local.to_json()


def test_same_report_and_objects_as_local(monkeypatch, tmp_path):
    """BGM, IoU and Hoover by partitions: the report (every status in its lists) and the
    objects dataset, row for row, are the local engine's."""
    import geopandas as gpd

    from geoeval.report.objects_dataset import write_objects_dataset

    ref, sub = scene(2, n=196)
    options = dict(per_partition=8, matchers=["bgm", "iou", "hoover"])
    res, local, _ = run_inline(monkeypatch, tmp_path, ref, sub, **options)
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    assert res.to_json() == local.to_json()
    res, local, _ = run_inline(monkeypatch, tmp_path / "o", ref, sub, objects=True, **options)
    assert res.objects_dataset == str(tmp_path / "o" / "objects_dask")
    write_objects_dataset(local, tmp_path / "objects_local")
    d = gpd.read_parquet(tmp_path / "o" / "objects_dask")
    ell = gpd.read_parquet(tmp_path / "objects_local")
    d = d.sort_values(["side", "position"]).reset_index(drop=True)
    ell = ell.sort_values(["side", "position"]).reset_index(drop=True)
    cols = [c for c in d.columns if c != "geometry"]
    assert d[cols].equals(ell[cols]) and len(d) == len(ref) + len(sub)


def test_past_the_list_limit_the_same_report_and_no_list_reaches_the_client(
        monkeypatch, tmp_path):
    """Past the report's limit (:data:`geoeval.matching.lists.LIST_LIMIT`, here 100
    objects) both engines give the same report, byte for byte: each matcher says how many
    objects it does not list and that no objects dataset holds them, and the Dask run
    never asks a partition for its lists. At the limit, every object is listed."""
    from geoeval.matching import lists as match_lists

    ref, sub = scene(2, n=196)
    n = len(ref) + len(sub)
    monkeypatch.setattr(match_lists, "LIST_LIMIT", 100)
    res, local, client = run_inline(monkeypatch, tmp_path, ref, sub, per_partition=8,
                                    matchers=["bgm", "iou", "hoover"])
    assert res.partitions["partitions"] >= 32
    assert res.to_json() == local.to_json()
    assert "lists_of" not in client.results  # nothing per object gathered
    for r in json.loads(res.to_json())["results"].values():
        assert r["objects_dataset"] is None and "instances" not in r
        assert "missed_ids" not in r and "false_alarm_ids" not in r
        assert r["not_listed"]["objects"] == n and r["not_listed"]["limit"] == 100
        assert "--objects DIR" in r["not_listed"]["note"]
    monkeypatch.setattr(match_lists, "LIST_LIMIT", n)  # at the limit: listed, as always
    res, local, client = run_inline(monkeypatch, tmp_path / "at", ref, sub, per_partition=8,
                                    matchers=["bgm"])
    assert res.to_json() == local.to_json() and len(client.results["lists_of"]) > 32
    report = json.loads(res.to_json())["results"]["bgm"]
    assert "not_listed" not in report and "objects_dataset" not in report
    assert len(report["instances"]) == report["matched_reference"]  # one-to-one


def test_past_the_list_limit_the_report_names_the_objects_dataset(monkeypatch, tmp_path):
    """With an objects dataset past the limit, each matcher names it and says how many
    objects it holds instead of listing them."""
    from geoeval.matching import lists as match_lists

    ref, sub = scene(2, n=100)
    monkeypatch.setattr(match_lists, "LIST_LIMIT", 50)
    res, _, _ = run_inline(monkeypatch, tmp_path, ref, sub, objects=True, matchers=["bgm"])
    r = json.loads(res.to_json())["results"]["bgm"]
    assert r["objects_dataset"] == str(tmp_path / "objects_dask")
    assert r["not_listed"]["objects"] == len(ref) + len(sub)
    assert "objects dataset" in r["not_listed"]["note"]


def test_objects_dataset_attributes_as_local(monkeypatch, tmp_path):
    """The layers' own columns in the objects dataset (``ref_<name>``, ``sub_<name>``):
    read with the pieces on the workers, carried through the partitions and the boundary,
    the same columns, types and values as the local engine's, on the right objects, for
    a GeoParquet dataset folder and a GeoPackage (text, floats, integers with and without
    empty values, booleans, dates)."""
    import functools

    import geopandas as gpd
    import pandas as pd

    from geoeval.api import _open_objects
    from geoeval.engine import Engine
    from geoeval.io import pieces as io_pieces
    from geoeval.report.objects_dataset import write_objects_dataset
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    ref, sub = scene(5, n=196)
    folder = tmp_path / "ref_dataset"
    folder.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(len(ref)), 4)):
        gpd.GeoDataFrame({"bid": chunk * 3 + 7, "name": [f"b{k}" for k in chunk],
                          "height": np.where(chunk % 5 == 0, np.nan, chunk / 2)},
                         geometry=ref[chunk], crs="EPSG:32631").to_parquet(
            folder / f"part{i}.parquet", row_group_size=40)
    k = np.arange(len(sub))
    gpkg = tmp_path / "sub.gpkg"
    gpd.GeoDataFrame({"confidence": k / len(sub), "label": np.where(k % 3 == 0, None, "car"),
                      "n": pd.array(np.where(k % 4 == 0, None, k), dtype="Int64"),
                      "ok": k % 2 == 0,
                      "day": pd.to_datetime("2024-01-01") + pd.to_timedelta(k, unit="D")},
                     geometry=sub, crs="EPSG:32631").to_file(gpkg)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 8)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    value = score_options(matchers=["bgm", "iou"], lists=False).but(
        attributes=True)  # as geoeval.score asks for them with objects_dir
    writer = functools.partial(_open_objects, tmp_path / "objects_dask", value.matchers)
    res = score(folder, gpkg, value, objects=writer,
                opened=Engine("dask", client=RecordingClient(), n_jobs=1))
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    local = score(folder, gpkg, value)
    write_objects_dataset(local, tmp_path / "objects_local")
    d, ell = (gpd.read_parquet(tmp_path / name).sort_values(["side", "position"])
              .reset_index(drop=True) for name in ("objects_dask", "objects_local"))
    cols = [c for c in ell.columns if c != "geometry"]
    assert list(d.columns) == list(ell.columns)
    assert [c for c in cols if c.startswith(("ref_", "sub_"))] == [
        "ref_bid", "ref_name", "ref_height", "sub_confidence", "sub_label", "sub_n", "sub_ok",
        "sub_day"]
    assert d[cols].equals(ell[cols])
    refs, subs = d[d.side == "reference"], d[d.side == "submission"]
    assert (refs["ref_name"] == "b" + refs["position"].astype(str)).all()
    assert (refs["ref_bid"] == refs["position"] * 3 + 7).all() and refs["sub_ok"].isna().all()
    np.testing.assert_array_equal(subs["sub_confidence"], subs["position"] / len(sub))
    assert subs["sub_n"].isna().to_numpy().tolist() == (subs["position"] % 4 == 0).tolist()
    assert subs["sub_day"].iloc[3].startswith("2024-01-04") and subs["ref_bid"].isna().all()


def test_objects_dataset_attributes_of_one_geoparquet_file_as_local(monkeypatch, tmp_path):
    """A GeoParquet file with a named pandas index (its ids) read by row groups on the
    workers: the index is no attribute, the other columns are the local reader's."""
    import functools

    import geopandas as gpd
    import pandas as pd

    from geoeval.api import _open_objects
    from geoeval.engine import Engine
    from geoeval.io import pieces as io_pieces
    from geoeval.report.objects_dataset import write_objects_dataset
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    ref, sub = scene(1, n=100)
    k = np.arange(len(ref))
    gpd.GeoDataFrame({"name": [f"r{i}" for i in k], "h": np.where(k % 3 == 0, np.nan, k * 1.5),
                      "when": pd.to_datetime("2020-01-01") + pd.to_timedelta(k, unit="h")},
                     geometry=ref, crs="EPSG:32631", index=pd.Index(k * 10, name="myidx")
                     ).to_parquet(tmp_path / "ref.parquet", row_group_size=20)
    gpd.GeoDataFrame({"conf": np.linspace(0, 1, len(sub))}, geometry=sub,
                     crs="EPSG:32631").to_parquet(tmp_path / "sub.parquet", row_group_size=20)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 8)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 20)
    value = score_options(matchers=["bgm"], lists=False).but(
        attributes=True)  # as geoeval.score asks for them with objects_dir
    args = (tmp_path / "ref.parquet", tmp_path / "sub.parquet", value)
    score(*args, objects=functools.partial(_open_objects, tmp_path / "od", value.matchers),
          opened=Engine("dask", client=RecordingClient(), n_jobs=1))
    write_objects_dataset(score(*args), tmp_path / "ol")
    d, ell = (gpd.read_parquet(tmp_path / name).sort_values(["side", "position"])
              .reset_index(drop=True) for name in ("od", "ol"))
    assert [c for c in d.columns if c.startswith(("ref_", "sub_"))] == [
        "ref_name", "ref_h", "ref_when", "sub_conf"]
    cols = [c for c in ell.columns if c != "geometry"]
    assert list(d.columns) == list(ell.columns) and d[cols].equals(ell[cols])
    refs = d[d.side == "reference"]
    assert (refs["id"] == refs["position"] * 10).all()
    assert (refs["ref_name"] == "r" + refs["position"].astype(str)).all()


def test_mom_and_mallows_per_partition_as_local(monkeypatch, tmp_path):
    """MOM and the Mallows score of IoU's instances computed in the partition tasks and
    the boundary task: the report (each instance's Mallows score, the scene score, the
    solvers, undefined and pooled instances) is the local engine's."""
    ref, sub = scene(8, n=100)
    res, local, _ = run_inline(monkeypatch, tmp_path, ref, sub, per_partition=5,
                               matchers=["mom", "iou"], mallows=True, resolution=2.0)
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    report = json.loads(res.to_json())
    assert report["results"]["mom"]["mallows_details"]["solver"]
    assert sum(i["mallows"] is not None for i in report["results"]["iou"]["instances"]) > 50
    assert res.to_json() == local.to_json()


@pytest.mark.slow  # CPU budget of the README's command; CI runs it
def test_strata_breakdown_and_bootstrap_by_partitions_as_local(monkeypatch, tmp_path):
    """Size and zone strata (each with its bootstrap), the error breakdown and the
    scene's bootstrap computed as partial sums in the partition and boundary tasks, added
    on the way to the client: the local engine's report, with MOM's Mallows scores;
    zones leave objects outside and cut components."""
    import geopandas as gpd

    ref, sub = scene(10, n=100)
    zones = gpd.GeoDataFrame({"name": ["west", "east"]},
                             geometry=[shapely.box(-10, -10, 95, 250),
                                       shapely.box(95, -10, 150, 250)], crs="EPSG:32631")
    res, local, _ = run_inline(monkeypatch, tmp_path, ref, sub, per_partition=5,
                               matchers=["bgm", "mom", "iou"], resolution=2.0,
                               breakdown=True, size_bins=[60.0, 100.0], zones=zones,
                               zone_field="name", bootstrap=40, seed=3)
    assert res.partitions["partitions"] >= 32
    report = json.loads(res.to_json())
    assert set(report["strata"]["zone"]["strata"]) == {"west", "east", "outside"}
    assert report["bootstrap"]["notes"]  # both sides overlap themselves: BGM's interval null
    assert report["breakdown"]["mom"]["errors"]["missed"]["count"] > 0
    assert res.to_json() == local.to_json()


def test_one_partition_and_empty_side(monkeypatch, tmp_path):
    ref, sub = scene(3, n=16)
    res, local, _ = run_inline(monkeypatch, tmp_path, ref, sub, per_partition=10_000,
                               matchers=["bgm"])
    assert res.partitions["partitions"] == 1 and res.partitions["boundary_objects"] == 0
    assert res.to_json() == local.to_json()
    res, local, _ = run_inline(monkeypatch, tmp_path / "empty", ref, sub[:0],
                               per_partition=4, matchers=["bgm"])
    assert res.summary.results["bgm"].missed == len(ref) and res.to_json() == local.to_json()


def test_median_on_partitions_is_numpy_median():
    """The Mallows grid step's median found by brackets and counts (no partition sends
    more than its few values in the bracket) equals numpy's median: odd and even counts,
    ties, many values a partition (several rounds), a side with no positive area."""
    from geoeval.engine import median as med

    rng = np.random.default_rng(3)

    def parts(values, k):
        out = []
        for chunk in np.array_split(values, k):
            side = np.zeros(chunk.size, np.int8)
            out.append(dist.Part(side, np.arange(chunk.size), np.arange(chunk.size),
                                 np.zeros(chunk.size, object), chunk, np.zeros((chunk.size, 4))))
        return out

    cases = [rng.lognormal(4, 1, 30_001), rng.lognormal(4, 1, 30_000),
             np.repeat([2.0, 3.0], [15_000, 15_000]), np.full(10_000, 7.5),
             rng.integers(1, 5, 20_001).astype(float), np.array([4.0]), np.array([1.0, 2.0])]
    for values in cases:
        values = rng.permutation(np.concatenate([values, [0.0, 0.0]]))  # zero areas left out
        for k in (1, 7):
            assert med.median(InlineClient(), parts(values, k), 0) == np.median(values[values > 0])
    assert med.median(InlineClient(), parts(np.zeros(5), 3), 0) is None


def test_on_workers_raises_the_first_failure_in_item_order():
    """A layer's planning on the workers (:func:`geoeval.engine.gather.on_workers`) runs
    with the in-process client too: the results in item order, and of several failures
    the first item's error, in one line naming the item when it is not geoeval's own."""
    from geoeval.engine.gather import on_workers
    from geoeval.errors import InputError

    assert on_workers(InlineClient(), lambda x: 2 * x, [3, 1, 2]) == [6, 2, 4]

    def fail_from_b(tile):
        if tile >= "b.gpkg":
            raise ValueError(f"cannot open {tile}")
        return tile

    with pytest.raises(InputError, match="planning failed on b.gpkg: ValueError: cannot open"):
        on_workers(InlineClient(), fail_from_b, ["a.gpkg", "b.gpkg", "c.gpkg"])


# --- a real cluster --------------------------------------------------------------------

def _write_inputs(tmp_path, ref, sub):
    import geopandas as gpd

    folder = tmp_path / "ref_dataset"
    folder.mkdir(parents=True)
    for i, chunk in enumerate(np.array_split(ref, 8)):  # a dataset of 8 files
        gpd.GeoDataFrame({"bid": np.arange(len(chunk)) + 1000 * i},
                         geometry=chunk, crs="EPSG:32631").to_parquet(
            folder / f"part{i}.parquet", row_group_size=40)
    gpkg = tmp_path / "sub.gpkg"
    gpd.GeoDataFrame(geometry=sub, crs="EPSG:32631").to_file(gpkg)
    return folder, gpkg


@pytest.mark.slow
def test_cluster_scores_by_partitions_as_local(tmp_path, monkeypatch):
    """Two worker processes: the client reads no feature; what reaches it is bounded by
    partitions and pieces, not objects, the lists asked for (``--json``) past the
    report's limit too; report and objects dataset are the local engine's."""
    import geoeval
    from geoeval.io import pieces as io_pieces
    from geoeval.matching import lists as match_lists

    ref, sub = scene(4)
    folder, gpkg = _write_inputs(tmp_path, ref, sub)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 25)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    # the client never reads features: the piece readers fail if called here
    def refuse(*a, **k):
        raise AssertionError("the client read features")

    monkeypatch.setattr(io_pieces, "_read_parquet_piece", refuse)
    monkeypatch.setattr(io_pieces, "_read_ogr_piece", refuse)
    gathered = record_gathered(monkeypatch, _nbytes)
    options = dict(matchers=["bgm", "iou", "hoover"], reference_options={"id_field": "bid"})
    big = scene(5, n=1600)  # four times the objects, four times the objects per partition
    big_folder, big_gpkg = _write_inputs(tmp_path / "big", *big)
    with local_cluster() as c:
        res = geoeval.score(folder, gpkg, engine="dask", scheduler=c.scheduler_address,
                            objects_dir=tmp_path / "objects_dask", **options)
        small_bytes = sum(gathered)
        gathered.clear()
        monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 100)
        monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 240)
        # the lists asked for (--json) past the report's limit: none gathered
        monkeypatch.setattr(match_lists, "LIST_LIMIT", 1000)
        res_big = geoeval.score(big_folder, big_gpkg, engine="dask",
                                scheduler=c.scheduler_address, lists=True, **options)
        big_bytes = sum(gathered)
        unlisted = res_big.summary.unlisted  # under this limit
    monkeypatch.undo()
    assert isinstance(res, geoeval.ScoreResult) and not res.objects_held
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    # what reached the client is bounded by partitions and pieces, not by objects: four
    # times the objects in as many partitions and pieces, about the same bytes
    assert res_big.summary.reference.objects > 3.5 * res.summary.reference.objects
    assert unlisted == res_big.summary.reference.objects + res_big.summary.submission.objects

    def tasks(r):
        return sum(r.partitions[k] for k in ("partitions", "reference_pieces",
                                             "submission_pieces"))

    assert big_bytes / tasks(res_big) < 1.3 * small_bytes / tasks(res), (small_bytes, big_bytes)
    local = geoeval.score(folder, gpkg, objects_dir=tmp_path / "objects_local", **options)
    assert_same_as_local(res, local, tmp_path / "objects_dask", tmp_path / "objects_local",
                         len(ref) + len(sub))


def assert_same_as_local(res, local, dask_dir, local_dir, n_objects):
    """The partitioned run's JSON report is the local engine's byte for byte (each names
    its own objects dataset), and its objects dataset has the local one's rows."""
    import geopandas as gpd
    import pyarrow.parquet as pq

    a, b = res.to_json(), local.to_json()
    assert json.dumps(str(dask_dir)) in a and json.dumps(str(local_dir)) in b
    assert a.replace(json.dumps(str(dask_dir)), '"DIR"') == \
        b.replace(json.dumps(str(local_dir)), '"DIR"')
    # the same objects dataset (rows sorted by side, position), read back three ways
    d = gpd.read_parquet(dask_dir)
    ell = gpd.read_parquet(local_dir)
    # a part a partition, and one for the components crossing partitions
    assert len(list(dask_dir.glob("part-*.parquet"))) == res.partitions["partitions"] + 1
    d = d.sort_values(["side", "position"]).reset_index(drop=True)
    ell = ell.sort_values(["side", "position"]).reset_index(drop=True)
    assert len(d) == n_objects
    cols = [c for c in d.columns if c != "geometry"]
    floats = [c for c in cols if c.endswith(("_overlap", "_score", "_mallows", "area"))]
    assert d[[c for c in cols if c not in floats]].equals(ell[[c for c in cols
                                                              if c not in floats]])
    np.testing.assert_array_equal(d[floats].to_numpy(float), ell[floats].to_numpy(float))
    assert shapely.equals(d.geometry.values, ell.geometry.values).all()
    assert d.crs == ell.crs == "EPSG:32631"
    meta = pq.read_metadata(dask_dir / "_metadata")
    assert meta.num_rows == n_objects


@pytest.mark.slow
def test_cluster_default_matchers_with_mom_and_mallows_as_local(tmp_path, monkeypatch):
    """``geoeval score ref dets --engine dask`` with the default matchers (MOM among
    them: its accuracy is the Mallows score) and ``mallows=True`` stays partitioned and
    gives the local engine's report and objects dataset (the grid step chosen from the
    median area on the cluster, the Mallows columns filled)."""

    import geopandas as gpd

    import geoeval
    from geoeval.io import pieces as io_pieces

    ref, sub = scene(9, n=400)
    folder, gpkg = _write_inputs(tmp_path, ref, sub)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 25)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    with local_cluster() as c:
        res = geoeval.score(folder, gpkg, engine="dask", scheduler=c.scheduler_address,
                            objects_dir=tmp_path / "objects_dask", mallows=True)
    assert isinstance(res, geoeval.ScoreResult) and not res.objects_held
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    assert not any("read and matched in the client" in w for w in res.warnings)
    local = geoeval.score(folder, gpkg, objects_dir=tmp_path / "objects_local", mallows=True)
    assert list(local.results) == ["bgm", "hoover", "mom", "iou"]
    assert local.parameters["mallows"]["resolution_rule"]
    assert_same_as_local(res, local, tmp_path / "objects_dask", tmp_path / "objects_local",
                         len(ref) + len(sub))
    d = gpd.read_parquet(tmp_path / "objects_dask")
    assert d["mom_mallows"].notna().sum() > 0.5 * len(d)


@pytest.mark.slow
def test_cluster_strata_breakdown_bootstrap_as_local(tmp_path, monkeypatch):
    """COCO size bins (the grid step from the median area found on the cluster), zones
    from a file, the error breakdown and the bootstrap, with the default matchers: the
    run stays partitioned and its report is the local engine's."""

    import geopandas as gpd

    import geoeval
    from geoeval.io import pieces as io_pieces

    ref, sub = scene(11, n=400)
    folder, gpkg = _write_inputs(tmp_path, ref, sub)
    zones = tmp_path / "zones.gpkg"
    gpd.GeoDataFrame({"name": ["west", "east"]},
                     geometry=[shapely.box(-10, -10, 190, 420), shapely.box(190, -10, 300, 420)],
                     crs="EPSG:32631").to_file(zones)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 25)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    options = dict(size_bins="coco", zones=str(zones), zone_field="name", breakdown=True,
                   bootstrap=30, seed=5)
    # what reaches the client: the partial sums only once, as their total (added on the
    # workers), never one per partition
    gathered = record_gathered(monkeypatch, lambda out: out)
    with local_cluster() as c:
        res = geoeval.score(folder, gpkg, engine="dask", scheduler=c.scheduler_address,
                            objects_dir=tmp_path / "objects_dask", **options)
    received = [v for out in gathered for v in (out if isinstance(out, list) else [out])]
    partial = [r for r in received if isinstance(r, dict) and "bootstrap" in r]
    assert len(partial) == 1 and set(partial[0]) == {"strata", "breakdown", "bootstrap"}
    assert not any(isinstance(r, dict) and "partials" in r for r in received)
    assert isinstance(res, geoeval.ScoreResult) and not res.objects_held
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    local = geoeval.score(folder, gpkg, objects_dir=tmp_path / "objects_local", **options)
    assert local.strata is not None and local.bootstrap is not None
    assert_same_as_local(res, local, tmp_path / "objects_dask", tmp_path / "objects_local",
                         len(ref) + len(sub))


@pytest.mark.slow
def test_cluster_report_lists_every_object_byte_for_byte(tmp_path, monkeypatch):
    """Without an objects dataset the workers send each partition's per-object lists:
    the report of a scene cut into >= 32 partitions (the default matchers, MOM's Mallows
    scores, strata, breakdown, bootstrap) is the local engine's, byte for byte. Float
    sums added by partitions used to differ in the 15th digit."""
    import geopandas as gpd

    import geoeval
    from geoeval.io import pieces as io_pieces

    ref, sub = scene(12, n=400)
    folder, gpkg = _write_inputs(tmp_path, ref, sub)
    zones = tmp_path / "zones.gpkg"
    gpd.GeoDataFrame({"name": ["west", "east"]},
                     geometry=[shapely.box(-10, -10, 190, 420), shapely.box(190, -10, 300, 420)],
                     crs="EPSG:32631").to_file(zones)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 25)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    options = dict(size_bins="coco", zones=str(zones), zone_field="name", breakdown=True,
                   bootstrap=20, mallows=True, reference_options={"id_field": "bid"})
    with local_cluster() as c:
        res = geoeval.score(folder, gpkg, engine="dask", scheduler=c.scheduler_address,
                            **options)
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    local = geoeval.score(folder, gpkg, **options)
    assert res.to_json() == local.to_json()
    report = res.to_dict()
    assert report["results"]["mom"]["instances"] and report["results"]["bgm"]["missed_ids"]


def _nbytes(value) -> int:
    from dask.sizeof import sizeof

    return int(sizeof(value))


@pytest.mark.slow
def test_a_worker_killed_mid_run_does_not_change_the_result(tmp_path, monkeypatch):
    """A worker process killed while partitions are being solved: Dask reruns its tasks
    (the nanny starts a new worker) and the numbers are those of the undisturbed run."""
    import logging

    import geoeval
    from geoeval.io import pieces as io_pieces

    ref, sub = scene(6, n=900)
    folder, gpkg = _write_inputs(tmp_path, ref, sub)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 30)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    options = dict(matchers=["bgm", "iou"])
    with local_cluster(logging.CRITICAL) as c:
        # the undisturbed run without the layers' bounds from metadata (read, then keyed)
        with monkeypatch.context() as m:
            m.setattr(io_pieces, "layer_bounds", lambda *a, **k: None)
            clean = geoeval.score(folder, gpkg, engine="dask", scheduler=c.scheduler_address,
                                  **options).to_dict()
        # a partition's result is released once its summary, boundary and rows are
        # taken: count the summaries the client holds
        res = kill_a_worker_mid_run(c, lambda: geoeval.score(
            folder, gpkg, engine="dask", scheduler=c.scheduler_address, **options),
            "summary_of")
    assert res.to_dict() == clean


def test_pieces_planned_from_metadata_and_a_bad_piece_named(tmp_path):
    """Pieces come from the footers (row groups) and feature counts; a piece that cannot
    be read is an InputError naming the file and its rows; the pieces read back give the
    in-memory reader's objects in its order."""
    import geopandas as gpd

    from geoeval.errors import InputError
    from geoeval.io import pieces as io_pieces
    from geoeval.io.vector import read_vector

    ref, sub = scene(7, n=100)
    folder, gpkg = _write_inputs(tmp_path, ref, sub)
    pieces, crs = io_pieces.plan_pieces(folder, id_field="bid", features=30)
    sizes = [len(c) for c in np.array_split(ref, 8)]
    assert crs == "EPSG:32631" and len(pieces) == 8 and pieces[0].kind == "parquet"
    assert [p.first_row for p in pieces] == np.cumsum([0, *sizes[:-1]]).tolist()
    got = [io_pieces.read_piece(p) for p in pieces]
    assert sum(g.areas.size for g in got) == len(ref)
    whole = io_pieces.read_dataset(folder, id_field="bid")
    assert np.array_equal(np.concatenate([g.ids for g in got]), whole.ids)
    ogr, _ = io_pieces.plan_pieces(gpkg, features=50)
    assert [(p.start, p.count) for p in ogr] == [(s, min(50, len(sub) - s))
                                                 for s in range(0, len(sub), 50)]
    ids = np.concatenate([io_pieces.read_piece(p).ids for p in ogr])
    assert np.array_equal(ids, read_vector(gpkg).ids)
    broken = tmp_path / "broken.parquet"
    gpd.GeoDataFrame(geometry=ref[:5], crs="EPSG:32631").to_parquet(broken)
    piece = io_pieces.plan_pieces(broken)[0][0]
    broken.write_bytes(broken.read_bytes()[:200] + b"\0" * 50 + broken.read_bytes()[250:])
    with pytest.raises(InputError, match=r"broken\.parquet.*row groups 0\.\.0"):
        io_pieces.read_piece(piece)


# --- --id-field unique across pieces ------------------------------------------------------

def _local_id_error(frame, id_field):
    from geoeval.errors import InputError
    from geoeval.io.vector import objects_from_frame

    try:
        objects_from_frame(frame, id_field=id_field, path="layer")
    except InputError as exc:
        return str(exc)
    return None


def _pieces_id_error(chunks, id_field, n_buckets):
    """The workers' check, task by task in this process: every piece's ids into
    buckets by hash, each bucket summarised, the summaries worded in the client."""
    from geoeval.io.pieces import Piece

    parts, empty, features = [], 0, 0
    for chunk in chunks:
        piece_ids = chunk[id_field].to_numpy()
        geoms = np.asarray(chunk.geometry.values, dtype=object)
        kept = ~shapely.is_empty(geoms) & (shapely.area(geoms) > 0)
        data = PieceData(geoms[kept], piece_ids[kept], shapely.area(geoms[kept]), {},
                         None if kept.all() else piece_ids,
                         int(chunk[id_field].isna().sum()))
        parts.append(dist.keyed(data, 0, 0, (0.0, 0.0, 100.0, 100.0)))
        empty += data.empty_ids
        features += len(chunk)
    assert Piece  # the same PieceData the reader returns
    splits = [id_check.id_buckets(p, n_buckets) for p in parts]
    found = [id_check.duplicate_ids(*[dist.bucket(s, b) for s in splits])
             for b in range(n_buckets)]
    assert all(len(f) == 3 for f in found)  # a bounded summary a bucket
    error = id_check.ids_error("layer", id_field, features, empty, found)
    return None if error is None else str(error)


@pytest.mark.parametrize("kind", ["int", "str", "float"])
def test_ids_unique_across_pieces_as_the_local_reader_says(kind):
    """Repeated ids in different pieces (and among skipped features) give the in-memory
    reader's error word for word: count of repeated values, the smallest, its count."""
    import geopandas as gpd

    rng = np.random.default_rng(3)
    n = 300
    geoms = shapely.box(np.arange(n), 0, np.arange(n) + 0.5, 1)
    geoms[[7, 150]] = shapely.Point(0, 0).buffer(0)  # empty: skipped, ids still checked
    for repeats in ([], [(5, 290)], [(5, 290), (40, 41), (40, 200), (120, 7)]):
        ids = rng.permutation(n) + 1000
        for a, b in repeats:
            ids[b] = ids[a]
        column = {"int": ids, "str": np.array([f"b{v}" for v in ids], dtype=object),
                  "float": ids.astype(float)}[kind]
        frame = gpd.GeoDataFrame({"bid": column}, geometry=geoms)
        want = _local_id_error(frame, "bid")
        assert (want is None) == (not repeats)
        for n_pieces, buckets in ((1, 1), (4, 3), (9, 16)):
            chunks = [frame.iloc[c] for c in np.array_split(np.arange(n), n_pieces)]
            assert _pieces_id_error(chunks, "bid", buckets) == want, (repeats, n_pieces)
    frame = gpd.GeoDataFrame({"bid": [1.0, np.nan, 3.0, np.nan]},
                             geometry=shapely.box(np.arange(4), 0, np.arange(4) + 1, 1))
    want = _local_id_error(frame, "bid")
    assert "empty values (2 of 4" in want
    assert _pieces_id_error([frame.iloc[:2], frame.iloc[2:]], "bid", 2) == want


def test_task_results_report_their_size_to_dask():
    """Dask decides what to spill by ``sizeof``: a Part (and a dict of splits, a
    PartResult) reports its arrays and its WKB bytes, not the few bytes of a
    dataclass (so a worker spills partitions instead of growing past its limit)."""
    import dask.sizeof
    import shapely

    from geoeval.arrays import nbytes

    n = 2000
    x = np.arange(n, dtype=float)
    wkb = shapely.to_wkb(shapely.box(x, 0, x + 1, 1 + (x % 7)))
    part = dist.Part(np.zeros(n, np.int8), np.arange(n), np.arange(n), wkb, np.ones(n),
                     np.zeros((n, 4)))
    payload = sum(len(b) for b in wkb) + n * (1 + 8 + 8 + 8 + 32)
    size = dask.sizeof.sizeof(part)
    assert payload <= size <= payload + n * 8 + n * 64  # + pointers, bytes headers
    assert dask.sizeof.sizeof({0: part, 1: part.take(np.arange(n // 2))}) > 1.4 * size
    assert nbytes(None) == 0 and nbytes(np.zeros(0, object)) == 0


def test_strict_refuses_an_empty_layer_from_its_metadata(monkeypatch, tmp_path):
    """strict=True by partitions: an empty layer is known from the metadata, so the run
    is refused before any piece is read, with the warning the run would give."""
    from geoeval.engine import Engine
    from geoeval.errors import StrictError
    from geoeval.io import pieces as io_pieces
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    ref, sub = scene(3, n=16)
    folder, gpkg = _write_inputs(tmp_path, ref, sub[:0])

    def no_reading(*args, **kwargs):
        raise AssertionError("a piece was read before strict refused the run")

    monkeypatch.setattr(io_pieces, "read_piece", no_reading)
    with pytest.raises(StrictError, match=r"strict=True: 1 warning\(s\), the first: .*"
                                          r"the submission has no objects: its layer has no "
                                          r"features"):
        score(folder, gpkg, score_options(matchers=["bgm"], strict=True),
              opened=Engine("dask", client=RecordingClient(), n_jobs=1))
