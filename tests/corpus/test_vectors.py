"""Error corpus, vector layers: GeoPackage, Shapefile, GeoJSON, CSV and GeoParquet inputs,
bad and unusual, through the installed console script.

The reference of every case is ``ref.gpkg``: two 2 × 2 squares in EPSG:32651,
``A = [0, 2] × [0, 2]`` (id 1) and ``B = [4, 6] × [0, 2]`` (id 2), union area 8.
A refused case must exit 2 with one short line naming the file (and option);
a valid unusual case is scored with ``-m bgm`` and its counts are checked
against values worked out by hand (bgm accuracy = matched overlap / area of the
union of all objects, Özdemir et al. 2010, eq. 1).
"""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import pytest
from shapely import box
from shapely.geometry import (
    GeometryCollection,
    LineString,
    MultiLineString,
    MultiPoint,
    MultiPolygon,
    Point,
    Polygon,
)

from tests.corpus.conftest import assert_error, assert_ok, run_cli

CRS = "EPSG:32651"
A, B = box(0, 0, 2, 2), box(4, 0, 6, 2)
INSIDE_A = box(0, 0, 1, 1)  # area 1, inside A
TOUCHES_A = box(2, 0, 3, 1)  # shares only an edge with A: no overlap


def write(path: Path, geoms: list, crs: str | None = CRS, **columns) -> Path:
    """A layer of ``geoms`` (and attribute ``columns``) in the format of ``path``'s suffix."""
    frame = gpd.GeoDataFrame(columns or {"n": list(range(len(geoms)))}, geometry=geoms,
                             crs=crs)
    if path.suffix == ".parquet":
        frame.to_parquet(path)
    elif path.suffix == ".csv":
        frame = pd.DataFrame({**frame.drop(columns="geometry"),
                              "WKT": [g.wkt if g is not None else "" for g in geoms]})
        frame.to_csv(path, index=False)
    else:
        with warnings.catch_warnings():  # e.g. pyogrio's "no CRS" write warning
            warnings.simplefilter("ignore")
            pyogrio.write_dataframe(frame, path)
    return path


def shapefile_parts(shp: Path) -> list[Path]:
    return sorted(p for p in shp.parent.iterdir() if p.stem == shp.stem)


@pytest.fixture()
def ref(tmp_path: Path) -> Path:
    return write(tmp_path / "ref.gpkg", [A, B], oid=[1, 2], kind=["house", "shed"])


def score_json(tmp: Path, ref: Path, sub: Path, *extra: str) -> dict:
    """Score ``sub`` against ``ref`` with bgm; the JSON report (the run must succeed)."""
    out = tmp / "out.json"
    inputs = [ref, *(shapefile_parts(sub) if sub.suffix == ".shp" else [sub])]
    run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, *extra, inputs=inputs)
    assert_ok(run)
    report = json.loads(out.read_text())
    report["stderr"] = run.stderr
    return report


def counts(report: dict) -> tuple[int, int, int, int]:
    r = report["results"]["bgm"]
    return r["matched_reference"], r["matched_submission"], r["missed"], r["false_alarms"]


# ---------------------------------------------------------------- refused inputs
# Each builder makes the submission in tmp and returns (file to pass, extra args, names
# that the one-line error must contain).

Builder = Callable[[Path], tuple[Path, list[str], list[str]]]


def _shp(tmp: Path, geoms=(INSIDE_A,), **cols) -> Path:
    return write(tmp / "sub.shp", list(geoms), **cols)


def _truncate(path: Path, keep: int) -> Path:
    path.write_bytes(path.read_bytes()[:keep])
    return path


def _csv_no_geometry(tmp):
    p = tmp / "sub.csv"
    p.write_text("id,x,y\n1,0.5,0.5\n")
    return p, [], ["sub.csv", "no geometry column", "WKT"]


def _zero_bytes(suffix: str) -> Builder:
    def build(tmp):
        p = tmp / f"sub{suffix}"
        p.write_bytes(b"")
        if suffix == ".shp":
            for ext in (".shx", ".dbf", ".prj"):
                (tmp / f"sub{ext}").write_bytes(b"")
        return p, [], [p.name, "empty file"]
    return build


