"""Windowed labelled rasters: reading block by block gives exactly the whole-array result.

Rasters are written with tiny blocks (16 x 16 tiles, 3-row strips) and the window
size is forced down to one block, so objects straddle many window edges; every
result is compared with the in-memory path (the whole array) and with brute force.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest
import rasterio
from affine import Affine

import geoeval
import geoeval.grid
from geoeval.io.raster import objects_from_labels, read_raster
from geoeval.io.windowed import merge_scans, scan, scan_labels, scan_window, windows
from geoeval.measures.rasterize import GridMasks, label_boxes
from geoeval.overlap import compute_overlap

T = Affine(0.5, 0, 1000.0, 0, -0.5, 2000.0)
CRS = "EPSG:32631"


def write(path, labels, *, tiles=16, strips=None, nodata=None, dtype=None, sparse=False):
    labels = np.asarray(labels)
    kw = {"tiled": True, "blockxsize": tiles, "blockysize": tiles} if strips is None else {
        "blockysize": strips}
    if sparse:
        kw["sparse_ok"] = True
    with rasterio.open(path, "w", driver="GTiff", width=labels.shape[1],
                       height=labels.shape[0], count=1, dtype=dtype or labels.dtype, crs=CRS,
                       transform=T, nodata=nodata, compress="deflate", **kw) as dst:
        dst.write(labels.astype(dtype or labels.dtype), 1)
    return str(path)


def blobs(shape=(70, 83), n=40, seed=0, dtype=np.uint32, lo=1, hi=60):
    """Random rectangles of random labels (later ones on top), some on the edges."""
    rng = np.random.default_rng(seed)
    out = np.zeros(shape, dtype=dtype)
    h, w = shape
    for _ in range(n):
        r, c = rng.integers(-5, h), rng.integers(-5, w)
        out[max(r, 0):max(r + rng.integers(2, 25), 0),
            max(c, 0):max(c + rng.integers(2, 25), 0)] = rng.integers(lo, hi)
    return out


@pytest.fixture
def one_block_windows(monkeypatch):
    """Windows of about one 16 x 16 block (the default groups up to 4 Mpixels)."""
    monkeypatch.setattr(geoeval.grid, "WINDOW_PIXELS", 256)


def brute(a, b, bg_a=0, bg_b=0):
    """C as a dict {(label_a, label_b): count} by Python counting of every pixel."""
    out: dict = {}
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True):
        if x != bg_a and y != bg_b:
            out[(x, y)] = out.get((x, y), 0) + 1
    return out


def assert_same_objects(windowed, memory):
    assert windowed.ids.dtype == memory.ids.dtype
    np.testing.assert_array_equal(windowed.ids, memory.ids)
    np.testing.assert_array_equal(windowed.areas, memory.areas)
    assert not windowed.grid.in_memory and memory.grid.in_memory


def assert_same_overlap(a, b):
    for name in ("rows", "cols", "values"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.union_area == b.union_area and a.method == b.method == "co-occurrence"


def test_windows_cover_the_grid_once():
    for shape, block, target in [((70, 83), (16, 16), 256), ((70, 83), (3, 83), 256),
                                 ((70, 83), (16, 16), 10**6), ((1, 1), (16, 16), 1)]:
        seen = np.zeros(shape, int)
        for r0, r1, c0, c1 in windows(shape, block, target):
            seen[r0:r1, c0:c1] += 1
            assert r0 % block[0] == 0 and c0 % min(block[1], shape[1]) == 0  # block aligned
        assert (seen == 1).all()
    assert windows((0, 5), (16, 16)) == []


@pytest.mark.parametrize("layout", [{"tiles": 16}, {"strips": 3}])
def test_windowed_equals_whole_array(tmp_path, one_block_windows, layout):
    ref, sub = blobs(seed=1), blobs(seed=2, n=60)
    rw = read_raster(write(tmp_path / "r.tif", ref, **layout))
    sw = read_raster(write(tmp_path / "s.tif", sub, **layout))
    rm, sm = objects_from_labels(ref, T, CRS), objects_from_labels(sub, T, CRS)
    assert_same_objects(rw, rm)
    assert_same_objects(sw, sm)
    # boxes found while scanning == find_objects on the whole array
    np.testing.assert_array_equal(label_boxes(rw.grid, rw.ids), label_boxes(rm.grid, rm.ids))
    ov_w, ov_m = compute_overlap(rw, sw), compute_overlap(rm, sm)
    assert_same_overlap(ov_w, ov_m)
    # and both equal brute-force counting
    pairs = brute(ref, sub)
    got = {(int(rw.ids[i]), int(sw.ids[j])): v / 0.25
           for i, j, v in zip(ov_w.rows, ov_w.cols, ov_w.values, strict=True)}
    assert got == pairs
    assert ov_w.union_area == np.count_nonzero((ref > 0) | (sub > 0)) * 0.25
    # Mallows masks read only each object's window, and equal the whole-array masks
    gw, gm = GridMasks(rw), GridMasks(rm)
    for k in range(len(rw)):
        r0, c0, mw = gw.window(k)
        assert (r0, c0) == gm.window(k)[:2]
        np.testing.assert_array_equal(mw, gm.window(k)[2])
    # polygons vectorised window by window (pieces dissolved) cover the same pixels
    import shapely

    pw, pm = rw.polygons, rm.polygons
    assert shapely.equals(pw, pm).all()
    np.testing.assert_allclose(shapely.area(pw), rm.areas)


def test_json_report_identical(tmp_path, monkeypatch, one_block_windows):
    ref, sub = blobs(seed=3), blobs(seed=4, n=50)
    write(tmp_path / "r.tif", ref)
    write(tmp_path / "s.tif", sub)
    monkeypatch.chdir(tmp_path)
    kw = {"matchers": ["bgm", "hoover", "mom", "iou"]}
    from_files = geoeval.score("r.tif", "s.tif", **kw)
    monkeypatch.setattr(geoeval.grid, "WINDOW_PIXELS", 1 << 22)  # one window
    (tmp_path / "one").mkdir()
    write(tmp_path / "one" / "r.tif", ref, tiles=256)
    write(tmp_path / "one" / "s.tif", sub, tiles=256)
    monkeypatch.chdir(tmp_path / "one")
    whole = geoeval.score("r.tif", "s.tif", **kw)
    assert from_files.to_json() == whole.to_json()
    arrays = geoeval.score((ref, T, CRS), (sub, T, CRS), **kw)
    a, b = json.loads(arrays.to_json()), json.loads(from_files.to_json())
    for key in ("overlap", "parameters", "results", "per_class"):
        assert a[key] == b[key]


def test_nodata_and_background(tmp_path, one_block_windows):
    ref = blobs(seed=5)
    ref[::7, ::5] = 99  # nodata pixels scattered over objects and background
    rw = read_raster(write(tmp_path / "n.tif", ref, nodata=99))
    clean = np.where(ref == 99, 0, ref)
    assert_same_objects(rw, objects_from_labels(clean, T, CRS))
    # another background value; nodata maps to it
    r2 = np.where(ref == 0, 7, ref)
    r2[r2 == 7] = 7
    w2 = read_raster(write(tmp_path / "b.tif", r2, nodata=99), background=7)
    m2 = objects_from_labels(np.where(r2 == 99, 7, r2), T, CRS, background=7)
    assert_same_objects(w2, m2)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "int64",
                                   "uint64"])
def test_every_integer_type(tmp_path, one_block_windows, dtype):
    info = np.iinfo(dtype)
    base = blobs(seed=6, hi=40).astype(dtype)
    labels = np.where(base > 0, base + np.array(int(info.max) - 45, dtype), 0).astype(dtype)
    if info.min < 0:
        labels[:10] = np.where(base[:10] > 0, np.array(int(info.min), dtype) + base[:10], 0)
    w = read_raster(write(tmp_path / "t.tif", labels))
    assert_same_objects(w, objects_from_labels(labels, T, CRS))


def test_uint64_labels_beyond_2_53_stay_exact(tmp_path, one_block_windows):
    big = 2**64 - 2
    a = np.zeros((40, 40), np.uint64)
    a[:20] = big
    a[20:, :20] = big - 1  # differs from big only beyond float precision
    a[20:, 20:] = 2**53 + 1
    a[0, 0] = 2**64 - 1  # nodata beyond 2**53: read through GDAL's exact nodata mask
    tif = write(tmp_path / "u.tif", a)
    # rasterio cannot write a UInt64 nodata beyond 2**53; a VRT states it exactly
    (tmp_path / "u.vrt").write_text(f"""<VRTDataset rasterXSize="40" rasterYSize="40">
  <VRTRasterBand dataType="UInt64" band="1" blockXSize="16" blockYSize="16">
    <NoDataValue>{2**64 - 1}</NoDataValue>
    <SimpleSource><SourceFilename relativeToVRT="0">{tif}</SourceFilename>
      <SourceBand>1</SourceBand></SimpleSource>
  </VRTRasterBand>
