"""One result type from every engine: ``geoeval.score`` gives a
:class:`~geoeval.scoring.ScoreResult` locally and on the Dask engine, with the same
attributes, numbers and repr; what a Dask run by parts left on its workers raises an
error saying what to use instead.

Fast: the Dask engine's own run in this process (:class:`geoeval.engine.inline.
InlineClient`, by partitions and by raster blocks). Slow: a real ``distributed.LocalCluster``.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import numpy as np
import pytest
import shapely

import geoeval
from geoeval.errors import NotHeldError
from geoeval.scoring import MatcherResult, ScoreResult

#: <ScoreResult 9 reference vs 8 submitted objects[ in 1 partition]; bgm: F1 …, accuracy …>
SHAPE = re.compile(r"<ScoreResult [\d,]+ reference vs [\d,]+ submitted objects"
                   r"( in [\d,]+ (partition|block)s?)?; (\w+: F1 \S+, accuracy \S+(, )?)+"
                   r"(; [\d,]+ warnings?)?>")


def layers(tmp_path):
    """A reference of 9 squares, a submission finding 7 of them (one shifted) and one
    false alarm, as two GeoPackages."""
    import geopandas as gpd

    x = np.arange(9) * 20.0
    ref = shapely.box(x, 0, x + 10, 10)
    sub = np.concatenate([shapely.box(x[:7] + (x[:7] == 0), 0, x[:7] + 10, 10),
                          [shapely.box(500, 0, 510, 10)]])
    paths = tmp_path / "ref.gpkg", tmp_path / "sub.gpkg"
    for path, geoms in zip(paths, (ref, sub), strict=True):
        gpd.GeoDataFrame(geometry=geoms, crs="EPSG:32631").to_file(path)
    return paths


@pytest.fixture
def inline_dask(monkeypatch):
    """``engine="dask"`` runs the engine's tasks in this process (no cluster)."""
    import geoeval.engine as engine
    from geoeval.engine.inline import InlineClient

    @contextmanager
    def opened(name="local", scheduler=None, n_jobs=None, memory_limit=None):
        yield engine.Engine(name, client=InlineClient() if name == "dask" else None,
                            n_jobs=1 if name == "dask" else n_jobs)

    monkeypatch.setattr(engine, "open_engine", opened)


def _public(obj) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def check_same_result(local, dask, matchers):
    """The same type, attributes, numbers and repr shape from both engines; what the
    Dask run left on the workers raises :class:`NotHeldError` (an AttributeError)."""
    assert type(local) is type(dask) is ScoreResult
    assert _public(local) == _public(dask)
    assert local.objects_held and not dask.objects_held
    assert dask.partitions and not local.partitions
    for name in matchers:
        lr, dr = local.results[name], dask.results[name]
        assert type(lr) is type(dr) is MatcherResult
        assert (dr.precision, dr.recall, dr.f1, dr.accuracy) == \
            (lr.precision, lr.recall, lr.f1, lr.accuracy)
        assert dr.summary() == lr.summary()
        assert dr.n_instances == lr.n_instances == lr.matching.n_instances
        with pytest.raises(NotHeldError, match=f"per-object matching of {name!r} on the "
                                               "workers.*engine='local'"):
            _ = dr.matching
        assert getattr(dr, "matching", None) is None  # an AttributeError: hasattr works
        assert re.sub(r"<\w+", "", repr(dr)) == re.sub(r"<\w+", "", repr(lr))
    assert dask.summary.to_dict() == local.summary.to_dict()
    assert dask.to_dict() == local.to_dict()
    for side in ("reference", "submission"):
        with pytest.raises(NotHeldError, match=f"result.summary.{side} describes it"):
            getattr(dask, side)
        assert getattr(dask.summary, side).objects == len(getattr(local, side))
    with pytest.raises(NotHeldError, match="result.summary.overlap"):
        _ = dask.overlap
    for r in (local, dask):
        assert SHAPE.fullmatch(repr(r)), repr(r)
    assert repr(dask).split(" in ")[0] == repr(local).split(";")[0]


def test_the_same_result_from_both_engines_by_partitions(tmp_path, inline_dask):
    ref, sub = layers(tmp_path)
    options = dict(matchers=["bgm", "iou", "mom"], resolution=1.0)
    local = geoeval.score(ref, sub, **options)
    dask = geoeval.score(ref, sub, engine="dask", **options)
    check_same_result(local, dask, options["matchers"])
    assert dask.partitions["partitions"] == 1
    assert " in 1 partition; " in repr(dask) and " in 1 partition; " in repr(dask.summary)
    with pytest.raises(NotHeldError, match=r"objects_dir=\.\.\."):
        _ = dask.results["bgm"].matching
    # MOM's per-instance Mallows scores stayed there too; the scene's score did not
    with pytest.raises(NotHeldError, match=r"summary\(\)\['mallows'\]"):
        _ = dask.results["mom"].mallows
    assert dask.results["mom"].summary()["mallows"] == local.results["mom"].mallows.scene
    assert dask.results["bgm"].mallows is None is local.results["bgm"].mallows


def test_options_not_held_name_the_summary_and_the_objects_dataset(tmp_path, inline_dask):
    """The breakdown computed on the workers: its numbers in ``summary``; with
    ``objects_dir`` the matching's error names the dataset written."""
    ref, sub = layers(tmp_path)
    out = tmp_path / "objects"
    local = geoeval.score(ref, sub, matchers=["bgm"], breakdown=True)
    dask = geoeval.score(ref, sub, matchers=["bgm"], breakdown=True, engine="dask",
                         objects_dir=out)
    assert local.breakdown is not None and dask.strata is None is local.strata
    with pytest.raises(NotHeldError, match="result.summary.breakdown holds its numbers"):
        _ = dask.breakdown
    assert dask.summary.breakdown == local.summary.breakdown
    with pytest.raises(NotHeldError, match=f"objects dataset {re.escape(str(out))} holds"):
        _ = dask.results["bgm"].matching


def test_the_same_result_from_both_engines_by_blocks(tmp_path, inline_dask):
    import rasterio
    from rasterio.transform import from_origin

    labels = np.zeros((2, 32, 32), np.int32)
    labels[0, 2:10, 2:10], labels[0, 20:28, 20:28] = 1, 2
    labels[1, 3:10, 2:10], labels[1, 20:24, 2:6] = 5, 6
    paths = []
    for name, band in zip(("ref.tif", "sub.tif"), labels, strict=True):
        paths.append(tmp_path / name)
        with rasterio.open(paths[-1], "w", driver="GTiff", width=32, height=32, count=1,
                           dtype="int32", crs="EPSG:32631",
                           transform=from_origin(0, 32, 1, 1)) as f:
            f.write(band, 1)
    local = geoeval.score(*paths, matchers=["bgm", "hoover"])
    dask = geoeval.score(*paths, matchers=["bgm", "hoover"], engine="dask")
    check_same_result(local, dask, ["bgm", "hoover"])
    assert re.search(r" in 1 block; ", repr(dask)), repr(dask)
    with pytest.raises(NotHeldError, match="not written by blocks yet"):
        _ = dask.results["bgm"].matching


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_the_same_result_on_a_cluster(tmp_path):
    from dask_cluster import local_cluster

    ref, sub = layers(tmp_path)
    options = dict(matchers=["bgm", "hoover"])
    with local_cluster() as c:
        dask = geoeval.score(ref, sub, engine="dask", scheduler=c.scheduler_address,
                             **options)
    check_same_result(geoeval.score(ref, sub, **options), dask, options["matchers"])
