"""A region read alone (``--bbox``, ``--region``; ``geoeval.score(region=)``).

The report of a region is the report of the same region cut to files first (each
object kept when its representative point is in the region, on each side), and only
what the region needs is read: which GeoParquet row groups and which OGR calls are
asserted, not only the result.
"""

from __future__ import annotations

import json

import geopandas as gpd
import numpy as np
import pyarrow.parquet as pq
import pytest
import shapely

from tests.corpus.conftest import assert_error, run_cli

BOX = (100.0, 100.0, 300.0, 300.0)
CRS = "EPSG:32631"
ROW_GROUP = 80  # two rows of the grid of 40 per row group: spatially sorted


def buildings(shift: float = 0.0, side: int = 40, seed: int = 0) -> gpd.GeoDataFrame:
    """Squares on a jittered grid (20 m apart, row after row: a file written in this
    order is spatially sorted), some straddling the region's edges; ``shift`` moves
    them (the detections)."""
    rng = np.random.default_rng(seed)
    gy, gx = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    x = gx.ravel() * 20.0 + rng.uniform(-4, 4, side * side) + shift
    y = gy.ravel() * 20.0 + rng.uniform(-4, 4, side * side)
    w = rng.uniform(6, 14, side * side)
    return gpd.GeoDataFrame({"id": np.arange(side * side) + 1000},
                            geometry=shapely.box(x, y, x + w, y + w), crs=CRS)


def write_covering(frame: gpd.GeoDataFrame, path) -> None:
    """GeoParquet 1.1 with a ``bbox`` covering column."""
    frame.to_parquet(path, write_covering_bbox=True, row_group_size=ROW_GROUP)


def write_overture(frame: gpd.GeoDataFrame, path) -> None:
    """A ``bbox`` struct column without the covering metadata (Overture's files)."""
    import pyarrow as pa

    frame.to_parquet(path, write_covering_bbox=True, row_group_size=ROW_GROUP)
    table = pq.read_table(path)
    geo = json.loads(table.schema.metadata[b"geo"])
    for column in geo["columns"].values():
        column.pop("covering", None)
    table = table.replace_schema_metadata({**table.schema.metadata,
                                           b"geo": json.dumps(geo).encode()})
    assert isinstance(table, pa.Table)
    pq.write_table(table, path, row_group_size=ROW_GROUP)


