"""Error corpus, labelled rasters: every integer dtype, hostile files, odd grids.

Every case runs the installed ``geoeval`` console script (see ``conftest.py``): a
refused input is one short line naming the file or option, exit 2, inputs
untouched; an unusual but valid input gives the numbers worked out by hand below.

The hand-worked scene (6 x 6 pixels of 1 m², background 0)::

    reference             submission
    A A . . C C           A'A'A'. C'C'
    A A . . C C           A'A'A'. C'C'
    . . . . . .           . . . . . .
    D D . B B B           D'D'. B'B'.
    D D . B B B           D'D'. B'B'.
    D D . B B B           D'D'. B'B'.

|A| = 4, |A'| = 6, |A ∩ A'| = 4 (IoU 2/3); |B| = 9, |B'| = 6, |B ∩ B'| = 6 (IoU
2/3); C = C' (4 px) and D = D' (6 px) (IoU 1). Every matcher pairs them one to
one: mean IoU 5/6; BGM accuracy = matched overlap / union = 20 / 25 = 0.8.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import rasterio
from affine import Affine
from rasterio.transform import from_origin
from rasterio.windows import Window

from tests.corpus.conftest import assert_error, assert_ok, run_cli

UTM = "EPSG:32651"
T1 = from_origin(570000.0, 1450000.0, 1.0, 1.0)
INT_DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"]

SLOTS_REF = {  # object position -> (rows, cols) slices
    "A": (slice(0, 2), slice(0, 2)),
    "B": (slice(3, 6), slice(3, 6)),
    "C": (slice(0, 2), slice(4, 6)),
    "D": (slice(3, 6), slice(0, 2)),
}
SLOTS_SUB = {
    "A": (slice(0, 2), slice(0, 3)),
    "B": (slice(3, 6), slice(3, 5)),
    "C": (slice(0, 2), slice(4, 6)),
    "D": (slice(3, 6), slice(0, 2)),
}


def write(path, labels, *, dtype=None, crs=UTM, transform=T1, nodata=None, **opts):
    """A one-band GeoTIFF (or ``count`` bands when ``labels`` is 3-D)."""
    labels = np.asarray(labels)
    bands = labels if labels.ndim == 3 else labels[None]
    dtype = dtype or labels.dtype.name
    with rasterio.open(path, "w", driver="GTiff", width=bands.shape[2], height=bands.shape[1],
                       count=bands.shape[0], dtype=dtype, crs=crs, transform=transform,
                       nodata=nodata, **opts) as dst:
        dst.write(bands.astype(dtype) if not dtype.startswith("complex_") else bands)
    return path


def objs(values: list[int]) -> dict[str, int]:
    """Labels of objects A, B, C, D in that order."""
    return dict(zip("ABCD", values, strict=True))


def scene(values: dict[str, int], slots: dict[str, tuple[slice, slice]], dtype: str,
          background: int = 0) -> np.ndarray:
    arr = np.full((6, 6), background, dtype=dtype)
    for key, value in values.items():
        arr[slots[key]] = value
    return arr


def huge_labels(dtype: str) -> list[int]:
    """Four labels at the edges of the dtype; 64-bit ones include 2**53 and 2**53 + 1,
    which collapse into one value as float64."""
    info = np.iinfo(dtype)
    if info.bits == 64:
        return [int(info.max), int(info.max) - 1, 2**53, 2**53 + 1] if info.min == 0 else \
            [int(info.max), int(info.min), 2**53, 2**53 + 1]
    low = int(info.min) if info.min < 0 else 1
    return [int(info.max), int(info.max) - 1, low, low + 1]


def score_json(tmp_path, ref, sub, *extra: str) -> dict:
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, *extra, inputs=[ref, sub])
    assert_ok(run)
    return json.loads(out.read_text())


def pairs(result: dict) -> list[tuple[list[int], list[int]]]:
    return sorted((i["reference"], i["submission"]) for i in result["instances"])


# --- every integer dtype x {normal, huge labels, empty side, disjoint objects} -----------

@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("labels", ["normal", "huge"])
def test_dtype_labels_exact(tmp_path, dtype, labels):
    values = [1, 2, 3, 4] if labels == "normal" else huge_labels(dtype)
    ref_v = objs(values)
    sub_v = objs(values[1:] + values[:1])  # same labels, other objects
    ref = write(tmp_path / "ref.tif", scene(ref_v, SLOTS_REF, dtype))
    sub = write(tmp_path / "sub.tif", scene(sub_v, SLOTS_SUB, dtype))
    d = score_json(tmp_path, ref, sub)
    assert d["reference"]["objects"] == 4 and d["submission"]["objects"] == 4
    assert d["overlap"]["union_area"] == 25.0
    expect = sorted(([ref_v[k]], [sub_v[k]]) for k in "ABCD")
    for name, res in d["results"].items():
        assert (res["missed"], res["false_alarms"]) == (0, 0), name
        assert pairs(res) == expect, name
    iou = {i["reference"][0]: i["score"] for i in d["results"]["iou"]["instances"]}
    assert iou == pytest.approx({ref_v["A"]: 2 / 3, ref_v["B"]: 2 / 3, ref_v["C"]: 1.0,
                                 ref_v["D"]: 1.0})
    assert d["results"]["iou"]["accuracy"] == pytest.approx(5 / 6)
    assert d["results"]["bgm"]["accuracy"] == pytest.approx(0.8)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_dtype_empty_submission(tmp_path, dtype):
    """A submission that found nothing: every reference missed, undefined values null."""
    values = huge_labels(dtype)
    ref = write(tmp_path / "ref.tif", scene(objs(values), SLOTS_REF, dtype))
    sub = write(tmp_path / "sub.tif", np.zeros((6, 6), dtype=dtype))
    d = score_json(tmp_path, ref, sub)
    assert d["overlap"]["pairs"] == 0 and d["overlap"]["union_area"] == 23.0
    for name, res in d["results"].items():
        assert (res["missed"], res["false_alarms"]) == (4, 0), name
        assert sorted(res["missed_ids"]) == sorted(values), name
        assert res["precision"] is None and res["recall"] == 0.0, name
        assert res["instances"] == [], name
    assert d["results"]["iou"]["accuracy"] is None
    assert d["results"]["bgm"]["accuracy"] == 0.0  # 0 matched overlap / 23


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_dtype_disjoint_objects(tmp_path, dtype):
    """No labelled pixel in common: all missed, all false alarms, no instance."""
    values = huge_labels(dtype)
    ref = write(tmp_path / "ref.tif",
                scene({"A": values[0], "C": values[1]}, SLOTS_REF, dtype))
    sub = write(tmp_path / "sub.tif",
                scene({"B": values[2], "D": values[3]}, SLOTS_SUB, dtype))
    d = score_json(tmp_path, ref, sub)
    assert d["overlap"]["pairs"] == 0 and d["overlap"]["union_area"] == 4 + 4 + 6 + 6
    for name, res in d["results"].items():
        assert (res["missed"], res["false_alarms"]) == (2, 2), name
        assert sorted(res["missed_ids"]) == sorted(values[:2]), name
        assert sorted(res["false_alarm_ids"]) == sorted(values[2:]), name
        assert (res["precision"], res["recall"]) == (0.0, 0.0), name
    assert d["results"]["iou"]["accuracy"] is None
    assert d["results"]["bgm"]["accuracy"] == 0.0


@pytest.mark.parametrize("side", ["reference", "both"])
def test_empty_reference(tmp_path, side):
    ref = write(tmp_path / "ref.tif", np.zeros((6, 6), np.uint8))
    sub_labels = scene({"A": 7}, SLOTS_SUB, "uint8") if side == "reference" else \
        np.zeros((6, 6), np.uint8)
    sub = write(tmp_path / "sub.tif", sub_labels)
    d = score_json(tmp_path, ref, sub)
    for name, res in d["results"].items():
        assert res["missed"] == 0 and res["recall"] is None, name
        assert res["false_alarms"] == (1 if side == "reference" else 0), name
    if side == "both":
        assert d["overlap"]["union_area"] == 0.0
        assert all(r["precision"] is None for r in d["results"].values())


# --- files that are not (readable) rasters -------------------------------------------------

def _good(tmp_path, name="good.tif"):
    return write(tmp_path / name, scene({"A": 1}, SLOTS_REF, "uint8"))


def _truncated(tmp_path):
    """A GeoTIFF whose header is intact but whose pixel data was cut off (opens, fails on read)."""
    rng = np.random.default_rng(0)
    full = write(tmp_path / "full.tif", rng.integers(0, 255, (64, 64)).astype(np.uint8),
                 compress="deflate")
    data = full.read_bytes()
    full.unlink()
    p = tmp_path / "truncated.tif"
    p.write_bytes(data[: len(data) // 2])
    return p


def _save(path, data):
    path.write_bytes(data)
    return path


def _missing_source_vrt(tmp_path):
    p = tmp_path / "mosaic.vrt"
    p.write_text(
        '<VRTDataset rasterXSize="6" rasterYSize="6"><SRS>EPSG:32651</SRS>'
        "<GeoTransform>570000, 1, 0, 1450000, 0, -1</GeoTransform>"
        '<VRTRasterBand dataType="Byte" band="1"><SimpleSource>'
        '<SourceFilename relativeToVRT="1">tile_gone.tif</SourceFilename>'
        "<SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>")
    return p


BAD_FILES = {
    "zero-byte": lambda tmp: _save(tmp / "empty.tif", b""),
    "text": lambda tmp: _save(tmp / "notes.tif", b"this is not a raster\n"),
    "random-bytes": lambda tmp: _save(tmp / "noise.tif",
                                      np.random.default_rng(1).bytes(3000)),
    "tiff-magic-only": lambda tmp: _save(tmp / "magic.tif", b"II*\x00\x08\x00\x00\x00"),
    "truncated-data": _truncated,
    "vrt-missing-source": _missing_source_vrt,
    "png-named-tif": lambda tmp: _save(tmp / "fake.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 20),
}


@pytest.mark.parametrize("side", ["reference", "submission"])
@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_unreadable_raster(tmp_path, kind, side):
    bad = BAD_FILES[kind](tmp_path)
    good = _good(tmp_path)
    out = tmp_path / "out.json"
    args = (bad, good) if side == "reference" else (good, bad)
    run = run_cli("score", *args, "--json", out, inputs=[bad, good])
    assert_error(run, bad.name, absent=[out], max_lines=2)
    assert "cannot" in run.stderr


def test_truncated_file_opens_but_fails_on_read(tmp_path):
    """The case must be the read, not the open: prove the file opens."""
    bad = _truncated(tmp_path)
    with rasterio.open(bad) as src:
        assert src.width == 64
    run = run_cli("score", bad, bad, inputs=[bad])
    assert_error(run, "truncated.tif", "cannot read band 1")


# --- bands, data types, background, nodata ------------------------------------------------

@pytest.mark.parametrize("band", ["3", "17", "0", "-1"])
def test_band_out_of_range(tmp_path, band):
    two = write(tmp_path / "two.tif", np.stack([scene({"A": 1}, SLOTS_REF, "uint8")] * 2))
    run = run_cli("score", two, two, "--band", band, inputs=[two])
    if int(band) > 0:  # the file decides
        assert_error(run, "two.tif", f"band {band} does not exist (the raster has 2)")
    else:  # a usage error before any file is opened
        assert_error(run, "--band", band)


def test_second_band_is_read(tmp_path):
    """Band 2 holds the hand-worked scene; band 1 is all background."""
    ref_v, sub_v = objs([1, 2, 3, 4]), objs([5, 6, 7, 8])
    ref = write(tmp_path / "ref.tif", np.stack([np.zeros((6, 6), np.uint8),
                                                scene(ref_v, SLOTS_REF, "uint8")]))
    sub = write(tmp_path / "sub.tif", np.stack([np.zeros((6, 6), np.uint8),
                                                scene(sub_v, SLOTS_SUB, "uint8")]))
    d = score_json(tmp_path, ref, sub, "--band", "2")
    assert d["results"]["bgm"]["accuracy"] == pytest.approx(0.8)
    assert pairs(d["results"]["iou"]) == sorted(([ref_v[k]], [sub_v[k]]) for k in "ABCD")


NON_INTEGER = {
    "float32-integral": (np.float32, 1.0),
    "float32-fraction": (np.float32, 1.5),
    "float64-integral": (np.float64, 7.0),
    "float64-nan": (np.float64, np.nan),
    "complex64": ("complex64", 1 + 1j),
    "complex_int16": ("complex_int16", 1 + 0j),
}


@pytest.mark.parametrize("kind", sorted(NON_INTEGER))
def test_non_integer_band_is_refused(tmp_path, kind):
    """Float bands are refused even with whole values (float32 rounds labels above 2**24
    together, so a float label raster may already be wrong); complex bands too."""
    dtype, value = NON_INTEGER[kind]
    arr = np.zeros((6, 6), dtype="complex64" if str(dtype).startswith("complex") else dtype)
    arr[:2, :2] = value
    bad = write(tmp_path / "labels.tif", arr, dtype=np.dtype(dtype).name
                if not str(dtype).startswith("complex_") else dtype)
    good = _good(tmp_path)
    run = run_cli("score", good, bad, inputs=[bad, good])
    assert_error(run, "labels.tif", "integer labels")


@pytest.mark.parametrize("dtype,background", [
    ("uint8", "-1"), ("uint8", "256"), ("int8", "-129"), ("int8", "128"),
    ("uint16", "65536"), ("uint64", "-1"), ("int64", str(2**63)),
])
def test_background_outside_dtype(tmp_path, dtype, background):
    ras = write(tmp_path / "ras.tif", scene({"A": 1}, SLOTS_REF, dtype))
    out = tmp_path / "out.json"
    run = run_cli("score", ras, ras, "--background", background, "--json", out, inputs=[ras])
    assert_error(run, "ras.tif", "--background", background, dtype, absent=[out])


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint64"])
def test_background_at_dtype_maximum(tmp_path, dtype):
    """Background = the dtype maximum; label 0 is then an object like any other."""
    top = int(np.iinfo(dtype).max)
    ref_v = {"A": 0, "B": 1, "C": 2, "D": 3}
    sub_v = {"A": 3, "B": 2, "C": 1, "D": 0}
    ref = write(tmp_path / "ref.tif", scene(ref_v, SLOTS_REF, dtype, background=top))
    sub = write(tmp_path / "sub.tif", scene(sub_v, SLOTS_SUB, dtype, background=top))
    d = score_json(tmp_path, ref, sub, "--background", str(top))
    assert pairs(d["results"]["iou"]) == sorted(([ref_v[k]], [sub_v[k]]) for k in "ABCD")
    assert d["results"]["bgm"]["accuracy"] == pytest.approx(0.8)


def test_nodata_is_background(tmp_path):
    """Nodata 9 on the submission: its pixels are background, so B' disappears."""
    ref_v, sub_v = objs([1, 2, 3, 4]), objs([5, 9, 7, 8])
    ref = write(tmp_path / "ref.tif", scene(ref_v, SLOTS_REF, "uint8"))
    sub = write(tmp_path / "sub.tif", scene(sub_v, SLOTS_SUB, "uint8"), nodata=9)
    d = score_json(tmp_path, ref, sub)
    assert d["submission"]["objects"] == 3
    res = d["results"]["iou"]
    assert (res["missed"], res["missed_ids"], res["false_alarms"]) == (1, [2], 0)
    assert d["overlap"]["union_area"] == 6 + 9 + 4 + 6  # A ⊂ A' (6 px), B alone
    assert res["accuracy"] == pytest.approx((2 / 3 + 1 + 1) / 3)


