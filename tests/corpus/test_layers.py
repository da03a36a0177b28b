"""Error corpus, layers of several files and names that are not plain: a GeoParquet
dataset folder, a quoted pattern of tiles, Shapefile tiles, GDAL driver prefixes and
characters in file names, as a user's real folders hold them.

The reference is ``ref.gpkg``: three 2 × 2 squares in EPSG:32631, A (id 0), B (id 1),
C (id 2), 2 m apart. Every refused case must name the file at fault in one line and
write nothing; each of them gave a number before (a missed object and a false alarm
that are the same building, two objects scored instead of three, another file's
objects). The Dask engine reads the same layers in pieces: its cases are slow (a
cluster each), and must give the same line.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin
from shapely import box

from tests.corpus.conftest import assert_error, assert_ok, run_cli

CRS = "EPSG:32631"
X0 = 500000.0
SQUARES = [box(X0 + 4 * k, 0, X0 + 4 * k + 2, 2) for k in range(3)]
ENGINES = ["local", pytest.param("dask", marks=pytest.mark.slow)]


def frame(rows: slice = slice(None), crs: str = CRS) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"n": np.arange(3)[rows]}, geometry=SQUARES[rows],
                            crs=CRS).to_crs(crs)


@pytest.fixture()
def ref(tmp_path: Path) -> Path:
    frame().to_file(tmp_path / "ref.gpkg")
    return tmp_path / "ref.gpkg"


def score(ref: Path, sub: Path | str, engine: str, *extra: str, inputs=()):
    out = ref.parent / "out.json"
    run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, "--engine", engine,
                  *extra, inputs=[ref, *inputs])
    return run, out


def counts(out: Path) -> tuple[int, int, int]:
    d = json.loads(out.read_text())
    r = d["results"]["bgm"]
    return d["submission"]["objects"], r["missed"], r["false_alarms"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dataset_folder_in_two_crss(tmp_path, ref, engine):
    """part0 in UTM, part1 (the same C) in WGS 84: scored before as if part1 were in
    UTM (C missed, C a false alarm)."""
    ds = tmp_path / "ds"
    ds.mkdir()
    frame(slice(0, 2)).to_parquet(ds / "part0.parquet")
    frame(slice(2, 3), "EPSG:4326").to_parquet(ds / "part1.parquet")
    run, out = score(ref, ds, engine, inputs=[ds])
    assert_error(run, "ds/part1.parquet", "EPSG:4326", "EPSG:32631", "part0.parquet",
                 "another CRS", absent=[out], max_lines=1)


def _tiles(tmp_path: Path, suffix: str = ".gpkg") -> Path:
    tiles = tmp_path / "tiles"
    tiles.mkdir()
    for k in range(2):
        frame(slice(k, k + 1)).to_file(tiles / f"t{k}{suffix}")
    return tiles


@pytest.mark.parametrize("engine", ENGINES)
def test_a_broken_link_among_the_tiles(tmp_path, ref, engine):
    """t2.gpkg links to a file that is gone: dropped before (two objects scored)."""
    tiles = _tiles(tmp_path)
    os.symlink(tmp_path / "gone" / "t2.gpkg", tiles / "t2.gpkg")
    run, out = score(ref, tiles / "*.gpkg", engine, inputs=[tiles])
    assert_error(run, "tiles/t2.gpkg", "broken symbolic link", "gone/t2.gpkg",
                 absent=[out], max_lines=1)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_folder_the_pattern_matches(tmp_path, ref, engine):
    """A folder named like a tile (C inside it): dropped before; now an error naming it.
    A folder that is one layer (a GeoParquet dataset) is a tile."""
    tiles = _tiles(tmp_path)
    (tiles / "t2.gpkg").mkdir()
    frame(slice(2, 3)).to_file(tiles / "t2.gpkg" / "inner.gpkg")
    run, out = score(ref, tiles / "*.gpkg", engine, inputs=[tiles])
    assert_error(run, "tiles/t2.gpkg", "is a folder", "narrow the pattern", absent=[out],
                 max_lines=1)
    if engine == "local":  # a dataset folder among the tiles: read as one tile
        shutil.rmtree(tiles / "t2.gpkg")
        (tiles / "t2.parquet").mkdir()
        frame(slice(2, 3)).to_parquet(tiles / "t2.parquet" / "part0.parquet")
        run, out = score(ref, tiles / "t*", engine, inputs=[tiles])
        assert_ok(run)
        assert counts(out) == (3, 0, 0)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("lacking", ["t0", "t1"])
def test_a_shapefile_tile_without_prj(tmp_path, ref, engine, lacking):
    """One Shapefile tile lost its .prj: an error naming it (docs/crs.md: a missing CRS
    is an error), whichever tile it is; --crs gives it one."""
    tiles = _tiles(tmp_path, ".shp")
    (tiles / f"{lacking}.prj").unlink()
    run, out = score(ref, tiles / "*.shp", engine, inputs=[tiles])
    assert_error(run, f"tiles/{lacking}.shp", f"Shapefile without .prj ({lacking}.prj is "
                 "missing)", "--crs", absent=[out], max_lines=1)
    if engine == "local":
        run, out = score(ref, tiles / "*.shp", engine, "--sub-crs", CRS, inputs=[tiles])
        assert_ok(run)
        assert counts(out) == (2, 1, 0)


def test_a_tile_without_crs_among_tiles_with_one(tmp_path, ref):
    tiles = _tiles(tmp_path)
    gpd.GeoDataFrame({"n": [2]}, geometry=SQUARES[2:]).to_file(tiles / "t2.gpkg")
    run, out = score(ref, tiles / "*.gpkg", "local", inputs=[tiles])
    assert_error(run, "tiles/t2.gpkg", "has no CRS", "t0.gpkg", "EPSG:32631", "--crs",
                 absent=[out], max_lines=1)


def _label_raster(path: Path, rows: slice, label: int) -> Path:
    arr = np.zeros((6, 6), np.uint8)
    arr[rows, :2] = label
    tmp = path.with_name("tmp.tif")
    with rasterio.open(tmp, "w", driver="GTiff", width=6, height=6, count=1, dtype="uint8",
                       crs=CRS, transform=from_origin(X0, 6, 1, 1)) as dst:
        dst.write(arr, 1)
    tmp.rename(path)  # GDAL would read the name's prefix when creating it too
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_gdal_prefix_in_a_name_is_part_of_the_name(tmp_path, engine):
    """``GTIFF_RAW:ref.tif`` and ``GTIFF_DIR:1:sub.tif`` are files of those names; GDAL
    opened ``ref.tif``/``sub.tif`` through the prefix (other objects) before."""
    _label_raster(tmp_path / "ref.tif", slice(0, 2), 1)
    _label_raster(tmp_path / "GTIFF_RAW:ref.tif", slice(3, 5), 7)
    _label_raster(tmp_path / "sub.tif", slice(3, 5), 7)
    _label_raster(tmp_path / "GTIFF_DIR:1:sub.tif", slice(0, 2), 1)
    out = tmp_path / "out.json"
    for ref, sub in (("GTIFF_RAW:ref.tif", "sub.tif"), ("ref.tif", "GTIFF_DIR:1:sub.tif")):
        run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, "--engine", engine,
                      inputs=[tmp_path / ref, tmp_path / sub], cwd=tmp_path)
        assert_ok(run)
        d = json.loads(out.read_text())
        assert d["results"]["bgm"]["matched_overlap"] == 4.0, (ref, sub)
        assert d["reference"]["path"] == ref


VECTOR_NAMES = {"semicolon shapefile": "my ref;x.shp", "semicolon GeoPackage": "a;b.gpkg",
                "newline GeoPackage": "new\nline.gpkg", "tab GeoJSON": "tab\tx.geojson",
                "exclamation FlatGeobuf": "wow!.fgb", "GPKG prefix": "GPKG:g.gpkg"}


def _renamed(tmp_path: Path, name: str) -> Path:
    """The layer saved under a plain name, then renamed (writers mangle such names too),
    with its sidecars."""
    stem, suffix = name.rsplit(".", 1)
    frame().to_file(tmp_path / f"plain.{suffix}")
    for f in tmp_path.glob("plain.*"):
        f.rename(tmp_path / (stem + f.name[len("plain"):]))
    return tmp_path / name


def _files_of(layer: Path) -> list[Path]:
    stem = layer.name.rsplit(".", 1)[0]
    return [f for f in layer.parent.iterdir() if f.name.startswith(stem + ".")]


@pytest.mark.parametrize("name", VECTOR_NAMES.values(), ids=VECTOR_NAMES.keys())
def test_characters_in_a_vector_layers_name(tmp_path, ref, name):
    """Cut at the ``;``, tab and newline dropped, ``!`` taken for an archive (pyogrio
    parses names as URLs): "no such file" before, or another file."""
    sub = _renamed(tmp_path, name)
    run, out = score(ref, sub, "local", inputs=_files_of(sub))
    assert_ok(run)
    assert counts(out) == (3, 0, 0)
    assert json.loads(out.read_text())["submission"]["path"] == str(sub)


@pytest.mark.slow  # a run with its tables, 1-3 s (the printer's rule: test_cli_options)
def test_brackets_in_names_are_printed_as_they_are(tmp_path, ref):
    """The terminal takes a name as it is, not as rich markup: ``s[x]b.geojson`` was
    printed ``sb.geojson`` in the table's title and in the warning, ``t[red]u`` as
    ``tu`` in a ranking."""
    sub = tmp_path / "s[x]b[red].geojson"
    gpd.GeoDataFrame({"n": [0, 1, 2, 3]}, geometry=[*SQUARES, None],
                     crs=CRS).to_file(sub)  # a feature without geometry: a warning
    run = run_cli("score", ref, sub, "-m", "bgm", "--json", tmp_path / "out.json",
                  inputs=[ref, sub])
    assert_ok(run)
    assert f"warning: {sub}: 1 of 4 feature(s) skipped" in run.stderr, str(run)
    assert "s[x]b[red].geojson  vs  ref.gpkg" in run.stdout, str(run)


@pytest.mark.slow
def test_characters_in_names_with_the_dask_engine(tmp_path, ref):
    sub = _renamed(tmp_path, "my ref;x.shp")
    run, out = score(ref, sub, "dask", inputs=_files_of(sub))
    assert_ok(run)
    assert counts(out) == (3, 0, 0)


@pytest.mark.slow  # 0.9 s CPU; the rules: test_paths (links, printable)
def test_names_that_are_not_utf8(tmp_path, ref):
    """Bytes of another encoding in the names (a Latin-1 ``é``, a lone 0xFF): an
    UnicodeEncodeError traceback before; now read, and named ``\\xNN`` in the reports."""
    vec = tmp_path / os.fsdecode(b"r\xe9f.gpkg")
    shutil.copy(ref, vec)
    ras = _label_raster(tmp_path / os.fsdecode(b"s\xffb.tif"), slice(0, 2), 1)
    par = tmp_path / os.fsdecode(b"p\xff.parquet")
    frame().to_parquet(tmp_path / "plain.parquet")
    (tmp_path / "plain.parquet").rename(par)
    out = tmp_path / "out.json"
    for sub, more in ((ras, ("--gpkg", tmp_path / "o.gpkg", "--html", tmp_path / "o.html")),
                      (par, ())):
        run = run_cli("score", vec, sub, "-m", "bgm", "-q", "--json", out, *more,
                      inputs=[vec, sub])
        assert_ok(run)
        d = json.loads(out.read_text())
        assert d["reference"]["path"].endswith("r\\xe9f.gpkg")
        assert d["submission"]["path"].endswith(("s\\xffb.tif", "p\\xff.parquet"))
    assert "s\\xffb" in (tmp_path / "o.html").read_text(encoding="utf-8")
    missing = tmp_path / os.fsdecode(b"gone\xff.gpkg")
    run = run_cli("score", vec, missing, "--json", out, inputs=[vec])
    assert_error(run, "gone\\xff.gpkg", "no such file", max_lines=1)