def _junk(suffix: str, data: bytes, *names: str) -> Builder:
    def build(tmp):
        p = tmp / f"sub{suffix}"
        p.write_bytes(data)
        return p, [], [p.name, *names]
    return build


def _truncated_copy(suffix: str, keep: int) -> Builder:
    def build(tmp):
        p = write(tmp / f"full{suffix}", [INSIDE_A, TOUCHES_A] * 20)
        q = tmp / f"sub{suffix}"
        q.write_bytes(p.read_bytes()[:keep])
        p.unlink()
        return q, [], [q.name]
    return build


def _shp_missing(ext: str, *names: str) -> Builder:
    def build(tmp):
        p = _shp(tmp)
        p.with_suffix(ext).unlink()
        return p, [], ["sub.shp", f"sub{ext}", *names]
    return build


def _shp_bad_prj(tmp):
    p = _shp(tmp)
    p.with_suffix(".prj").write_text("this is not a CRS")
    return p, [], ["sub.shp", "sub.prj", "--sub-crs"]


def _shp_cut(keep: int | None, *names: str) -> Builder:
    def build(tmp):
        p = _shp(tmp, [INSIDE_A, TOUCHES_A])  # 2 records of 136 bytes: .shp is 372 bytes
        _truncate(p, keep if keep is not None else p.stat().st_size - 20)
        return p, [], ["sub.shp", *names]
    return build


def _dbf_cut(tmp):
    p = _shp(tmp, [INSIDE_A, TOUCHES_A])
    _truncate(p.with_suffix(".dbf"), p.with_suffix(".dbf").stat().st_size - 5)
    return p, [], ["sub.shp", "sub.dbf", "truncated"]


def _shx_other_shapefile(tmp):
    p = _shp(tmp, [INSIDE_A, TOUCHES_A])
    other = write(tmp / "one.shp", [INSIDE_A])
    shutil.copy(other.with_suffix(".shx"), p.with_suffix(".shx"))
    return p, [], ["sub.shp", "1 shapes", "2 records"]


def _no_crs(suffix: str) -> Builder:
    def build(tmp):
        p = write(tmp / f"sub{suffix}", [INSIDE_A], crs=None)
        return p, [], [p.name, "has no CRS", "ref.gpkg"]
    return build


def _duplicate_ids(suffix: str) -> Builder:
    def build(tmp):
        p = write(tmp / f"sub{suffix}", [INSIDE_A, TOUCHES_A, box(5, 0, 6, 1)],
                  oid=[7, 7, 8])
        return p, ["--id-field", "oid"], [p.name, "--id-field", "'oid'", "not unique",
                                          "7 appears 2 times"]
    return build


def _null_ids(tmp):
    p = write(tmp / "sub.gpkg", [INSIDE_A, TOUCHES_A], oid=[1.0, None])
    return p, ["--id-field", "oid"], ["sub.gpkg", "--id-field", "empty values"]


def _missing_id_field(suffix: str) -> Builder:
    def build(tmp):  # the reference has oid, this submission does not
        p = write(tmp / f"sub{suffix}", [INSIDE_A], uid=[1], label=["house"])
        return p, ["--id-field", "oid"], [p.name, "--id-field", "'oid'",
                                          "fields: uid, label"]
    return build


def _shared_id_field_not_on_the_reference(suffix: str) -> Builder:
    def build(tmp):  # --id-field names the submission's field: the reference has none
        p = write(tmp / f"sub{suffix}", [INSIDE_A], det=[7])
        return p, ["--id-field", "det"], [
            "ref.gpkg: --id-field 'det' is not a field of the reference (fields: oid, kind); "
            "--ref-id-field / --sub-id-field name one side's field"]
    return build


def _sub_id_field_missing(suffix: str) -> Builder:
    def build(tmp):
        p = write(tmp / f"sub{suffix}", [INSIDE_A], uid=[1], label=["house"])
        return p, ["--ref-id-field", "oid", "--sub-id-field", "det"], [
            f"{p.name}: --sub-id-field 'det' is not a field of the submission "
            "(fields: uid, label)"]
    return build


