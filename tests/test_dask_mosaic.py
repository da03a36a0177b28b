"""Label mosaics scored by blocks on a Dask cluster: the local engine's numbers.

Two tiled GeoTIFFs (16 × 16 file blocks) cut into blocks of 32 × 32 pixels, with
objects straddling block edges and corners, a label held in two far-apart blocks,
a component crossing four blocks, and the edge cases (nothing detected, nothing
to detect). One real ``distributed.LocalCluster`` (2 worker processes) per module.
"""

from __future__ import annotations

import numpy as np
import pytest
from dask_cluster import kill_a_worker_mid_run, local_cluster, record_gathered

from geoeval.engine import mosaic

distributed = pytest.importorskip("distributed")
rasterio = pytest.importorskip("rasterio")

#: Blocks of 32 x 32 pixels on the test mosaics.
BLOCK = 32


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as c:
        yield c


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of 32 x 32 pixels; the boundary solved in groups of about 8 objects (at most
    four tasks a worker: 8 groups)."""
    monkeypatch.setattr(mosaic, "BLOCK_PIXELS", BLOCK * BLOCK)
    monkeypatch.setattr(mosaic, "BOUNDARY_GROUP_OBJECTS", 8)


def scene(seed: int = 0, h: int = 96, w: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """Reference and submission labels: rectangles on a jittered grid (many cut by the
    32-pixel block edges), detections shifted, split in two, merged, missed; false
    alarms; a reference label held in two far-apart blocks; a chain of alternating
    reference and submitted objects around the corner (32, 32) of four blocks."""
    rng = np.random.default_rng(seed)
    ref = np.zeros((h, w), np.int32)
    sub = np.zeros((h, w), np.int32)
    label = 1
    for r in range(2, h - 8, 11):
        for c in range(2, w - 8, 13):
            r0, c0 = r + int(rng.integers(0, 4)), c + int(rng.integers(0, 4))
            hh, ww = int(rng.integers(3, 9)), int(rng.integers(3, 10))
            ref[r0:r0 + hh, c0:c0 + ww] = label
            u = rng.random()
            dr, dc = int(rng.integers(-2, 3)), int(rng.integers(-2, 3))
            s0, s1 = max(r0 + dr, 0), max(c0 + dc, 0)
            if u < 0.15:
                pass  # missed
            elif u < 0.3:  # split in two
                sub[s0:s0 + hh, s1:s1 + ww // 2] = 1000 + label
                sub[s0:s0 + hh, s1 + ww // 2:s1 + ww] = 5000 + label
            else:
                sub[s0:s0 + hh, s1:s1 + ww] = 1000 + label
            label += 1
    for _ in range(6):  # false alarms
        r0, c0 = int(rng.integers(0, h - 4)), int(rng.integers(0, w - 4))
        sub[r0:r0 + 3, c0:c0 + 3] = 9000 + int(rng.integers(0, 900))
    # one label in two far-apart blocks (top-left and bottom-right)
    ref[1:4, 1:4] = 777
    ref[h - 5:h - 2, w - 6:w - 2] = 777
    sub[h - 5:h - 2, w - 6:w - 3] = 7777
    # a chain around the corner (32, 32) of four blocks: ref A | sub X | ref B | sub Y ...
    ref[26:31, 26:38] = 801   # top-left and top-right blocks
    sub[29:36, 34:40] = 8801  # bridges top-right and bottom-right
    ref[34:40, 36:42] = 802   # bottom-right
    sub[36:42, 28:37] = 8802  # bottom-right and bottom-left
    ref[38:44, 24:30] = 803   # bottom-left
    return ref, sub


def write(path, labels, block=16, compress="deflate"):
    from rasterio.transform import from_origin

    h, w = labels.shape
    with rasterio.open(path, "w", driver="GTiff", width=w, height=h, count=1,
                       dtype=labels.dtype.name, crs="EPSG:32631", tiled=True,
                       blockxsize=block, blockysize=block, compress=compress,
                       transform=from_origin(500000, 4000000, 0.5, 0.5)) as d:
        d.write(labels, 1)
    return str(path)


def compare(paths, cluster, **options):
    """The mosaic run's JSON report is the local engine's, byte for byte (its per-object
    lists gathered from the blocks)."""
    import geoeval

    local = geoeval.score(*paths, **options)
    res = geoeval.score(*paths, engine="dask", scheduler=cluster.scheduler_address,
                        **options)
    assert isinstance(res, geoeval.ScoreResult) and not res.objects_held
    assert res.to_json() == local.to_json()
    return res, local.to_dict()


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_mosaic_report_equals_local(cluster, tmp_path):
    ref, sub = scene()
    paths = [write(tmp_path / "ref.tif", ref), write(tmp_path / "sub.tif", sub)]
    res, local = compare(paths, cluster, mallows=True)
    p = res.partitions
    assert p["blocks"] == 12
    # the cut objects: counted by hand from the scene (brute force over the blocks)
    held = {}
    for side, lab in enumerate((ref, sub)):
        for b, (r0, r1, c0, c1) in enumerate(mosaic.plan_blocks(lab.shape, (16, 16),
                                                                BLOCK * BLOCK)):
            for v in np.unique(lab[r0:r1, c0:c1]):
                if v:
                    held.setdefault((side, int(v)), set()).add(b)
    assert p["cut_objects"] == sum(len(b) for b in held.values() if len(b) > 1)
    assert p["cut_objects"] > 20 and p["boundary_objects"] >= p["cut_objects"]
    assert local["overlap"]["pairs"] > 40
    assert {k: v for k, v in local["results"]["mom"]["instances_by_kind"].items() if v}


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_mosaic_edge_cases(cluster, tmp_path):
    ref, sub = scene(1)
    empty = np.zeros_like(ref)
    r = write(tmp_path / "ref.tif", ref)
    e = write(tmp_path / "empty.tif", empty)
    s = write(tmp_path / "sub.tif", sub)
    res, _ = compare([r, e], cluster, matchers=["bgm", "iou", "mom"])  # nothing detected
    assert res.results["iou"].recall == 0 and len(res.warnings) == 1
    res, _ = compare([e, s], cluster, matchers=["bgm", "hoover"])  # nothing to detect
    assert res.results["bgm"].recall is None
    compare([e, e], cluster, matchers=["iou", "mom"])
    compare([r, s], cluster, matchers=["iou"], iou_threshold=0.3)


def test_plan_blocks_cover_the_grid_once():
    for shape, tile, target in (((96, 128), (16, 16), 1024), ((100, 70), (16, 32), 3000),
                                ((5, 7), (2, 4), 1), ((1, 1), (256, 256), None)):
        seen = np.zeros(shape, np.int64)
        for r0, r1, c0, c1 in mosaic.plan_blocks(shape, tile, target):
            seen[r0:r1, c0:c1] += 1
            assert r0 % tile[0] == 0 and c0 % tile[1] == 0
        assert (seen == 1).all()


def test_cut_labels_by_hand():
    """Labels held by more than one block, and their owner (the first such block)."""
    a = (np.array([1, 2, 5]), np.array([10]))
    b = (np.array([2, 3]), np.array([10, 11]))
    c = (np.array([2, 5, 9]), np.array([11, 12]))
    (ref, ref_owner), (sub, sub_owner) = mosaic.cut_labels([0, 3, 4], a, b, c)
    assert ref.tolist() == [2, 5] and ref_owner.tolist() == [0, 0]
    assert sub.tolist() == [10, 11] and sub_owner.tolist() == [0, 3]
    (ref, _), (sub, _) = mosaic.cut_labels([7], a)
    assert ref.size == 0 and sub.size == 0


def _nbytes(value) -> int:
    """Bytes of a value as it travels (pickled: arrays inside any object counted)."""
    import pickle

    return len(pickle.dumps(value, protocol=5))


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_client_gathers_per_block_not_per_object(cluster, tmp_path, monkeypatch):
    """What reaches the client is bounded by the blocks: four times the objects in as many
    blocks, about the same bytes; the client reads no pixel (the readers fail there).
    Without the report's per-object lists (``lists=False``: the command line without
    ``--json``), which are sent when asked for."""

    import geoeval
    from geoeval.io import windowed

    def refuse(*a, **k):
        raise AssertionError("the client read pixels")

    small = [write(tmp_path / f"s{k}.tif", lab) for k, lab in enumerate(scene(2))]
    big = [write(tmp_path / f"b{k}.tif", lab) for k, lab in enumerate(scene(3, 192, 256))]
    monkeypatch.setattr(windowed.RasterSource, "read", refuse)
    gathered = record_gathered(monkeypatch, _nbytes)
    options = dict(engine="dask", scheduler=cluster.scheduler_address, matchers=["bgm", "mom"],
                   lists=False)
    res = geoeval.score(*small, **options)
    small_bytes = sum(gathered)
    gathered.clear()
    monkeypatch.setattr(mosaic, "BLOCK_PIXELS", 4 * BLOCK * BLOCK)
    res_big = geoeval.score(*big, **options)
    big_bytes = sum(gathered)
    monkeypatch.undo()
    assert res.partitions["blocks"] == res_big.partitions["blocks"] == 12
    assert res_big.summary.reference.objects > 3.5 * res.summary.reference.objects
    assert big_bytes < 1.3 * small_bytes, (small_bytes, big_bytes)


def test_the_run_in_process_gives_the_local_report(tmp_path):
    """The engine's own run (:func:`geoeval.engine.mosaic.score_mosaic`) in this process
    (:class:`geoeval.engine.inline.InlineClient`) on the 12-block scene, MOM with its
    Mallows scores: the report is the local engine's, byte for byte, its lists gathered
    from the blocks and the boundary groups."""
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.scoring import ScoreResult
    from geoeval.scoring.scene import score

    ref, sub = scene(3)
    paths = [write(tmp_path / "ref.tif", ref), write(tmp_path / "sub.tif", sub)]
    options = dict(matchers=["bgm", "mom", "iou"], mallows=True)
    res = score(*paths, opened=Engine("dask", client=InlineClient(), n_jobs=1), **options)
    local = score(*paths, **options)
    assert isinstance(res, ScoreResult) and not res.objects_held
    assert res.partitions["blocks"] == 12
    assert res.partitions["cut_objects"] > 20
    assert res.to_json() == local.to_json()


def test_past_the_list_limit_the_blocks_give_the_local_report(tmp_path, monkeypatch):
    """Past the report's limit (:data:`geoeval.matching.lists.LIST_LIMIT`) the run by
    blocks decides on the objects counted once (not once per block holding them): the
    report is the local engine's, byte for byte, with each matcher's ``not_listed``, and
    no block or boundary group sends its lists; at the limit every object is listed."""
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.matching import lists as match_lists
    from geoeval.scoring.scene import score

    class Recording(InlineClient):
        def __init__(self) -> None:
            self.summaries: list = []

        def submit(self, fn, *args, pure=True, **kwargs):
            fut = super().submit(fn, *args, **kwargs)
            if fn in (mosaic.summary_of, mosaic.solve_group):
                self.summaries.append(fut.result())
            return fut

    ref, sub = scene(3)
    paths = [write(tmp_path / "ref.tif", ref), write(tmp_path / "sub.tif", sub)]
    n = np.unique(ref).size - 1 + np.unique(sub).size - 1
    for limit, listed in ((n - 1, False), (n, True)):
        monkeypatch.setattr(match_lists, "LIST_LIMIT", limit)
        client = Recording()
        res = score(*paths, opened=Engine("dask", client=client, n_jobs=1),
                    matchers=["bgm", "mom"])
        assert res.partitions["cut_objects"] > 20  # the blocks hold more than n labels
        assert res.to_json() == score(*paths, matchers=["bgm", "mom"]).to_json()
        assert client.summaries and all(("lists" in s) is listed for s in client.summaries)
        for r in res.to_dict()["results"].values():
            assert ("not_listed" in r) is not listed and ("instances" in r) is listed
            if not listed:
                assert r["not_listed"]["objects"] == n and r["objects_dataset"] is None


def test_every_object_solved_once_in_process(tmp_path):
    """The block tasks run in this process on the 12-block scene: every object is solved
    exactly once (by its block or by the boundary task), the cut labels are those held by
    several blocks, and the chain around the corner of four blocks (and the label in two
    far-apart blocks) goes to the boundary task whole."""
    from geoeval.io.raster import open_source
    from geoeval.io.windowed import merge_scans

    ref, sub = scene()
    paths = [write(tmp_path / "ref.tif", ref), write(tmp_path / "sub.tif", sub)]
    sources = [open_source(p)[0] for p in paths]
    blocks = mosaic.plan_blocks(ref.shape, (16, 16), BLOCK * BLOCK)
    assert len(blocks) == 12
    scans = [mosaic.scan_block(sources, b, boxes=True) for b in blocks]
    n = 3
    splits = [mosaic.label_split(s, n) for s in scans]
    buckets = [mosaic.cut_labels(list(range(len(blocks))), *[mosaic.take(s, q) for s in splits])
               for q in range(n)]
    cut = mosaic.all_cut(*buckets)
    # brute force: labels held by several blocks, and the first of them
    for side, lab in enumerate((ref, sub)):
        want = {}
        for b, (r0, r1, c0, c1) in enumerate(blocks):
            for v in np.unique(lab[r0:r1, c0:c1]):
                if v:
                    want.setdefault(int(v), []).append(b)
        multi = sorted(v for v, bs in want.items() if len(bs) > 1)
        assert cut[side][0].tolist() == multi
        assert cut[side][1].tolist() == [want[v][0] for v in multi]
    config = mosaic.Config(tuple(sources), tuple(open_source(paths[0])[1])[:6],
                           open_source(paths[0])[2], ("iou",), {"iou": {"threshold": 0.5}},
                           (), None)
    results = [mosaic.solve_block(i, s, cut, config) for i, s in enumerate(scans)]
    boundary = merge_scans([r.boundary for r in results])
    for side, lab in enumerate((ref, sub)):
        every = np.unique(lab[lab > 0])
        interior = sum(r.summary["n_reference" if side == 0 else "n_submission"]
                       for r in results)
        assert interior + boundary.ids[side].size == every.size
        assert np.isin(boundary.ids[side], every).all()
        # the boundary's stitched counts are the objects' whole pixel counts
        assert boundary.counts[side].tolist() == [int((lab == v).sum())
                                                  for v in boundary.ids[side]]
    assert {777, 801, 802, 803} <= set(boundary.ids[0].tolist())
    assert {7777, 8801, 8802} <= set(boundary.ids[1].tolist())
    assert 802 not in cut[0][0]  # inside one block, yet in the chain: boundary all the same
    # the boundary dealt into groups of whole components: every object in one group, every
    # pair with both its labels in its group
    groups = mosaic.stitch_boundary(config, 3, *[r.boundary for r in results])
    for side in (0, 1):
        got = np.concatenate([g.ids[side] for g in groups])
        assert np.sort(got).tolist() == boundary.ids[side].tolist()
    for g in groups:
        assert np.isin(g.pair_a, g.ids[0]).all() and np.isin(g.pair_b, g.ids[1]).all()
    assert sum(g.pair_a.size for g in groups) == boundary.pair_a.size
    assert min(g.ids[0].size for g in groups) > 0
    solved = [mosaic.solve_group(config, groups, k) for k in range(3)]
    assert sum(x["objects"] for x in solved) == boundary.ids[0].size + boundary.ids[1].size
    assert sum(x["pairs"] for x in solved) == boundary.pair_a.size


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_a_corrupt_tile_names_the_block_and_the_files(cluster, tmp_path):
    """A tile that fails to decompress on a worker: the local engine's one InputError,
    naming the file and the window read (its rows and columns) with GDAL's reason."""
    import geoeval
    from geoeval.errors import InputError

    ref, sub = scene()
    r = write(tmp_path / "ref.tif", ref)
    s = write(tmp_path / "sub.tif", sub)
    with rasterio.open(s) as d:  # the file offset of one tile in the middle
        offset = int(d.get_tag_item("BLOCK_OFFSET_3_2", "TIFF", bidx=1))
        size = int(d.get_tag_item("BLOCK_SIZE_3_2", "TIFF", bidx=1))
    data = bytearray(open(s, "rb").read())
    data[offset:offset + size] = b"\xff" * size
    open(s, "wb").write(bytes(data))
    with pytest.raises(InputError) as err:
        geoeval.score(r, s, engine="dask", scheduler=cluster.scheduler_address,
                      matchers=["iou"])
    text = str(err.value)
    assert text.startswith(f"{s}: cannot read band 1 ("), text
    assert "X offset 3, Y offset 2" in text  # GDAL's reason names the tile
    assert "is the file truncated" in text and "\n" not in text
    with pytest.raises(InputError) as local:  # the same words
        geoeval.score(r, s, matchers=["iou"])
    assert str(local.value) == text


@pytest.mark.slow  # a Dask LocalCluster (CI runs it: pytest -m slow)
def test_a_worker_killed_mid_run_does_not_change_the_result(tmp_path):
    """A worker process killed once blocks are scanned (their scans live on the workers):
    Dask reruns the lost tasks (the nanny starts a new worker) and the report is the
    undisturbed run's."""
    import logging

    import geoeval

    paths = [write(tmp_path / f"{k}.tif", lab) for k, lab in enumerate(scene(4, 192, 256))]
    options = dict(matchers=["bgm", "iou"])
    with local_cluster(logging.CRITICAL) as c:
        clean = geoeval.score(*paths, engine="dask", scheduler=c.scheduler_address,
                              **options).to_dict()
        res = kill_a_worker_mid_run(c, lambda: geoeval.score(
            *paths, engine="dask", scheduler=c.scheduler_address, **options), "scan_block")
    assert res.to_dict() == clean
