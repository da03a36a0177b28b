"""Mallows score: grids (edges, anisotropic pixels, vectors), approximation, process pool."""

from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from shapely import box

from geoeval.errors import InputError
from geoeval.io.raster import objects_from_labels
from geoeval.matching.result import Instance, instance_kind
from geoeval.measures import mallows
from geoeval.measures.mallows import mallows_scores
from geoeval.objects import ObjectSet


def inst(ref: tuple[int, ...], sub: tuple[int, ...]) -> Instance:
    return Instance(ref, sub, 0.0, instance_kind(len(ref), len(sub)))


def scene_pair(shape=(30, 40)) -> tuple[np.ndarray, np.ndarray, list[Instance]]:
    """A small scene: one-to-one, one-to-many, many-to-one, and objects at the edges."""
    a = np.zeros(shape, dtype=np.int32)
    b = np.zeros(shape, dtype=np.int32)
    a[0:6, 0:9] = 3  # cut by the top-left corner
    b[0:7, 1:10] = 5
    a[10:22, 5:15] = 4  # one-to-many
    b[11:16, 5:15], b[16:23, 5:15] = 7, 8
    a[8:18, 20:27], a[18:26, 20:27] = 10, 11  # many-to-one
    b[9:25, 21:28] = 9
    a[25:30, 32:40] = 12  # cut by the bottom-right corner
    b[24:30, 30:40] = 13
    ref_ids = [3, 4, 10, 11, 12]
    sub_ids = [5, 7, 8, 9, 13]
    instances = [
        inst((0,), (0,)),
        inst((1,), (1, 2)),
        inst((2, 3), (3,)),
        inst((4,), (4,)),
    ]
    assert sorted(ref_ids) == ref_ids and sorted(sub_ids) == sub_ids
    return a, b, instances


def polygons_of(labels: np.ndarray, transform: Affine) -> ObjectSet:
    """Pixel-edge polygons of each label (unions of pixel boxes), ids sorted."""
    import shapely

    ids = np.unique(labels[labels != 0])
    geoms = []
    for v in ids:
        rr, cc = np.nonzero(labels == v)
        x0, y0 = transform @ (cc, rr)
        x1, y1 = transform @ (cc + 1, rr + 1)
        pixels = shapely.box(
            np.minimum(x0, x1), np.minimum(y0, y1), np.maximum(x0, x1), np.maximum(y0, y1)
        )
        geoms.append(shapely.union_all(pixels))
    return ObjectSet.from_geometries(geoms, ids)


def test_objects_cut_by_the_raster_edge_have_their_boundary_there():
    a, b, instances = scene_pair()
    at_edge = mallows_scores(objects_from_labels(a), objects_from_labels(b), instances)
    # the same scene with a background margin: the outside counted as background
    pa, pb = np.pad(a, 4), np.pad(b, 4)
    inside = mallows_scores(objects_from_labels(pa), objects_from_labels(pb), instances)
    np.testing.assert_allclose(at_edge.scores, inside.scores, rtol=0, atol=1e-12)
    assert at_edge.scores[0] < 1.0


def test_vector_submission_matches_the_same_objects_as_raster():
    a, b, instances = scene_pair()
    t = Affine(0.5, 0, 1000.0, 0, -0.5, 2000.0)
    ref = objects_from_labels(a, t)
    as_raster = mallows_scores(ref, objects_from_labels(b, t), instances)
    as_vector = mallows_scores(ref, polygons_of(b, t), instances)
    np.testing.assert_allclose(as_raster.scores, as_vector.scores, rtol=0, atol=1e-12)
    assert as_vector.grid == "reference"
    # raster only on the submission side: its grid is used
    swapped = mallows_scores(polygons_of(a, t), objects_from_labels(b, t), instances)
    assert swapped.grid == "submission"
    np.testing.assert_allclose(as_raster.scores, swapped.scores, rtol=0, atol=1e-12)


def test_two_vector_layers_use_the_resolution_grid():
    a, b, instances = scene_pair()
    t = Affine(2.0, 0, 100.0, 0, -2.0, 300.0)  # aligned with multiples of 2
    want = mallows_scores(objects_from_labels(a, t), objects_from_labels(b, t), instances)
    got = mallows_scores(polygons_of(a, t), polygons_of(b, t), instances, resolution=2.0)
    assert got.grid == "resolution"
    # no raster edge any more: compare with the padded raster scene
    padded = mallows_scores(
        objects_from_labels(np.pad(a, 3), t @ Affine.translation(-3, -3)),
        objects_from_labels(np.pad(b, 3), t @ Affine.translation(-3, -3)),
        instances,
    )
    np.testing.assert_allclose(got.scores, padded.scores, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.scores, want.scores, rtol=0, atol=1e-12)
    with pytest.raises(InputError, match="resolution"):
        mallows_scores(polygons_of(a, t), polygons_of(b, t), instances)