def _ref_id_field_missing(tmp):
    p = write(tmp / "sub.gpkg", [INSIDE_A], det=[7])
    return p, ["--ref-id-field", "det", "--sub-id-field", "det"], [
        "ref.gpkg: --ref-id-field 'det' is not a field of the reference (fields: oid, kind)"]


def _sub_id_field_repeats(suffix: str) -> Builder:
    def build(tmp):
        p = write(tmp / f"sub{suffix}", [INSIDE_A, TOUCHES_A], det=[7, 7])
        return p, ["--sub-id-field", "det"], [
            f"{p.name}: --sub-id-field 'det' is not unique in the submission: 1 value(s) "
            "repeat (e.g. 7 appears 2 times)"]
    return build


def _missing_class_field(suffix: str) -> Builder:
    def build(tmp):  # passed as the reference (a submission may lack the class field)
        p = write(tmp / f"sub{suffix}", [INSIDE_A], oid=[1], uid=[5])
        return p, ["--class-field", "kind"], [p.name, "--class-field", "'kind'",
                                              "fields: oid, uid"]
    return build


def _two_layers(tmp) -> Path:
    p = tmp / "sub.gpkg"
    for name in ("roofs", "roads"):
        pyogrio.write_dataframe(gpd.GeoDataFrame({"n": [1]}, geometry=[INSIDE_A], crs=CRS),
                                p, layer=name)
    return p


def _multi_layer_no_choice(tmp):
    return _two_layers(tmp), [], ["sub.gpkg", "2 layers", "roofs, roads", "--layer"]


def _unknown_layer(tmp):
    return _two_layers(tmp), ["--sub-layer", "houses"], ["sub.gpkg", "'houses'",
                                                         "layers: roofs, roads"]


def _unknown_layer_of(suffix: str) -> Builder:
    def build(tmp):
        p = write(tmp / f"sub{suffix}", [INSIDE_A])
        return p, ["--sub-layer", "houses"], [p.name, "'houses'", "layers: sub"]
    return build


def _attribute_table_layer(tmp):
    p = _two_layers(tmp)
    pyogrio.write_dataframe(pd.DataFrame({"a": [1]}), p, layer="attrs")
    return p, ["--sub-layer", "attrs"], ["sub.gpkg", "'attrs'", "no geometry column"]


def _latin1_geojson(tmp):
    p = tmp / "sub.geojson"
    text = ('{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": '
            '{"oid": 1, "kind": "caf\u00e9"}, "geometry": {"type": "Polygon", "coordinates": '
            '[[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}}]}')
    p.write_bytes(text.encode("latin-1"))
    return p, ["--class-field", "kind"], ["sub.geojson", "not valid utf-8", "kind"]


def _cpg_lies(tmp):
    p = write(tmp / "sub.shp", [INSIDE_A], kind=["b\u00e2timent"])
    # rewrite the .dbf text in cp1252 while the .cpg says UTF-8
    dbf = p.with_suffix(".dbf")
    dbf.write_bytes(dbf.read_bytes().replace("b\u00e2timent".encode(),
                                             "b\u00e2timent ".encode("cp1252")))
    p.with_suffix(".cpg").write_text("UTF-8")
    return p, ["--class-field", "kind"], ["sub.shp", "utf-8", "sub.cpg"]


def _nonexistent(suffix: str) -> Builder:
    def build(tmp):
        return tmp / f"nowhere{suffix}", [], [f"nowhere{suffix}", "no such file"]
    return build


def _folder_submission(tmp):
    d = tmp / "scenes"
    d.mkdir()
    return d, [], ["folder"]


def _geojson_without_features(tmp):
    p = tmp / "sub.geojson"
    p.write_text('{"type": "FeatureCollection"}')
    return p, [], ["sub.geojson", "cannot open"]


def _engineering_crs(tmp):
    p = _shp(tmp)
    p.with_suffix(".prj").write_text('LOCAL_CS["site grid",UNIT["metre",1]]')
    return p, [], ["sub.shp", "site grid", "EPSG:32651"]


