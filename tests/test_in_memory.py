"""Data already in memory: GeoDataFrame/GeoSeries, (labels, transform, crs), an open
rasterio dataset. Each must score exactly as the same data read from a file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import rasterio

import geoeval
from geoeval.errors import InputError

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def _results(res) -> dict:
    """The report without the input descriptions (paths differ by construction)."""
    d = json.loads(res.to_json())
    return {k: d[k] for k in ("overlap", "parameters", "results", "per_class")}


def test_geodataframes_score_as_their_files(tmp_path):
    import geopandas as gpd

    ref_path = SAMPLE / "reference.gpkg"
    sub_path = SAMPLE / "submissions" / "s5_merged.shp"
    ref, sub = gpd.read_file(ref_path), gpd.read_file(sub_path)
    kw = {"matchers": ["bgm", "hoover", "iou"], "id_field": "id"}
    from_files = geoeval.score(ref_path, sub_path, **kw)
    in_memory = geoeval.score(ref, sub, **kw)
    assert _results(in_memory) == _results(from_files)
    assert in_memory.reference.path == "<GeoDataFrame>"
    # a GeoSeries (no id field: ids are the index, as a file's feature ids)
    series = geoeval.score(ref.geometry, sub.geometry, matchers=["bgm"])
    assert series.results["bgm"].f1 == from_files.results["bgm"].f1
    # the same checks as the file reader: a missing id column is named
    with pytest.raises(InputError, match="'nope' is not a column"):
        geoeval.score(ref, sub, id_field="nope")


def test_label_arrays_and_datasets_score_as_their_files():
    ref_path = SAMPLE / "reference.tif"
    sub_path = SAMPLE / "submissions" / "s2_misses.tif"
    from_files = geoeval.score(ref_path, sub_path, matchers=["bgm", "hoover"])
    with rasterio.open(ref_path) as r, rasterio.open(sub_path) as s:
        arrays = ((r.read(1), r.transform, r.crs), (s.read(1), s.transform, s.crs))
        as_arrays = geoeval.score(*arrays, matchers=["bgm", "hoover"])
        as_datasets = geoeval.score(r, s, matchers=["bgm", "hoover"])
    assert _results(as_arrays) == _results(from_files)
    assert _results(as_datasets) == _results(from_files)
    # an array without its georeference is refused with the reason
    with pytest.raises(InputError, match="no georeference"):
        geoeval.score(arrays[0][0], arrays[1][0])
    # the transform alone (no CRS on either side) is enough
    plain = geoeval.score(arrays[0][:2], arrays[1][:2], matchers=["bgm"])
    assert plain.results["bgm"].f1 == from_files.results["bgm"].f1


def test_rioxarray_dataarray():
    rioxarray = pytest.importorskip("rioxarray")
    ref_path = SAMPLE / "reference.tif"
    sub_path = SAMPLE / "submissions" / "s2_misses.tif"
    from_files = geoeval.score(ref_path, sub_path, matchers=["bgm"])
    ref, sub = rioxarray.open_rasterio(ref_path), rioxarray.open_rasterio(sub_path)
    assert _results(geoeval.score(ref, sub, matchers=["bgm"])) == _results(from_files)


def test_bare_numpy_int_array_kind():
    from geoeval.io import in_memory_type

    assert in_memory_type(np.zeros((2, 2), np.uint8)) == "raster"
    assert in_memory_type("a.tif") is None


def test_short_reprs_and_frames():
    """Results print in one short line (not every array), and the per-object
    tables come as DataFrames with the user's ids."""
    res = geoeval.score(SAMPLE / "reference.tif", SAMPLE / "submissions" / "s4_fragmented.tif",
                        matchers=["bgm", "hoover"])
    for obj in (res, res.results["bgm"], res.results["hoover"].matching, res.reference,
                res.overlap, res.reference.grid, res.results["bgm"].matching.arrays):
        text = repr(obj)
        assert len(text) < 200 and "\n" not in text and text.startswith("<")
    assert "bgm: F1 0.7885" in repr(res)
    tables = geoeval.object_tables(res, "hoover")
    ref = tables.frame("reference")
    assert len(ref) == len(res.reference)
    assert ref["id"].tolist() == res.reference.ids.tolist()  # user ids, not row positions
    with pytest.raises(InputError, match="no table"):
        tables.frame("nope")
