"""Every kind of extension is its module plus one registry entry (issue 34).

Three toys, defined and registered here only, go through the Python API (score and
rank), the command line (the matcher's parameter is an option, with no other edit:
the app is built again from the registries), the JSON report and the Dask engine
(its run in this process, :class:`geoeval.engine.inline.InlineClient`):

* a matcher with one parameter (``unique``, :mod:`tests.test_registry`'s: the pairs at
  IoU >= t that overlap nothing else there), partitionable;
* a geometry measure (``centroid_shift``: the distance between the centroids of each
  matcher's one-to-one pairs);
* an input format (``.boxes``: a text file of ``id xmin ymin xmax ymax`` lines).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import shapely

import geoeval
from geoeval.engine import Engine
from geoeval.engine.inline import InlineClient
from geoeval.io.formats import InputFormat, registered_format
from geoeval.matching import registry
from geoeval.measures.geometry import (
    GeometryMeasure,
    PairsByMatcher,
    PairValues,
    registered_measure,
)
from geoeval.objects import ObjectSet
from tests.test_registry import UNIQUE

CRS = "EPSG:32631"


# --- the toy geometry measure: its module is these two functions ---------------------

def centroid_shift(overlap, pairs, **_):
    """Distance between the centroids of each matcher's one-to-one pairs."""
    rg, sg = overlap.reference.polygons, overlap.submission.polygons
    return PairsByMatcher(
        {n: PairValues(r, s, shapely.distance(shapely.centroid(rg[r]), shapely.centroid(sg[s])))
         for n, (r, s) in pairs.items()}, overlap.reference.ids, overlap.submission.ids)


def centroid_rows(entry):
    return [("centroid shift", m, v["mean"], v["median"], v["pairs"]) for m, v in entry.items()]


SHIFT = GeometryMeasure("centroid_shift", centroid_shift, centroid_rows,
                        title="centroid shift", source="a test")


# --- the toy input format: its module is this reader -----------------------------------

def read_boxes(path, *, crs=None, **_):
    """``id xmin ymin xmax ymax`` lines, in the given CRS (EPSG:32631 by default)."""
    rows = np.loadtxt(path, ndmin=2)
    return ObjectSet.from_geometries(shapely.box(*rows[:, 1:].T), ids=rows[:, 0].astype(int),
                                     crs=crs or CRS, path=str(path))


BOXES = InputFormat("boxes", "vector", (".boxes",), read=read_boxes, title="boxes as text")


@pytest.fixture
def toys():
    """The three registered for the test only, and a Dask-partitionable copy of the
    matcher."""
    from dataclasses import replace

    with registry.registered(replace(UNIQUE, partitionable=True)), \
            registered_measure(SHIFT), registered_format(BOXES):
        yield


def boxes(seed, n=80):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 400, n), rng.uniform(0, 400, n)
    w = rng.uniform(4, 10, n)
    ref = np.c_[np.arange(n) + 100, x, y, x + w, y + w]
    d = rng.normal(0, 1.5, (n, 2))
    sub = np.c_[np.arange(n) + 500, x + d[:, 0], y + d[:, 1], x + w + d[:, 0], y + w + d[:, 1]]
    return ref, sub[rng.random(n) > 0.2]


def write_boxes(tmp_path, seed=0):
    ref, sub = boxes(seed)
    paths = tmp_path / "ref.boxes", tmp_path / "sub.boxes"
    np.savetxt(paths[0], ref)
    np.savetxt(paths[1], sub)
    return paths


def write_layers(tmp_path, seed):
    """The boxes of :func:`boxes` as two GeoPackages with an ``id`` field."""
    import geopandas as gpd

    paths = []
    for name, rows in zip(("ref", "sub"), boxes(seed), strict=True):
        p = tmp_path / f"{name}.gpkg"
        gpd.GeoDataFrame({"id": rows[:, 0].astype(int)}, geometry=shapely.box(*rows[:, 1:].T),
                         crs=CRS).to_file(p)
        paths.append(p)
    return paths


def test_the_api_takes_the_three_toys(toys, tmp_path):
    ref, sub = write_boxes(tmp_path)
    res = geoeval.score(ref, sub, matchers=["bgm", "unique"], unique_threshold=0.4,
                        geometry_measures="centroid-shift")
    report = res.to_dict()
    assert report["reference"]["objects"] == 80 and report["reference"]["path"] == str(ref)
    assert report["parameters"]["unique_threshold"] == 0.4
    assert report["results"]["unique"]["parameters"] == {"threshold": 0.4}
    shift = report["geometry"]["centroid_shift"]
    assert set(shift) == {"bgm", "unique"} and 0 < shift["bgm"]["mean"] < 3
    ranked = geoeval.rank(ref, [sub, ref], names=["sub", "ref"], matchers="unique",
                          unique_threshold=0.4)
    assert ranked.ranking == ("ref", "sub")
    with pytest.raises(geoeval.InputError, match="unique_threshold must be in"):
        geoeval.score(ref, sub, matchers=["unique"], unique_threshold=0)