def _bad_crs_option(tmp):
    p = _shp(tmp)
    p.with_suffix(".prj").unlink()
    return p, ["--crs", "EPSG:nonsense"], ["sub.shp", "--crs", "EPSG:nonsense"]


def _disjoint(tmp):
    p = write(tmp / "sub.geojson", [box(1000, 1000, 1001, 1001)])
    return p, [], ["sub.geojson", "does not overlap"]


def _plain_parquet(tmp):
    p = tmp / "sub.parquet"
    pd.DataFrame({"oid": [1], "wkt": [INSIDE_A.wkt]}).to_parquet(p)
    return p, [], ["sub.parquet", "no geometry column"]


GEOJSON_CUT = (b'{"type": "FeatureCollection", "features": [{"type": "Feature", '
               b'"properties": {}, "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1,')

REFUSED: dict[str, Builder] = {
    "csv without geometry column": _csv_no_geometry,
    **{f"zero-byte {s}": _zero_bytes(s) for s in (".gpkg", ".geojson", ".csv", ".parquet",
                                                   ".shp", ".fgb")},
    "gpkg holding text": _junk(".gpkg", b"hello, not a database", "not a vector data source"),
    "geojson not JSON": _junk(".geojson", b"{not json at all", "not a vector data source"),
    "geojson cut short": _junk(".geojson", GEOJSON_CUT),
    "geojson without features": _geojson_without_features,
    "parquet holding text": _junk(".parquet", b"PAR1 but not really", "not a Parquet file"),
    "parquet without geo metadata": _plain_parquet,
    "gpkg truncated to 2 KiB": _truncated_copy(".gpkg", 2048),
    "gpkg truncated to 100 bytes": _truncated_copy(".gpkg", 100),
    "flatgeobuf truncated": _truncated_copy(".fgb", 300),
    "shp without .shx": _shp_missing(".shx", ".shx"),
    "shp without .dbf": _shp_missing(".dbf", ".dbf"),
    "shp without .prj": _shp_missing(".prj", "--sub-crs"),
    "shp with unreadable .prj": _shp_bad_prj,
    "shp last record cut": _shp_cut(None, "truncated", "1 of 2"),
    "shp cut to its header": _shp_cut(100, "truncated", "2 of 2"),
    "shp cut inside its header": _shp_cut(50, "not a Shapefile"),
    "dbf cut short": _dbf_cut,
    "shx of another shapefile": _shx_other_shapefile,
    **{f"no CRS {s}": _no_crs(s) for s in (".gpkg", ".csv")},
    **{f"duplicate ids {s}": _duplicate_ids(s) for s in (".gpkg", ".shp", ".geojson",
                                                          ".parquet", ".csv")},
    "empty id values": _null_ids,
    **{f"missing --id-field {s}": _missing_id_field(s)
       for s in (".gpkg", ".shp", ".parquet", ".csv")},
    **{f"--id-field only on the submission {s}": _shared_id_field_not_on_the_reference(s)
       for s in (".gpkg", ".parquet")},
    **{f"missing --sub-id-field {s}": _sub_id_field_missing(s)
       for s in (".gpkg", ".shp", ".parquet", ".csv")},
    "missing --ref-id-field": _ref_id_field_missing,
    **{f"repeated --sub-id-field {s}": _sub_id_field_repeats(s) for s in (".gpkg", ".parquet")},
    **{f"missing --class-field {s}": _missing_class_field(s)
       for s in (".gpkg", ".shp", ".parquet", ".csv")},
    "two layers, none chosen": _multi_layer_no_choice,
    "unknown layer": _unknown_layer,
    **{f"unknown layer {s}": _unknown_layer_of(s) for s in (".shp", ".parquet", ".geojson")},
    "layer without geometry": _attribute_table_layer,
    "latin-1 GeoJSON class field": _latin1_geojson,
    "cp1252 text under a UTF-8 .cpg": _cpg_lies,
    **{f"nonexistent {s}": _nonexistent(s) for s in (".gpkg", ".shp", ".parquet")},
    "folder as submission": _folder_submission,
    "engineering CRS against UTM": _engineering_crs,
    "bad --crs": _bad_crs_option,
    "disjoint extent": _disjoint,
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused(case: str, tmp_path: Path, ref: Path) -> None:
    sub, extra, names = REFUSED[case](tmp_path)
    out = tmp_path / "out.json"
    inputs = [p for p in tmp_path.iterdir() if p.name != "out.json"]
    pair = (sub, ref) if case.startswith("missing --class-field") else (ref, sub)
    run = run_cli("score", *pair, "-m", "bgm", "-q", "--json", out, *extra, inputs=inputs)
    assert_error(run, *names, absent=[out], max_lines=1)
    for leak in ("pyogrio", "GDAL", "It might help", "SHAPE_RESTORE_SHX", "codec"):
        assert leak not in run.stderr, f"GDAL/pyogrio words leaked:\n{run}"


# ---------------------------------------------------------- valid unusual inputs

def _sub_with(tmp: Path, suffix: str, geoms: list, **cols) -> Path:
    return write(tmp / f"sub{suffix}", geoms, **cols)


MIXED_FORMATS = (".gpkg", ".geojson")


@pytest.mark.parametrize("suffix", MIXED_FORMATS)
def test_line_and_point_among_polygons_are_skipped_with_a_warning(suffix, tmp_path, ref):
    # INSIDE_A matches A; TOUCHES_A overlaps nothing (false alarm); B is missed.
    sub = _sub_with(tmp_path, suffix, [INSIDE_A, LineString([(4, 0), (6, 2)]),
                                       TOUCHES_A, Point(5, 1)])
    rep = score_json(tmp_path, ref, sub)
    assert counts(rep) == (1, 1, 1, 1)
    r = rep["results"]["bgm"]
    assert (r["precision"], r["recall"], r["f1"]) == (0.5, 0.5, 0.5)
    # accuracy: overlap 1 over the union of A, B, INSIDE_A, TOUCHES_A = 4 + 4 + 1 = 9
    assert r["accuracy"] == pytest.approx(1 / 9)
    assert rep["submission"]["objects"] == 2 and rep["submission"]["skipped"] == 2
    assert "2 of 4 feature(s) skipped: 2 points/lines" in " ".join(rep["warnings"])
    assert "2 points/lines" in rep["stderr"]


@pytest.mark.parametrize("suffix", MIXED_FORMATS)
def test_geometry_collection_keeps_the_union_of_its_polygons(suffix, tmp_path, ref):
    # the collection's polygons overlap (area 1 + 1 - 0.25 = 1.75), all inside B
    coll = GeometryCollection([box(4, 0, 5, 1), box(4.5, 0.5, 5.5, 1.5), Point(0, 0),
                               LineString([(0, 0), (9, 9)])])
    sub = _sub_with(tmp_path, suffix, [coll, INSIDE_A])
    rep = score_json(tmp_path, ref, sub)
    assert counts(rep) == (2, 2, 0, 0)
    assert rep["submission"]["skipped"] == 0
    # overlaps 1.75 + 1 over the union of A and B (8): the union is measured, not the parts
    assert rep["results"]["bgm"]["accuracy"] == pytest.approx(2.75 / 8)
    assert "1 GeometryCollection feature(s) kept" in " ".join(rep["warnings"])


def test_geometry_collection_of_multipolygon_and_lines(tmp_path, ref):
    coll = GeometryCollection([MultiPolygon([box(0, 0, 1, 1), box(4, 0, 5, 1)]),
                               MultiLineString([[(0, 0), (1, 1)]])])
    sub = _sub_with(tmp_path, ".gpkg", [coll])
    rep = score_json(tmp_path, ref, sub)
    # one object over both A and B: bgm matches it to one of them
    assert counts(rep) == (1, 1, 1, 0)
    assert rep["submission"]["objects"] == 1


def test_collection_without_polygons_counts_as_points_lines(tmp_path, ref):
    sub = _sub_with(tmp_path, ".geojson",
                    [GeometryCollection([Point(1, 1), LineString([(0, 0), (1, 1)])]),
                     MultiPoint([(4, 0), (5, 1)]), INSIDE_A])
    rep = score_json(tmp_path, ref, sub)
    assert counts(rep) == (1, 1, 1, 0)
    assert "2 of 3 feature(s) skipped: 2 points/lines" in " ".join(rep["warnings"])


def test_every_skip_reason_is_counted(tmp_path, ref):
    flat = Polygon([(4, 0), (5, 1), (6, 2), (4, 0)])  # zero area, invalid
    sub = _sub_with(tmp_path, ".gpkg", [INSIDE_A, None, Polygon(), LineString([(0, 0), (1, 1)]),
                                        flat])
    rep = score_json(tmp_path, ref, sub)
    assert counts(rep) == (1, 1, 1, 0)
    assert rep["submission"]["skipped"] == 4 and rep["submission"]["repaired"] == 0
    text = " ".join(rep["warnings"])
    assert "4 of 5 feature(s) skipped: 1 without geometry, 1 empty, 1 points/lines, " \
           "1 zero area" in text


@pytest.mark.parametrize("suffix", (".gpkg", ".geojson", ".shp"))
def test_bowtie_is_repaired_and_counted(suffix, tmp_path, ref):
    # a self-crossing square over A: make_valid gives two triangles of area 1 in total
    bowtie = Polygon([(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)])
    sub = _sub_with(tmp_path, suffix, [bowtie])
    rep = score_json(tmp_path, ref, sub)
    assert counts(rep) == (1, 1, 1, 0)
    assert rep["submission"]["repaired"] == 1
    assert rep["results"]["bgm"]["matched_overlap"] == pytest.approx(2.0)
    assert "1 invalid geometry repaired" in " ".join(rep["warnings"])


@pytest.mark.parametrize("suffix", (".gpkg", ".geojson", ".parquet"))
def test_zero_features_is_all_missed(suffix, tmp_path, ref):
    sub = _sub_with(tmp_path, suffix, [], n=[])
    rep = score_json(tmp_path, ref, sub)
    r = rep["results"]["bgm"]
    assert counts(rep) == (0, 0, 2, 0)
    assert r["precision"] is None and r["recall"] == 0.0 and r["f1"] == 0.0
    assert r["missed_ids"] == [1, 2] and r["false_alarm_ids"] == []


def test_zero_features_reference_is_all_false_alarms(tmp_path):
    ref = write(tmp_path / "empty_ref.gpkg", [], n=[])
    sub = write(tmp_path / "sub.gpkg", [A, B])
    rep = score_json(tmp_path, ref, sub)
    r = rep["results"]["bgm"]
    assert counts(rep) == (0, 0, 0, 2)
    assert r["precision"] == 0.0 and r["recall"] is None and r["f1"] == 0.0


def test_only_points_is_an_error_naming_the_layer(tmp_path, ref):
    # every feature skipped for its geometry type: almost always the wrong layer
    sub = _sub_with(tmp_path, ".gpkg", [Point(1, 1), Point(5, 1)])
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, inputs=[ref, sub])
    assert_error(run, "sub.gpkg", "layer 'sub' holds no polygons (2 Point)",
                 "the file has no layer of polygons", absent=[out], max_lines=1)


