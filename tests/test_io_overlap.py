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
    with pytest.raises(CRSMismatchError, match="does not overlap") as err:
        read_pair(ref, far)
    # both extents in plain numbers, as a GIS shows them (never 5e+05)
    x0 = TRANSFORM.c
    assert f"(0, 0, 1, 1) does not overlap the reference extent ({x0:.0f}, " in str(err.value)
    assert "e+" not in str(err.value)


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


# --- issue 11: exact labels of every integer dtype, empty co-occurrence, memory limit ---

INT_DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"]


def _edge_labels(dtype: str, n: int, rng) -> np.ndarray:
    """``n`` distinct labels crowded at the edges of the dtype (2**53 region for 64 bits)."""
    info = np.iinfo(dtype)
    pool = [int(info.max) - k for k in range(n)] + [int(info.min) + k for k in range(n)]
    if info.bits == 64:
        pool += [2**53 + k for k in range(-n, n)]
    pool = [v for v in pool if v != 0]
    return np.array(rng.choice(np.array(pool, dtype=object), size=n, replace=False).tolist(),
                    dtype=dtype)


def _brute_counts(labels: np.ndarray, background: int) -> dict[int, int]:
    """Pixel count of every label, by a Python dict over Python ints (no numpy dtype rules)."""
    out: dict[int, int] = {}
    for v in labels.ravel().tolist():
        if v != background:
            out[v] = out.get(v, 0) + 1
    return out


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_label_areas_exact_for_every_dtype(dtype):
    from geoeval.grid import label_areas

    rng = np.random.default_rng(11)
    values = _edge_labels(dtype, 6, rng)
    labels = np.zeros((9, 11), dtype=dtype)
    for v in values:
        r, c = rng.integers(0, 8, size=2)
        labels[r:r + 2, c:c + 3] = v
    ids, counts = label_areas(labels, 0)
    brute = _brute_counts(labels, 0)
    assert [int(i) for i in ids] == sorted(brute)
    assert counts.tolist() == [brute[k] for k in sorted(brute)]
    assert ids.dtype.kind in "iu"


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_huge_labels_raster_and_vector_paths_agree_with_brute_force(dtype):
    """Overlaps of edge-of-dtype labels by co-occurrence, by vectorised polygons (where IoU
    above 1 was seen with uint64) and by a brute-force pixel count must all agree."""
    rng = np.random.default_rng(int(np.iinfo(dtype).bits))
    ref_l = np.zeros((12, 14), dtype=dtype)
    sub_l = np.zeros((12, 14), dtype=dtype)
    for labels in (ref_l, sub_l):
        for v in _edge_labels(dtype, 5, rng):
            r, c = rng.integers(0, 10, size=2)
            labels[r:r + 3, c:c + 4] = v
    ref, sub = objects_from_labels(ref_l), objects_from_labels(sub_l)
    brute: dict[tuple[int, int], int] = {}
    for a, b in zip(ref_l.ravel().tolist(), sub_l.ravel().tolist(), strict=True):
        if a and b:
            brute[(a, b)] = brute.get((a, b), 0) + 1
    for ov in (compute_overlap(ref, sub), compute_overlap(vectorised(ref), vectorised(sub))):
        got = {(int(ref.ids[r]), int(sub.ids[c])): v
               for r, c, v in zip(ov.rows, ov.cols, ov.values, strict=True)}
        assert got == pytest.approx(brute)
        assert np.all(ov.iou <= 1.0) and np.all(ov.iou > 0)
    np.testing.assert_allclose(shapely.area(ref.polygons), ref.areas)


def test_uint64_labels_above_2_63_survive_resampling():
    from geoeval.io.raster import resample_to_grid

    big = 2**64 - 1
    labels = np.zeros((4, 4), dtype=np.uint64)
    labels[:2, :2], labels[2:, 2:], labels[:2, 2:] = big, big - 1, 2**53 + 1
    objs = objects_from_labels(labels, Affine(2, 0, 0, 0, -2, 8))
    target = objects_from_labels(np.zeros((8, 8), np.uint8), Affine(1, 0, 0, 0, -1, 8)).grid
    out = resample_to_grid(objs, target)
    assert out.grid.labels.dtype == np.uint64
    assert [int(i) for i in out.ids] == [2**53 + 1, big - 1, big]
    assert out.areas.tolist() == [16.0, 16.0, 16.0]  # 2 x 2 px of 4 m² -> 16 px of 1 m²
    assert int(out.grid.labels[0, 0]) == big and int(out.grid.labels[7, 7]) == big - 1