def test_nodata_not_a_label_changes_nothing(tmp_path):
    ref_v, sub_v = objs([1, 2, 3, 4]), objs([5, 6, 7, 8])
    ref = write(tmp_path / "ref.tif", scene(ref_v, SLOTS_REF, "int16"), nodata=-9999)
    sub = write(tmp_path / "sub.tif", scene(sub_v, SLOTS_SUB, "int16"), nodata=0)
    d = score_json(tmp_path, ref, sub)
    assert d["results"]["bgm"]["accuracy"] == pytest.approx(0.8)


def test_uint64_nodata_above_2_53_is_exact(tmp_path):
    """GDAL hands nodata over as a double; 2**64 - 1 as a double is 2**64 (outside uint64).
    A VRT carrying the exact value must still mask exactly the 2**64 - 1 pixels and leave
    the 2**64 - 2 ones as an object."""
    big = 2**64 - 1
    arr = scene({"A": big, "B": big - 1}, SLOTS_REF, "uint64")
    base = write(tmp_path / "base.tif", arr)
    vrt = tmp_path / "nodata.vrt"
    vrt.write_text(
        '<VRTDataset rasterXSize="6" rasterYSize="6"><SRS>EPSG:32651</SRS>'
        "<GeoTransform>570000, 1, 0, 1450000, 0, -1</GeoTransform>"
        f'<VRTRasterBand dataType="UInt64" band="1"><NoDataValue>{big}</NoDataValue>'
        '<SimpleSource><SourceFilename relativeToVRT="1">base.tif</SourceFilename>'
        "<SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>")
    d = score_json(tmp_path, vrt, base)
    assert d["reference"]["objects"] == 1 and d["submission"]["objects"] == 2
    res = d["results"]["iou"]
    assert pairs(res) == [([big - 1], [big - 1])]
    assert res["false_alarm_ids"] == [big]


