"""Readers and overlap: raster path = vector path, CRS and grid rules, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import rasterio
import shapely
from affine import Affine
from hypothesis import given, settings
from hypothesis import strategies as st
from rasterio.transform import from_origin

import geoeval
from geoeval.cli.main import main as cli_main
from geoeval.errors import CRSMismatchError, InputError
from geoeval.io import read, read_pair
from geoeval.io.raster import objects_from_labels
from geoeval.objects import ObjectSet
from geoeval.overlap import compute_overlap

UTM = "EPSG:32651"
TRANSFORM = from_origin(570000.0, 1450000.0, 0.6, 0.6)


def write_raster(path, labels, *, crs=UTM, transform=TRANSFORM, nodata=None, dtype=None):
    labels = np.asarray(labels)
    with rasterio.open(path, "w", driver="GTiff", width=labels.shape[1], height=labels.shape[0],
                       count=1, dtype=dtype or labels.dtype, crs=crs, transform=transform,
                       nodata=nodata) as dst:
        dst.write(labels.astype(dtype or labels.dtype), 1)
    return path


def write_layer(path, geoms, *, crs=UTM, **fields):
    import geopandas as gpd

    gpd.GeoDataFrame(fields, geometry=list(geoms), crs=crs).to_file(path)
    return path


def random_labels(rng, shape=(40, 50), n=12, lo=1, hi=10**6):
    """Random blocky label map with arbitrary (not 1..n) label values."""
    labels = np.zeros(shape, dtype=np.int64)
    values = rng.choice(np.arange(lo, hi), size=n, replace=False)
    for v in values:
        r, c = rng.integers(0, shape[0] - 3), rng.integers(0, shape[1] - 3)
        h, w = rng.integers(2, 12, size=2)
        labels[r:r + h, c:c + w] = v
    return labels


def vectorised(objects: ObjectSet) -> ObjectSet:
    """The same objects as polygons only (the vector path)."""
    return ObjectSet(ids=objects.ids, areas=shapely.area(objects.polygons), crs=objects.crs,
                     geometry=objects.polygons)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), a=st.floats(0.3, 2.0), e=st.floats(0.3, 2.0))
def test_raster_path_equals_vector_path(seed, a, e):
    rng = np.random.default_rng(seed)
    transform = Affine(a, 0, 1000.0, 0, -e, 5000.0)  # non-square pixels
    ref = objects_from_labels(random_labels(rng), transform)
    sub = objects_from_labels(random_labels(rng, lo=-50, hi=50), transform)
    raster = compute_overlap(ref, sub)
    vector = compute_overlap(vectorised(ref), vectorised(sub))
    assert raster.method == "co-occurrence" and vector.method == "rtree"
    np.testing.assert_array_equal(raster.rows, vector.rows)
    np.testing.assert_array_equal(raster.cols, vector.cols)
    np.testing.assert_allclose(raster.values, vector.values, rtol=1e-9)
    np.testing.assert_allclose(ref.areas, shapely.area(ref.polygons), rtol=1e-9)
    assert raster.union_area == pytest.approx(vector.union_area, rel=1e-9)


def test_cooccurrence_against_brute_force():
    rng = np.random.default_rng(3)
    lr, ls = random_labels(rng), random_labels(rng)
    ov = compute_overlap(objects_from_labels(lr), objects_from_labels(ls))
    dense = {}
    for a, b in zip(lr.ravel(), ls.ravel(), strict=True):
        if a and b:
            dense[(a, b)] = dense.get((a, b), 0) + 1
    got = {(int(ov.reference.ids[i]), int(ov.submission.ids[j])): v
           for i, j, v in zip(ov.rows, ov.cols, ov.values, strict=True)}
    assert got == {k: float(v) for k, v in dense.items()}
    assert ov.union_area == np.count_nonzero((lr != 0) | (ls != 0))


def test_labels_not_one_to_n_and_nodata(tmp_path):
    labels = np.array([[0, 70000, 70000], [5, 5, 65535], [0, 0, 65535]], dtype=np.uint32)
    p = write_raster(tmp_path / "odd.tif", labels, nodata=65535)
    objs = read(p)
    assert objs.ids.tolist() == [5, 70000]  # 65535 is nodata -> background
    assert objs.areas.tolist() == pytest.approx([2 * 0.36, 2 * 0.36])
    neg = write_raster(tmp_path / "neg.tif", np.array([[-7, -7], [0, 3]], dtype=np.int16))
    assert read(neg).ids.tolist() == [-7, 3]
    bg = read(neg, background=-7)
    assert bg.ids.tolist() == [0, 3]


def test_float_raster_and_missing_band_are_errors(tmp_path):
    p = write_raster(tmp_path / "f.tif", np.ones((3, 3), dtype=np.float32))
    with pytest.raises(InputError, match="integer labels"):
        read(p)
    q = write_raster(tmp_path / "i.tif", np.ones((3, 3), dtype=np.uint8))
    with pytest.raises(InputError, match="band 2 does not exist"):
        read(q, band=2)


def test_vector_repairs_and_skips(tmp_path):
    from shapely.geometry import LineString, Point, Polygon

    bowtie = Polygon([(0, 0), (2, 2), (2, 0), (0, 2)])  # invalid, area 2 once repaired
    geoms = [shapely.box(10, 10, 12, 12), bowtie, Point(1, 1).buffer(0).buffer(0),
             LineString([(0, 0), (1, 1)]), Polygon()]
    path = write_layer(tmp_path / "v.gpkg", geoms, oid=[11, 12, 13, 14, 15])
    objs = read(path, id_field="oid")
    assert objs.ids.tolist() == [11, 12]
    assert objs.repaired == 1 and objs.skipped == 3
    assert objs.areas.tolist() == pytest.approx([4.0, 2.0])
    with pytest.raises(InputError, match="not a field"):
        read(path, id_field="nope")


def test_duplicate_ids_are_an_error(tmp_path):
    path = write_layer(tmp_path / "d.gpkg", [shapely.box(0, 0, 1, 1)] * 2, oid=[1, 1])
    with pytest.raises(InputError, match="not unique"):
        read(path, id_field="oid")


def test_vector_reprojected_to_reference_crs(tmp_path):
    labels = np.zeros((20, 20), dtype=np.uint8)
    labels[2:8, 3:9] = 4
    ref = write_raster(tmp_path / "ref.tif", labels)
    # the same square as polygons in lon/lat
    square = shapely.box(570000 + 3 * 0.6, 1450000 - 8 * 0.6, 570000 + 9 * 0.6,
                         1450000 - 2 * 0.6)
    import geopandas as gpd

    ll = gpd.GeoSeries([square], crs=UTM).to_crs("EPSG:4326")
    sub = write_layer(tmp_path / "sub.geojson", ll.values, crs="EPSG:4326", oid=[1])
    r, s, _ = read_pair(ref, sub)
    assert s.crs == r.crs or s.crs.to_epsg() == 32651
    ov = compute_overlap(r, s)
    assert ov.values[0] == pytest.approx(36 * 0.36, rel=1e-6)


def test_raster_on_other_grid_is_resampled_with_warning(tmp_path):
    labels = np.zeros((20, 20), dtype=np.uint8)
    labels[2:8, 4:10] = 1
    ref = write_raster(tmp_path / "ref.tif", labels)
    coarse = np.zeros((10, 10), dtype=np.uint8)
    coarse[1:4, 2:5] = 9  # same square at 1.2 m
    sub = write_raster(tmp_path / "sub.tif", coarse,
                       transform=from_origin(570000.0, 1450000.0, 1.2, 1.2))
    r, s, warnings = read_pair(ref, sub)
    assert warnings and "resampled" in warnings[0]
    assert r.grid.same_grid(s.grid)
    np.testing.assert_array_equal(s.grid.labels == 9, labels == 1)


def test_crs_on_one_side_only_is_an_error(tmp_path):
    labels = np.ones((4, 4), dtype=np.uint8)
    ref = write_raster(tmp_path / "ref.tif", labels)
    sub = write_raster(tmp_path / "sub.tif", labels, crs=None)
    with pytest.raises(CRSMismatchError, match="has no CRS"):
        read_pair(ref, sub)


def test_no_crs_on_either_side_compares_shared_coordinates(tmp_path):
    labels = np.zeros((4, 4), dtype=np.uint8)
    labels[:2, :2] = 1
    ref = write_raster(tmp_path / "ref.tif", labels, crs=None, transform=Affine.identity())
    sub = write_raster(tmp_path / "sub.tif", labels, crs=None, transform=Affine.identity())
    res = geoeval.score(ref, sub, matchers=["bgm"])
    assert res.results["bgm"].precision == 1.0


def test_disjoint_extents_are_an_error(tmp_path):
    ref = write_raster(tmp_path / "ref.tif", np.ones((4, 4), dtype=np.uint8))
    far = write_layer(tmp_path / "far.gpkg", [shapely.box(0, 0, 1, 1)], oid=[1])
    with pytest.raises(CRSMismatchError, match="does not overlap"):
        read_pair(ref, far)


def test_raster_against_vector_equals_raster_against_raster(tmp_path):
    rng = np.random.default_rng(11)
    lr = random_labels(rng).astype(np.int32)
    ls = random_labels(rng).astype(np.int32)
    ref = write_raster(tmp_path / "ref.tif", lr)
    sub = write_raster(tmp_path / "sub.tif", ls)
    sub_objs = read(sub)
    import geopandas as gpd

    gpd.GeoDataFrame({"oid": sub_objs.ids}, geometry=list(sub_objs.polygons),
                     crs=UTM).to_file(tmp_path / "sub.gpkg")
    a = geoeval.score(ref, sub).to_dict()["results"]
    b = geoeval.score(ref, tmp_path / "sub.gpkg", id_field="oid").to_dict()["results"]
    for name in a:
        for key in ("matched_reference", "missed", "false_alarms", "precision", "recall"):
            assert a[name][key] == b[name][key], (name, key)
        assert a[name]["matched_overlap"] == pytest.approx(b[name]["matched_overlap"])
        assert [i["reference"] for i in a[name]["instances"]] == \
            [i["reference"] for i in b[name]["instances"]]


def test_cli_json_report_and_errors(tmp_path, capsys):
    labels = np.zeros((10, 10), dtype=np.uint8)
    labels[1:4, 1:4] = 3
    ref = write_raster(tmp_path / "ref.tif", labels)
    out = tmp_path / "report.json"
    assert cli_main(["score", str(ref), str(ref), "--json", str(out), "-q"]) == 0
    report = json.loads(out.read_text())
    assert report["reference"]["objects"] == 1 and report["reference"]["crs"] == UTM
    for name in ("bgm", "hoover", "mom", "iou"):
        r = report["results"][name]
        assert r["precision"] == 1.0 and r["recall"] == 1.0
        assert r["instances"] == [{"reference": [3], "submission": [3], "overlap":
                                   pytest.approx(9 * 0.36), "kind": "one-to-one",
                                   **({"score": 1.0} if name in ("hoover", "iou") else {}),
                                   **({"mallows": 1.0} if name == "mom" else {})}]
    assert report["results"]["mom"]["accuracy"] == 1.0  # identical shapes: Mallows 1
    assert report["results"]["bgm"]["mallows"] is None
    capsys.readouterr()
    assert cli_main(["score", str(ref), str(tmp_path / "missing.tif")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "missing.tif" in err and "no such file" in err
    assert cli_main(["score", str(ref), str(ref), "--hoover-threshold", "0.4", "-q"]) == 2
