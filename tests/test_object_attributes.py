"""The input layers' own attributes in the per-object outputs, and the ``score`` column.

A detector's confidence, class and ids (any attribute of a vector layer) reach the
GeoPackage layers, the CSV tables and the GeoParquet files as ``ref_<name>`` /
``sub_<name>``, on the right objects; ``score`` is there exactly for the matchers
that score their instances (Hoover, IoU), filled for every matched object.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
from shapely import LineString, Polygon, box

import geoeval
from geoeval.io.attributes import attribute_columns
from geoeval.matching import registry
from geoeval.report.objects import object_tables

CRS = "EPSG:32651"
X0, Y0 = 570000.0, 1450000.0


def _square(k: int, shift: float = 0.0) -> Polygon:
    return box(X0 + 20 * k + shift, Y0, X0 + 20 * k + 10 + shift, Y0 + 10)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """Reference: four squares (its own ``status`` and ``name`` columns). Submission:
    a line and a zero-area polygon (both skipped by the reader, so feature rows and
    objects differ), then detections of squares 3, 0 and 1 and a false alarm, each
    with ``confidence``, ``class`` and ``id`` columns (ids not in feature order)."""
    folder = tmp_path_factory.mktemp("attributes")
    ref = gpd.GeoDataFrame({"name": ["a", "b", "c", "d"], "status": ["x", "y", "z", "w"]},
                           geometry=[_square(k) for k in range(4)], crs=CRS)
    sub = gpd.GeoDataFrame(
        {"confidence": [0.11, 0.22, 0.93, 0.54, 0.75, 0.36],
         "class": ["line", "flat", "house", "shed", "barn", "noise"],
         "id": [900, 901, 30, 10, 11, 99]},
        geometry=[LineString([(X0, Y0), (X0 + 5, Y0)]), box(X0, Y0, X0, Y0 + 5),
                  _square(3, 1), _square(0, 2), _square(1, 1), _square(8)], crs=CRS)
    ref.to_file(folder / "ref.gpkg")
    sub.to_file(folder / "sub.gpkg")
    return folder


def _run(folder, matcher):
    out = folder / matcher
    if out.exists():  # scored once per matcher
        return out
    out.mkdir()
    geoeval.score(folder / "ref.gpkg", folder / "sub.gpkg", matchers=[matcher],
                  gpkg=out / "scene.gpkg", csv_dir=out / "csv", parquet_dir=out / "parquet")
    return out


def _layers(out, layer):
    """The layer as read back from the GeoPackage, the CSV and the GeoParquet file."""
    return {"gpkg": pd.DataFrame(pyogrio.read_dataframe(out / "scene.gpkg", layer=layer)),
            "csv": pd.read_csv(out / "csv" / f"{layer}.csv"),
            "parquet": pd.DataFrame(gpd.read_parquet(out / "parquet" / f"{layer}.parquet"))}


def test_submission_attributes_reach_every_output_on_their_objects(scored):
    out = _run(scored, "bgm")
    for fmt, sub in _layers(out, "submission").items():
        by_id = sub.set_index("sub_id")  # the layer's own id column, as an attribute
        assert sorted(by_id.index) == [10, 11, 30, 99], fmt  # the skipped two are not there
        assert by_id.loc[30, "sub_confidence"] == pytest.approx(0.93), fmt
        assert by_id.loc[10, "sub_class"] == "shed" and by_id.loc[11, "sub_class"] == "barn"
        assert by_id.loc[99, "sub_class"] == "noise" and by_id.loc[99, "status"] == "false_alarm"
        # the object's geoeval id is its feature id; each attribute sits on its own object
        assert by_id.loc[10, "id"] == 4 and by_id.loc[30, "id"] == 3, fmt
        assert by_id.loc[10, "status"] == "matched" and by_id.loc[10, "best_partner"] == 1
        assert not any(c.startswith("ref_") for c in sub.columns), fmt


def test_reference_attributes_prefixed_beside_ours(scored):
    """An input column named like one of geoeval's (``status``) is prefixed all the
    same: geoeval's own ``status`` is untouched."""
    out = _run(scored, "bgm")
    for fmt, ref in _layers(out, "reference").items():
        by_id = ref.set_index("id")
        assert by_id["ref_name"].to_dict() == {1: "a", 2: "b", 3: "c", 4: "d"}, fmt
        assert by_id["ref_status"].to_dict() == {1: "x", 2: "y", 3: "z", 4: "w"}, fmt
        assert by_id.loc[3, "status"] == "missed" and by_id.loc[1, "status"] == "matched"
        assert not any(c.startswith("sub_") for c in ref.columns), fmt


