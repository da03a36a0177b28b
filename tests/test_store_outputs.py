"""Outputs to object storage (geoeval.outputs, geoeval.store_outputs): each output kind
written to a local S3-compatible server (moto's, a process shared by the module) has
the local output's bytes; a failed run leaves no object; a non-empty prefix, an input's
URL and the web are refused before the work; the command line says so in one line."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

import pytest
from shapely import box

import geoeval
from geoeval.errors import OutputError
from geoeval.objects import ObjectSet
from tests.corpus.conftest import run_cli
from tests.stores import SECRET, s3_server

ROOT = Path(__file__).resolve().parents[1]
_BUCKETS = itertools.count()


@pytest.fixture(scope="module")
def s3():
    """One S3 server for the module, its standard AWS variables set meanwhile."""
    import pyogrio

    with s3_server() as server, pytest.MonkeyPatch.context() as mp:
        for key, value in server.environ.items():
            mp.setenv(key, value)
        yield server
    # GDAL keeps its configuration: point it away from the stopped server
    pyogrio.set_gdal_config_options({k: None for k in ("AWS_S3_ENDPOINT", "AWS_HTTPS",
                                                       "AWS_VIRTUAL_HOSTING")})


@pytest.fixture()
def bucket(s3):
    """A new, empty bucket for one test."""
    name = f"out-{next(_BUCKETS)}"
    s3.client().create_bucket(Bucket=name)
    return name


def keys(s3, bucket: str) -> dict[str, bytes]:
    """Every object of ``bucket``: key -> bytes (an empty "directory" object counts)."""
    c = s3.client()
    got = c.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {o["Key"]: c.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in got}


def local_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def pair() -> tuple[ObjectSet, ObjectSet]:
    """Three reference squares; one found shifted, one found small, one missed."""
    ref = ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 30, 10),
                                     box(40, 0, 50, 10)], crs="EPSG:32631")
    sub = ObjectSet.from_geometries([box(1, 0, 11, 10), box(41, 1, 52, 9),
                                     box(70, 0, 75, 5)], crs="EPSG:32631")
    return ref, sub


class _Frozen(dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls(2026, 1, 2, 3, 4, 5, tzinfo=tz)


@pytest.fixture()
def frozen_time(monkeypatch):
    """The GeoPackage's timestamps fixed (GDAL's and the layer styles'), so that two
    runs write the same bytes."""
    import pyogrio

    import geoeval.report.gpkg as gpkg

    monkeypatch.setattr(gpkg, "datetime", _Frozen)
    pyogrio.set_gdal_config_options({"OGR_CURRENT_DATE": "2026-01-02T03:04:05Z"})
    yield
    pyogrio.set_gdal_config_options({"OGR_CURRENT_DATE": None})


def same_bytes_local_and_s3(s3, bucket, tmp_path, outputs, **options):
    """geoeval.score with ``outputs`` (keyword -> name) in ``tmp_path`` and under
    ``s3://bucket/run/``: the bucket holds exactly the local files, byte for byte
    (the write probes deleted, no empty "directory" objects)."""
    ref, sub = pair()
    geoeval.score(ref, sub, **options, **{k: tmp_path / name for k, name in outputs.items()})
    res = geoeval.score(ref, sub, **options,
                        **{k: f"s3://{bucket}/run/{name}" for k, name in outputs.items()})
    assert res.results["bgm"].recall == pytest.approx(2 / 3)
    want = {f"run/{k}": v for k, v in local_files(tmp_path).items()}
    got = keys(s3, bucket)
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key] == want[key], key
    return got


def test_each_output_to_s3_has_the_local_bytes(s3, bucket, tmp_path, frozen_time):
    """--json, --gpkg (written here, then uploaded), --csv-dir, --parquet-dir."""
    got = same_bytes_local_and_s3(
        s3, bucket, tmp_path, {"json": "report.json", "gpkg": "review.gpkg",
                               "csv_dir": "csv", "parquet_dir": "parquet"},
        matchers=["bgm", "iou"])
    assert {"run/report.json", "run/review.gpkg", "run/csv/summary.csv",
            "run/parquet/instances.parquet"} <= set(got)


@pytest.mark.slow  # drawing the map and the page: about 8 s
def test_the_figure_and_the_page_to_s3_have_the_local_bytes(s3, bucket, tmp_path):
    """--figure and --html."""
    got = same_bytes_local_and_s3(s3, bucket, tmp_path,
                                  {"figure": "map.png", "html": "page.html"},
                                  matchers=["bgm"], html_command="geoeval.score(...)")
    assert sorted(got) == ["run/map.png", "run/page.html"]


def test_objects_dataset_to_s3_has_the_local_bytes(s3, bucket, tmp_path):
    """--objects with the local engine: the parts and metadata files of the local
    dataset, no staging prefix left; the result names the URL."""
    ref, sub = pair()
    geoeval.score(ref, sub, matchers=["bgm"], objects_dir=tmp_path / "objects")
    res = geoeval.score(ref, sub, matchers=["bgm"], objects_dir=f"s3://{bucket}/objects")
    assert res.objects_dataset == f"s3://{bucket}/objects"
    want = {f"objects/{k}": v for k, v in local_files(tmp_path / "objects").items()}
    assert set(want) == {"objects/_common_metadata", "objects/_metadata",
                         "objects/part-00000.parquet"}
    assert keys(s3, bucket) == want


def test_dask_workers_write_the_objects_dataset_into_the_store(s3, bucket, tmp_path,
                                                               monkeypatch):
    """The Dask engine's parts are written by the task that solved them (here the
    in-process client runs every task) straight into a staging prefix in the store,
    never into a local folder, and copied into place when the run commits: the bytes
    of the same run's parts written to a local folder."""
    import functools

    import pyarrow as pa
    import pyarrow.parquet as pq

    from geoeval.api import _open_objects
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.outputs import output_run
    from geoeval.report import objects_dataset
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score
    from tests.test_dask_partitioned import run_inline, scene

    staged = []
    write = objects_dataset.ObjectsWriter.write

    def recording(self, part, sides):
        staged.append(self.staging)
        return write(self, part, sides)

    monkeypatch.setattr(objects_dataset.ObjectsWriter, "write", recording)
    ref, sub = scene(2, n=49)
    res, _, _ = run_inline(monkeypatch, tmp_path, ref, sub, per_partition=10, objects=True,
                           matchers=["bgm", "iou"])
    want = local_files(tmp_path / "objects_dask")
    staged.clear()
    value = score_options(matchers=["bgm", "iou"], lists=False).but(attributes=True)
    writer = functools.partial(_open_objects, f"s3://{bucket}/objects", value.matchers)
    with output_run():  # as geoeval.score's: the dataset put in place at its end
        got_res = score(tmp_path / "ref_dataset", tmp_path / "sub.gpkg", value,
                        objects=writer, opened=Engine("dask", client=InlineClient(), n_jobs=1))
        during = keys(s3, bucket)
        assert during and not any(k.startswith("objects/") for k in during)
    assert staged and all(s.startswith(f"s3://{bucket}/.objects.geoeval-partial-")
                          for s in staged)
    assert got_res.objects_dataset == f"s3://{bucket}/objects"
    assert res.partitions["partitions"] == got_res.partitions["partitions"] > 4
    got = {k.removeprefix("objects/"): v for k, v in keys(s3, bucket).items()}
    assert sorted(got) == sorted(want)  # the staging prefix is gone
    parts = [n for n in want if n.startswith("part-")]
    assert len(parts) == res.partitions["partitions"] + 1
    for name in parts:
        assert got[name] == want[name], name
    meta = pq.read_metadata(pa.BufferReader(got["_metadata"]))
    assert meta.num_rows == len(ref) + len(sub)


