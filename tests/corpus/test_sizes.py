"""Error corpus, names and sizes: output names a library would misread or whose
temporary name would pass 255 bytes, coordinates that are not numbers, and messages
that must stay a few readable lines whatever the input holds.

Each case was reproduced by hand on the previous main: ``--gpkg 'g;x.gpkg'`` a
``sqlite3.OperationalError`` traceback; a legal 250-byte output name "File name too
long"; a NaN or infinite coordinate a ``GEOSException`` traceback from ``make_valid``;
a 52 MB number in a VOC file repeated whole on stderr (a class name of megabytes
in a warning too, and 50 s and gigabytes of fixed-width strings: now an error); a
truncated sparse GeoTIFF
1 004 lines (84 KB) of GDAL's own complaints before the right last line.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin
from rasterio.windows import Window
from shapely import Polygon, box

from tests.corpus.conftest import SCRIPT, assert_error, assert_ok, run_cli

CRS = "EPSG:32631"
SQUARES = [box(500000, 0, 500010, 10), box(500020, 0, 500030, 10)]
SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture()
def ref(tmp_path: Path) -> Path:
    gpd.GeoDataFrame({"n": [0, 1]}, geometry=SQUARES, crs=CRS).to_file(tmp_path / "ref.gpkg")
    return tmp_path / "ref.gpkg"


def test_output_names_libraries_misread_or_near_the_length_limit(tmp_path, ref):
    """``g;x.gpkg`` (pyogrio cut its temporary name at the ``;``) and 250-byte names (the
    longest a file system allows is 255 bytes; the temporary names built from them
    were longer): written, and nothing else left beside them."""
    out = tmp_path / "out"
    out.mkdir()
    long = "a" * 245
    targets = {"--gpkg": out / "g;x.gpkg", "--json": out / f"{long}.json",
               "--csv-dir": out / long}
    run = run_cli("score", ref, ref, "-m", "bgm", "-q",
                  *[a for flag, path in targets.items() for a in (flag, path)], inputs=[ref])
    assert_ok(run)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in targets.values())
    assert json.loads(targets["--json"].read_text())["results"]["bgm"]["f1"] == 1.0
    from geoeval.io.vector import list_layers

    assert "reference" in list_layers(targets["--gpkg"])


def _layer(path: Path, bad: float) -> Path:
    geoms = [SQUARES[0], Polygon([(500020, 0), (bad, 0), (500030, 10), (500020, 10)])]
    frame = gpd.GeoDataFrame({"n": [0, 1]}, geometry=geoms, crs=CRS)
    if path.suffix == ".parquet":
        frame.to_parquet(path)
    else:
        with warnings.catch_warnings():  # the writer's own complaint about infinities
            warnings.simplefilter("ignore")
            frame.to_file(path)
    return path


@pytest.mark.parametrize("engine", ["local", pytest.param("dask", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name,bad,feature", [("nan.gpkg", np.nan, "feature 2"),
                                              ("inf.parquet", np.inf, "feature 1")])
def test_coordinates_that_are_not_numbers(tmp_path, ref, engine, name, bad, feature):
    """The file and the feature named (a GeoPackage's feature id, a GeoParquet row)."""
    sub = _layer(tmp_path / name, bad)
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, "--engine", engine,
                  inputs=[ref, sub])
    assert_error(run, name, feature, "not a finite number", absent=[out], max_lines=1)
    assert "GEOSException" not in run.stderr


def test_a_huge_number_in_a_box_file_is_not_repeated_whole(tmp_path):
    gt, det = tmp_path / "gt", tmp_path / "det"
    shutil.copytree(SAMPLE / "boxes" / "voc" / "gt", gt)
    shutil.copytree(SAMPLE / "boxes" / "voc" / "det", det)
    (det / "img001.txt").write_text("truck 0.832 106 405 206 4x" + "9" * 5_000_000 + "\n")
    run = run_cli("boxes", "voc", gt, det, "-q", inputs=[gt, det])
    assert_error(run, "img001.txt", "not a number", "characters", max_lines=1)
    assert len(run.stderr) < 1000


@pytest.mark.slow  # a VOC evaluation, 1.3 s (the printer's rule: test_cli_options)
def test_a_long_class_name_in_a_warning_is_cut(tmp_path):
    """A warning quotes the file's text too (a class the ground truth lacks): one line
    of a readable length, the file named (it was printed whole: 3 MB for a 3 MB name)."""
    gt, det = tmp_path / "gt", tmp_path / "det"
    shutil.copytree(SAMPLE / "boxes" / "voc" / "gt", gt)
    shutil.copytree(SAMPLE / "boxes" / "voc" / "det", det)
    with (det / "img001.txt").open("a") as f:
        f.write("x" * 1000 + " 0.5 106 405 206 445\n")
    run = run_cli("boxes", "voc", gt, det, "-q", inputs=[gt, det])
    assert_ok(run)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: {det}"), str(run)
    assert "absent from the ground truth" in lines[0] and "characters" in lines[0]
    assert len(run.stderr) < 1000