@pytest.mark.parametrize("case", ["disjoint", "empty-sub", "empty-ref", "both-empty"])
def test_cooccurrence_without_pairs(case):
    a = np.zeros((4, 4), np.int32)
    b = np.zeros((4, 4), np.int32)
    if case in ("disjoint", "empty-sub"):
        a[:2, :2] = 3
    if case in ("disjoint", "empty-ref"):
        b[2:, 2:] = 8
    ov = compute_overlap(objects_from_labels(a), objects_from_labels(b))
    assert ov.method == "co-occurrence" and ov.n_pairs == 0 and ov.n_components == 0
    assert ov.union_area == float(np.count_nonzero(a) + np.count_nonzero(b))
    assert ov.matrix().shape == (len(ov.reference), len(ov.submission))


@pytest.mark.parametrize("empty", ["reference", "submission"])
def test_score_with_an_empty_side_api(tmp_path, empty):
    """Through geoeval.score: the raster/raster and the raster/vector paths alike."""
    full = np.zeros((4, 4), np.uint8)
    full[:2, :2] = 1
    full[2:, 2:] = 2
    zero = np.zeros((4, 4), np.uint8)
    r = write_raster(tmp_path / "r.tif", zero if empty == "reference" else full)
    s = write_raster(tmp_path / "s.tif", zero if empty == "submission" else full)
    for sub in (s, ObjectSet.from_geometries(
            [] if empty == "submission" else
            [shapely.box(570000, 1449998.8, 570001.2, 1450000)], crs=UTM)):
        res = geoeval.score(r, sub)
        for name, m in res.results.items():
            summ = m.summary()
            if empty == "submission":
                assert (summ["missed"], summ["false_alarms"]) == (2, 0), name
                assert summ["precision"] is None and summ["recall"] == 0.0, name
            else:
                assert summ["missed"] == 0 and summ["recall"] is None, name
                assert summ["false_alarms"] == len(res.submission), name
            assert len(m.matching.instances) == 0, name


@pytest.mark.parametrize("dtype,background", [("uint8", -1), ("uint8", 256), ("int8", 200),
                                              ("uint64", -1), ("int64", 2**63)])
def test_background_outside_dtype_api(tmp_path, dtype, background):
    p = write_raster(tmp_path / "b.tif", np.ones((2, 2), dtype=dtype))
    with pytest.raises(InputError, match="--background .* outside the range"):
        read(p, background=background)
    with pytest.raises(InputError, match="outside the range"):
        objects_from_labels(np.ones((2, 2), dtype=dtype), background=background)


def test_memory_limit_keyword_and_estimate(tmp_path, monkeypatch):
    from geoeval.errors import CapacityError
    from geoeval.io.raster import memory_limit, memory_needed

    assert memory_needed(10, 20, 2) == 200 * (2 * 2 + 16)
    p = write_raster(tmp_path / "m.tif", np.ones((10, 20), dtype=np.uint16))
    # reading is windowed (bounded memory): only a step that needs the whole grid at once
    # (resampling onto another grid reads .labels) is checked against the limit
    small = read(p, max_memory=3999)
    assert len(small) == 1 and not small.grid.in_memory
    with pytest.raises(CapacityError, match="20 x 10 pixels needs about 3.91 KiB"):
        small.grid.labels  # noqa: B018
    assert read(p, max_memory=4000).grid.labels.shape == (10, 20)
    monkeypatch.setenv("GEOEVAL_MAX_MEMORY", "2.5M")
    assert memory_limit() == (int(2.5 * 2**20), "GEOEVAL_MAX_MEMORY=2.5M")
    monkeypatch.setenv("GEOEVAL_MAX_MEMORY", "3g")
    assert memory_limit()[0] == 3 * 2**30
    monkeypatch.delenv("GEOEVAL_MAX_MEMORY")
    limit, source = memory_limit()
    assert source.startswith("half of the available memory") and limit > 0