def test_vector_object_beyond_the_reference_raster_is_cut_at_its_edge():
    a = np.zeros((10, 10), dtype=np.int32)
    a[2:10, 3:8] = 1
    b = np.zeros((10, 10), dtype=np.int32)
    b[4:10, 3:9] = 1
    ref = objects_from_labels(a)  # identity transform: y grows downwards, rows = y
    sub_cut = objects_from_labels(b)
    sub_long = ObjectSet.from_geometries([box(3, 4, 9, 25)])  # runs 15 pixels past the edge
    one = [inst((0,), (0,))]
    want = mallows_scores(ref, sub_cut, one).scores[0]
    got = mallows_scores(ref, sub_long, one).scores[0]
    assert got == pytest.approx(want, abs=1e-12)


def test_anisotropic_pixels_use_crs_distances():
    a = np.zeros((12, 14), dtype=np.int32)
    b = np.zeros((12, 14), dtype=np.int32)
    a[2:8, 3:9] = 1
    b[2:8, 4:10] = 1  # one column to the right
    t = Affine(3.0, 0, 0, 0, -0.5, 0)  # pixels 3 wide, 0.5 tall
    res = mallows_scores(objects_from_labels(a, t), objects_from_labels(b, t), [inst((0,), (0,))])
    assert res.emd[0] == pytest.approx(3.0, abs=1e-9)  # a translation by one column
    assert res.pixel_steps == (0.5, 3.0)
    # transposing the scene and swapping the steps is a mirror image: same score
    tt = Affine(0.5, 0, 0, 0, -3.0, 0)
    mirrored = mallows_scores(
        objects_from_labels(np.ascontiguousarray(a.T), tt),
        objects_from_labels(np.ascontiguousarray(b.T), tt),
        [inst((0,), (0,))],
    )
    assert mirrored.scores[0] == pytest.approx(res.scores[0], abs=1e-12)
    # masses in CRS units: a rectangle 6 px x 6 px is 18 x 3 CRS units, so its mass
    # is not the one of a square grid; the score must differ from the isotropic one
    iso = mallows_scores(objects_from_labels(a), objects_from_labels(b), [inst((0,), (0,))])
    assert iso.scores[0] != pytest.approx(res.scores[0], abs=1e-6)


def test_rotated_grid_equals_axis_aligned_grid():
    a, b, instances = scene_pair()
    c, s = np.cos(0.3), np.sin(0.3)
    rot = Affine(c, -s, 10.0, s, c, 20.0) @ Affine.scale(2.0, 1.0)
    plain = Affine.scale(2.0, 1.0)
    r1 = mallows_scores(objects_from_labels(a, rot), objects_from_labels(b, rot), instances)
    r2 = mallows_scores(objects_from_labels(a, plain), objects_from_labels(b, plain), instances)
    np.testing.assert_allclose(r1.scores, r2.scores, rtol=0, atol=1e-12)
    sheared = Affine(1.0, 0.5, 0, 0, -1.0, 0)
    with pytest.raises(InputError, match="sheared"):
        mallows_scores(objects_from_labels(a, sheared), objects_from_labels(b, sheared), instances)


def test_side_without_pixels_is_undefined_not_zero():
    a = np.zeros((10, 10), dtype=np.int32)
    a[2:6, 2:6] = 1
    tiny = ObjectSet.from_geometries([box(7.1, 7.1, 7.3, 7.3)])  # holds no pixel centre
    res = mallows_scores(objects_from_labels(a), tiny, [inst((0,), (0,))])
    assert np.isnan(res.scores[0]) and res.scene is None
    assert res.to_dict()["instances"][0]["mallows"] is None


def test_bad_instance_index_is_an_input_error():
    a = np.zeros((5, 5), dtype=np.int32)
    a[1:3, 1:3] = 1
    ref = objects_from_labels(a)
    with pytest.raises(InputError):
        mallows_scores(ref, ref, [inst((0,), (3,))])


def big_pair() -> tuple[ObjectSet, ObjectSet, list[Instance]]:
    a = np.zeros((60, 60), dtype=np.int32)
    b = np.zeros((60, 60), dtype=np.int32)
    a[5:45, 8:50] = 1
    b[9:50, 5:44] = 1
    b[30:50, 44:55] = 2
    return objects_from_labels(a), objects_from_labels(b), [inst((0,), (0, 1))]