def scenes(tmp_path: Path) -> tuple[Path, Path]:
    """Two folders of two scenes (label rasters)."""
    from tests.test_batch import squares, write_labels

    ref, sub = tmp_path / "ref", tmp_path / "sub"
    ref.mkdir()
    sub.mkdir()
    write_labels(ref / "a.tif", squares([(0, 0), (10, 10), (20, 20)]))
    write_labels(sub / "a.tif", squares([(0, 0), (10, 10), (30, 30)]))
    write_labels(ref / "b.tif", squares([(0, 0), (10, 10)]))
    write_labels(sub / "b.tif", squares([(0, 0), (10, 11)]))
    return ref, sub


@pytest.mark.slow  # two scenes scored and their GeoPackages written, twice: about 7 s
def test_scene_reports_to_s3_have_the_local_bytes(s3, bucket, tmp_path, frozen_time):
    """score_scenes' --scene-dir (a JSON report and a GeoPackage per scene) and
    --csv-dir, to s3:// as to local folders."""
    ref, sub = scenes(tmp_path)
    out = tmp_path / "out"
    geoeval.score_scenes(ref, sub, matchers=["bgm"], scene_dir=out / "scenes",
                         csv_dir=out / "csv")
    geoeval.score_scenes(ref, sub, matchers=["bgm"], scene_dir=f"s3://{bucket}/scenes",
                         csv_dir=f"s3://{bucket}/csv")
    want = local_files(out)
    assert sorted(want) == ["csv/scenes.csv", "scenes/a.gpkg", "scenes/a.json",
                            "scenes/b.gpkg", "scenes/b.json"]
    assert keys(s3, bucket) == want