# --- grids: CRS-less, rotated, disjoint, other resolution ---------------------------------

def _hand_pair(tmp_path, **kw):
    ref_v, sub_v = objs([1, 2, 3, 4]), objs([5, 6, 7, 8])
    ref = write(tmp_path / "ref.tif", scene(ref_v, SLOTS_REF, "uint16"), **kw)
    sub = write(tmp_path / "sub.tif", scene(sub_v, SLOTS_SUB, "uint16"), **kw)
    return ref, sub


def test_both_without_crs(tmp_path):
    ref, sub = _hand_pair(tmp_path, crs=None, transform=Affine(2.0, 0, 10.0, 0, -2.0, 50.0))
    d = score_json(tmp_path, ref, sub)
    assert d["reference"]["crs"] is None
    assert d["overlap"]["union_area"] == 25 * 4.0  # 2 m pixels
    assert d["results"]["bgm"]["accuracy"] == pytest.approx(0.8)


def test_both_without_crs_on_other_grids(tmp_path):
    """No CRS on either side, the submission at 2 units per pixel: resampled in the shared
    coordinates; its pixel (0, 0) is A exactly."""
    shared = Affine(1.0, 0, 10.0, 0, -1.0, 50.0)
    ref = write(tmp_path / "ref.tif", scene(objs([1, 2, 3, 4]), SLOTS_REF, "uint8"), crs=None,
                transform=shared)
    coarse = np.zeros((3, 3), np.uint8)
    coarse[0, 0] = 5
    sub = write(tmp_path / "sub.tif", coarse, crs=None, transform=Affine(2.0, 0, 10.0, 0, -2.0,
                                                                         50.0))
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, inputs=[ref, sub])
    assert_ok(run)
    assert "resampled" in run.stderr
    res = json.loads(out.read_text())["results"]["iou"]
    assert pairs(res) == [([1], [5])] and res["instances"][0]["score"] == 1.0
    assert res["missed_ids"] == [2, 3, 4]


