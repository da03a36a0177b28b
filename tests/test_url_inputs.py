"""Inputs where they live: ``geoeval score`` and ``geoeval rank`` read URLs of a local
S3-compatible server (moto, a process) and of a web server answering range requests,
and give the report they give for the same local files, byte for byte apart from the
inputs' names, on both engines (the Dask engine's run in this process,
:class:`geoeval.engine.inline.InlineClient`); every failure is one line, exit 2,
naming the URL without its secrets; an input is resolved once
(:mod:`geoeval.io.inputs`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import shapely

from tests.corpus.conftest import run_cli
from tests.stores import SECRET, s3_server, web_server

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
#: Matchers without the Mallows score of two vector layers: its rasterising is not what
#: these tests are about (and is slow with AWS variables set, see the module's end).
FAST = ("-m", "bgm", "-m", "iou", "-m", "hoover")


def _squares(seed: int, n: int, shift: float) -> list:
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 400, size=(n, 2))
    return [shapely.box(x + shift, y, x + 8 + shift, y + 8) for x, y in xy]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Small inputs: a raster pair, a GeoPackage pair, tiles, GeoParquet files and
    dataset folders (every file of the folder ``data``)."""
    import geopandas as gpd

    d = tmp_path_factory.mktemp("urls") / "data"
    d.mkdir()
    shutil.copy(SAMPLE / "reference.tif", d / "ref.tif")
    shutil.copy(SAMPLE / "submissions" / "s1_near_perfect.tif", d / "sub.tif")
    for name, geoms in (("ref", _squares(1, 300, 0.0)), ("sub", _squares(1, 280, 1.5))):
        frame = gpd.GeoDataFrame({"oid": np.arange(len(geoms))}, geometry=geoms,
                                 crs="EPSG:32631")
        frame.to_file(d / f"{name}.gpkg")
        frame.to_parquet(d / f"{name}.parquet", row_group_size=50)
        (d / f"{name}_ds").mkdir()
        (d / f"{name}_tiles").mkdir()
        half = len(frame) // 2
        for k, part in enumerate((frame.iloc[:half], frame.iloc[half:])):
            part.to_parquet(d / f"{name}_ds" / f"part-{k}.parquet", row_group_size=50)
            part.to_file(d / f"{name}_tiles" / f"t{k}.gpkg")
    return d


@pytest.fixture(scope="module")
def s3(data):
    """The S3 server holding ``data`` in bucket ``inputs``; its AWS variables set."""
    with s3_server() as server:
        server.upload("inputs", {str(p.relative_to(data)): p for p in data.rglob("*")
                                 if p.is_file()})
        with server.environment():
            yield server


@pytest.fixture(scope="module")
def web(data):
    with web_server(data) as server:
        yield server


@pytest.fixture
def inline_dask(monkeypatch):
    """``--engine dask`` runs its tasks in this process; the routes by parts taken are
    counted (``routes``): a URL must not send a run through the client."""
    from geoeval.engine import cluster
    from geoeval.engine.inline import InlineClient
    from geoeval.scoring import by_blocks, by_partitions

    @contextlib.contextmanager
    def client(*args, **kwargs):
        yield InlineClient()

    monkeypatch.setattr(cluster, "dask_client", client)
    routes: list[str] = []

    def counting(function):
        def counted(*a, **k):
            routes.append(function.__name__)
            return function(*a, **k)
        return counted

    for module, name in ((by_blocks, "score_mosaic_files"),
                         (by_partitions, "score_partitioned")):
        monkeypatch.setattr(module, name, counting(getattr(module, name)))
    return routes


def _report(*args: str, engine: str = "local") -> tuple[dict, str]:
    run = run_cli("score", *args, *FAST, "-q", "--json", "-", "--engine", engine)
    assert run.code == 0, str(run)
    assert SECRET not in run.stdout + run.stderr
    return json.loads(run.stdout), run.stderr


def _names_apart(report: dict) -> dict:
    """The report without the inputs' names."""
    out = json.loads(json.dumps(report))
    for side in ("reference", "submission"):
        out[side].pop("path")
    return out


def _same_reports(local: tuple[str, str], urls: tuple[str, str], engine: str) -> None:
    want, want_err = _report(*local, engine=engine)
    got, got_err = _report(*urls, engine=engine)
    assert _names_apart(got) == _names_apart(want)
    assert [got["reference"]["path"], got["submission"]["path"]] == list(urls)
    for a, b in zip(local, urls, strict=True):
        want_err = want_err.replace(a, b)
    assert got_err == want_err  # the same warnings, naming the URLs