@pytest.mark.parametrize("suffix", (".parquet", ".csv", ".shp", ".geojson", ".fgb"))
def test_each_format_gives_the_same_numbers(suffix, tmp_path, ref):
    sub = _sub_with(tmp_path, suffix, [INSIDE_A, TOUCHES_A, box(4, 0, 6, 1)], oid=[10, 11, 12])
    extra = ["--crs", CRS] if suffix == ".csv" else []
    rep = score_json(tmp_path, ref, sub, "--id-field", "oid", *extra)
    r = rep["results"]["bgm"]
    assert counts(rep) == (2, 2, 0, 1)
    assert r["false_alarm_ids"] == (["11"] if suffix == ".csv" else [11])  # CSV: text
    # overlaps 1 + 2 over the union 4 + 4 + 1 (TOUCHES_A outside both) = 9
    assert r["accuracy"] == pytest.approx(3 / 9)


def test_csv_geometry_column_named_geometry(tmp_path, ref):
    sub = tmp_path / "sub.csv"
    sub.write_text(f'oid,geometry\n1,"{INSIDE_A.wkt}"\n2,"{box(4, 0, 6, 2).wkt}"\n')
    rep = score_json(tmp_path, ref, sub, "--crs", CRS)
    assert counts(rep) == (2, 2, 0, 0)
    assert rep["results"]["bgm"]["accuracy"] == pytest.approx(5 / 8)