@pytest.mark.parametrize("matcher", ["bgm", "hoover", "iou", "mom"])
def test_score_column_only_where_the_matcher_scores_instances(scored, matcher):
    """BGM scores the scene (Özdemir et al. 2010, eq. 1) and MOM its instances by their
    Mallows score: their tables have no ``score`` column, never an empty one; Hoover's
    and the IoU matcher's have it, filled on every matched object and instance."""
    out = _run(scored, matcher)
    scores = registry.get(matcher).scores_instances
    assert scores == (matcher in ("hoover", "iou"))
    for layer in ("reference", "submission", "instances"):
        for fmt, table in _layers(out, layer).items():
            assert ("score" in table.columns) == scores, (layer, fmt)
            if scores and layer != "instances":
                matched = table["status"] == "matched"
                assert matched.any() and table.loc[matched, "score"].notna().all()
                assert table.loc[~matched, "score"].isna().all()
            elif scores:
                assert len(table) and table["score"].notna().all()


def test_iou_score_is_the_pairs_iou(scored):
    out = _run(scored, "iou")
    sub = _layers(out, "submission")["gpkg"].set_index("sub_id")
    # square 3 shifted by 1: 90 / 110
    assert sub.loc[30, "score"] == pytest.approx(90 / 110)


def test_a_raster_has_only_its_labels(tmp_path):
    """A labelled raster has no attribute columns: only its label, as ``id``."""
    from rasterio.transform import from_origin

    labels = np.zeros((20, 20), np.int32)
    labels[2:8, 2:8] = 5
    labels[12:18, 12:18] = 7
    sub = gpd.GeoDataFrame({"confidence": [0.8]}, geometry=[box(2, -8, 8, -2)])
    res = geoeval.score((labels, from_origin(0, 0, 1, 1)), sub, matchers=["bgm"],
                        csv_dir=tmp_path / "csv")
    tables = object_tables(res, "bgm")
    assert sorted(tables.reference["id"].tolist()) == [5, 7]
    assert not any(c.startswith("ref_") for c in tables.reference)
    assert tables.submission["sub_confidence"].tolist() == [0.8]


def test_columns_outputs_cannot_hold_become_text_and_names_do_not_collide(tmp_path):
    """Lists and mappings as JSON, bytes as hexadecimal, durations as text, unsigned
    integers beyond int64 as their digits, nullable integers as nullable integers; a
    second geometry column left out; names equal ignoring case made distinct."""
    ref = gpd.GeoDataFrame(geometry=[box(0, 0, 10, 10), box(20, 0, 30, 10)], crs=CRS)
    sub = gpd.GeoDataFrame({
        "tags": [["a", "b"], None], "meta": [{"k": 1}, {"k": [2]}], "raw": [b"\x00\xff", None],
        "big": np.array([2**64 - 1, 5], np.uint64), "n": pd.array([4, None], dtype="Int64"),
        "took": pd.to_timedelta([1, 2], unit="s"), "Label": ["p", "q"], "label": ["r", "s"],
        "outline": gpd.GeoSeries([box(0, 0, 1, 1), None]),
    }, geometry=[box(1, 0, 11, 10), box(20, 0, 29, 10)], crs=CRS)
    geoeval.score(ref, sub, matchers=["hoover"], gpkg=tmp_path / "o.gpkg",
                  csv_dir=tmp_path / "csv")
    for table in (pd.DataFrame(pyogrio.read_dataframe(tmp_path / "o.gpkg", layer="submission")),
                  pd.read_csv(tmp_path / "csv" / "submission.csv")):
        t = table.set_index("id")
        assert t.loc[0, "sub_tags"] == '["a", "b"]' and pd.isna(t.loc[1, "sub_tags"])
        assert t.loc[1, "sub_meta"] == '{"k": [2]}'
        assert t.loc[0, "sub_raw"] == "00ff"
        assert str(t.loc[0, "sub_big"]) == "18446744073709551615"
        assert t.loc[0, "sub_n"] == 4 and pd.isna(t.loc[1, "sub_n"])
        assert t.loc[1, "sub_took"] == "0 days 00:00:02"
        assert t.loc[0, "sub_Label"] == "p" and t.loc[0, "sub_label_2"] == "r"
        assert "sub_outline" not in t.columns