PAIRS = {  # the local names (in data/) of each kind of input pair
    "raster": ("ref.tif", "sub.tif"),
    "geopackage": ("ref.gpkg", "sub.gpkg"),
    "geoparquet": ("ref.parquet", "sub.parquet"),
    "dataset": ("ref_ds", "sub_ds"),
    "tiles": ("ref_tiles/*.gpkg", "sub_tiles/*.gpkg"),
}


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["local", "dask"])
@pytest.mark.parametrize("kind", list(PAIRS))
def test_s3_urls_give_the_local_report(data, s3, inline_dask, kind, engine):
    """The same report from s3:// URLs as from the local files, both engines."""
    local = tuple(str(data / name) for name in PAIRS[kind])
    urls = tuple(f"s3://inputs/{name}" for name in PAIRS[kind])
    _same_reports(local, urls, engine)
    if engine == "dask":  # both runs by blocks (rasters) or by partitions (layers)
        assert inline_dask == 2 * ["score_mosaic_files" if kind == "raster"
                                   else "score_partitioned"]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["local", "dask"])
@pytest.mark.parametrize("kind", ["raster", "geopackage", "geoparquet"])
def test_web_urls_give_the_local_report(data, web, inline_dask, kind, engine):
    """The same from http:// URLs (GDAL's /vsicurl/, Arrow through HTTP ranges); the web
    has no folders, so datasets and patterns are object storage's only."""
    local = tuple(str(data / name) for name in PAIRS[kind])
    urls = tuple(f"{web.url}/{name}" for name in PAIRS[kind])
    _same_reports(local, urls, engine)
    if engine == "dask":
        assert inline_dask == 2 * ["score_mosaic_files" if kind == "raster"
                                   else "score_partitioned"]


def test_rank_reads_urls(data, s3):
    """``geoeval rank`` with URLs: the same ranking and values as from the files, the
    entries named by their keys."""
    local = run_cli("rank", data / "ref.gpkg", data / "sub.gpkg",
                    data / "ref_tiles" / "t0.gpkg", "-m", "bgm", "-q", "--json", "-")
    urls = run_cli("rank", "s3://inputs/ref.gpkg", "s3://inputs/sub.gpkg",
                   "s3://inputs/ref_tiles/t0.gpkg", "-m", "bgm", "-q", "--json", "-")
    assert local.code == 0 and urls.code == 0, str(urls)
    got, want = json.loads(urls.stdout), json.loads(local.stdout)
    assert sorted(got["submissions"]) == ["sub", "t0"]
    assert got == want


def test_rank_names_a_signed_url_without_its_query(data, web):
    run = run_cli("rank", f"{web.url}/ref.gpkg", f"{web.url}/sub.gpkg?X-Amz-Signature={SECRET}",
                  "-m", "bgm", "-q", "--json", "-")
    assert run.code == 0, str(run)
    assert SECRET not in run.stdout + run.stderr
    assert list(json.loads(run.stdout)["submissions"]) == ["sub"]


def test_an_input_is_resolved_once(data, s3, monkeypatch):
    """``format_of``'s rule and the plan of the pieces (which gives the CRS from the
    metadata) run once per input for a score by partitions: the route's choice and the
    Dask engine's plan read the Input (before, twice each)."""
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.io import formats, pieces
    from geoeval.scoring.scene import score

    calls = {"format": 0, "plan": 0}
    format_for, plan_pieces = formats.format_for, pieces.plan_pieces

    def counted_format(*a, **k):
        calls["format"] += 1
        return format_for(*a, **k)

    def counted_plan(*a, **k):
        calls["plan"] += 1
        return plan_pieces(*a, **k)

    monkeypatch.setattr(formats, "format_for", counted_format)
    monkeypatch.setattr("geoeval.io.inputs.format_for", counted_format)
    monkeypatch.setattr(pieces, "plan_pieces", counted_plan)
    res = score("s3://inputs/ref.parquet", "s3://inputs/sub.parquet", matchers=["bgm"],
                opened=Engine("dask", client=InlineClient(), n_jobs=1))
    assert res.summary.reference.objects == 300
    assert calls == {"format": 2, "plan": 2}


@pytest.mark.parametrize("name, message", [
    ("s3://inputs/none.tif", "s3://inputs/none.tif: no such object (check the bucket and key)"),
    ("s3://no-such-bucket/ref.tif",
     "s3://no-such-bucket/ref.tif: no such object (check the bucket and key)"),
    ("s3://inputs/none_tiles/*.gpkg", "s3://inputs/none_tiles: no such folder or prefix"),
    ("s3://inputs/ref_tiles/*.fgb", "s3://inputs/ref_tiles/*.fgb: matches no object"),
    ("s3://inputs/ref_tiles", "s3://inputs/ref_tiles: is a prefix of several files, not one "
                              "layer"),
])
def test_missing_objects_in_one_line(s3, tmp_path, name, message):
    out = tmp_path / "r.json"
    run = run_cli("score", name, "s3://inputs/ref.tif", "-m", "bgm", "--json", out)
    assert run.code == 2 and run.stdout == ""
    assert run.stderr.startswith("geoeval: error: " + message)
    assert len(run.stderr.strip().splitlines()) == 1 and not out.exists()
    assert SECRET not in run.stderr