</VRTDataset>""")
    w = read_raster(tmp_path / "u.vrt")
    assert w.grid.source.gdal_mask
    assert w.ids.dtype == np.uint64
    assert w.ids.tolist() == [2**53 + 1, big - 1, big]
    assert w.areas.tolist() == [400, 400, 799]  # the VRT has no geotransform: pixels
    ov = compute_overlap(w, w)
    assert ov.values.tolist() == w.areas.tolist() and ov.rows.tolist() == [0, 1, 2]


def test_empty_rasters(tmp_path, one_block_windows):
    empty = np.zeros((40, 50), np.uint16)
    ref = blobs((40, 50), seed=7).astype(np.uint16)
    e = read_raster(write(tmp_path / "e.tif", empty))
    r = read_raster(write(tmp_path / "r.tif", ref))
    assert len(e) == 0 and e.ids.dtype == np.int64 and len(r) > 0
    for a, b in [(r, e), (e, r), (e, e)]:
        ov = compute_overlap(a, b)
        assert ov.n_pairs == 0
        assert ov.union_area == pytest.approx(float(a.areas.sum() + b.areas.sum()))
    res = geoeval.score(tmp_path / "r.tif", tmp_path / "e.tif", matchers=["bgm"])
    assert res.results["bgm"].recall == 0 and res.results["bgm"].precision is None
    res = geoeval.score(tmp_path / "e.tif", tmp_path / "r.tif", matchers=["bgm"])
    assert res.results["bgm"].precision == 0 and res.results["bgm"].recall is None


@pytest.mark.parametrize("dtype, lo, hi", [(np.uint16, 1, 60), (np.int64, -2**62, 2**62),
                                           (np.uint64, 1, 60), (np.int8, -9, 9),
                                           (np.uint32, 1, 2**31)])
def test_counts_without_boxes_equal_the_full_scan(tmp_path, one_block_windows, dtype, lo, hi):
    """``boxes=False`` gives the same labels, counts and pairs as the full scan, window by
    window, merged in any order and in one piece; packed labels and spread-out ones."""
    ref = blobs(seed=21, dtype=dtype, lo=lo, hi=hi)
    sub = blobs(seed=22, dtype=dtype, lo=lo, hi=hi)
    if dtype == np.uint64:  # labels beyond 2**63, spread out
        ref = np.where(ref > 0, ref * np.uint64(2**57) + np.uint64(2**63), 0).astype(dtype)
        sub = np.where(sub > 0, sub * np.uint64(2**57) + np.uint64(2**63), 0).astype(dtype)
    full = scan_labels([ref, sub], [0, 0])
    for got in (scan_labels([ref, sub], [0, 0], boxes=False),
                merge_scans([scan_labels([ref[:30], sub[:30]], [0, 0], boxes=False),
                             scan_labels([ref[30:], sub[30:]], [0, 0], (30, 0), boxes=False)]),
                scan([read_raster(write(tmp_path / "r.tif", ref)).grid.source,
                      read_raster(write(tmp_path / "s.tif", sub)).grid.source],
                     n_jobs=2, boxes=False)):
        assert got.boxes == [None, None]
        for s in range(2):
            np.testing.assert_array_equal(got.ids[s], full.ids[s])
            assert got.ids[s].dtype == full.ids[s].dtype
            np.testing.assert_array_equal(got.counts[s], full.counts[s])
        for name in ("pair_a", "pair_b", "pair_counts"):
            np.testing.assert_array_equal(getattr(got, name), getattr(full, name))
        assert got.union == full.union
    # brute force: pixel counts of every label
    want, n = np.unique(ref[ref != 0], return_counts=True)
    np.testing.assert_array_equal(full.ids[0], want)
    np.testing.assert_array_equal(full.counts[0], n)


def test_scan_is_picklable_and_merge_is_order_free(tmp_path):
    ref, sub = blobs(seed=8), blobs(seed=9)
    rw = read_raster(write(tmp_path / "r.tif", ref))
    sw = read_raster(write(tmp_path / "s.tif", sub))
    sources = pickle.loads(pickle.dumps([rw.grid.source, sw.grid.source]))
    again = pickle.loads(pickle.dumps(rw))  # a whole windowed object set pickles too
    np.testing.assert_array_equal(again.grid.read((0, 70, 0, 83)), ref)
    wins = windows(ref.shape, (16, 16), 256)
    parts = [pickle.loads(pickle.dumps(scan_window(sources, w))) for w in wins]
    fwd, rev = merge_scans(parts), merge_scans([merge_scans(parts[::2]),
                                                merge_scans(parts[1::2][::-1])])
    whole = scan_labels([ref, sub], [0, 0])
    either = int(((ref != 0) | (sub != 0)).sum())  # the union, by brute force
    assert whole.union == either == scan_labels([ref, sub], [0, 0], per_label=False).union
    threaded = scan(sources, n_jobs=2, target=256)
    for got in (fwd, rev, threaded):
        for s in range(2):
            np.testing.assert_array_equal(got.ids[s], whole.ids[s])
            np.testing.assert_array_equal(got.counts[s], whole.counts[s])
            np.testing.assert_array_equal(got.boxes[s], whole.boxes[s])
        for name in ("pair_a", "pair_b", "pair_counts"):
            np.testing.assert_array_equal(getattr(got, name), getattr(whole, name))
        assert got.union == whole.union


def test_reused_window_buffers_give_each_window_its_own_scan(tmp_path):
    """Windows read into the thread's reused arrays (shapes change at the edges) scan
    as fresh reads do, and no earlier scan changes when a later window is read."""
    from geoeval.io.windowed import release_window_buffers

    ref, sub = blobs(seed=10), blobs(seed=11)
    rw = read_raster(write(tmp_path / "r.tif", ref))
    sw = read_raster(write(tmp_path / "s.tif", sub))
    sources = [rw.grid.source, sw.grid.source]
    wins = windows(ref.shape, (16, 16), 300)
    assert len({(w[1] - w[0], w[3] - w[2]) for w in wins}) > 2
    fresh = [scan_window(sources, w, boxes=False) for w in wins]
    try:
        reused = [scan_window(sources, w, boxes=False, reuse=True) for w in wins]
    finally:
        release_window_buffers()
    for a, b in zip(fresh, reused, strict=True):
        for s in range(2):
            np.testing.assert_array_equal(a.ids[s], b.ids[s])
            np.testing.assert_array_equal(a.counts[s], b.counts[s])
        for name in ("pair_a", "pair_b", "pair_counts"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert a.union == b.union


SPARSE = """
import resource, sys
import numpy as np, geoeval
res = geoeval.score(sys.argv[1], sys.argv[2], matchers=["bgm", "hoover"])
r = res.results["bgm"]
print(r.f1, len(res.reference), len(res.submission),
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_sparse_large_file_scores_in_bounded_memory(tmp_path):
    """A 100 000 x 100 000 raster (a few KB on disk) scores in a few hundred MB: its unwritten
    blocks are never read; a whole-grid read would need ~50 GB and trip the 300 MB limit."""
    n = 100_000
    paths = []
    for name, shift in (("r.tif", 0), ("s.tif", 3)):
        p = str(tmp_path / name)
        with rasterio.open(p, "w", driver="GTiff", width=n, height=n, count=1, dtype="uint32",
                           crs=CRS, transform=T, tiled=True, blockxsize=1024, blockysize=1024,
                           compress="deflate", sparse_ok=True) as dst:
            for k, (r, c) in enumerate([(10, 10), (50_000, 50_000), (n - 20, n - 25),
                                        (1023 - 5, 70_000)]):
                block = np.full((20, 20), k + 1, np.uint32)
                dst.write(block, 1, window=rasterio.windows.Window(c + shift, r, 20, 20))
        paths.append(p)
    # (mostly the tile index: 98 x 98 tiles)
    assert sum((tmp_path / x).stat().st_size for x in ("r.tif", "s.tif")) < 400_000
    out = subprocess.run([sys.executable, "-c", SPARSE, *paths], capture_output=True, text=True,
                         env={"GEOEVAL_MAX_MEMORY": "300M", "PATH": "/usr/bin"},
                         timeout=300)
    assert out.returncode == 0, out.stderr
    f1, nr, ns, rss_kb = out.stdout.split()
    assert (int(nr), int(ns)) == (4, 4) and float(f1) == 1.0
    # KiB: about 170 MB alone, 620 MB once seen under a loaded full suite; the whole grid
    # alone would be 40 GB
    assert int(rss_kb) < 1_000_000


def test_one_pass_pair_reading(tmp_path, one_block_windows):
    """read_pair_counted scans two rasters on one grid together and returns the pairs
    it counted; they are the overlap."""
    from geoeval.errors import InputError
    from geoeval.io import read_pair, read_pair_counted

    ref, sub = blobs(seed=10), blobs(seed=11)
    r, s = write(tmp_path / "r.tif", ref), write(tmp_path / "s.tif", sub, strips=5)
    a, b, _, counts = read_pair_counted(r, s)
    assert counts is not None and counts.belong_to(a.grid, b.grid)
    assert not counts.belong_to(read_raster(r).grid, b.grid)  # another grid: not its counts
    for got, alone in ((a, read_raster(r)), (b, read_raster(s))):
        np.testing.assert_array_equal(got.ids, alone.ids)
        np.testing.assert_array_equal(got.areas, alone.areas)
        # the readers leave boxes out; asked for, one scan finds them (then kept)
        assert got.grid.boxes is None and got.grid.scanned is None
        np.testing.assert_array_equal(label_boxes(got.grid, got.ids),
                                      label_boxes(alone.grid, alone.ids))
        assert got.grid.scanned is not None
    alone = compute_overlap(read_raster(r), read_raster(s))
    assert_same_overlap(compute_overlap(a, b, counts), alone)
    assert_same_overlap(compute_overlap(a, b), alone)
    # a truncated submission: the error names it, not the reference
    data = (tmp_path / "s.tif").read_bytes()
    (tmp_path / "t.tif").write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(InputError, match="t.tif"):
        read_pair(r, str(tmp_path / "t.tif"))


def test_a_file_read_again_is_the_file_on_disk_now(tmp_path, monkeypatch):
    """Open handles are reused only for the same file, unchanged: the same relative name
    in another folder, or a raster written anew at the same path (a notebook regenerating
    its predictions), is read afresh, never the pixels of the one read before."""
    one = np.zeros((30, 30), np.int32)
    one[2:12, 2:12], one[15:25, 15:25] = 1, 2
    other = np.zeros((40, 40), np.int32)
    other[2:6, 2:6] = 7
    for folder, labels in (("a", one), ("b", other)):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder / "ref.tif", labels)
    monkeypatch.chdir(tmp_path / "a")
    assert read_raster("ref.tif").ids.tolist() == [1, 2]
    monkeypatch.chdir(tmp_path / "b")
    assert read_raster("ref.tif").ids.tolist() == [7]
    again = other.copy()
    again[30:35, 30:35] = 9
    write(tmp_path / "b" / "ref.tif", again)  # same path, same size on disk
    res = read_raster("ref.tif")
    assert res.ids.tolist() == [7, 9] and res.areas[1] / res.areas[0] == 25 / 16