def test_approximation_is_flagged_and_within_its_bound(monkeypatch):
    ref, sub, one = big_pair()
    exact = mallows_scores(ref, sub, one, approximate=False)
    assert not exact.approximated.any() and exact.error_bound[0] == 0.0
    monkeypatch.setattr(mallows, "POOL_TARGET", 150)
    pooled = mallows_scores(ref, sub, one, approximate=True)
    assert pooled.approximated[0] and pooled.block[0] >= 2
    assert 0 < pooled.error_bound[0] < 0.2
    assert abs(pooled.scores[0] - exact.scores[0]) <= pooled.error_bound[0]
    info = pooled.to_dict()["approximation"]
    assert info["mode"] == "on" and info["n_approximated"] == 1 and info["pool_target"] == 150
    # automatic mode pools only above the announced limit
    monkeypatch.setattr(mallows, "EXACT_LIMIT", 200)
    auto = mallows_scores(ref, sub, one)
    assert auto.approximated[0] and auto.to_dict()["approximation"]["exact_limit"] == 200
    monkeypatch.setattr(mallows, "EXACT_LIMIT", 10**9)
    assert not mallows_scores(ref, sub, one).approximated[0]


def test_process_pool_gives_the_serial_results(monkeypatch):
    a, b, instances = scene_pair()
    ref, sub = objects_from_labels(a), objects_from_labels(b)
    serial = mallows_scores(ref, sub, instances * 3, n_jobs=1)
    monkeypatch.setattr(mallows, "SERIAL_WORK", 0)
    pooled = mallows_scores(ref, sub, instances * 3, n_jobs=2)
    assert pooled.n_jobs == 2 and serial.n_jobs == 1
    np.testing.assert_array_equal(serial.scores, pooled.scores)
    with pytest.raises(InputError):
        mallows_scores(ref, sub, instances, n_jobs=0)


def test_two_vector_layers_get_a_grid_step_from_the_data():
    """score of two vector layers without a resolution: MOM's Mallows score is
    computed on the auto step (a tenth of the median reference side, to 2 digits)
    and equals the score with that step given; the step is reported."""
    from geoeval.scoring import score_objects

    # reference squares of sides 10, 20, 30 (median area 400, side 20 -> step 2.0)
    ref = ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 40, 20), box(50, 0, 80, 30)])
    sub = ObjectSet.from_geometries([box(1, 0, 11, 10), box(20, 1, 40, 21), box(52, 0, 80, 30)])
    auto = score_objects(ref, sub, matchers=["mom"])
    given = score_objects(ref, sub, matchers=["mom"], resolution=2.0)
    assert auto.parameters["mallows"]["resolution"] == 2.0
    assert "resolution_rule" in auto.parameters["mallows"]
    # the documented default, recorded in parameters: a note, not a warning
    assert not any("grid" in w for w in auto.warnings)
    assert any("grid of step 2 " in n and n.endswith("set it with resolution=")
               for n in auto.notes)
    assert not given.notes
    assert auto.results["mom"].accuracy is not None
    assert auto.results["mom"].accuracy == given.results["mom"].accuracy
    # nothing on either side: no grid (no grid warning), accuracy null; each empty
    # side is named in a warning
    empty = ObjectSet.from_geometries([])
    none = score_objects(empty, empty, matchers=["mom"])
    assert none.results["mom"].accuracy is None
    assert not any("grid" in w for w in none.warnings)
    assert [w.split(": ")[1] for w in none.warnings] == [
        "the reference has no objects", "the submission has no objects"]


def test_a_default_vector_run_passes_strict_and_names_the_option_its_callers_way(tmp_path,
                                                                                 capsys):
    """Two vector layers, MOM, no step: the grid step chosen from the data is a note on
    stderr naming --resolution (not a warning: --strict passes, exit 0); from Python it
    names resolution= and gives no GeoevalWarning."""
    import warnings

    import geopandas as gpd

    import geoeval
    from geoeval.cli.main import main

    ref, sub = tmp_path / "ref.gpkg", tmp_path / "sub.gpkg"
    crs = "EPSG:32631"
    gpd.GeoDataFrame({"id": [1, 2, 3]}, crs=crs, geometry=[
        box(0, 0, 10, 10), box(20, 0, 40, 20), box(50, 0, 80, 30)]).to_file(ref)
    gpd.GeoDataFrame({"id": [1, 2, 3]}, crs=crs, geometry=[
        box(1, 0, 11, 10), box(20, 1, 40, 21), box(52, 0, 80, 30)]).to_file(sub)
    code = main(["score", str(ref), str(sub), "-m", "mom", "--strict",
                 "--json", str(tmp_path / "r.json")])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 0, err
    assert "warning" not in err
    assert "note: both inputs are vector layers" in err and "grid of step 2 " in err
    assert "set it with --resolution" in err and "resolution=" not in err
    report = (tmp_path / "r.json").read_text()
    assert '"resolution_rule"' in report
    with warnings.catch_warnings():
        warnings.simplefilter("error", geoeval.GeoevalWarning)
        res = geoeval.score(ref, sub, matchers=["mom"])
    assert res.notes[-1].endswith("set it with resolution=")
    assert res.parameters["mallows"]["resolution"] == 2.0