@pytest.mark.parametrize("name", ["none.tif", "none.gpkg", "none.parquet"])
def test_a_404_on_the_web_in_one_line(web, name):
    run = run_cli("score", f"{web.url}/{name}?sig={SECRET}", f"{web.url}/ref.tif", "-q")
    assert run.code == 2
    assert run.stderr == (f"geoeval: error: {web.url}/{name}?…: no such file on the server "
                          "(404)\n")


@pytest.mark.parametrize("name", ["ref.tif", "ref.gpkg", "ref.parquet"])
def test_gdal_and_arrow_failures_in_the_stores_words(web, name):
    """The readers opened on a URL without the edge's check: GDAL's own message (its
    /vsicurl/ 404) and Arrow's give the one line of the stores' table."""
    from geoeval.errors import InputError
    from geoeval.io import read

    with pytest.raises(InputError) as err:
        read(f"{web.url}/gone-{name}?sig={SECRET}", input_type="vector"
             if not name.endswith(".tif") else "raster")
    assert str(err.value) == f"{web.url}/gone-{name}?…: no such file on the server (404)"


@pytest.mark.parametrize("ext", ["tif", "gpkg", "parquet"])
def test_no_credentials_in_one_line(s3, monkeypatch, tmp_path, ext):
    """Without credentials the server answers access denied: said in one line, with
    what to do (credentials, or --anon for a public bucket)."""
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    run = run_cli("score", f"s3://inputs/ref.{ext}", f"s3://inputs/sub.{ext}", "-q")
    assert run.code == 2 and len(run.stderr.splitlines()) == 1
    assert run.stderr.startswith(f"geoeval: error: s3://inputs/ref.{ext}: access denied")
    assert "--anon" in run.stderr and SECRET not in run.stderr


def test_anon_reads_a_public_bucket(data, s3, monkeypatch, tmp_path):
    """``--anon`` (or ``AWS_NO_SIGN_REQUEST=YES``): a public bucket read with unsigned
    requests, without credentials; without it the same read is refused in one line."""
    from geoeval.io.locations import gdal_options

    assert gdal_options({}, anon=True)["AWS_NO_SIGN_REQUEST"] == "YES"
    assert gdal_options({})["AWS_NO_SIGN_REQUEST"] == "NO"  # an earlier --anon undone
    c = s3.client()
    c.create_bucket(Bucket="public", ACL="public-read")
    for name in ("ref.gpkg", "sub.parquet"):
        c.upload_file(str(data / name), "public", name, ExtraArgs={"ACL": "public-read"})
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    args = ("score", "s3://public/ref.gpkg", "s3://public/sub.parquet", "-m", "bgm", "-q",
            "--json", "-")
    refused = run_cli(*args)
    assert refused.code == 2 and len(refused.stderr.splitlines()) == 1, str(refused)
    assert refused.stderr == ("geoeval: error: s3://public/ref.gpkg: no credentials found: set "
                              "AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
                              "the store's own variables), or use --anon for a public "
                              "bucket\n")
    for extra, env in ((["--anon"], None), ([], "YES")):
        if env is not None:
            monkeypatch.setenv("AWS_NO_SIGN_REQUEST", env)
        run = run_cli(*args, *extra)
        assert run.code == 0, str(run)
        assert json.loads(run.stdout)["submission"]["objects"] == 280