def test_a_sparse_raster_against_polygons_reads_only_its_written_blocks(tmp_path):
    """A 100 000² sparse GeoTIFF against a vector layer: the raster's objects are traced
    from the windows that hold written file blocks only, each cut to them (the whole
    grid, 10¹⁰ pixels, was read and traced before: minutes). Same numbers as against
    the same objects as a raster; pixels read counted."""
    import shapely

    from geoeval.io.windowed import RasterSource

    n, tile, side = 100_000, 512, 20
    places = [(10, 10), (50_000, 50_000), (n - 30, n - 40), (tile - 5, 70_000)]
    transform = rasterio.transform.from_origin(500000, n * 0.5, 0.5, 0.5)
    paths = []
    for name, shift in (("ref.tif", 0), ("sub.tif", 3)):
        with rasterio.open(tmp_path / name, "w", driver="GTiff", width=n, height=n, count=1,
                           dtype="uint32", crs=CRS, transform=transform, tiled=True,
                           blockxsize=tile, blockysize=tile, compress="deflate",
                           sparse_ok=True) as dst:
            for k, (r, c) in enumerate(places):
                dst.write(np.full((side, side), k + 1, np.uint32), 1,
                          window=rasterio.windows.Window(c + shift, r, side, side))
        paths.append(tmp_path / name)
    corners = [(transform @ (c + 3, r), transform @ (c + 3 + side, r + side))
               for r, c in places]
    import geopandas as gpd

    gpd.GeoDataFrame({"n": range(4)}, geometry=[shapely.box(x0, y1, x1, y0) for (x0, y0),
                                                (x1, y1) in corners],
                     crs=CRS).to_file(tmp_path / "sub.gpkg")
    read = []
    original = RasterSource.read

    def counted(self, window, dataset=None, out=None):
        read.append((window[1] - window[0]) * (window[3] - window[2]))
        return original(self, window, dataset, out)

    RasterSource.read = counted
    try:
        vector = geoeval.score(paths[0], tmp_path / "sub.gpkg", matchers=["bgm"], n_jobs=1)
    finally:
        RasterSource.read = original
    raster = geoeval.score(paths[0], paths[1], matchers=["bgm"])
    # the scan and the tracing each read the 5 written blocks (one object straddles two)
    assert sum(read) <= 2 * 5 * tile * tile, sum(read)
    a, b = vector.results["bgm"], raster.results["bgm"]
    assert (a.f1, a.matching.missed.size) == (b.f1, b.matching.missed.size) == (1.0, 0)
    assert a.accuracy == pytest.approx(b.accuracy, rel=1e-12)
