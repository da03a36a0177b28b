"""``--class-field`` by partitions (docs/scale.md, *A layer on the cluster*): each class
scored on its own in the partition and boundary tasks, as partial sums added like the
strata, gives the local engine's ``per_class`` report object.

Fast: the partition functions run in this process (``run_in_process``) on a scene of
36 partitions with components crossing them, with the submission's classes from its
own field and from the reference it overlaps most (ties included), against
:func:`geoeval.scoring.scene.score_objects`. Slow (a ``distributed.LocalCluster`` of
two worker processes): ``geoeval.score(..., engine="dask", class_field=...)`` on a
GeoParquet file of ≥ 32 partitions, the JSON report's ``per_class`` as the local one.
"""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from dask_cluster import local_cluster

from geoeval.objects import ObjectSet
from tests.test_dask_partitioned import assert_close, run_in_process, scene

CRS = "EPSG:32631"


def classed_scene(seed: int = 4, n: int = 100):
    """The partitioned tests' scene, classes drawn at random (some null), and a submitted
    box overlapping two references of different classes by the same area (a tie: the
    first of them in layer order gives its class, here ``zz`` before ``aa``)."""
    ref, sub = scene(seed, n=n)
    ties_r = shapely.box([1000.0, 1010.0], [0.0, 0.0], [1010.0, 1020.0], [10.0, 10.0])
    ref = np.concatenate([ref, ties_r])
    sub = np.concatenate([sub, [shapely.box(1005, 0, 1015, 10)]])
    rng = np.random.default_rng(seed)
    rc = rng.choice(np.array(["house", "shed", "barn", None], dtype=object), ref.size,
                    p=[0.5, 0.3, 0.15, 0.05])
    rc[-2:] = ["zz", "aa"]
    sc = rng.choice(np.array(["house", "shed", None], dtype=object), sub.size,
                    p=[0.6, 0.35, 0.05])
    return ref, sub, rc, sc


@pytest.mark.parametrize("from_field", [pytest.param(True, marks=pytest.mark.slow), False])
def test_per_class_by_partitions_as_local(from_field):
    """The ``per_class`` object, the class strata (with their bootstrap intervals) and
    each matcher's class confusion (counts exact, floats to 1e-12, MOM with its Mallows
    score) from the partition tasks' partial sums equal the local engine's, with the
    submission's classes from its field or inherited."""
    from geoeval.scoring import partition_sums as ps
    from geoeval.scoring.classes import FROM_FIELD, FROM_REFERENCE
    from geoeval.scoring.scene import score_objects

    ref, sub, rc, sc = classed_scene(8, n=144)
    if not from_field:
        sc = None
    plan = ps.Plan(classes=True, breakdown=True, bootstrap=20, seed=1)
    bounds = (tuple(shapely.total_bounds(ref)), tuple(shapely.total_bounds(sub)))
    partials, kept = plan.prepare(step=None, bounds=bounds, crs=None)
    matchers = ["bgm", "mom", "iou"]
    _, results, (bsol, _) = run_in_process(ref, sub, k=36, matchers=matchers,
                                           mallows=("mom",), resolution=2.0,
                                           partials=partials, classes=(rc, sc))
    assert len(results) >= 32 and bsol.summary["n_reference"] > 0  # components cross
    got = ps.Plan.add(*[r.interior.summary["partials"] for r in results],
                      bsol.summary["partials"])[ps.PER_CLASS]
    source = FROM_FIELD if from_field else FROM_REFERENCE
    local = score_objects(ObjectSet.from_geometries(ref, classes=rc),
                          ObjectSet.from_geometries(sub, classes=sc), matchers=matchers,
                          resolution=2.0, per_class=True, breakdown=True, bootstrap=20,
                          seed=1).to_dict()
    assert_close(ps.per_class_report(got, source, matchers), local["per_class"],
                 "per_class")
    assert list(local["strata"]) == ["class"]
    assert_close(ps.class_strata_report(got, source, plan, kept, matchers),
                 local["strata"]["class"], "strata.class")
    confusion = ps.class_confusion_report(got, matchers)
    for m in matchers:
        assert_close(confusion[m], local["breakdown"][m]["class_confusion"], m)
    assert local["breakdown"]["bgm"]["class_confusion"]["count"] > 0
    if not from_field:  # the tie went to the first reference in layer order
        assert local["per_class"]["classes"]["zz"]["submission_objects"] == 1
        assert local["per_class"]["classes"]["aa"]["submission_objects"] == 0
    assert local["per_class"]["unclassified_submission"] > 0


def _write(tmp_path, ref, sub, rc, sc):
    import geopandas as gpd

    rpath, spath = tmp_path / "ref.parquet", tmp_path / "sub.gpkg"
    gpd.GeoDataFrame({"cls": rc}, geometry=ref, crs=CRS).to_parquet(rpath, row_group_size=30)
    cols = {} if sc is None else {"cls": sc}
    gpd.GeoDataFrame(cols, geometry=sub, crs=CRS).to_file(spath)
    return rpath, spath