def test_a_contest_to_s3_has_the_local_bytes(s3, bucket, tmp_path):
    """rank's --json (the command line's) to s3:// as to a local file."""
    ref, sub = scenes(tmp_path)
    out = tmp_path
    run = run_cli("rank", ref / "a.tif", sub / "a.tif", ref / "b.tif", "-m", "bgm",
                  "--json", out / "ranking.json", "--quiet")
    assert run.code == 0, run
    run = run_cli("rank", ref / "a.tif", sub / "a.tif", ref / "b.tif", "-m", "bgm",
                  "--json", f"s3://{bucket}/ranking.json", "--quiet")
    assert run.code == 0, run
    assert keys(s3, bucket)["ranking.json"] == (out / "ranking.json").read_bytes()


def test_box_outputs_to_s3_have_the_local_bytes(s3, bucket, tmp_path):
    """boxes voc's --json and --figure-dir (a folder of precision-recall curves)."""
    voc = ROOT / "sample_data" / "boxes" / "voc"
    args = ("boxes", "voc", voc / "gt", voc / "det", "--quiet")
    run = run_cli(*args, "--json", tmp_path / "voc.json", "--figure-dir", tmp_path / "pr")
    assert run.code == 0, run
    run = run_cli(*args, "--json", f"s3://{bucket}/voc.json",
                  "--figure-dir", f"s3://{bucket}/pr")
    assert run.code == 0, run
    want = local_files(tmp_path)
    assert "voc.json" in want and any(k.startswith("pr/pr_") for k in want)
    assert keys(s3, bucket) == want


def test_a_failed_run_leaves_nothing_in_the_bucket(s3, bucket, monkeypatch):
    """A writer failing after the others wrote, and an upload failing after others
    were uploaded (the objects dataset's parts already in their staging prefix): no
    object at all is left, not even an empty "directory" object."""
    import geoeval.report.status_figure as status_figure
    import geoeval.store_outputs as store_outputs

    ref, sub = pair()
    targets = {"json": f"s3://{bucket}/r/report.json", "csv_dir": f"s3://{bucket}/r/csv",
               "gpkg": f"s3://{bucket}/r/review.gpkg", "objects_dir": f"s3://{bucket}/r/obj",
               "figure": f"s3://{bucket}/r/map.png"}

    def broken(*args, **kwargs):
        raise RuntimeError("the figure failed")

    with monkeypatch.context() as m:
        m.setattr(status_figure, "save_status_figure", broken)
        with pytest.raises(RuntimeError, match="the figure failed"):
            geoeval.score(ref, sub, matchers=["bgm"], **targets)
    assert keys(s3, bucket) == {}

    upload = store_outputs.upload
    calls = []

    def failing_third(local, location):
        calls.append(location.url)
        if len(calls) == 3:
            raise OutputError("could not upload (cannot reach the store)", location.display)
        return upload(local, location)

    monkeypatch.setattr(store_outputs, "upload", failing_third)
    with pytest.raises(OutputError, match="cannot reach the store"):
        geoeval.score(ref, sub, matchers=["bgm"], **targets)
    assert len(calls) == 3
    assert keys(s3, bucket) == {}