def test_name_clash_with_a_prefixed_column():
    cols = attribute_columns(pd.DataFrame({"a": [1], "A": [2], "a_2": [3]}), "ref",
                             ["id", "ref_a"])
    assert list(cols) == ["ref_a_2", "ref_A_3", "ref_a_2_2"]
    assert [v.tolist() for v in cols.values()] == [[1], [2], [3]]


def test_objects_dataset_score_and_attribute_columns_as_the_tables(scored, tmp_path):
    """``--objects``: ``<matcher>_score`` only for the matchers that score instances; the
    input attributes on their side's rows, null on the other side's."""
    geoeval.score(scored / "ref.gpkg", scored / "sub.gpkg", matchers=["bgm", "hoover", "mom"],
                  objects_dir=tmp_path / "objects")
    d = gpd.read_parquet(tmp_path / "objects")
    assert "hoover_score" in d.columns and "bgm_score" not in d.columns
    assert "mom_score" not in d.columns and "mom_mallows" in d.columns
    matched = d["hoover_status"] == "matched"
    assert matched.any() and d.loc[matched, "hoover_score"].notna().all()
    subs = d[d.side == "submission"].set_index("sub_id")
    assert subs["sub_confidence"].to_dict() == {30: 0.93, 10: 0.54, 11: 0.75, 99: 0.36}
    assert subs["sub_class"].to_dict() == {30: "house", 10: "shed", 11: "barn", 99: "noise"}
    assert subs["ref_name"].isna().all() and subs["id"].tolist() == [3, 4, 5, 6]
    refs = d[d.side == "reference"]
    assert refs["ref_status"].tolist() == ["x", "y", "z", "w"] and refs["sub_id"].isna().all()


def test_attribute_text_not_in_its_encoding_leaves_the_attributes_out(tmp_path):
    """A field whose text is not valid in the layer's encoding, used for nothing else:
    the layer is scored without its attributes, and a warning says so (the id and
    class fields still fail with the reader's error, tests/corpus/test_vectors.py)."""
    sub = tmp_path / "sub.geojson"
    text = ('{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": '
            '{"oid": 1, "kind": "caf\u00e9"}, "geometry": {"type": "Polygon", "coordinates": '
            '[[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]]}}]}')
    sub.write_bytes(text.encode("latin-1"))
    ref = gpd.GeoDataFrame({"name": ["a"]}, geometry=[box(1, 0, 11, 10)], crs="EPSG:4326")
    res = geoeval.score(ref, sub, matchers=["bgm"], csv_dir=tmp_path / "csv")
    assert res.submission.attributes is None
    assert any("not valid utf-8" in w and "not carried" in w for w in res.submission.warnings)
    table = pd.read_csv(tmp_path / "csv" / "submission.csv")
    assert not any(c.startswith("sub_") for c in table.columns) and len(table) == 1
    plain = geoeval.score(ref, sub, matchers=["bgm"])  # no output carries the attributes:
    assert plain.submission.warnings == ()  # the field is not read, nothing to warn about


def _columns_asked(monkeypatch):
    """The ``columns`` every OGR read asks pyogrio for (its Arrow and feature readers)."""
    import pyogrio.raw

    asked = []
    for name in ("read_arrow", "read"):
        real = getattr(pyogrio.raw, name)

        def spy(*args, _real=real, **kwargs):
            asked.append(kwargs.get("columns"))
            return _real(*args, **kwargs)

        monkeypatch.setattr(pyogrio.raw, name, spy)
    return asked


def test_a_score_without_per_object_outputs_reads_no_attribute_field(scored, tmp_path,
                                                                     monkeypatch):
    """The JSON report and the terminal table carry no attribute: only the id and class
    fields are read, and the objects have no attribute table."""
    asked = _columns_asked(monkeypatch)
    res = geoeval.score(scored / "ref.gpkg", scored / "sub.gpkg", matchers=["bgm"],
                        json=tmp_path / "report.json", submission_options={"id_field": "id"})
    assert asked == [[], ["id"]]
    assert res.reference.attributes is None and res.submission.attributes is None
    assert sorted(res.submission.ids.tolist()) == [10, 11, 30, 99]


@pytest.mark.parametrize("output", ["gpkg", "csv_dir", "parquet_dir", "objects_dir"])
def test_each_per_object_output_reads_every_attribute_field(scored, tmp_path, monkeypatch,
                                                            output):
    asked = _columns_asked(monkeypatch)
    res = geoeval.score(scored / "ref.gpkg", scored / "sub.gpkg", matchers=["bgm"],
                        **{output: tmp_path / ("out.gpkg" if output == "gpkg" else "out")})
    assert asked == [["name", "status"], ["confidence", "class", "id"]]
    assert res.submission.attributes["confidence"].tolist() == [0.93, 0.54, 0.75, 0.36]


