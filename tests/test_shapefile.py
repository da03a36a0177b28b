"""Shapefiles: a missing .prj needs --crs; .cpg encodings are honoured."""

from __future__ import annotations

import shutil
from pathlib import Path

import geopandas as gpd
import pyogrio
import pytest
from shapely import box

import geoeval
from geoeval.cli.main import main
from geoeval.errors import InputError
from geoeval.io import read

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def copy_shp(src: Path, dest: Path, *, prj: bool = True) -> Path:
    for ext in (".shp", ".shx", ".dbf", ".cpg") + ((".prj",) if prj else ()):
        shutil.copy(src.with_suffix(ext), dest / (src.stem + ext))
    return dest / src.name


def test_missing_prj_is_an_error_unless_crs_given(tmp_path, capsys):
    shp = copy_shp(SAMPLE / "submissions" / "s5_merged.shp", tmp_path, prj=False)
    with pytest.raises(InputError, match=r"without \.prj.*with crs="):
        read(shp)
    objs = read(shp, crs="EPSG:32651")
    assert objs.crs.to_epsg() == 32651
    with pytest.raises(InputError, match="is not a CRS"):
        read(shp, crs="EPSG:nonsense")
    ref = SAMPLE / "reference.tif"
    assert main(["score", str(ref), str(shp), "-m", "bgm", "-q"]) == 2
    assert "s5_merged.shp: Shapefile without .prj" in capsys.readouterr().err
    # with --crs the result is the one of the original (with .prj)
    with_crs = geoeval.score(ref, shp, matchers=["bgm"], crs="EPSG:32651")
    original = geoeval.score(ref, SAMPLE / "submissions" / "s5_merged.shp", matchers=["bgm"])
    assert with_crs.results["bgm"].f1 == original.results["bgm"].f1
    assert main(["score", str(ref), str(shp), "-m", "bgm", "--crs", "EPSG:32651", "-q"]) == 0


@pytest.mark.parametrize("codepage, cpg", [("cp1251", "1251"), ("utf-8", "UTF-8"),
                                           ("cp1252", "ANSI 1252")])
def test_cpg_encoding_is_honoured(tmp_path, codepage, cpg):
    names = {"cp1251": ["дом", "сарай"], "utf-8": ["maison", "cabane ü€"],
             "cp1252": ["bâtiment", "hangar €"]}[codepage]
    frame = gpd.GeoDataFrame({"id": [1, 2], "class": names},
                             geometry=[box(0, 0, 1, 1), box(2, 2, 3, 3)], crs="EPSG:32651")
    path = tmp_path / "classes.shp"
    pyogrio.write_dataframe(frame, path, encoding=codepage)
    path.with_suffix(".cpg").write_text(cpg)  # as ArcGIS writes it
    raw = path.with_suffix(".dbf").read_bytes()
    assert names[0].encode(codepage) in raw  # stored in that code page
    objs = read(path, id_field="id", class_field="class")
    assert objs.classes.tolist() == names


def _three_squares(tmp_path: Path) -> Path:
    frame = gpd.GeoDataFrame({"id": [1, 2, 3]}, crs="EPSG:32651",
                             geometry=[box(0, 0, 1, 1), box(2, 0, 3, 1), box(4, 0, 5, 1)])
    path = tmp_path / "three.shp"
    pyogrio.write_dataframe(frame, path)
    return path


def test_every_truncation_of_the_shp_is_refused(tmp_path):
    # GDAL reads a record cut short as a feature without geometry, silently; each of the
    # 3 records is 8 + 128 bytes, so every cut from the header's end on loses part of one
    path = _three_squares(tmp_path)
    full = path.read_bytes()
    assert len(full) == 100 + 3 * 136
    assert len(read(path)) == 3
    for keep in range(0, len(full), 7):
        path.write_bytes(full[:keep])
        with pytest.raises(InputError) as err:
            read(path)
        lost = 0 if keep < 100 else 3 - (keep - 100) // 136
        expected = ("empty file" if keep == 0 else "not a Shapefile" if keep < 100
                    else f"{lost} of 3 record(s) run past")
        assert expected in str(err.value), (keep, str(err.value))


def test_shx_and_dbf_must_agree_and_be_whole(tmp_path):
    path = _three_squares(tmp_path)
    shx, dbf = path.with_suffix(".shx"), path.with_suffix(".dbf")
    shx_bytes, dbf_bytes = shx.read_bytes(), dbf.read_bytes()
    shx.write_bytes(shx_bytes[:100 + 2 * 8])  # an index cut after 2 of its 3 shapes
    with pytest.raises(InputError, match="its index three.shx is cut short"):
        read(path)
    # a whole index of 2 shapes (its header says so), a table of 3 records
    two = bytearray(shx_bytes[:100 + 2 * 8])
    two[24:28] = ((100 + 2 * 8) // 2).to_bytes(4, "big")
    shx.write_bytes(bytes(two))
    with pytest.raises(InputError, match="2 shapes in three.shx but 3 records in three.dbf"):
        read(path)
    shx.write_bytes(shx_bytes)
    dbf.write_bytes(dbf_bytes[:-3])
    with pytest.raises(InputError, match="three.dbf is .* bytes, its header says"):
        read(path)
    dbf.unlink()
    with pytest.raises(InputError, match=r"without \.dbf"):
        read(path)