def test_a_failed_run_with_local_and_store_outputs_leaves_neither(s3, bucket, tmp_path,
                                                                  monkeypatch):
    """Local outputs beside the store's: the failed run removes the folders it made
    here too (new/deeper/), and the local report is not written."""
    import geoeval.report.status_figure as status_figure

    def broken(*args, **kwargs):
        raise RuntimeError("the figure failed")

    monkeypatch.setattr(status_figure, "save_status_figure", broken)
    ref, sub = pair()
    with pytest.raises(RuntimeError, match="the figure failed"):
        geoeval.score(ref, sub, matchers=["bgm"], csv_dir=tmp_path / "new" / "deeper",
                      json=tmp_path / "report.json", parquet_dir=f"s3://{bucket}/pq",
                      figure=f"s3://{bucket}/map.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert keys(s3, bucket) == {}


def test_an_interrupted_run_leaves_nothing_in_the_bucket(s3, bucket, monkeypatch):
    """Ctrl-C while the outputs are written: nothing in the bucket."""
    import geoeval.report.csv as csv

    ref, sub = pair()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(csv, "write_csv", interrupted)
    with pytest.raises(KeyboardInterrupt):
        geoeval.score(ref, sub, matchers=["bgm"], json=f"s3://{bucket}/report.json",
                      objects_dir=f"s3://{bucket}/obj", csv_dir=f"s3://{bucket}/csv")
    assert keys(s3, bucket) == {}


def test_a_failed_upload_keeps_the_object_a_file_output_would_replace(s3, bucket,
                                                                      monkeypatch):
    """A file output replaces an object already there (as a local file is replaced),
    last: when an upload before it fails, the old object is left as it was."""
    import geoeval.store_outputs as store_outputs

    ref, sub = pair()
    s3.client().put_object(Bucket=bucket, Key="report.json", Body=b"{old}")
    upload = store_outputs.upload

    def failing_csv(local, location):
        if "/csv/" in location.url:
            raise OutputError("could not upload (access denied)", location.display)
        return upload(local, location)

    monkeypatch.setattr(store_outputs, "upload", failing_csv)
    with pytest.raises(OutputError, match="access denied"):
        geoeval.score(ref, sub, matchers=["bgm"], json=f"s3://{bucket}/report.json",
                      csv_dir=f"s3://{bucket}/csv")
    assert keys(s3, bucket) == {"report.json": b"{old}"}
    monkeypatch.setattr(store_outputs, "upload", upload)
    geoeval.score(ref, sub, matchers=["bgm"], json=f"s3://{bucket}/report.json")
    assert keys(s3, bucket)["report.json"].startswith(b"{")
    assert keys(s3, bucket)["report.json"] != b"{old}"


#: A run stopped by Ctrl-C while the Dask workers' parts are in their staging prefix,
#: whose deletion takes longer than cancel.GRACE: the hard stop waits for it.
SLOW_CLEANUP = """
import contextlib, os, signal, sys, time
import geoeval.store_outputs as so
from geoeval import cancel
from geoeval.outputs import output_run, store_staging
if sys.argv[2] == "no-wait":  # as before cancel.cleaning: the hard stop at GRACE
    cancel.cleaning = lambda *a, **k: contextlib.nullcontext()
delete_prefix = so.delete_prefix
def slow(location):
    time.sleep(2 * cancel.GRACE)
    return delete_prefix(location)
so.delete_prefix = slow
with cancel.handled() as run:
    try:
        with output_run():
            staging = store_staging(sys.argv[1])
            for i in range(3):
                so.put(b"part", staging.child(f"part-{i:05d}.parquet"))
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)
    except KeyboardInterrupt:
        sys.exit(run.report())
"""


@pytest.mark.slow  # a process stopped by Ctrl-C whose cleanup takes 4 s, twice
@pytest.mark.parametrize("wait", [True, False])
def test_ctrl_c_waits_for_the_store_to_be_cleaned(s3, bucket, wait):
    """Ctrl-C while parts are in their staging prefix: the run deletes them even when
    that takes longer than the hard stop's usual grace (cancel.cleaning); without the
    wait they would be left (the check that the test can fail)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    run = subprocess.run([sys.executable, "-c", SLOW_CLEANUP, f"s3://{bucket}/objects",
                          "wait" if wait else "no-wait"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode == 130, run.stderr
    assert run.stderr.strip() == "geoeval: interrupted; no output was written"
    left = keys(s3, bucket)
    if wait:
        assert left == {}
    else:
        assert len(left) == 3 and all(".objects.geoeval-partial-" in k for k in left)


def _never_scored(monkeypatch):
    import geoeval.api as api

    def refuse(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(api, "_score", refuse)


@pytest.mark.parametrize("keyword", ["csv_dir", "parquet_dir", "objects_dir"])
def test_a_prefix_that_holds_objects_is_refused_before_the_work(s3, bucket, monkeypatch,
                                                                keyword):
    ref, sub = pair()
    s3.client().put_object(Bucket=bucket, Key="out/old.csv", Body=b"x")
    _never_scored(monkeypatch)
    with pytest.raises(OutputError, match=rf"^s3://{bucket}/out: holds objects already"):
        geoeval.score(ref, sub, **{keyword: f"s3://{bucket}/out"})
    assert keys(s3, bucket) == {"out/old.csv": b"x"}


def test_an_input_url_as_an_output_is_refused_before_the_work(s3, bucket, monkeypatch):
    """The same URL (any spelling: /vsis3/), a key under an input's prefix (a dataset
    folder), a prefix holding an input, a key an input's pattern matches."""
    _never_scored(monkeypatch)
    ref = f"s3://{bucket}/data/ref.tif"
    for inputs, kw, out in [
        ((ref, f"s3://{bucket}/data/sub.tif"), "json", ref),
        ((ref, f"s3://{bucket}/data/sub.tif"), "json", f"/vsis3/{bucket}/data/ref.tif"),
        ((f"s3://{bucket}/ds/", ref), "csv_dir", f"s3://{bucket}/ds/tables"),
        ((ref, ref), "csv_dir", f"s3://{bucket}/data"),
        ((f"s3://{bucket}/tiles/*.gpkg", ref), "gpkg", f"s3://{bucket}/tiles/t9.gpkg"),
    ]:
        with pytest.raises(OutputError, match="is an input of this run"):
            geoeval.score(*inputs, **{kw: out})
    assert keys(s3, bucket) == {}