@pytest.mark.parametrize("lacking", ["reference", "submission"])
def test_only_one_side_without_crs(tmp_path, lacking):
    ref, sub = _hand_pair(tmp_path)
    plain = write(tmp_path / "plain.tif", scene({"A": 1}, SLOTS_REF, "uint16"), crs=None)
    args = (plain, sub) if lacking == "reference" else (ref, plain)
    run = run_cli("score", *args, inputs=[plain, ref, sub])
    assert_error(run, "plain.tif", "no CRS")


def test_rotated_grid(tmp_path):
    """Both rasters on one grid rotated by 30° with 2 m pixels: areas are 4 m² per pixel."""
    transform = from_origin(570000.0, 1450000.0, 2.0, 2.0) @ Affine.rotation(30)
    ref, sub = _hand_pair(tmp_path, transform=transform)
    d = score_json(tmp_path, ref, sub)
    assert d["overlap"]["method"] == "co-occurrence"
    assert d["overlap"]["union_area"] == pytest.approx(100.0)
    assert d["results"]["iou"]["accuracy"] == pytest.approx(5 / 6)
    assert d["results"]["bgm"]["accuracy"] == pytest.approx(0.8)


@pytest.mark.parametrize("offset,what", [
    ((1000.0, 0.0), "far east"),
    ((0.0, -6.0), "touching below"),
    ((6.0, 0.0), "touching east"),
])
def test_disjoint_extents(tmp_path, offset, what):
    ref, _ = _hand_pair(tmp_path)
    far = write(tmp_path / "far.tif", scene({"A": 1}, SLOTS_SUB, "uint16"),
                transform=from_origin(570000.0 + offset[0], 1450000.0 + offset[1], 1.0, 1.0))
    out = tmp_path / "out.json"
    run = run_cli("score", ref, far, "--json", out, inputs=[ref, far])
    assert_error(run, "far.tif", "ref.tif", "does not overlap", absent=[out], max_lines=1)