def test_csv_unreadable_wkt_is_skipped_with_a_warning(tmp_path, ref):
    sub = tmp_path / "sub.csv"
    sub.write_text(f'oid,WKT\n1,"POLYGON((0 0,1 0"\n2,"{INSIDE_A.wkt}"\n')
    rep = score_json(tmp_path, ref, sub, "--crs", CRS)
    assert counts(rep) == (1, 1, 1, 0)
    assert "1 of 2 feature(s) skipped: 1 without geometry" in " ".join(rep["warnings"])
    assert "Traceback" not in rep["stderr"]


def test_shapefile_without_prj_with_crs(tmp_path, ref):
    sub = _shp(tmp_path, [INSIDE_A, box(4, 0, 5, 2)])
    sub.with_suffix(".prj").unlink()
    rep = score_json(tmp_path, ref, sub, "--crs", CRS)
    assert counts(rep) == (2, 2, 0, 0)
    assert rep["results"]["bgm"]["accuracy"] == pytest.approx(3 / 8)


def test_shapefile_with_upper_case_sidecars(tmp_path, ref):
    sub = _shp(tmp_path, [INSIDE_A])
    for ext in (".shx", ".dbf", ".prj"):
        sub.with_suffix(ext).rename(sub.with_suffix(ext.upper()))
    rep = score_json(tmp_path, ref, sub)
    assert counts(rep) == (1, 1, 1, 0)