@pytest.mark.parametrize("keyword, url", [("csv_dir", "s3://bucket/tables"),
                                          ("json", "gs://bucket/report.json")])
def test_a_url_folded_by_pathlib_is_refused_not_written_here(monkeypatch, tmp_path,
                                                             keyword, url):
    """pathlib.Path("s3://b/k") is the local path s3:/b/k: refused before the work
    (it would otherwise make a folder 's3:' here), unless such a folder exists."""
    monkeypatch.chdir(tmp_path)
    _never_scored(monkeypatch)
    ref, sub = pair()
    with pytest.raises(OutputError, match=f"is {url} folded by pathlib.Path; give the URL "
                                          "as text"):
        geoeval.score(ref, sub, **{keyword: Path(url)})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("url", ["https://example.org/report.json",
                                 "http://127.0.0.1:9/report.json",
                                 "/vsicurl/https://example.org/report.json"])
def test_a_web_output_is_refused_before_the_work(monkeypatch, url):
    ref, sub = pair()
    _never_scored(monkeypatch)
    with pytest.raises(OutputError, match="the web is read-only"):
        geoeval.score(ref, sub, json=url)


@pytest.fixture(scope="module")
def layers(tmp_path_factory):
    """The pair as two small GeoPackages (for the command line)."""
    import geopandas as gpd

    folder = tmp_path_factory.mktemp("layers")
    for name, objects in zip(("ref.gpkg", "sub.gpkg"), pair(), strict=True):
        gpd.GeoDataFrame(geometry=list(objects.polygons), crs="EPSG:32631").to_file(
            folder / name)
    return folder / "ref.gpkg", folder / "sub.gpkg"