def expected_groups(frame: gpd.GeoDataFrame, box=BOX) -> set[int]:
    """The row groups whose features' bounds meet the box (from the data itself)."""
    b = shapely.bounds(np.asarray(frame.geometry.values))
    hit = (b[:, 0] <= box[2]) & (b[:, 2] >= box[0]) & (b[:, 1] <= box[3]) & (b[:, 3] >= box[1])
    return {int(i) // ROW_GROUP for i in np.flatnonzero(hit)}


def cut(frame: gpd.GeoDataFrame, box=BOX) -> gpd.GeoDataFrame:
    """The objects whose representative point is in the box (the rule, written here
    independently of geoeval)."""
    points = shapely.point_on_surface(np.asarray(frame.geometry.values))
    return frame[shapely.intersects(shapely.box(*box), points)]


@pytest.fixture()
def spied_row_groups(monkeypatch):
    """Every ``ParquetFile.read_row_groups`` call's row groups (file name -> list)."""
    seen: dict[str, list[int]] = {}
    opened, original = pq.ParquetFile.__init__, pq.ParquetFile.read_row_groups

    def named(self, source, *args, **kwargs):
        self.spied_name = str(source)
        opened(self, source, *args, **kwargs)

    def spy(self, row_groups, *args, **kwargs):
        seen.setdefault(self.spied_name, []).extend(int(g) for g in row_groups)
        return original(self, row_groups, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "__init__", named)
    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", spy)
    return seen


def _groups(seen: dict[str, list[int]]) -> list[int]:
    return sorted(g for groups in seen.values() for g in groups)


@pytest.mark.parametrize("writer", [write_covering, write_overture])
def test_parquet_reads_only_the_row_groups_that_meet_the_region(tmp_path, writer,
                                                                spied_row_groups):
    """The covering column's statistics, or Overture's bbox struct's, choose the row
    groups; exactly those meeting the region are read, and the objects are those of
    the rule."""
    import geoeval
    from geoeval.io.region import region_of

    frame = buildings()
    path = tmp_path / "ref.parquet"
    writer(frame, path)
    n_groups = pq.ParquetFile(path).metadata.num_row_groups
    objects = geoeval.read(path, id_field="id", region=region_of(BOX, CRS))
    read = _groups(spied_row_groups)
    want = expected_groups(frame)
    assert read == sorted(want) and len(want) < n_groups / 2
    assert sorted(objects.ids) == sorted(cut(frame)["id"])


def test_parquet_without_bbox_column_is_read_whole_with_a_note(tmp_path, spied_row_groups):
    """No bbox column: every row group read, the same objects, and one note saying why."""
    import geoeval

    frame = buildings()
    path = tmp_path / "plain.parquet"
    frame.to_parquet(path, row_group_size=ROW_GROUP)
    sub = tmp_path / "sub.parquet"
    write_covering(buildings(1.0), sub)
    res = geoeval.score(path, sub, region=BOX, id_field="id", matchers=["bgm"])
    n_groups = pq.ParquetFile(path).metadata.num_row_groups
    assert spied_row_groups and _groups({k: v for k, v in spied_row_groups.items()
                                         if "plain" in k}) == list(range(n_groups))
    assert res.summary.reference.objects == len(cut(frame))
    assert len(res.notes) == 1 and "plain.parquet is read whole because it has no bbox " \
        "column" in res.notes[0]


def test_unsorted_parquet_says_so(tmp_path):
    """Row groups that each span the layer: read whole, the note says they are not
    spatially sorted."""
    from geoeval.io.region import region_of
    from geoeval.io.region_pieces import plan_region

    frame = buildings().sample(frac=1.0, random_state=1)
    path = tmp_path / "shuffled.parquet"
    write_covering(frame, path)
    plan, _ = plan_region(path, region_of(BOX, CRS), id_field="id")
    assert plan.read == plan.total > 1
    assert "not spatially sorted" in plan.notes[0]


def _report(path) -> dict:
    report = json.loads(path.read_text())
    for side in ("reference", "submission"):
        report[side].pop("path")
    return report


@pytest.mark.parametrize("formats", [("parquet", "gpkg"), ("parquet", "parquet"),
                                     ("fgb", "gpkg")])
def test_region_report_equals_the_report_of_the_region_cut_to_files(tmp_path, formats):
    """Both inputs cut to the region by the rule and written out, then scored: the same
    JSON report as the region read from the whole files, but for the inputs' names and
    the region the report records."""
    ref, sub = buildings(), buildings(1.5, seed=1)
    names = []
    for tag, frame, fmt in (("ref", ref, formats[0]), ("sub", sub, formats[1])):
        # a FlatGeobuf orders its features by its index: cut from the file's order
        whole = tmp_path / f"{tag}.{fmt}"
        part = tmp_path / f"{tag}_cut.{'gpkg' if fmt == 'fgb' else fmt}"
        if fmt == "parquet":
            write_covering(frame, whole)
            write_covering(cut(gpd.read_parquet(whole)), part)
        else:
            frame.to_file(whole)
            cut(gpd.read_file(whole)).to_file(part)
        names.append((whole, part))
    (ref_whole, ref_cut), (sub_whole, sub_cut) = names
    a, b = tmp_path / "region.json", tmp_path / "cut.json"
    bbox = ",".join(f"{v:g}" for v in BOX)
    for run in (run_cli("score", ref_whole, sub_whole, "--bbox", bbox, "--id-field", "id",
                        "--json", a, "-q"),
                run_cli("score", ref_cut, sub_cut, "--id-field", "id", "--json", b, "-q")):
        assert run.code == 0, str(run)
    region, whole = _report(a), _report(b)
    recorded = region["parameters"].pop("region")
    assert recorded["bbox"] == list(BOX) and recorded["crs"] == CRS
    assert region == whole
    assert region["reference"]["objects"] == len(cut(ref)) > 0


def test_gdal_layers_are_read_through_the_spatial_filter(tmp_path, monkeypatch):
    """A GeoPackage and a FlatGeobuf are read with GDAL's spatial filter (pyogrio's
    ``bbox=``, the region's bounds), whole layer, no feature range."""
    import pyogrio

    import geoeval

    calls = []
    original = pyogrio.read_dataframe

    def spy(path, *args, **kwargs):
        calls.append((str(path), kwargs.get("bbox"), kwargs.get("skip_features")))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(pyogrio, "read_dataframe", spy)
    ref, sub = buildings(), buildings(1.5, seed=1)
    ref.to_file(tmp_path / "ref.gpkg")
    sub.to_file(tmp_path / "sub.fgb")
    res = geoeval.score(tmp_path / "ref.gpkg", tmp_path / "sub.fgb", region=BOX,
                        id_field="id", matchers=["iou"])
    assert sorted(calls) == [(str(tmp_path / "ref.gpkg"), BOX, None),
                             (str(tmp_path / "sub.fgb"), BOX, None)]
    assert res.summary.reference.objects == len(cut(ref))
    assert res.summary.submission.objects == len(cut(sub))
    assert res.notes == ()  # both have a spatial index


def test_tiles_and_dataset_folders_open_only_what_meets_the_region(tmp_path, monkeypatch,
                                                                   spied_row_groups):
    """A tile whose bounds miss the region has no feature read; nor has a file of a
    GeoParquet dataset folder; the objects are the rule's."""
    import pyogrio

    import geoeval

    frame = buildings()
    b = shapely.bounds(np.asarray(frame.geometry.values))
    west = b[:, 0] < 200
    tiles, folder = tmp_path / "tiles", tmp_path / "dataset"
    tiles.mkdir()
    folder.mkdir()
    frame[west].to_file(tiles / "a_west.gpkg")
    frame[~west].to_file(tiles / "b_east.gpkg")
    write_covering(frame[west], folder / "part0.parquet")
    write_covering(frame[~west], folder / "part1.parquet")
    calls = []
    original = pyogrio.read_dataframe

    def spy(path, *args, **kwargs):
        calls.append(str(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(pyogrio, "read_dataframe", spy)
    box = (20.0, 20.0, 150.0, 150.0)  # the west tile only
    from geoeval.io.region import region_of

    region = region_of(box, CRS)
    objects = geoeval.read(str(tiles / "*.gpkg"), id_field="id", region=region)
    assert calls == [str(tiles / "a_west.gpkg")]
    assert sorted(objects.ids) == sorted(cut(frame, box)["id"])
    objects = geoeval.read(folder, id_field="id", region=region)
    assert sorted(objects.ids) == sorted(cut(frame, box)["id"])
    assert [k for k, v in spied_row_groups.items() if v and "part1" in k] == []
    assert any("part0" in k for k in spied_row_groups)


def test_row_numbers_are_the_whole_layers(tmp_path):
    """Without --id-field an object's id is its row in the whole file (the pandas
    index), also when only some row groups are read."""
    import geoeval
    from geoeval.io.region import region_of

    frame = buildings().reset_index(drop=True)
    path = tmp_path / "ref.parquet"
    write_covering(frame, path)
    objects = geoeval.read(path, region=region_of(BOX, CRS))
    assert sorted(objects.ids) == sorted(cut(frame).index)


@pytest.mark.slow  # covered in small by the fast tests above; CI runs it
def test_the_dask_engine_reads_the_same_row_groups_and_gives_the_same_report(
        tmp_path, spied_row_groups):
    """By partitions, the planned pieces are only the row groups the region needs, and
    the report is the local engine's byte for byte."""
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    ref, sub = buildings(), buildings(1.5, seed=1)
    write_covering(ref, tmp_path / "ref.parquet")
    write_covering(sub, tmp_path / "sub.parquet")
    value = score_options(matchers=["bgm", "iou", "hoover"], region=BOX, id_field="id")
    res = score(tmp_path / "ref.parquet", tmp_path / "sub.parquet", value,
                opened=Engine("dask", client=InlineClient(), n_jobs=1))
    assert res.partitions and not res.objects_held
    read = {k: sorted(v) for k, v in spied_row_groups.items()}
    assert sorted(g for k, v in read.items() if "ref" in k for g in v) == \
        sorted(expected_groups(ref))
    local = score(tmp_path / "ref.parquet", tmp_path / "sub.parquet", value)
    assert res.to_json() == local.to_json()
    assert res.summary.reference.objects == len(cut(ref))


def test_region_in_another_crs_and_from_a_file(tmp_path):
    """``--bbox-crs`` reprojects the box; ``--region`` takes a layer's polygons in
    their own CRS: the same objects as the box in the reference's CRS."""
    import geoeval

    ref, sub = buildings(), buildings(1.5, seed=1)
    write_covering(ref, tmp_path / "ref.parquet")
    write_covering(sub, tmp_path / "sub.parquet")
    zone = gpd.GeoDataFrame(geometry=[shapely.box(*BOX)], crs=CRS).to_crs("EPSG:4326")
    zone.to_file(tmp_path / "zone.gpkg")
    here = geoeval.score(tmp_path / "ref.parquet", tmp_path / "sub.parquet", region=BOX,
                         id_field="id", matchers=["bgm"])
    there = geoeval.score(tmp_path / "ref.parquet", tmp_path / "sub.parquet",
                          region=tmp_path / "zone.gpkg", id_field="id", matchers=["bgm"])
    assert there.parameters["region"]["crs"] == "EPSG:4326"
    assert there.summary.reference.objects == here.summary.reference.objects
    lon0, lat0, lon1, lat1 = zone.total_bounds
    bbox = ",".join(repr(float(v)) for v in (lon0, lat0, lon1, lat1))
    run = run_cli("score", tmp_path / "ref.parquet", tmp_path / "sub.parquet", "--bbox",
                  bbox, "--bbox-crs", "EPSG:4326", "--id-field", "id", "-m", "bgm",
                  "--json", tmp_path / "r.json", "-q")
    assert run.code == 0, str(run)
    got = json.loads((tmp_path / "r.json").read_text())
    assert got["reference"]["objects"] == len(cut(ref))


@pytest.mark.parametrize(("args", "named"), [
    (("--bbox", "1,2,3"), "--bbox takes 4 numbers"),
    (("--bbox", "1,2,x,4"), "--bbox takes 4 numbers"),
    (("--bbox", "300,100,100,300"), "XMIN < XMAX"),
    (("--bbox", "1,2,3,4", "--bbox-crs", "EPSG:99999"), "--bbox-crs 'EPSG:99999'"),
    (("--bbox", "5000,5000,6000,6000"), "holds no object of either input"),
    (("--bbox-crs", "EPSG:4326"), "--bbox-crs applies to --bbox"),
    (("--region", "{points}"), "has no polygons"),
    (("--region", "{missing}"), "region file (--region) not found"),
])
def test_bad_regions_are_one_line(tmp_path, args, named):
    """A bad box, CRS or region file, or a region that misses both inputs: one line,
    exit 2, nothing written."""
    write_covering(buildings(), tmp_path / "ref.parquet")
    write_covering(buildings(1.0), tmp_path / "sub.parquet")
    gpd.GeoDataFrame(geometry=shapely.points([[1, 2], [3, 4]]), crs=CRS).to_file(
        tmp_path / "points.gpkg")
    args = tuple(a.format(points=tmp_path / "points.gpkg", missing=tmp_path / "no.gpkg")
                 for a in args)
    out = tmp_path / "r.json"
    run = run_cli("score", tmp_path / "ref.parquet", tmp_path / "sub.parquet", *args,
                  "--json", out)
    assert_error(run, named, absent=[out], max_lines=1)


def test_a_region_holding_one_side_only_scores_it_as_an_empty_side(tmp_path):
    """A region where the submission has no object: scored as an empty side is, with
    its warning."""
    import geoeval
    from geoeval.errors import GeoevalWarning

    write_covering(buildings(), tmp_path / "ref.parquet")
    write_covering(buildings(500.0), tmp_path / "sub.parquet")
    with pytest.warns(GeoevalWarning, match="none is in the region"):
        res = geoeval.score(tmp_path / "ref.parquet", tmp_path / "sub.parquet", region=BOX,
                            id_field="id", matchers=["bgm"])
    assert res.summary.submission.objects == 0 and res.summary.reference.objects > 0
    assert res.results["bgm"].recall == 0
    assert any("submission has no objects: none is in the region" in w for w in res.warnings)


# --- label rasters ---------------------------------------------------------------------


def write_labels(path, labels: np.ndarray, block: int = 64) -> None:
    """A tiled label GeoTIFF, 1 m pixels, origin (0, 600)."""
    import rasterio
    from rasterio.transform import from_origin

    with rasterio.open(path, "w", driver="GTiff", height=labels.shape[0],
                       width=labels.shape[1], count=1, dtype=labels.dtype, crs=CRS,
                       transform=from_origin(0, labels.shape[0], 1, 1), tiled=True,
                       blockxsize=block, blockysize=block) as ds:
        ds.write(labels, 1)


def label_scene(shift: int = 0, seed: int = 0) -> np.ndarray:
    """Squares of 6–12 pixels on a 600 × 600 grid, and a strip across the whole width
    (its representative point near the middle)."""
    rng = np.random.default_rng(seed)
    labels = np.zeros((600, 600), np.uint32)
    k = 1
    for r in range(5, 590, 20):
        for c in range(5, 590, 20):
            s = int(rng.integers(6, 12))
            labels[r:r + s, c + shift:c + shift + s] = k
            k += 1
    labels[300:304, :] = 100_000  # one object crossing every window
    return labels


def raster_cut(labels: np.ndarray, box=BOX) -> np.ndarray:
    """The labels whose representative point is in the box (the rule, from the whole
    raster's outlines), the others background."""
    from rasterio.transform import from_origin

    import geoeval

    objects = geoeval.read((labels, from_origin(0, labels.shape[0], 1, 1), CRS))
    points = shapely.point_on_surface(objects.polygons)
    keep = objects.ids[shapely.intersects(shapely.box(*box), points)]
    return np.where(np.isin(labels, keep), labels, 0).astype(labels.dtype)


def _spied_windows(monkeypatch) -> list:
    """The windows every raster source reads from now on, in order."""
    from geoeval.io import windowed

    windows: list = []
    original = windowed.RasterSource.read

    def spy(self, window, *args, **kwargs):
        windows.append(tuple(window))
        return original(self, window, *args, **kwargs)

    monkeypatch.setattr(windowed.RasterSource, "read", spy)
    return windows


def test_raster_region_reads_the_window_and_whole_labels(tmp_path, monkeypatch):
    """Only the region's window is read, grown where a label of it crosses its edge:
    the strip across the raster is read whole (its full area), the rest of the raster
    is not read."""
    import geoeval
    from geoeval.io.region import region_of

    labels = label_scene()
    write_labels(tmp_path / "ref.tif", labels)
    windows = _spied_windows(monkeypatch)
    box = (250.0, 250.0, 350.0, 350.0)  # rows 250..350, the strip at rows 296..300
    objects = geoeval.read(tmp_path / "ref.tif", region=region_of(box, CRS))
    strip = objects.areas[objects.ids == 100_000]
    assert strip.tolist() == [4 * 600.0]
    # the seed window (rows 250..350), grown to the next blocks (of 64) where squares
    # cross it
    assert windows[0] == (250, 350, 250, 350)
    assert all(w[0] >= 192 and w[1] <= 384 for w in windows)
    assert windows[-1][2:] == (0, 600)
    assert sorted(objects.ids) == sorted(set(np.unique(raster_cut(labels, box))) - {0})


@pytest.mark.slow  # covered in small by the fast tests above; CI runs it
def test_raster_region_report_equals_the_report_of_the_cut_rasters(tmp_path):
    """Two label rasters on one grid, a region: the same report as the two rasters cut
    to the region by the rule first (written as files), but for the names and the
    region recorded."""
    ref, sub = label_scene(), label_scene(2, seed=1)
    write_labels(tmp_path / "ref.tif", ref)
    write_labels(tmp_path / "sub.tif", sub)
    write_labels(tmp_path / "ref_cut.tif", raster_cut(ref))
    write_labels(tmp_path / "sub_cut.tif", raster_cut(sub))
    a, b = tmp_path / "region.json", tmp_path / "cut.json"
    for run in (run_cli("score", tmp_path / "ref.tif", tmp_path / "sub.tif", "--bbox",
                        "100,100,300,300", "--json", a, "-q"),
                run_cli("score", tmp_path / "ref_cut.tif", tmp_path / "sub_cut.tif",
                        "--json", b, "-q")):
        assert run.code == 0, str(run)
    region, whole = _report(a), _report(b)
    assert region["parameters"].pop("region")["bbox"] == list(BOX)
    assert region == whole
    assert region["reference"]["objects"] == len(np.unique(raster_cut(ref))) - 1
    assert region["warnings"] == []  # one grid: nothing resampled


@pytest.mark.slow  # covered in small by the fast tests above; CI runs it
def test_raster_region_is_the_same_report_with_the_dask_engine(tmp_path, monkeypatch):
    """The Dask engine scores the region of two rasters by blocks (the region's window
    only) and gives the local engine's report."""
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    write_labels(tmp_path / "ref.tif", label_scene())
    write_labels(tmp_path / "sub.tif", label_scene(2, seed=1))

    windows = _spied_windows(monkeypatch)
    value = score_options(matchers=["bgm", "iou"], region=BOX)
    res = score(tmp_path / "ref.tif", tmp_path / "sub.tif", value,
                opened=Engine("dask", client=InlineClient(), n_jobs=1))
    assert res.partitions.get("blocks") and not res.objects_held  # by blocks
    # BOX is rows 300..500 of the file: only they are read, and out to the next block
    # (64 rows) where squares cross its edge (the strip at rows 300..304 crosses every
    # column): rows 0..256 never
    assert windows and all(w[0] >= 256 for w in windows)
    monkeypatch.undo()
    local = score(tmp_path / "ref.tif", tmp_path / "sub.tif", value)
    assert res.to_json() == local.to_json()


def test_rank_scores_each_submission_in_the_region(tmp_path, spied_row_groups):
    """``rank --bbox``: every entry's indicators are its score in the region, and the
    reference's row groups read are only those the region needs."""
    import geoeval

    ref = buildings()
    write_covering(ref, tmp_path / "ref.parquet")
    write_covering(buildings(1.5, seed=1), tmp_path / "a.parquet")
    write_covering(buildings(4.0, seed=2), tmp_path / "b.parquet")
    ranked = geoeval.rank(tmp_path / "ref.parquet", [tmp_path / "a.parquet",
                                                     tmp_path / "b.parquet"],
                          names=["a", "b"], matchers="bgm", region=BOX, id_field="id")
    for name in ("a", "b"):
        alone = geoeval.score(tmp_path / "ref.parquet", tmp_path / f"{name}.parquet",
                              matchers=["bgm"], region=BOX, id_field="id")
        assert ranked.values[name]["recall"] == alone.results["bgm"].recall
        assert ranked.values[name]["accuracy"] == alone.results["bgm"].accuracy
    read = {g for k, v in spied_row_groups.items() if "ref" in k for g in v}
    assert read == expected_groups(ref)


def test_folders_of_scenes_refuse_a_region(tmp_path):
    """Folders of scenes are many layers: a region is refused, pointing at a pattern
    of tiles (one layer)."""
    for name in ("refs", "subs"):
        (tmp_path / name).mkdir()
        buildings().to_file(tmp_path / name / "a.gpkg")
    run = run_cli("score", tmp_path / "refs", tmp_path / "subs", "--bbox", "1,2,3,4",
                  "--json", tmp_path / "r.json")
    assert_error(run, "--bbox/--region", "pattern of tiles", absent=[tmp_path / "r.json"],
                 max_lines=1)


@pytest.mark.parametrize("writer", [write_covering, write_overture])
def test_region_objects_carry_the_whole_readers_attributes(tmp_path, writer):
    """The attributes the per-object outputs carry are the whole file reader's, row for
    row: the covering's bbox column is not one; Overture's bbox struct (no covering
    metadata) is a column like any other."""
    import geoeval
    from geoeval.io.region import region_of

    frame = buildings()
    frame["name"] = [f"b{i}" for i in range(len(frame))]
    writer(frame, tmp_path / "ref.parquet")
    whole = geoeval.read(tmp_path / "ref.parquet", id_field="id")
    part = geoeval.read(tmp_path / "ref.parquet", id_field="id",
                        region=region_of(BOX, CRS))
    assert list(part.attributes.columns) == list(whole.attributes.columns)
    rows = whole.attributes.set_index(whole.ids).loc[part.ids]
    assert part.attributes["name"].tolist() == rows["name"].tolist()


def test_classes_are_read_in_the_region(tmp_path):
    """``--class-field`` in a region: each object's class as the whole reader gives it;
    a missing field is the reader's error."""
    import geoeval
    from geoeval.errors import FieldError
    from geoeval.io.region import region_of

    frame = buildings()
    frame["kind"] = np.where(frame["id"] % 3 == 0, "shed", "house")
    frame.to_file(tmp_path / "ref.gpkg")
    whole = geoeval.read(tmp_path / "ref.gpkg", id_field="id", class_field="kind")
    part = geoeval.read(tmp_path / "ref.gpkg", id_field="id", class_field="kind",
                        region=region_of(BOX, CRS), attributes=False)
    by_id = dict(zip(whole.ids.tolist(), whole.classes.tolist(), strict=True))
    assert part.classes.tolist() == [by_id[i] for i in part.ids.tolist()]
    assert part.attributes is None
    with pytest.raises(FieldError, match="'nope'"):
        geoeval.read(tmp_path / "ref.gpkg", class_field="nope", region=region_of(BOX, CRS))


@pytest.mark.slow  # covered in small by the fast tests above; CI runs it
def test_tiles_and_datasets_by_partitions_give_the_local_report(tmp_path):
    """A layer of tiles against a GeoParquet dataset folder, in a region: the Dask
    engine's report by partitions is the local engine's."""
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    ref, sub = buildings(), buildings(1.5, seed=1)
    (tmp_path / "tiles").mkdir()
    (tmp_path / "dataset").mkdir()
    for k, part in enumerate(np.array_split(np.arange(len(ref)), 4)):
        ref.iloc[part].to_file(tmp_path / "tiles" / f"t{k}.gpkg")
        write_covering(sub.iloc[part], tmp_path / "dataset" / f"p{k}.parquet")
    value = score_options(matchers=["bgm", "mom"], region=BOX, id_field="id")
    args = (str(tmp_path / "tiles" / "*.gpkg"), tmp_path / "dataset", value)
    res = score(*args, opened=Engine("dask", client=InlineClient(), n_jobs=1))
    assert res.partitions and not res.objects_held
    local = score(*args)
    assert res.to_json() == local.to_json()
    assert local.summary.reference.objects == len(cut(ref))


def test_a_striped_raster_says_why_it_reads_whole_rows(tmp_path):
    """A label raster stored in strips cannot be read by the region's blocks alone: a
    note says so; a tiled one gives none."""
    import rasterio
    from rasterio.transform import from_origin

    import geoeval

    labels = label_scene()
    write_labels(tmp_path / "tiled.tif", labels)
    with rasterio.open(tmp_path / "striped.tif", "w", driver="GTiff", height=600, width=600,
                       count=1, dtype=labels.dtype, crs=CRS,
                       transform=from_origin(0, 600, 1, 1)) as ds:
        ds.write(labels, 1)
    tiled = geoeval.score(tmp_path / "tiled.tif", tmp_path / "tiled.tif", region=BOX,
                          matchers=["bgm"])
    striped = geoeval.score(tmp_path / "striped.tif", tmp_path / "tiled.tif", region=BOX,
                            matchers=["bgm"])
    assert tiled.notes == ()
    assert len(striped.notes) == 1 and "striped.tif is stored in strips" in striped.notes[0]
    a, b = json.loads(striped.to_json()), json.loads(tiled.to_json())
    a["reference"].pop("path"), b["reference"].pop("path")
    assert a == b
