"""The terminal report of a partitioned Dask run: the same per-class, breakdown, strata
and bootstrap tables as the local engine's, built from the summaries
(:mod:`geoeval.report.summaries`, :mod:`geoeval.report.summary_tables`).

Fast: the summaries of a local result are its JSON report's objects, and the tables
built from a report's objects are those built from the result. Slow (a
``distributed.LocalCluster`` of two worker processes): ``geoeval score --engine dask
--size-bins coco --breakdown --bootstrap`` prints the local engine's tables.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import shapely
from dask_cluster import local_cluster

CRS = "EPSG:32631"


def _text(tables) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=160, color_system=None, force_terminal=False)
    for t in tables:
        console.print(t)
    return buf.getvalue()


def _scene(seed: int = 3, n: int = 144):
    rng = np.random.default_rng(seed)
    side = int(np.sqrt(n))
    gx, gy = np.meshgrid(np.arange(side), np.arange(side))
    cx, cy = gx.ravel() * 50.0, gy.ravel() * 50.0
    w = np.exp(rng.uniform(np.log(3), np.log(45), cx.size))  # small to large (COCO bins)
    ref = shapely.box(cx - w / 2, cy - w / 2, cx + w / 2, cy + w / 2)
    d = rng.normal(0, 1.0, (cx.size, 2))
    sub = shapely.box(cx - w / 2 + d[:, 0], cy - w / 2 + d[:, 1], cx + w / 2 + d[:, 0],
                      cy + w / 2 + d[:, 1])
    keep = rng.random(cx.size) > 0.15
    halves = shapely.box(cx - w / 2, cy - w / 2, cx, cy + w / 2)[::9]  # splits
    return ref, np.concatenate([sub[keep], halves])


def test_summaries_are_the_reports_objects():
    """Per class, strata, breakdown (with class confusion) and bootstrap: the summaries
    of a local result are its JSON report's objects, and every table is the same whether
    it is built from the result's summaries or from the report read back from JSON."""
    from geoeval.objects import ObjectSet
    from geoeval.report.summaries import summaries
    from geoeval.report.summary_tables import summary_tables, tables_of
    from geoeval.scoring import score_objects

    ref, sub = _scene()
    rng = np.random.default_rng(0)
    r = ObjectSet.from_geometries(ref, np.arange(ref.size), crs=CRS,
                                  classes=list(rng.choice(["a", "b"], ref.size)))
    s = ObjectSet.from_geometries(sub, np.arange(sub.size), crs=CRS,
                                  classes=list(rng.choice(["a", "b"], sub.size)))
    res = score_objects(r, s, matchers=["bgm", "iou"], per_class=True, size_bins=[30.0, 80.0],
                        breakdown=True, bootstrap=20, seed=1)
    summ = summaries(res)
    report = json.loads(res.to_json())
    for key in ("per_class", "strata", "breakdown", "bootstrap"):
        assert summ[key] is not None
        assert json.loads(json.dumps(summ[key])) == report[key], key
    assert summ["objects"] == (report["reference"]["objects"], report["submission"]["objects"])
    tables = summary_tables(res)
    titles = [t.title for t in tables]
    assert titles[0] == "per class" and "strata" in titles
    assert any("class confusion" in str(t) for t in titles)
    assert titles[-1].endswith("spatial block bootstrap")

    read_back = {"results": report["results"], "objects": summ["objects"],
                 **{k: report[k] for k in ("per_class", "strata", "breakdown", "bootstrap")}}
    again = tables_of(read_back)
    assert _text(again) == _text(tables)