def test_a_missing_bucket_is_one_line_exit_2_on_the_command_line(s3, layers):
    run = run_cli("score", *layers, "--json", "s3://no-such-bucket/r/report.json", "-m", "bgm")
    assert run.code == 2, run
    assert run.stderr.strip().count("\n") == 0, run.stderr
    assert "s3://no-such-bucket/r/report.json" in run.stderr
    assert "the bucket does not exist" in run.stderr
    assert "Traceback" not in run.stderr and SECRET not in run.stdout + run.stderr


def test_the_command_line_writes_to_the_store(s3, bucket, layers):
    """--json and --csv-dir to s3:// from the command line: the objects, and the line
    that says what was written names the URLs."""
    run = run_cli("score", *layers, "-m", "bgm", "--json", f"s3://{bucket}/r/report.json",
                  "--csv-dir", f"s3://{bucket}/r/csv")
    assert run.code == 0, run
    assert f"wrote s3://{bucket}/r/csv/ (4 files), s3://{bucket}/r/report.json" in run.stderr
    got = keys(s3, bucket)
    assert sorted(got) == ["r/csv/instances.csv", "r/csv/reference.csv",
                           "r/csv/submission.csv", "r/csv/summary.csv", "r/report.json"]
    assert got["r/report.json"].startswith(b"{")
    run = run_cli("score", *layers, "-m", "bgm", "--csv-dir", f"s3://{bucket}/r/csv")
    assert run.code == 2, run
    assert run.stderr.strip() == (f"geoeval: error: s3://{bucket}/r/csv: holds objects "
                                  "already; give a new or empty prefix (--csv-dir)")


@pytest.mark.parametrize("args, words", [
    (["--html", "https://example.org/page.html"], "the web is read-only"),
    (["--objects", "http://example.org/objects"], "the web is read-only"),
])
def test_web_outputs_on_the_command_line_are_one_line_exit_2(layers, args, words):
    run = run_cli("score", *layers, "-m", "bgm", *args)
    assert run.code == 2, run
    assert words in run.stderr and args[1] in run.stderr and args[0] in run.stderr
    assert run.stderr.strip().count("\n") == 0 and "Traceback" not in run.stderr


def test_an_unreachable_endpoint_is_one_line_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # no retries: the test is about the line
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    ref, sub = pair()
    _never_scored(monkeypatch)
    with pytest.raises(OutputError) as info:
        geoeval.score(ref, sub, json="s3://some-bucket/report.json")
    text = str(info.value)
    assert text.startswith("s3://some-bucket/report.json: ")
    assert "cannot reach the store at http://127.0.0.1:9" in text and SECRET not in text