def test_partly_overlapping_extents_are_scored(tmp_path):
    """Sub shifted 3 px east (same grid spacing): resampled, objects cut at the edge."""
    ref = write(tmp_path / "ref.tif", scene({"C": 3}, SLOTS_REF, "uint8"))
    sub = write(tmp_path / "sub.tif", scene({"A": 7}, SLOTS_REF, "uint8"),
                transform=from_origin(570004.0, 1450000.0, 1.0, 1.0))
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, inputs=[ref, sub])
    assert_ok(run)
    assert "resampled" in run.stderr
    d = json.loads(out.read_text())
    assert pairs(d["results"]["iou"]) == [([3], [7])]
    assert d["results"]["iou"]["accuracy"] == 1.0  # A' sits exactly on C


def test_coarser_submission_is_resampled(tmp_path):
    """Sub at 2 m: its pixel (0, 0) covers reference pixels rows 0-1, cols 0-1 = A exactly,
    its pixel (2, 1) covers rows 4-5, cols 2-3 (half in B)."""
    ref = write(tmp_path / "ref.tif", scene({"A": 1, "B": 2}, SLOTS_REF, "uint8"))
    coarse = np.zeros((3, 3), np.uint8)
    coarse[0, 0], coarse[2, 1] = 5, 6
    sub = write(tmp_path / "sub.tif", coarse, transform=from_origin(570000.0, 1450000.0, 2, 2))
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, inputs=[ref, sub])
    assert_ok(run)
    assert "sub.tif" in run.stderr and "resampled" in run.stderr
    d = json.loads(out.read_text())
    overlap = {(*i["reference"], *i["submission"]): i["overlap"]
               for i in d["results"]["bgm"]["instances"]}
    assert overlap == {(1, 5): 4.0, (2, 6): 2.0}  # B ∩ B'' = rows 4-5 of column 3
    iou = {(*i["reference"], *i["submission"]): i["score"]
           for i in d["results"]["iou"]["instances"]}
    assert iou == {(1, 5): 1.0}  # B/B'' has IoU 2 / (9 + 4 - 2) < 0.5
    assert d["results"]["iou"]["missed_ids"] == [2]
    assert d["overlap"]["union_area"] == 4 + 9 + 2


