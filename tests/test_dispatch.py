"""The one dispatch (:mod:`geoeval.scoring.dispatch`): which route a score takes, with a
typed reason, on the bundled sample's files (headers and metadata only are read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from geoeval.scoring.dispatch import Reason, Route, dispatch
from geoeval.scoring.options import score_options, side

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
TIF, TIF2 = SAMPLE / "reference.tif", SAMPLE / "submissions" / "s4_fragmented.tif"
GPKG, GPKG2 = SAMPLE / "reference.gpkg", SAMPLE / "submissions" / "s7_dilated.gpkg"
OTHER_CRS = SAMPLE / "submissions" / "s3_false_alarms.gpkg"


def choose(ref, sub, dask=True, objects=False, **keywords):
    options = score_options(**keywords)
    return dispatch(side(ref, options.reference), side(sub, options.submission), options,
                    dask=dask, objects=objects)


@pytest.mark.parametrize(("ref", "sub", "keywords", "route", "reason"), [
    (TIF, TIF2, {}, Route.BLOCKS, None),
    (GPKG, GPKG2, {"id_field": "id"}, Route.PARTITIONS, None),
    (GPKG, GPKG2, {"geometry_measures": "pq"}, Route.CLIENT, Reason.OPTION),
    (GPKG, OTHER_CRS, {}, Route.CLIENT, Reason.CRS_DIFFER),
    (TIF, TIF2, {"bootstrap": 10}, Route.CLIENT, Reason.OPTION),
    (TIF, GPKG2, {}, Route.CLIENT, Reason.NOT_A_PAIR),
    (TIF, TIF2, {"partitioned": False}, Route.CLIENT, Reason.OUTPUTS),
])
def test_routes_and_reasons(ref, sub, keywords, route, reason):
    choice = choose(ref, sub, **keywords)
    assert choice.route is route
    assert (choice.why.reason if choice.why else None) is reason
    # the user hears of a route through the client only when the data could go by parts
    assert (choice.note is not None) == (reason is not None and reason.noted)


def test_local_engine_and_data_in_memory():
    from geoeval.objects import ObjectSet

    assert choose(TIF, TIF2, dask=False).route is Route.LOCAL
    empty = ObjectSet.from_geometries([])
    choice = choose(empty, empty)
    assert choice.route is Route.CLIENT and choice.why.reason is Reason.NOT_FILES
    assert choice.note is None


def test_raster_objects_dataset_and_matcher_capability():
    """A label raster's objects dataset is not written by blocks; a matcher registered
    without the partitionable capability keeps two layers in the client."""
    from geoeval.matching import registry

    choice = choose(TIF, TIF2, objects=True)
    assert choice.route is Route.CLIENT and choice.why.reason is Reason.RASTER_DATASET
    assert "rasters are read and matched in the client" in choice.note
    toy = registry.Matcher("whole", lambda ov: None, registry.MATCHED_AREA, title="t",
                           allows="a", header="h", accuracy_label="l", accuracy_words="w")
    with registry.registered(toy):
        choice = choose(GPKG, GPKG2, matchers=["bgm", "whole"])
    assert choice.why == type(choice.why)(Reason.MATCHER, ("whole",))
    assert choice.note.startswith("engine 'dask': matcher whole is not computed by partitions")