@pytest.mark.slow  # a Dask cluster of two worker processes
def test_cluster_workers_put_their_parts_into_the_store(s3, bucket, tmp_path, monkeypatch):
    """On a real cluster (two worker processes, their environment their own) the
    workers put the parts: the client cannot (its uploads of parts fail here), and the
    dataset has the rows of the local engine's."""
    import geopandas as gpd

    import geoeval.store_outputs as store_outputs
    from geoeval.engine import layers as engine_layers
    from geoeval.io import pieces as io_pieces
    from tests.dask_cluster import local_cluster
    from tests.test_dask_partitioned import _write_inputs, scene

    ref, sub = scene(4)
    folder, gpkg = _write_inputs(tmp_path, ref, sub)
    monkeypatch.setattr(engine_layers, "OBJECTS_PER_PARTITION", 25)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    put = store_outputs.put

    def not_here(data, location):
        if location.name.startswith("part-"):
            raise AssertionError("the client put a part")
        return put(data, location)

    monkeypatch.setattr(store_outputs, "put", not_here)
    options = dict(matchers=["bgm", "iou"])
    with local_cluster() as c:
        res = geoeval.score(folder, gpkg, engine="dask", scheduler=c.scheduler_address,
                            objects_dir=f"s3://{bucket}/objects", **options)
    assert res.objects_dataset == f"s3://{bucket}/objects"
    got = keys(s3, bucket)
    parts = sorted(k for k in got if k.startswith("objects/part-"))
    assert len(parts) == res.partitions["partitions"] + 1 > 4
    assert sorted(set(got) - set(parts)) == ["objects/_common_metadata", "objects/_metadata"]
    download = tmp_path / "downloaded"
    for key, data in got.items():
        (download / key).parent.mkdir(parents=True, exist_ok=True)
        (download / key).write_bytes(data)
    local = geoeval.score(folder, gpkg, objects_dir=tmp_path / "objects_local", **options)
    d = gpd.read_parquet(download / "objects").sort_values(["side", "position"])
    ell = gpd.read_parquet(tmp_path / "objects_local").sort_values(["side", "position"])
    cols = [c for c in d.columns if c != "geometry"]
    assert d[cols].reset_index(drop=True).equals(ell[cols].reset_index(drop=True))
    assert res.to_json().replace(f"s3://{bucket}/objects", "DIR") == \
        local.to_json().replace(str(tmp_path / "objects_local"), "DIR")


@pytest.mark.slow  # a server of its own, and the retries of a refused request: about 9 s
def test_refused_credentials_are_one_line_exit_2(layers, tmp_path, monkeypatch):
    """A server that checks credentials: ours refused (access denied), then none at
    all (said so, with what to set); the URL named, the secret never printed."""
    with s3_server({"INITIAL_NO_AUTH_ACTION_COUNT": "1"}) as strict:
        strict.client().create_bucket(Bucket="locked")  # the one request it serves freely
        for key, value in strict.environ.items():
            monkeypatch.setenv(key, value)
        run = run_cli("score", *layers, "-m", "bgm", "--json", "s3://locked/report.json")
        assert run.code == 2, run
        assert run.stderr.strip() == ("geoeval: error: s3://locked/report.json: access "
                                      "denied: the credentials may not write there (--json)")
        assert SECRET not in run.stdout + run.stderr
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE",
                    "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"):
            monkeypatch.delenv(key, raising=False)
        monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.aws
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        run = run_cli("score", *layers, "-m", "bgm", "--csv-dir", "s3://locked/tables")
    assert run.code == 2, run
    line = run.stderr.strip()
    assert "\n" not in line and line.startswith("geoeval: error: s3://locked/tables: ")
    assert "no credentials in the environment or ~/.aws (set AWS_PROFILE" in line
    assert line.endswith("(--csv-dir)")


@pytest.mark.parametrize("message, reason", [
    ("When initiating multiple part upload for key 'k' in bucket 'b': AWS Error "
     "NO_SUCH_BUCKET during CreateMultipartUpload operation: The specified bucket does "
     "not exist (Request ID: X)", "the bucket does not exist"),
    ("AWS Error ACCESS_DENIED during PutObject operation: Access Denied",
     "access denied: the credentials may not write there"),
    ("AWS Error UNKNOWN (HTTP status 403) during HeadObject operation: No response body.",
     "access denied: the credentials may not write there"),
    ("AWS Error INVALID_ACCESS_KEY_ID during PutObject operation: InvalidAccessKeyId",
     "no valid credentials"),
    ("GCS error: Could not create a OAuth2 access token to authenticate the request.",
     "GCS error: Could not create a OAuth2 access token to authenticate the request."),
    ("error at https://h/x?sig=SECRET: something", "error at https://h/x?… something"),
])
def test_store_errors_in_a_few_words(message, reason):
    from geoeval.store_outputs import reason as why

    assert why(OSError(message)).startswith(reason)