def _tables_part(stdout: str) -> str:
    """The local output from its breakdown table's title to before the hints."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "what fixing each error type" in line)
    end = next(i for i, line in enumerate(lines) if line.startswith("Try next"))
    return "\n".join(lines[start:end]).rstrip()


@pytest.mark.slow
def test_dask_score_prints_the_local_tables(tmp_path, monkeypatch, capsys):
    """``geoeval score --engine dask --size-bins coco --breakdown --bootstrap 30`` on a
    partitioned GeoParquet dataset prints the local engine's breakdown, strata and
    bootstrap tables, character for character (and its JSON has the same summaries)."""

    import geopandas as gpd

    from geoeval.cli.main import main
    from geoeval.engine import layers

    ref, sub = _scene(7, n=400)
    folder = tmp_path / "ref_dataset"
    folder.mkdir()
    for i, chunk in enumerate(np.array_split(ref, 4)):
        gpd.GeoDataFrame({"bid": np.arange(len(chunk)) + 1000 * i}, geometry=chunk,
                         crs=CRS).to_parquet(folder / f"part{i}.parquet", row_group_size=40)
    gpkg = tmp_path / "sub.gpkg"
    gpd.GeoDataFrame(geometry=sub, crs=CRS).to_file(gpkg)
    args = [str(folder), str(gpkg), "-m", "bgm", "-m", "iou", "--size-bins", "coco",
            "--breakdown", "--bootstrap", "30", "--seed", "2"]
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 25)

    def run(*extra: str) -> str:
        capsys.readouterr()
        assert main(["score", *args, *extra]) == 0
        return capsys.readouterr().out

    local = run("--json", str(tmp_path / "local.json"))
    with local_cluster() as c:
        dask = run("--engine", "dask", "--scheduler", c.scheduler_address,
                   "--json", str(tmp_path / "dask.json"))
    want = _tables_part(local)
    assert "strata" in want and "spatial block bootstrap" in want
    assert "bgm: what fixing each error type" in dask
    assert want in dask, f"local:\n{want}\n\ndask:\n{dask}"
    # the same report, byte for byte
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()


@pytest.mark.slow
def test_dask_score_prints_the_local_per_class_table(tmp_path, monkeypatch, capsys):
    """``geoeval score --engine dask --class-field cls`` (the submission without the
    field: classes from the reference) prints the local engine's per-class table,
    character for character."""

    import geopandas as gpd

    from geoeval.cli.main import main
    from geoeval.engine import layers

    ref, sub = _scene(5, n=400)
    rng = np.random.default_rng(5)
    rpath, spath = tmp_path / "ref.parquet", tmp_path / "sub.gpkg"
    gpd.GeoDataFrame({"cls": rng.choice(["house", "shed"], ref.size)}, geometry=ref,
                     crs=CRS).to_parquet(rpath, row_group_size=50)
    gpd.GeoDataFrame(geometry=sub, crs=CRS).to_file(spath)
    args = ["score", str(rpath), str(spath), "-m", "bgm", "-m", "iou", "--class-field", "cls"]
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 25)

    def run(*extra: str) -> str:
        capsys.readouterr()
        assert main([*args, *extra]) == 0
        return capsys.readouterr().out

    local = run()
    with local_cluster() as c:
        dask = run("--engine", "dask", "--scheduler", c.scheduler_address)
    lines = local.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "per class")
    end = next(i for i, line in enumerate(lines) if "without a class" in line)
    want = "\n".join(lines[start:end + 1])
    assert "house" in want and "shed" in want and "(all)" in want
    assert want in dask, f"local:\n{want}\n\ndask:\n{dask}"
    assert dask == local  # one report, one terminal output, whatever the engine


@pytest.mark.slow
@pytest.mark.parametrize("pair", [
    ("reference.tif", "s4_fragmented.tif", []),  # two label rasters: by blocks
    ("reference.gpkg", "s7_dilated.gpkg", ["--id-field", "id"]),  # two layers: by partitions
])
def test_the_sample_gives_one_report_whatever_the_engine(tmp_path, monkeypatch, capsys, pair):
    """The bundled sample scored by both engines: the JSON reports are byte for byte
    the same (issue 33: the Dask report used to lack the per-object lists and differ in
    the 15th digit), and so is the terminal table (issue 35: the Dask one had no
    matched rows, no summary sentences, ``3,000`` for ``3000`` and ``1 partitions``)."""
    from pathlib import Path

    from geoeval.cli.main import main
    from geoeval.engine import layers

    sample = Path(__file__).resolve().parents[1] / "sample_data"
    ref, sub, extra = pair
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 700)  # the layers cut in ~9
    args = ["score", str(sample / ref), str(sample / "submissions" / sub), "-m", "bgm",
            "-m", "hoover", "-m", "iou", *extra]
    monkeypatch.setenv("COLUMNS", "80")
    capsys.readouterr()
    assert main([*args, "--json", str(tmp_path / "local.json")]) == 0
    local = capsys.readouterr().out
    with local_cluster() as c:
        assert main([*args, "--engine", "dask", "--scheduler", c.scheduler_address,
                     "--json", str(tmp_path / "dask.json")]) == 0
    dask = capsys.readouterr().out
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    assert "matched reference" in local and "partitions" not in dask
    assert dask == local


@pytest.mark.slow
def test_input_crss_named_and_one_report_whatever_the_engine(tmp_path, monkeypatch):
    """Issue 35 item 7 on both engines. A geographic reference (EPSG:4326) against a Web
    Mercator submission (EPSG:3857): the Dask engine reads them in the client and both
    evaluate in the local equal-area projection; two GeoParquet layers in a CRS with no
    authority code (a transverse Mercator from a PROJ string) go by partitions. Each
    report names each input's own CRS and the evaluation CRS once, byte for byte the
    same from both engines."""
    from pathlib import Path

    import geopandas as gpd
    from pyproj import CRS

    import geoeval
    from geoeval.cli.main import main
    from geoeval.engine import layers
    from geoeval.scoring import ScoreResult

    sample = Path(__file__).resolve().parents[1] / "sample_data"
    ref = gpd.read_file(sample / "reference.gpkg", layer="buildings")
    sub = gpd.read_file(sample / "submissions" / "s7_dilated.gpkg")
    x0, y0, x1, y1 = ref.total_bounds
    window = (slice(x0, (x0 + x1) / 2), slice(y0, (y0 + y1) / 2))  # a quarter of the scene
    ref, sub = ref.cx[window], sub.cx[window]
    ref.to_crs(4326).to_file(tmp_path / "ref_4326.gpkg")
    sub.to_crs(3857).to_file(tmp_path / "sub_3857.gpkg")
    tm = "+proj=tmerc +lat_0=13 +lon_0=123.6 +k=1 +x_0=50000 +y_0=0 +datum=WGS84 +units=m"
    ref.to_crs(tm).to_parquet(tmp_path / "ref_tm.parquet")
    sub.to_crs(tm).to_parquet(tmp_path / "sub_tm.parquet")
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 200)
    args = ["score", str(tmp_path / "ref_4326.gpkg"), str(tmp_path / "sub_3857.gpkg"),
            "-m", "bgm", "-m", "iou", "--id-field", "id", "-q"]
    assert main([*args, "--json", str(tmp_path / "local.json")]) == 0
    options = dict(matchers=["bgm", "hoover"], id_field="id")
    local_tm = geoeval.score(tmp_path / "ref_tm.parquet", tmp_path / "sub_tm.parquet",
                             **options)
    with local_cluster() as c:
        assert main([*args, "--engine", "dask", "--scheduler", c.scheduler_address,
                     "--json", str(tmp_path / "dask.json")]) == 0
        dask_tm = geoeval.score(tmp_path / "ref_tm.parquet", tmp_path / "sub_tm.parquet",
                                engine="dask", scheduler=c.scheduler_address, **options)
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    report = json.loads((tmp_path / "local.json").read_text())
    assert (report["reference"]["crs"], report["submission"]["crs"]) == ("EPSG:4326",
                                                                         "EPSG:3857")
    ev = report["parameters"]["evaluation_crs"]
    assert ev["crs"].startswith("geoeval local equal-area") and ev["wkt"].startswith("PROJCRS")
    # by partitions: the PROJ string names the CRS (its name is "unknown"), the WKT
    # defines it once
    assert isinstance(dask_tm, ScoreResult) and not dask_tm.objects_held
    assert dask_tm.partitions["partitions"] > 1
    assert dask_tm.to_json() == local_tm.to_json()
    d = local_tm.to_dict()
    ev = d["parameters"]["evaluation_crs"]
    assert d["reference"]["crs"] == d["submission"]["crs"] == ev["crs"]
    assert ev["crs"].startswith("+proj=tmerc") and CRS.from_wkt(ev["wkt"]) == CRS(tm)