# --- size -----------------------------------------------------------------------------------

def _huge_sparse(tmp_path):
    """100 000 x 100 000 uint8 GeoTIFF with one written tile: about 10 KB on disk."""
    p = tmp_path / "huge.tif"
    with rasterio.open(p, "w", driver="GTiff", width=100_000, height=100_000, count=1,
                       dtype="uint8", crs=UTM, transform=T1, tiled=True, blockxsize=4096,
                       blockysize=4096, compress="deflate", sparse_ok=True,
                       bigtiff="YES") as dst:
        dst.write(np.ones((4, 4), np.uint8), 1, window=Window(0, 0, 4, 4))
    assert p.stat().st_size < 200_000
    return p


def test_resampling_onto_a_huge_grid_refused_up_front(tmp_path, monkeypatch):
    # the huge sparse reference itself is read window by window (tests/test_windowed.py);
    # a submission on another grid must be resampled onto its 1e10 pixels: refused first
    monkeypatch.delenv("GEOEVAL_MAX_MEMORY", raising=False)
    huge = _huge_sparse(tmp_path)
    good = _good(tmp_path)
    out = tmp_path / "out.json"
    run = run_cli("score", huge, good, "--json", out, inputs=[huge, good])
    # 1e10 px x (2 x 1 + 16) bytes = 1.8e11 B = 168 GiB
    assert_error(run, "good.tif", "resampling it onto the reference grid", "100000 x 100000",
                 "168 GiB", "GEOEVAL_MAX_MEMORY", absent=[out], max_lines=1)


