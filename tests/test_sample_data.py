"""The bundled sample data (``sample_data/``) and the script that makes it.

Checks the generator on small scenes (determinism, no overlapping buildings,
labels burnt exactly where the polygons are) and the committed files against
what ``sample_data/README.md`` and ``manifest.json`` say, with rasterio and
pyogrio directly (not geoeval's own readers).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pyogrio
import pytest
import rasterio
import shapely
from rasterio.features import rasterize

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
PIXEL_AREA = 0.36


def _load_generator():
    spec = importlib.util.spec_from_file_location("make_sample", SAMPLE / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_sample", module)
    spec.loader.exec_module(module)
    return module


ms = _load_generator()


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads((SAMPLE / "manifest.json").read_text())


@pytest.fixture(scope="module")
def reference() -> tuple[np.ndarray, dict]:
    with rasterio.open(SAMPLE / "reference.tif") as src:
        return src.read(1), src.profile


# ----------------------------------------------------------------- the generator


def test_make_scene_is_deterministic_and_seed_dependent():
    a, ta, ca = ms.make_scene(200, 40, seed=7)
    b, tb, cb = ms.make_scene(200, 40, seed=7)
    c, _, _ = ms.make_scene(200, 40, seed=8)
    assert a.shape == (200, 200)
    assert a.dtype == np.uint16
    np.testing.assert_array_equal(a, b)
    assert ta == tb and ca == cb
    assert not np.array_equal(a, c)
    assert ca.to_epsg() == 32651
    assert (ta.a, ta.e) == (0.6, -0.6)


def test_small_scene_labels_are_sparse_and_unique():
    labels, _, _ = ms.make_scene(200, 40, seed=7)
    ids = np.unique(labels)
    ids = ids[ids != 0]
    assert ids.size == 40
    assert ids.min() > 1000  # never 1..n
    assert not np.array_equal(ids, np.arange(1, ids.size + 1))


def test_buildings_do_not_overlap_and_rasterise_exactly():
    b = ms.make_buildings(300, 80, seed=3)
    polys = b.polygons
    assert polys.size == 80
    assert shapely.is_valid(polys).all()
    # no two polygons share area (touching is allowed)
    i, j = shapely.STRtree(polys).query(polys, predicate="intersects")
    sel = i < j
    if sel.any():
        inter = shapely.area(shapely.intersection(polys[i[sel]], polys[j[sel]]))
        assert inter.max() < 1e-6
    # each building burnt alone covers exactly the pixels it holds in the joint raster
    labels, has_px = ms.rasterize_buildings(b)
    assert has_px.all()
    counts = np.bincount(labels.ravel(), minlength=int(b.ids.max()) + 1)
    alone = np.array([
        rasterize([(p, 1)], out_shape=labels.shape, transform=b.transform, fill=0,
                  all_touched=False, dtype="uint8").sum()
        for p in polys
    ])
    np.testing.assert_array_equal(alone, counts[b.ids])
    assert alone.sum() == np.count_nonzero(labels)
    # pixel area ~ polygon area for large buildings fully inside the scene
    size_m = 300 * 0.6
    x0, y1 = ms.ORIGIN
    inside = shapely.within(polys, shapely.box(x0, y1 - size_m, x0 + size_m, y1))
    area = shapely.area(polys)
    big = inside & (area > 100)
    assert big.sum() >= 5
    rel = np.abs(alone[big] * PIXEL_AREA - area[big]) / area[big]
    assert rel.max() < 0.1


def test_make_submissions_small_scene_behaviours():
    labels, transform, _ = ms.make_scene(400, 160, seed=5)
    subs = ms.make_submissions(labels, seed=5, transform=transform)
    again = ms.make_submissions(labels, seed=5, transform=transform)
    assert list(subs) == list(ms.SUBMISSIONS)
    n_ref = 160
    count = {}
    for name, obj in subs.items():
        if name.endswith(".tif"):
            assert isinstance(obj, np.ndarray) and obj.shape == labels.shape
            np.testing.assert_array_equal(obj, again[name])
            count[name] = np.count_nonzero(np.unique(obj))
        else:
            assert shapely.equals(obj["geometry"], again[name]["geometry"]).all()
            assert obj["id"].dtype.kind == "i"
            assert len(set(obj["id"].tolist())) == obj["id"].size
            count[name] = obj["geometry"].size
    assert count["s2_misses.tif"] < 0.85 * n_ref  # a quarter missed
    assert count["s4_fragmented.tif"] > 1.15 * n_ref  # pieces
    assert count["s5_merged.shp"] < 0.85 * n_ref  # merged groups
    assert count["s3_false_alarms.gpkg"] > count["s1_near_perfect.tif"]
    # the shifted raster really moved: few pixels keep their place
    moved = subs["s8_shifted.tif"] != 0
    assert (moved & (labels != 0)).sum() < 0.8 * (labels != 0).sum()


def test_label_dtype():
    assert ms.label_dtype(255) == np.uint8
    assert ms.label_dtype(256) == np.uint16
    assert ms.label_dtype(70000) == np.uint32


# ------------------------------------------------------------- committed files


def test_reference_raster(reference, manifest):
    labels, profile = reference
    assert labels.shape == (1668, 1668)
    assert profile["dtype"] == "uint16"
    assert profile["crs"].to_epsg() == 32651
    t = profile["transform"]
    assert (t.a, t.b, t.d, t.e) == (0.6, 0.0, 0.0, -0.6)
    assert (t.c, t.f) == ms.ORIGIN
    assert profile["compress"] == "deflate"
    ids = np.unique(labels)
    ids = ids[ids != 0]
    assert 2500 <= ids.size <= 3500
    assert not np.array_equal(ids, np.arange(1, ids.size + 1))
    assert ids.size == manifest["reference"]["objects"]


def test_reference_gpkg_matches_raster(reference):
    labels, _ = reference
    ids, counts = np.unique(labels, return_counts=True)
    ids, counts = ids[1:], counts[1:]
    info = pyogrio.read_info(SAMPLE / "reference.gpkg", layer="buildings")
    assert info["crs"] == "EPSG:32651"
    df = pyogrio.read_dataframe(SAMPLE / "reference.gpkg", layer="buildings")
    assert len(df) == ids.size
    assert df["id"].dtype.kind == "i"
    assert set(df["class"]) <= {"building", "shed"}
    assert (df["class"] == "shed").any()
    df = df.set_index("id").loc[ids]
    area = shapely.area(df.geometry.values)
    np.testing.assert_allclose(area, counts * PIXEL_AREA, rtol=1e-9, atol=1e-6)
    assert shapely.is_valid(df.geometry.values).all()
    # several pieces -> MultiPolygon, one piece -> Polygon
    types = set(df.geometry.geom_type)
    assert types == {"Polygon", "MultiPolygon"}


def _readme_files() -> list[str]:
    text = (SAMPLE / "README.md").read_text()
    return sorted(set(re.findall(r"submissions/[\w.-]+\.(?:tif|gpkg|shp)", text)))


def test_readme_lists_nine_submissions_that_match_the_manifest(manifest):
    listed = _readme_files()
    assert len(listed) == 9
    assert listed == sorted(e["file"] for e in manifest["submissions"])
    kinds = [Path(f).suffix for f in listed]
    assert kinds.count(".tif") >= 4
    assert kinds.count(".shp") >= 2
    assert kinds.count(".gpkg") >= 2


def test_every_submission_opens(reference, manifest):
    _, ref_profile = reference
    for entry in manifest["submissions"]:
        path = SAMPLE / entry["file"]
        assert path.exists(), path
        if path.suffix == ".tif":
            with rasterio.open(path) as src:
                arr = src.read(1)
                assert src.crs.to_epsg() == 32651
                assert src.transform == ref_profile["transform"]
                assert (src.width, src.height) == (1668, 1668)
                assert src.dtypes[0] in ("uint8", "uint16", "uint32")
            n = np.count_nonzero(np.unique(arr))
        else:
            if path.suffix == ".shp":
                for ext in (".prj", ".cpg", ".dbf", ".shx"):
                    assert path.with_suffix(ext).exists()
            info = pyogrio.read_info(path)
            assert info["crs"] == entry["crs"]
            assert "id" in list(info["fields"])
            df = pyogrio.read_dataframe(path)
            assert df["id"].dtype.kind == "i"
            assert df["id"].is_unique
            assert set(df.geometry.geom_type) <= {"Polygon", "MultiPolygon"}
            n = len(df)
        assert n == entry["objects"], entry["file"]


def test_one_vector_submission_is_stored_in_wgs84(manifest):
    crs = {e["file"]: e["crs"] for e in manifest["submissions"]}
    assert crs["submissions/s3_false_alarms.gpkg"] == "EPSG:4326"
    df = pyogrio.read_dataframe(SAMPLE / "submissions" / "s3_false_alarms.gpkg")
    c = shapely.centroid(df.geometry.values)
    lon, lat = shapely.get_x(c).mean(), shapely.get_y(c).mean()
    assert 123.5 < lon < 123.8 and 13.0 < lat < 13.3  # Legaspi City


def test_sample_areas_are_exact_whatever_the_machine():
    """A written area is the exact shoelace area of the written (rounded) coordinates,
    correctly rounded once: the same bits on every CPU and BLAS. ``np.dot``'s order of
    addition follows the machine's BLAS kernel (the CrowdAI sample's first area was
    1184.5661499999915 on one machine, 1184.566150000006 on another; exactly 1184.56615)."""
    from fractions import Fraction

    sys.path.insert(0, str(SAMPLE))
    from crowdai_tiles import ring_area

    rng = np.random.default_rng(5)
    for _ in range(300):
        k = int(rng.integers(3, 12))
        xy = np.round(rng.uniform(0, 300, (k, 2)), 2)
        q = [(Fraction(str(x)), Fraction(str(y))) for x, y in xy.tolist()]
        twice = sum(x0 * y1 - y0 * x1 for (x0, y0), (x1, y1) in zip(q, q[1:] + q[:1], strict=True))
        exact = float(abs(twice) / 2)  # Fraction -> float: correctly rounded
        assert ring_area(xy, 2) == exact
        assert ring_area(np.roll(xy, 3, axis=0)[::-1], 2) == exact  # any start, either way
    annotations = json.loads((SAMPLE / "boxes" / "crowdai" / "annotation.json").read_text())
    for a in annotations["annotations"]:
        ring = np.asarray(a["segmentation"][0]).reshape(-1, 2)
        assert a["area"] == ring_area(ring, 2)