def test_non_utf8_text_in_an_unused_field_is_not_read(tmp_path, ref):
    sub = tmp_path / "sub.geojson"
    sub.write_bytes(('{"type": "FeatureCollection", "crs": {"type": "name", "properties": '
                     '{"name": "urn:ogc:def:crs:EPSG::32651"}}, "features": [{"type": "Feature", '
                     '"properties": {"note": "caf\u00e9"}, "geometry": {"type": "Polygon", '
                     '"coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}}]}')
                    .encode("latin-1"))
    rep = score_json(tmp_path, ref, sub)
    assert counts(rep) == (1, 1, 1, 0)


def test_chosen_layer_of_a_multi_layer_file(tmp_path, ref):
    sub = _two_layers(tmp_path)
    pyogrio.write_dataframe(gpd.GeoDataFrame({"n": [1, 2]}, geometry=[A, B], crs=CRS), sub,
                            layer="roofs", append=True)
    rep = score_json(tmp_path, ref, sub, "--sub-layer", "roofs")
    assert counts(rep) == (2, 2, 0, 1)  # INSIDE_A and A both over A: one is a false alarm
    rep = score_json(tmp_path, ref, sub, "--sub-layer", "roads")
    assert counts(rep) == (1, 1, 1, 0)


def test_string_ids_are_reported(tmp_path, ref):
    sub = _sub_with(tmp_path, ".geojson", [INSIDE_A, TOUCHES_A], oid=["roof-a", "shed"])
    rep = score_json(tmp_path, ref, sub, "--id-field", "oid")
    assert rep["results"]["bgm"]["false_alarm_ids"] == ["shed"]


def test_polygon_z_is_measured_in_plan(tmp_path, ref):
    sub = _sub_with(tmp_path, ".gpkg", [Polygon([(0, 0, 5), (1, 0, 9), (1, 1, 5), (0, 1, 1)])])
    rep = score_json(tmp_path, ref, sub)
    assert counts(rep) == (1, 1, 1, 0)
    assert rep["results"]["bgm"]["matched_overlap"] == pytest.approx(1.0)