def test_a_geoparquet_file_is_read_with_its_attributes_only_for_the_outputs(tmp_path,
                                                                            monkeypatch):
    """A GeoParquet input: the id field and the geometry only, unless an output carries
    the attributes."""
    ref = gpd.GeoDataFrame({"name": ["a", "b"]}, geometry=[_square(0), _square(1)], crs=CRS)
    sub = gpd.GeoDataFrame({"confidence": [0.7, 0.2], "oid": [7, 8]},
                           geometry=[_square(0, 1), _square(5)], crs=CRS)
    ref.to_parquet(tmp_path / "ref.parquet")
    sub.to_parquet(tmp_path / "sub.parquet")
    asked = []
    real = gpd.read_parquet

    def spy(*args, **kwargs):
        asked.append(kwargs.get("columns"))
        return real(*args, **kwargs)

    monkeypatch.setattr(gpd, "read_parquet", spy)
    res = geoeval.score(tmp_path / "ref.parquet", tmp_path / "sub.parquet", matchers=["bgm"],
                        submission_options={"id_field": "oid"})
    assert asked == [["geometry"], ["oid", "geometry"]]
    assert res.reference.attributes is None and res.submission.attributes is None
    asked.clear()
    geoeval.score(tmp_path / "ref.parquet", tmp_path / "sub.parquet", matchers=["bgm"],
                  submission_options={"id_field": "oid"}, csv_dir=tmp_path / "csv")
    assert asked == [None, None]
    table = pd.read_csv(tmp_path / "csv" / "submission.csv").set_index("id")
    assert table["sub_confidence"].to_dict() == {7: 0.7, 8: 0.2}
    assert table["sub_oid"].to_dict() == {7: 7, 8: 8}


def test_a_geodataframe_keeps_its_columns_as_a_file_does():
    """Columns of a GeoDataFrame in memory: left out as a file's fields are when no
    per-object output carries them (tests above for their way into the outputs)."""
    ref = gpd.GeoDataFrame({"name": ["a"]}, geometry=[_square(0)], crs=CRS)
    sub = gpd.GeoDataFrame({"confidence": [0.8]}, geometry=[_square(0, 1)], crs=CRS)
    res = geoeval.score(ref, sub, matchers=["bgm"])
    assert res.reference.attributes is None and res.submission.attributes is None
    assert geoeval.read(sub).attributes["confidence"].tolist() == [0.8]  # read on its own


def test_subsets_of_classes_and_strata_carry_no_attribute_table(scored, tmp_path):
    """The per-stratum (and per-class) subsets are scored, never written: they do not
    copy the attribute table; the outputs still carry it beside the stratum columns."""
    res = geoeval.score(scored / "ref.gpkg", scored / "sub.gpkg", matchers=["bgm"],
                        size_bins=[50.0], gpkg=tmp_path / "s.gpkg")
    assert res.submission.attributes is not None
    part = res.overlap.restrict(np.arange(2), np.arange(3))
    assert part.reference.attributes is None and part.submission.attributes is None
    assert res.submission.subset(np.array([0, 2])).attributes is None
    sub = pd.DataFrame(pyogrio.read_dataframe(tmp_path / "s.gpkg", layer="submission"))
    assert sub.set_index("sub_id")["sub_confidence"].to_dict() == {
        30: 0.93, 10: 0.54, 11: 0.75, 99: 0.36}


def test_per_scene_geopackages_carry_the_attributes(scored, tmp_path):
    """``score_scenes`` with ``scene_dir``: each scene's GeoPackage has its inputs'
    attributes; without it the scenes are read without them."""
    for folder in ("ref", "sub"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.gpkg").write_bytes((scored / f"{folder}.gpkg").read_bytes())
    geoeval.score_scenes(tmp_path / "ref", tmp_path / "sub", matchers=["bgm"],
                         scene_dir=tmp_path / "scenes")
    sub = pd.DataFrame(pyogrio.read_dataframe(tmp_path / "scenes" / "a.gpkg",
                                              layer="submission"))
    assert sorted(sub["sub_id"]) == [10, 11, 30, 99]
    seen = []
    geoeval.scoring.score_scenes(tmp_path / "ref", tmp_path / "sub", matchers=["bgm"],
                                 each=lambda name, res: seen.append(res.submission.attributes))
    assert len(seen) == 1 and seen[0] is None