def test_the_command_line_takes_the_three_toys(toys, tmp_path, monkeypatch, capsys):
    """Built again after the registrations: ``--unique-threshold`` is an option (checked
    by the registry's rule), ``unique`` a matcher, ``centroid-shift`` a measure, a
    ``.boxes`` file an input; the JSON report is the API's."""
    from geoeval.cli import main as cli

    ref, sub = write_boxes(tmp_path)
    monkeypatch.setattr(cli, "command", cli.build_command())
    monkeypatch.setenv("COLUMNS", "100")
    assert cli.main(["score", "-h"]) == 0
    assert "--unique-threshold" in capsys.readouterr().out
    out = tmp_path / "r.json"
    assert cli.main(["score", str(ref), str(sub), "-m", "bgm", "-m", "unique",
                     "--unique-threshold", "0.4", "--measures", "centroid-shift",
                     "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "alone ≥ 0.4" in printed and "centroid shift" in printed
    api = geoeval.score(ref, sub, matchers=["bgm", "unique"], unique_threshold=0.4,
                        geometry_measures="centroid-shift")
    assert out.read_text() == api.to_json()
    assert cli.main(["score", str(ref), str(sub), "--unique-threshold", "0"]) == 2
    assert "Invalid value for '--unique-threshold'" in capsys.readouterr().err


def test_the_dask_engine_takes_the_three_toys(toys, tmp_path, monkeypatch):
    """By partitions (two GeoPackages, the partitionable toy matcher) and through the
    client (the toy format is not read by pieces; the toy measure needs every object):
    the Dask engine's report is the local one's, byte for byte."""

    from geoeval.engine import layers

    dask = Engine("dask", client=InlineClient(), n_jobs=1)
    paths = write_layers(tmp_path, seed=4)
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 12)
    options = dict(matchers=["unique", "iou"], unique_threshold=0.4, id_field="id")
    res = geoeval.scoring.score(*paths, opened=dask, **options)
    assert res.partitions["partitions"] >= 8  # by partitions
    assert res.to_json() == geoeval.scoring.score(*paths, **options).to_json()
    files = write_boxes(tmp_path, seed=4)
    options = dict(matchers=["unique"], geometry_measures="centroid-shift")
    res = geoeval.scoring.score(*files, opened=dask, **options)
    assert res.notes and "boxes files are not read by pieces" in res.notes[0]
    local = geoeval.scoring.score(*files, **options)
    assert res.to_json() == local.to_json()
    assert json.loads(local.to_json())["geometry"]["measures"] == ["centroid_shift"]


@pytest.mark.slow
def test_a_matcher_registered_in_the_client_alone_runs_on_a_real_cluster(toys, tmp_path,
                                                                         monkeypatch):
    """The toy matcher is registered in this process only: the workers of a real
    ``distributed.LocalCluster`` get its registry entry with the tasks (the engine's
    ``Config.entries``), by partitions (two GeoPackages) and by raster blocks (two label
    rasters on one grid); each report is the local engine's, byte for byte."""
    import distributed
    from dask_cluster import local_cluster

    from geoeval.engine import layers
    from geoeval.scoring import score
    from tests.test_registry import _labels, _write

    paths = write_layers(tmp_path, seed=5)
    labels = _labels()
    rasters = [_write(tmp_path / f"{n}.tif", lab) for n, lab in zip("rs", labels, strict=True)]
    monkeypatch.setattr(layers, "OBJECTS_PER_PARTITION", 20)
    options = dict(matchers=["unique"], unique_threshold=0.4)
    with local_cluster() as cluster, distributed.Client(cluster) as client:
        dask = Engine("dask", client=client, n_jobs=2)
        res = score(*paths, opened=dask, id_field="id", **options)
        assert res.partitions["partitions"] >= 4
        assert res.to_json() == score(*paths, id_field="id",
                                                      **options).to_json()
        res = score(*rasters, opened=dask, **options)
        assert "blocks" in res.partitions
        assert res.to_json() == score(*rasters, **options).to_json()