def test_unreachable_endpoint_in_one_line(s3, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # no retries: the test is about the line
    for ext in ("tif", "gpkg", "parquet"):
        run = run_cli("score", f"s3://inputs/ref.{ext}", f"s3://inputs/sub.{ext}", "-q")
        assert run.code == 2 and len(run.stderr.splitlines()) == 1
        assert run.stderr.startswith(f"geoeval: error: s3://inputs/ref.{ext}: cannot reach "
                                     "the server")
        assert SECRET not in run.stderr


def test_web_without_ranges_in_one_line(data, tmp_path):
    """A server that ignores Range (Python's http.server): a GeoParquet file cannot be
    read by parts, said in one line."""
    import subprocess
    import sys
    import urllib.request

    from tests.stores import _free_port, _stop, _wait_until

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "-b",
                             "127.0.0.1", "-d", str(data)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until(lambda: urllib.request.urlopen(url + "/ref.tif", timeout=2), proc,
                    "http.server")
        run = run_cli("score", f"{url}/ref.parquet", f"{url}/sub.parquet", "-q")
        assert run.code == 2, str(run)
        assert run.stderr == (f"geoeval: error: {url}/ref.parquet: the server does not "
                              "answer range requests (HTTP Range), which reading part of a "
                              "file needs; download the file first\n")
    finally:
        _stop(proc)


@pytest.mark.parametrize("name", ["ref.tif", "ref.gpkg", "ref.parquet"])
def test_a_truncated_object_in_one_line(data, s3, tmp_path, name):
    """An object cut short (an upload interrupted): one line naming the URL, exit 2,
    nothing written."""
    whole = (data / name).read_bytes()
    cut = tmp_path / name
    cut.write_bytes(whole[:len(whole) * 2 // 3])
    s3.upload("inputs", {f"cut/{name}": cut})
    out = tmp_path / "r.json"
    run = run_cli("score", f"s3://inputs/cut/{name}", f"s3://inputs/{name}", "-q", "-m", "bgm",
                  "--json", out)
    assert run.code == 2, str(run)
    assert run.stderr.startswith(f"geoeval: error: s3://inputs/cut/{name}: ")
    assert len(run.stderr.splitlines()) == 1 and not out.exists()
    assert SECRET not in run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["raster", "dataset"])
def test_worker_processes_read_urls(data, s3, tmp_path, kind):
    """A cluster of worker processes (``--engine dask -j 2``, the console script): each
    worker reads its blocks or pieces from the URL with its own environment (GDAL told
    the store's endpoint there), and the report is the local engine's."""
    import subprocess
    import sys

    names = PAIRS[kind]
    out = {}
    for engine in ("local", "dask"):
        out[engine] = tmp_path / f"{engine}.json"
        run = subprocess.run(
            [sys.executable, "-m", "geoeval.cli", "score", *(f"s3://inputs/{n}" for n in names),
             *FAST, "-q", "--json", out[engine], "--engine", engine, "-j", "2"],
            capture_output=True, text=True, timeout=240,
            env={**os.environ, "PYTHONPATH": str(SAMPLE.parent)}, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert SECRET not in run.stdout + run.stderr
    assert out["dask"].read_bytes() == out["local"].read_bytes()


@pytest.fixture(scope="module")
def sorted_layers(tmp_path_factory) -> Path:
    """Two GeoParquet layers in rows of a grid, row groups of 200 rows (strips), with
    the GeoParquet 1.1 bbox covering column: a region meets a few row groups."""
    import geopandas as gpd

    d = tmp_path_factory.mktemp("sorted")
    gx, gy = np.meshgrid(np.arange(80), np.arange(50))
    cx, cy = gx.ravel() * 25.0, gy.ravel() * 25.0
    for name, dx in (("ref", 0.0), ("sub", 1.5)):
        gpd.GeoDataFrame({"oid": np.arange(cx.size)},
                         geometry=shapely.box(cx - 5 + dx, cy - 5, cx + 5 + dx, cy + 5),
                         crs="EPSG:32631").to_parquet(d / f"{name}.parquet",
                                                      write_covering_bbox=True,
                                                      row_group_size=200)
    return d


def _needed(path: Path, box: tuple[float, ...]) -> int:
    """The compressed bytes of the row groups whose bbox statistics meet ``box``, and
    what Arrow fetches of the footer (at least its last 64 KiB)."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    total = 0
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        stats = {rg.column(i).path_in_schema: rg.column(i).statistics
                 for i in range(rg.num_columns)}
        if (stats["bbox.xmin"].min <= box[2] and stats["bbox.xmax"].max >= box[0]
                and stats["bbox.ymin"].min <= box[3] and stats["bbox.ymax"].max >= box[1]):
            total += sum(rg.column(i).total_compressed_size for i in range(rg.num_columns))
    return total + max(64 * 1024, meta.serialized_size + 8)


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_a_region_of_web_urls_fetches_only_its_row_groups(sorted_layers, inline_dask,
                                                          engine):
    """``--bbox`` on GeoParquet URLs: the report of the region from the local files, and
    from the server only the row groups that meet the region and each footer, once
    (issue 41: ≤ 1.2× those bytes)."""
    box = (400.0, 300.0, 700.0, 500.0)
    bbox = ",".join(str(v) for v in box)
    local = tuple(str(sorted_layers / f"{n}.parquet") for n in ("ref", "sub"))
    want, _ = _report(*local, "--bbox", bbox, engine=engine)
    with web_server(sorted_layers) as server:
        server.reset()
        got, _ = _report(*(f"{server.url}/{n}.parquet" for n in ("ref", "sub")),
                         "--bbox", bbox, engine=engine)
        sent = server.bytes_sent()
    assert _names_apart(got) == _names_apart(want)
    assert got["reference"]["objects"] < 300  # the region's, not the layer's 4,000
    needed = sum(_needed(sorted_layers / f"{n}.parquet", box) for n in ("ref", "sub"))
    whole = sum((sorted_layers / f"{n}.parquet").stat().st_size for n in ("ref", "sub"))
    assert sent <= 1.2 * needed < whole