def _long_name(kind: str, root: Path, name: str) -> tuple[str, list[Path], str]:
    """A copy of a bundled box sample with one class name replaced by ``name``: the
    command's protocol, its inputs, and where the error must point."""
    if kind == "voc":
        gt, det = root / "gt", root / "det"
        shutil.copytree(SAMPLE / "boxes" / "voc" / "gt", gt)
        shutil.copytree(SAMPLE / "boxes" / "voc" / "det", det)
        lines = (det / "img001.txt").read_text().splitlines()
        lines[0] = " ".join([name, *lines[0].split()[1:]])
        (det / "img001.txt").write_text("\n".join(lines) + "\n")
        return "voc", [gt, det], "img001.txt:1"
    if kind == "voc_xml":
        gt, det = root / "gt", root / "det"
        shutil.copytree(SAMPLE / "boxes" / "voc_xml" / "gt", gt)
        shutil.copytree(SAMPLE / "boxes" / "voc" / "det", det)
        xml = (gt / "img002.xml").read_text()
        first = xml.index("<name>") + len("<name>")
        (gt / "img002.xml").write_text(xml[:first] + name + xml[xml.index("</name>", first):])
        return "voc", [gt, det], "img002.xml:"
    if kind == "coco":
        gt = root / "instances.json"
        data = json.loads((SAMPLE / "boxes" / "coco" / "instances.json").read_text())
        data["categories"][1]["name"] = name
        gt.write_text(json.dumps(data))
        det = root / "results.json"
        shutil.copy(SAMPLE / "boxes" / "coco" / "results.json", det)
        return "coco", [gt, det], "categories[1]"
    gt, det = root / "labelTxt", root / "det"
    shutil.copytree(SAMPLE / "boxes" / "dota" / "labelTxt", gt)
    shutil.copytree(SAMPLE / "boxes" / "dota" / "det", det)
    lines = (gt / "P0002.txt").read_text().splitlines()
    lines[3] = " ".join([*lines[3].split()[:8], name, "0"])
    (gt / "P0002.txt").write_text("\n".join(lines) + "\n")
    return "dota", [gt, det], "P0002.txt:4"


@pytest.mark.parametrize("kind", ["voc", "voc_xml", "coco", "dota"])
def test_a_huge_class_name_is_an_error_naming_file_and_line(tmp_path, kind):
    """A class name of 3 MB (a broken file): one line naming the file and its line (or
    COCO category), at once. It cost about 50 s and gigabytes before: numpy's
    fixed-width strings gave every box the name's width."""
    protocol, inputs, where = _long_name(kind, tmp_path, "x" * 3_000_000)
    run = run_cli("boxes", protocol, *inputs, "-q", inputs=inputs)
    assert_error(run, where, "class name of 3,000,000 characters", max_lines=1)
    assert len(run.stderr) < 1000


def _sparse(path: Path, rows: int) -> Path:
    """40 960² BigTIFF, 256² tiles, 50 objects on row ``rows``: the tile index is most of
    the file."""
    n = 40960
    with rasterio.open(path, "w", driver="GTiff", width=n, height=n, count=1, dtype="uint32",
                       crs=CRS, transform=from_origin(500000, n, 1, 1), tiled=True,
                       blockxsize=256, blockysize=256, compress="deflate", sparse_ok=True,
                       bigtiff="YES") as dst:
        for k in range(50):
            dst.write(np.full((20, 20), k + 1, np.uint32), 1,
                      window=Window(800 * k, rows, 20, 20))
    return path


@pytest.mark.slow  # the console script (GDAL prints to the process's stderr), 3 s
def test_a_truncated_sparse_geotiff_is_one_line(tmp_path):
    """Cut in the middle of its tile index: GDAL printed a line for each tile it could
    not look up (its limit: a thousand) before our line. Through the console script:
    GDAL writes to the process's stderr itself."""
    ref = _sparse(tmp_path / "ref.tif", 40860)
    cut = _sparse(tmp_path / "cut.tif", 40860)
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    out = tmp_path / "out.json"
    run = run_cli("score", ref, cut, "-m", "bgm", "-q", "--json", out, inputs=[ref, cut],
                  script=True)
    assert_error(run, "cut.tif", "cannot read band 1", "truncated", absent=[out],
                 max_lines=1)
    assert len(run.stderr) < 600


@pytest.mark.skipif(SCRIPT, reason="the limit is lowered in this process; the console "
                                    "script runs in another (the in-process run checks it)")
def test_json_past_the_list_limit_runs_and_says_what_it_left_out(tmp_path, ref,
                                                                  monkeypatch):
    """``--json`` never refuses for size (it used to past 5,000,000 objects): past the
    report's limit (:data:`geoeval.matching.lists.LIST_LIMIT`, here 3 objects) the run
    writes the report, each matcher's ``not_listed`` says how many objects it leaves out
    and how to have them, and a note says so; with ``--objects`` the report names the
    dataset instead, without the note."""
    from geoeval.matching import lists

    monkeypatch.setattr(lists, "LIST_LIMIT", 3)
    report = tmp_path / "r.json"
    run = run_cli("score", ref, ref, "-m", "bgm", "--json", report, inputs=[ref])
    assert_ok(run)
    assert "note: the report lists no object one by one (4 objects, more than 3): " \
           "write every object's result with --objects DIR" in run.stderr
    bgm = json.loads(report.read_text())["results"]["bgm"]
    assert bgm["objects_dataset"] is None and "instances" not in bgm
    assert {k: bgm["not_listed"][k] for k in ("objects", "limit")} == \
        {"objects": 4, "limit": 3}
    run = run_cli("score", ref, ref, "-m", "bgm", "--json", tmp_path / "o.json",
                  "--objects", tmp_path / "objects", inputs=[ref])
    assert_ok(run)
    assert "note: the report lists" not in run.stderr
    bgm = json.loads((tmp_path / "o.json").read_text())["results"]["bgm"]
    assert bgm["objects_dataset"] == str(tmp_path / "objects")
    assert bgm["not_listed"]["objects"] == 4