def test_memory_limit_from_environment(tmp_path, monkeypatch):
    """Reading and scoring go window by window, so a 600-byte limit does not stop them;
    resampling a 6 x 6 uint8 raster onto another 6 x 6 grid holds whole grids
    (36 px x 18 B = 648 B): refused under 600 bytes, done under 1K."""
    good = _good(tmp_path)
    moved = write(tmp_path / "moved.tif", scene({"A": 1}, SLOTS_REF, "uint8"),
                  transform=from_origin(570000.5, 1450000.0, 1.0, 1.0))
    monkeypatch.setenv("GEOEVAL_MAX_MEMORY", "600")
    assert_ok(run_cli("score", good, good, inputs=[good]))
    run = run_cli("score", good, moved, inputs=[good, moved])
    assert_error(run, "moved.tif", "648 B", "600 B", "GEOEVAL_MAX_MEMORY=600", max_lines=1)
    monkeypatch.setenv("GEOEVAL_MAX_MEMORY", "1K")
    assert_ok(run_cli("score", good, moved, inputs=[good, moved]))


@pytest.mark.parametrize("value", ["lots", "-5", "0", "nanG"])
def test_bad_memory_limit(tmp_path, monkeypatch, value):
    good = _good(tmp_path)
    monkeypatch.setenv("GEOEVAL_MAX_MEMORY", value)
    run = run_cli("score", good, good, inputs=[good])
    assert_error(run, "GEOEVAL_MAX_MEMORY", "not a memory size", max_lines=1)


def test_uint64_labels_above_2_63_are_exact_in_gpkg_and_csv(tmp_path):
    # GeoPackage stores signed 64-bit integers: ids at or above 2**63 are written as their
    # exact decimal text (never wrapped to negative numbers); both files must agree
    import geopandas as gpd
    import pandas as pd

    values = huge_labels("uint64")  # 2**64 - 1, 2**64 - 2, 2**53, 2**53 + 1
    ref = write(tmp_path / "ref.tif", scene(objs(values), SLOTS_REF, "uint64"))
    sub = write(tmp_path / "sub.tif", scene(objs(values), SLOTS_SUB, "uint64"))
    gpkg, csv_dir = tmp_path / "out.gpkg", tmp_path / "csv"
    run = run_cli("score", ref, sub, "--gpkg", gpkg, "--csv-dir", csv_dir, "--matcher", "bgm",
                  inputs=[ref, sub])
    assert_ok(run)
    layer = gpd.read_file(gpkg, layer="reference")
    assert sorted(layer["id"].astype(str)) == sorted(str(v) for v in values)
    table = pd.read_csv(next(csv_dir.glob("*reference*.csv")), dtype=str)
    assert sorted(table["id"]) == sorted(str(v) for v in values)
