"""``--class-field`` by partitions (docs/scale.md, *A layer on the cluster*): each class
scored on its own in the partition and boundary tasks, as partial sums added like the
strata, gives the local engine's ``per_class`` report object.

Fast: the engine's run in this process (:class:`geoeval.engine.inline.InlineClient`) on
a scene of >= 32 partitions with components crossing them, with the submission's
classes from its own field and from the reference it overlaps most (ties included),
against the local engine, byte for byte. Slow (a ``distributed.LocalCluster`` of
two worker processes): ``geoeval.score(..., engine="dask", class_field=...)`` on a
GeoParquet file of ≥ 32 partitions, the JSON report's ``per_class`` as the local one.
"""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from dask_cluster import local_cluster

from tests.test_dask_partitioned import assert_close, scene

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
def test_per_class_by_partitions_as_local(from_field, monkeypatch, tmp_path):
    """The Dask engine's run in this process (:class:`geoeval.engine.inline.InlineClient`)
    on >= 32 partitions with components crossing them: ``per_class``, the class strata
    (with their bootstrap intervals) and each matcher's class confusion (MOM with its
    Mallows score), with the submission's classes from its field or inherited, make the
    local engine's report, byte for byte."""
    from geoeval.engine import Engine, layers
    from geoeval.engine.inline import InlineClient
    from geoeval.io import pieces as io_pieces
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    ref, sub, rc, sc = classed_scene(8, n=144)
    rpath, spath = _write(tmp_path, ref, sub, rc, sc if from_field else None)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 8)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    options = score_options(matchers=["bgm", "mom", "iou"], class_field="cls",
                            resolution=2.0, breakdown=True, bootstrap=20, seed=1)
    res = score(rpath, spath, options, opened=Engine("dask", client=InlineClient(),
                                                     n_jobs=1))
    local = score(rpath, spath, options)
    assert res.partitions["partitions"] >= 32 and res.partitions["boundary_objects"] > 0
    assert res.to_json() == local.to_json()
    report = local.to_dict()
    assert list(report["strata"]) == ["class"]
    assert report["breakdown"]["bgm"]["class_confusion"]["count"] > 0
    assert report["per_class"]["submission_classes"] == ("field" if from_field
                                                         else "from_reference")
    if not from_field:  # the tie went to the first reference in layer order
        assert report["per_class"]["classes"]["zz"]["submission_objects"] == 1
        assert report["per_class"]["classes"]["aa"]["submission_objects"] == 0
    assert report["per_class"]["unclassified_submission"] > 0


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
    from geoeval.engine import layers
    from geoeval.io import pieces as io_pieces

    ref, sub, rc, sc = classed_scene(8, n=400)
    rpath, spath = _write(tmp_path, ref, sub, rc, sc if from_field else None)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 25)
    monkeypatch.setattr(io_pieces, "PIECE_FEATURES", 60)
    options = dict(matchers=["bgm", "mom", "iou"], class_field="cls", bootstrap=20, seed=1,
                   size_bins="coco", breakdown=True)
    with local_cluster() as c:
        res = geoeval.score(rpath, spath, engine="dask", scheduler=c.scheduler_address,
                            **options)
    assert isinstance(res, geoeval.ScoreResult) and not res.objects_held, res.warnings
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


def test_a_stratum_takes_the_union_the_scene_calls_for(monkeypatch, tmp_path):
    """Hand-worked: reference R = [0,20]×[0,10] (200, large) and T = [20,27]×[0,7] (49,
    small), detections S1 = [15,24]×[0,5] (45) and S2 = [17,25]×[2,7] (40) overlapping
    each other inside R ∪ T; elsewhere two references overlap each other, so the scene's
    union is not the sum of its areas. The component {R, T, S1, S2} alone: areas minus
    overlaps = 200 + 49 + 45 + 40 − 45 − 15 − 20 − 25 = 229 = its union (by chance). The
    small stratum {T, S1, S2}: 49 + 45 + 40 − 20 − 25 = 89, but its union is
    49 + 25 + 15 − 9 = 80, which the local engine takes (the scene is not a sum). Its
    BGM accuracy, matched overlap 25 over the union: 25/80 = 0.3125 by partitions too,
    and the bootstrap intervals as local."""
    from geoeval.engine import Engine, layers
    from geoeval.engine.inline import InlineClient
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    ref = shapely.box([0, 20, 100, 105], [0, 0, 100, 100], [20, 27, 110, 115], [10, 7, 110, 110])
    sub = shapely.box([15, 17, 200], [0, 2, 200], [24, 25, 210], [5, 7, 210])
    rc = np.array(["s", "s", "t", "t"], dtype=object)  # the class s: R and T
    sc = np.array(["s", "s", "t"], dtype=object)
    rpath, spath = _write(tmp_path, ref, sub, rc, sc)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 4)  # two partitions
    options = score_options(matchers=["bgm", "iou"], class_field="cls",
                            size_bins=[60.0, 100.0], bootstrap=20, seed=2)
    res = score(rpath, spath, options, opened=Engine("dask", client=InlineClient(),
                                                     n_jobs=1))
    local = score(rpath, spath, options)
    assert res.partitions["partitions"] == 2
    small = local.to_dict()["strata"]["size"]["strata"]["small"]["results"]["bgm"]
    assert small["matched_overlap"] == 25.0
    assert small["accuracy"] == 25 / 80
    assert res.to_json() == local.to_json()


@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
def test_a_missing_class_field_is_named_as_the_local_reader_does(tmp_path, suffix):
    """Before any piece is read, the cluster run refuses a class field the layer lacks
    with the in-memory reader's message (from the file's metadata)."""
    import geopandas as gpd

    from geoeval.errors import InputError
    from geoeval.io import read_side
    from geoeval.io.pieces import check_field, plan_pieces
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
    # a FieldError, as the local reader's: the run names the side (FieldError.on)
    with pytest.raises(InputError) as local_side:
        read_side(path, "reference", class_field="cls")
    assert str(cluster.value.on("reference")) == str(local_side.value)
    assert "of the reference" in str(local_side.value)
    check_field(pieces, "kind", path)  # present: no error
