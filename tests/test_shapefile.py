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
    with pytest.raises(InputError, match=r"without \.prj.*--crs"):
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