@pytest.mark.slow
@pytest.mark.parametrize("from_field", [True, False])
def test_cluster_per_class_as_local(tmp_path, monkeypatch, from_field):
    """On a LocalCluster, ``class_field=`` with COCO size bins, the breakdown and a
    bootstrap stays partitioned and the JSON report's ``per_class``, ``strata`` (size and
    class), ``breakdown`` (with the class confusion) and ``bootstrap`` are the local
    engine's (counts exact, floats 1e-12)."""
    import json

    import geoeval
    from geoeval.engine import distributed as dist
    from geoeval.io import pieces as io_pieces

    ref, sub, rc, sc = classed_scene(8, n=400)
    rpath, spath = _write(tmp_path, ref, sub, rc, sc if from_field else None)
    monkeypatch.setattr(dist, "OBJECTS_PER_PARTITION", 25)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    options = dict(matchers=["bgm", "mom", "iou"], class_field="cls", bootstrap=20, seed=1,
                   size_bins="coco", breakdown=True)
    with local_cluster() as c:
        res = geoeval.score(rpath, spath, engine="dask", scheduler=c.scheduler_address,
                            **options)
    assert isinstance(res, geoeval.scoring.summary.ScoreSummary), res.warnings
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    local = json.loads(geoeval.score(rpath, spath, **options).to_json())
    got = json.loads(res.to_json())
    assert got["per_class"]["submission_classes"] == ("field" if from_field
                                                      else "from_reference")
    for key in ("per_class", "strata", "breakdown", "bootstrap"):
        assert_close(got[key], local[key], key)
    assert list(got["strata"]) == ["size", "class"]


def test_class_field_is_scored_by_partitions(tmp_path):
    """``class_field`` with every summary option keeps a run partitioned."""
    from geoeval.scoring.dispatch import Route, dispatch
    from geoeval.scoring.options import score_options, side

    ref, sub, rc, sc = classed_scene(1, n=16)
    rpath, spath = _write(tmp_path, ref, sub, rc, sc)
    options = score_options(class_field="cls", bootstrap=10, breakdown=True, size_bins="coco")
    choice = dispatch(side(rpath, options.reference), side(spath, options.submission),
                      options, dask=True)
    assert choice.route is Route.PARTITIONS


def test_a_stratum_takes_the_union_the_scene_calls_for():
    """Hand-worked: reference R = [0,20]×[0,10] (200, large) and T = [20,27]×[0,7] (49,
    small), detections S1 = [15,24]×[0,5] (45) and S2 = [17,25]×[2,7] (40) overlapping
    each other inside R ∪ T; elsewhere two references overlap each other, so the scene's
    union is not the sum of its areas. The component {R, T, S1, S2} alone: areas minus
    overlaps = 200 + 49 + 45 + 40 − 45 − 15 − 20 − 25 = 229 = its union (by chance). The
    small stratum {T, S1, S2}: 49 + 45 + 40 − 20 − 25 = 89, but its union is
    49 + 25 + 15 − 9 = 80, which the local engine takes (the scene is not a sum). Its
    BGM accuracy, matched overlap 25 over the union: 25/80 = 0.3125 by partitions too,
    and the bootstrap intervals as local."""
    from geoeval.scoring import partition_sums as ps
    from geoeval.scoring.scene import score_objects

    ref = shapely.box([0, 20, 100, 105], [0, 0, 100, 100], [20, 27, 110, 115], [10, 7, 110, 110])
    sub = shapely.box([15, 17, 200], [0, 2, 200], [24, 25, 210], [5, 7, 210])
    plan = ps.Plan(size_bins=[60.0, 100.0], bootstrap=20, seed=2, classes=True)
    bounds = (tuple(shapely.total_bounds(ref)), tuple(shapely.total_bounds(sub)))
    partials, kept = plan.prepare(step=None, bounds=bounds, crs=None)
    rc = np.array(["s", "s", "t", "t"], dtype=object)  # the class s: R and T
    sc = np.array(["s", "s", "t"], dtype=object)
    m = ["bgm", "iou"]
    _, results, (bsol, _) = run_in_process(ref, sub, k=2, pieces=1, matchers=m,
                                           partials=partials, classes=(rc, sc))
    got = ps.Plan.add(*[r.interior.summary["partials"] for r in results],
                      bsol.summary["partials"])
    strata = ps.strata_report(got[ps.STRATA], plan, kept, m)
    local = score_objects(ObjectSet.from_geometries(ref, classes=rc),
                          ObjectSet.from_geometries(sub, classes=sc), matchers=m,
                          size_bins=[60.0, 100.0], bootstrap=20, seed=2,
                          per_class=True).to_dict()
    small = local["strata"]["size"]["strata"]["small"]["results"]["bgm"]
    assert small["matched_overlap"] == pytest.approx(25.0)
    assert small["accuracy"] == pytest.approx(25 / 80)
    assert_close(strata["size"], local["strata"]["size"], "strata.size")
    assert_close(ps.class_strata_report(got[ps.PER_CLASS], "field", plan, kept, m),
                 local["strata"]["class"], "strata.class")


@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
def test_a_missing_class_field_is_named_as_the_local_reader_does(tmp_path, suffix):
    """Before any piece is read, the cluster run refuses a class field the layer lacks
    with the in-memory reader's message (from the file's metadata)."""
    import geopandas as gpd

    from geoeval.engine.distributed import check_field
    from geoeval.errors import InputError
    from geoeval.io.pieces import plan_pieces
    from geoeval.io.vector import read_vector

    path = tmp_path / f"ref{suffix}"
    frame = gpd.GeoDataFrame({"kind": ["a", "b"]}, geometry=list(shapely.box([0, 5], 0, [1, 6], 1)),
                             crs=CRS)
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_file(path)
    with pytest.raises(InputError) as local:
        read_vector(path, class_field="cls")
    pieces, _ = plan_pieces(path)
    with pytest.raises(InputError) as cluster:
        check_field(pieces, "cls", path)
    assert str(cluster.value) == str(local.value)
    assert "--class-field 'cls' is not a field" in str(cluster.value)
    check_field(pieces, "kind", path)  # present: no error