def test_a_pattern_of_tiles_is_one_layer(tmp_path, ref):
    """``'tiles/*'``: the files in name order are one layer (kinds may be mixed); ids are
    row numbers across tiles (A: 0, the point: 1, skipped, B: 2): both references
    matched, bgm accuracy 8 / 8 (matched overlap A + B over the union A + B)."""
    tiles = tmp_path / "tiles"
    tiles.mkdir()
    write(tiles / "t0.gpkg", [A])
    write(tiles / "t1.fgb", [Point(9, 9)])
    write(tiles / "t2.parquet", [B])
    rep = score_json(tmp_path, ref, tiles / "*")
    r = rep["results"]["bgm"]
    assert counts(rep) == (2, 2, 0, 0)
    assert r["accuracy"] == pytest.approx(1.0)
    assert rep["submission"]["objects"] == 2 and rep["submission"]["skipped"] == 1
    assert [(i["reference"], i["submission"]) for i in r["instances"]] == [([1], [0]),
                                                                           ([2], [2])]


def test_each_side_its_own_id_field(tmp_path, ref):
    """--ref-id-field / --sub-id-field: each side's ids from its own field (the
    reference's oid, the submission's det), in the instances and the id lists; a side's
    own field wins over --id-field for both."""
    sub = write(tmp_path / "sub.gpkg", [INSIDE_A, TOUCHES_A, box(4, 0, 6, 1)],
                det=[70, 71, 72])
    rep = score_json(tmp_path, ref, sub, "--ref-id-field", "oid", "--sub-id-field", "det")
    r = rep["results"]["bgm"]
    assert [(i["reference"], i["submission"]) for i in r["instances"]] == [([1], [70]),
                                                                           ([2], [72])]
    assert r["false_alarm_ids"] == [71] and r["missed_ids"] == []
    both = score_json(tmp_path, ref, sub, "--id-field", "oid", "--sub-id-field", "det")
    assert both["results"] == rep["results"]


def test_pattern_errors_are_one_line(tmp_path, ref):
    out = tmp_path / "out.json"
    run = run_cli("score", ref, tmp_path / "none" / "*.gpkg", "-m", "bgm", "-q", "--json",
                  out, inputs=[ref])
    assert_error(run, "none/*.gpkg", "matches no file", absent=[out], max_lines=1)
    tiles = tmp_path / "tiles"
    tiles.mkdir()
    write(tiles / "t0.gpkg", [A], oid=[1])
    write(tiles / "t1.gpkg", [B], oid=[1])
    run = run_cli("score", ref, tiles / "*.gpkg", "--id-field", "oid", "-m", "bgm", "-q",
                  "--json", out, inputs=[ref, tiles])
    assert_error(run, "tiles/*.gpkg", "--id-field 'oid' is not unique in the submission: "
                 "1 value(s) repeat (e.g. 1 appears 2 times)", absent=[out], max_lines=1)
    write(tiles / "t2.gpkg", [B], crs="EPSG:3857", oid=[3])
    run = run_cli("score", ref, tiles / "t[02].gpkg", "-m", "bgm", "-q", "--json", out,
                  inputs=[ref, tiles])
    assert_error(run, "t2.gpkg", "another CRS than the first tile", absent=[out], max_lines=1)


def test_a_pattern_the_shell_expanded_gets_a_hint(tmp_path, ref):
    """``score tiles/*.gpkg dets.gpkg`` unquoted: the shell passes every tile; the usage
    error says to quote the pattern (and names it); unrelated extra words get no hint."""
    tiles = tmp_path / "tiles"
    tiles.mkdir()
    for k, geom in enumerate([A, B, A]):
        write(tiles / f"t{k}.gpkg", [geom])
    out = tmp_path / "out.json"
    expanded = sorted(tiles.glob("*.gpkg"))
    run = run_cli("score", *expanded, ref, "--json", out, inputs=[ref, tiles])
    assert_error(run, "unexpected extra argument", "quote the pattern",
                 f"'{tiles / '*.gpkg'}'", absent=[out], max_lines=1)
    run = run_cli("score", ref, ref, "nothing", "here", inputs=[ref])
    assert_error(run, "unexpected extra argument", max_lines=1)
    assert "quote" not in run.stderr
