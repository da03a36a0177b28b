"""COCO result files read by Arrow (the fast path) give exactly what the record reader gives.

The fast path (:func:`geoeval.io._coco_arrow._arrow_columns`) turns the separators of a
JSON array into line breaks and lets Arrow parse the records. Every result file is read
both ways here: through ``read_coco(path)`` (fast path when it applies) and through the
record reader on ``json.loads`` of the same text; the two BoxSets must be identical
field by field, or both must be refused with the same message.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geoeval.errors import InputError
from geoeval.io._box_coco import _coco_results
from geoeval.io._coco_arrow import _arrow_columns
from geoeval.io._coco_read import read_coco

GT = {"images": [{"id": i, "width": 640, "height": 480} for i in (1, 2, 7)],
      "categories": [{"id": 1, "name": "a"}, {"id": 3, "name": "b"}],
      "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10],
                       "area": 100, "iscrowd": 0}]}


@pytest.fixture(scope="module")
def gt():
    return read_coco(GT, side="reference")


def _outcome(fn):
    try:
        return fn()
    except InputError as exc:
        return f"InputError: {exc}"


def _same(a, b) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            if x.dtype.kind == "f":  # bit for bit (0.0 and -0.0 apart)
                assert np.array_equal(x.view(np.int64), y.view(np.int64)), f.name
            else:
                assert np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


def _both(tmp_path, text: str, gt, name: str = "dt.json"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    fast = _outcome(lambda: read_coco(p, side="submission", like=gt))
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, list) and data:
        slow = _outcome(lambda: _coco_results(data, str(p), gt))
    else:  # not a list: the old path end to end (it refuses the file)
        slow = _outcome(lambda: read_coco(p, side="submission", like=gt))
    _same(fast, slow)
    return p, fast


def _rec(img=1, cat=1, bbox=(1.5, 2, 3, 4.25), score=0.5, **extra):
    return {"image_id": img, "category_id": cat, "bbox": list(bbox), "score": score, **extra}


@pytest.mark.parametrize("separators", [None, (",", ":"), (", ", ": ")])
def test_plain_files_take_the_fast_path_and_agree(tmp_path, gt, separators):
    recs = [_rec(1, 1, (0, 0, 5, 5), 0.9), _rec(2, 3, (1e-300, 2.5, 0.1, 0.2), 1),
            _rec(7, 1, (9007199254740993, 0, 1, 1), 0.30000000000000004),
            _rec(7, 99, (1, 2, 3, 4), -0.0, extra="x}, y", nested=[{"a": 1}, [{"b": [2]}]])]
    text = json.dumps(recs, separators=separators)
    p, fast = _both(tmp_path, text, gt)
    assert _arrow_columns(p) is not None  # the fast path did the reading
    # a separator inside a string or a nested array: the record reader reads it
    text = json.dumps([*recs, _rec(extra="x}, {y")], separators=separators)
    assert _arrow_columns(_both(tmp_path, text, gt)[0]) is None
    text = json.dumps([*recs, _rec(seg=[{"a": 1}, {"b": 2}])], separators=separators)
    assert _arrow_columns(_both(tmp_path, text, gt)[0]) is None
    assert len(fast) == 4 and fast.class_ids.tolist() == [1, 3, 1, 99]


@pytest.mark.parametrize("text", [
    # valid JSON in another layout, or content the fast path leaves to the record reader
    json.dumps([_rec(), _rec(2)], indent=2),
    json.dumps([_rec()]),
    '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1, "n": "é"},'
    ' {"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}]',
    '[{"image_id": 1, "image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1},'
    ' {"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}]',
    '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1, "s": "a}, {b"},'
    ' {"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1, "s": "},{"}]',
    '  \n[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}, '
    '{"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1, "x": NaN}]\r\n',
])
def test_other_layouts_agree(tmp_path, gt, text):
    _both(tmp_path, text, gt)


@pytest.mark.parametrize("record", [
    '{"image_id": 1.0, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}',
    '{"image_id": 1e2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}',
    '{"image_id": true, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}',
    '{"image_id": "1", "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}',
    '{"image_id": 99, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}',
    '{"image_id": 9223372036854775808, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3], "score": 1}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4, 5], "score": 1}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, null, 4], "score": 1}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, -3, 4], "score": 1}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 1.7e308, 4], "score": 1}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": NaN}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1e400}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": true}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": "0.5"}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": null}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]}',
    '{"image_id": 1, "category_id": 1, "bbox": "1 2 3 4", "score": 1}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1,}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 01}',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1} /* c */',
    '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1, "s": "a\nb"}',
    '[1, 2]',
    '1',
    'null',
    '{}',
])
def test_bad_records_are_refused_as_before(tmp_path, gt, record):
    good = '{"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}'
    for text in (f"[{good}, {record}]", f"[{record},{good}]", f"[{good}, {record}, {good}]"):
        _both(tmp_path, text, gt)


@pytest.mark.parametrize("text", [
    '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1} '
    '{"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}, '
    '{"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}]',
    '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}\n'
    '{"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}, '
    '{"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}]',
    '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}, '
    '{"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1},]',
    '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}, '
    '{"image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}] []',
    '[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 1}, '
    '{"image_id": 2, "category_id": 1, "bbox": [[1, 2], {"a": 3}, 4], "score": 1}]',
])
def test_invalid_json_is_refused(tmp_path, gt, text):
    # records side by side without a comma, a trailing comma, text after the array:
    # Arrow alone would read some of these; the count of replaced commas refuses them
    p = tmp_path / "dt.json"
    p.write_text(text)
    assert _arrow_columns(p) is None
    with pytest.raises(InputError):
        read_coco(p, side="submission", like=gt)


_numbers = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.integers(-2**60, 2**60),
    st.sampled_from([0, -0.0, 5e-324, 1.7976931348623157e308, 0.1, 1e22, 2**53 + 1]),
)
_extra = st.dictionaries(st.sampled_from(["id", "area", "s", "n", "segmentation"]),
                         st.one_of(st.text(alphabet="ab{}[],: \"\\", max_size=6), _numbers,
                                   st.lists(st.dictionaries(st.just("k"), _numbers),
                                            max_size=2)),
                         max_size=2)
_record = st.fixed_dictionaries({
    "image_id": st.sampled_from([1, 2, 7, 8]), "category_id": st.sampled_from([1, 3, 4]),
    "bbox": st.lists(_numbers, min_size=4, max_size=4), "score": _numbers,
}).flatmap(lambda r: _extra.map(lambda e: {**r, **e}))


@settings(max_examples=60, deadline=None)
@given(records=st.lists(_record, min_size=2, max_size=6),
       compact=st.booleans(), key_order=st.randoms(use_true_random=False))
def test_random_result_files_agree(tmp_path_factory, gt, records, compact, key_order):
    # random numbers (any double, big integers, ties), random extra fields holding
    # separators inside strings and nested arrays of objects, random key order
    shuffled = []
    for r in records:
        keys = list(r)
        key_order.shuffle(keys)
        shuffled.append({k: r[k] for k in keys})
    text = json.dumps(shuffled, separators=(",", ":") if compact else None)
    p, fast = _both(tmp_path_factory.mktemp("h"), text, gt)
    if not isinstance(fast, str):  # read: the boxes are the numbers of the file
        want = np.array([[float(v) for v in r["bbox"]] for r in records])
        assert np.array_equal(np.column_stack([fast.boxes[:, :2], fast.wh]), want)
        assert all(math.isfinite(s) for s in fast.scores)
        if all(len(r) == 4 for r in records):  # nothing but the four fields: read by Arrow
            assert _arrow_columns(p) is not None


# --- ground truth: the columnar annotation reader against the record reader --------

_ANN_VALUES = st.one_of(
    st.integers(-3, 12), st.floats(-2, 50, allow_nan=False), st.just(True), st.just("3"),
    st.just(None), st.just(2**70), st.just(1e308))


@st.composite
def _annotations(draw):
    n = draw(st.integers(1, 8))
    anns = []
    for i in range(n):
        a = {"id": draw(st.sampled_from([i + 1, i + 1, i + 1, 0, 1, -5, 2**63 - 1])),
             "image_id": draw(st.sampled_from([1, 2, 7, 7, 9])),
             "category_id": draw(st.sampled_from([1, 3, 3, 4])),
             "bbox": [draw(st.floats(-5, 50, allow_nan=False)),
                      draw(st.integers(-5, 50)), draw(st.floats(0, 30, allow_nan=False)),
                      draw(st.integers(0, 30))]}
        if draw(st.booleans()):
            a["area"] = draw(st.one_of(st.floats(0, 900, allow_nan=False), st.integers(0, 900)))
        if draw(st.booleans()):
            a["iscrowd"] = draw(st.sampled_from([0, 1, 1, 0]))
        if draw(st.integers(0, 9)) == 0:  # now and then one bad or unusual field
            key = draw(st.sampled_from(["id", "image_id", "category_id", "area", "iscrowd",
                                        "bbox"]))
            a[key] = (draw(st.lists(_ANN_VALUES, min_size=3, max_size=5)) if key == "bbox"
                      else draw(_ANN_VALUES))
        if draw(st.integers(0, 19)) == 0:
            del a[draw(st.sampled_from(sorted(a)))]
        anns.append(a)
    return anns


@settings(max_examples=300, deadline=None)
@given(anns=_annotations())
def test_ground_truth_columns_agree_with_the_record_reader(anns):
    import geoeval.io._box_coco as bc

    data = {**GT, "annotations": anns}
    fast = _outcome(lambda: read_coco(json.loads(json.dumps(data)), side="reference"))
    real = bc._gt_columns
    bc._gt_columns = lambda *args: None  # the record reader only
    try:
        slow = _outcome(lambda: read_coco(json.loads(json.dumps(data)), side="reference"))
    finally:
        bc._gt_columns = real
    _same(fast, slow)


@settings(max_examples=20, deadline=None)
@given(anns=_annotations(), spaced=st.booleans())
def test_ground_truth_files_read_by_arrow_as_by_records(anns, spaced):
    _ground_truth_file_read_both_ways(anns, spaced)


@pytest.mark.slow  # the same, many more cases
@settings(max_examples=400, deadline=None)
@given(anns=_annotations(), spaced=st.booleans())
def test_ground_truth_files_read_by_arrow_as_by_records_many(anns, spaced):
    _ground_truth_file_read_both_ways(anns, spaced)


def _ground_truth_file_read_both_ways(anns: list, spaced: bool) -> None:
    """A ground-truth file: its annotations cut out and parsed by Arrow (when well formed)
    give what the record reader gives, field for field, or the same error."""
    import tempfile

    import geoeval.io._coco_read as cr

    data = {**GT, "annotations": anns}
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "gt.json"
        p.write_text(json.dumps(data, separators=(", ", ": ") if spaced else (",", ":")))
        fast = _outcome(lambda: read_coco(p, side="reference"))
        real = cr._arrow_gt_columns
        cr._arrow_gt_columns = lambda *args, **kw: None
        try:
            slow = _outcome(lambda: read_coco(p, side="reference"))
        finally:
            cr._arrow_gt_columns = real
    _same(fast, slow)


def test_well_formed_ground_truth_takes_the_columnar_path():
    from geoeval.io._box_coco import _gt_columns

    anns = [{"id": 5, "image_id": 7, "category_id": 3, "bbox": [1, 2.5, 3, 4]},
            {"id": 6, "image_id": 9, "category_id": 1, "bbox": [0, 0, 2, 2], "area": 3,
             "iscrowd": 1}]
    rows, wh, image, cls_ids, areas, ids, crowd, keep, classes = _gt_columns(
        anns, [1, 2, 7], {1: "a", 3: "b"})
    assert rows.tolist() == [[1, 2.5, 4, 6.5], [0, 0, 2, 2]]
    assert areas.tolist() == [12, 3] and crowd.tolist() == [False, True]
    assert keep.tolist() == [True, False] and image[0] == 2 and classes[0] == "b"
    assert cls_ids.tolist() == [3, -1] and ids.tolist() == [5, 6]
    assert _gt_columns([{**anns[0], "iscrowd": 2}], [7], {3: "b"}) is None


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.one_of(st.integers(-50, 50), st.integers(-2**63, 2**63 - 1)),
                    min_size=1, max_size=40))
def test_unique_inverse_is_numpy_unique(ids):
    from geoeval.io._box_coco import _unique_inverse

    a = np.array(ids, dtype=np.int64)
    u, inv = _unique_inverse(a)
    nu, ninv = np.unique(a, return_inverse=True)
    assert u.dtype == nu.dtype and np.array_equal(u, nu) and np.array_equal(inv, ninv)


@settings(max_examples=200, deadline=None)
@given(text=st.binary(max_size=200), step=st.integers(1, 64))
def test_positions_by_chunks_are_all_positions(text, step):
    from geoeval.io._coco_arrow import _positions

    a = np.frombuffer(text, dtype=np.uint8)
    got = _positions(a, ord("}"), step=step)
    assert np.array_equal(got, np.flatnonzero(a == ord("}")))


def test_pair_reader_equals_the_two_reads(tmp_path):
    """Both files: the results parsed by Arrow before the ground truth is read."""
    from geoeval.io._coco_read import read_coco_pair

    recs = [_rec(i, c, (i, c, 3.5, 4), s) for i, c, s in
            [(1, 1, 0.9), (7, 3, 0.2), (2, 1, 0.5), (7, 1, 0.7)]]
    ref, sub = tmp_path / "gt.json", tmp_path / "dt.json"
    ref.write_text(json.dumps(GT))
    sub.write_text(json.dumps(recs))
    g, d = read_coco_pair(ref, sub)
    g2 = read_coco(ref, side="reference")
    _same(g, g2)
    _same(d, read_coco(sub, side="submission", like=g2))
    _same(d, _coco_results(recs, str(sub), g2))
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match="bad.json"):  # the ground truth's error first
        read_coco_pair(bad, sub)


@pytest.mark.parametrize("image, message", [
    ({"id": True}, "images[1]: image id must be an integer, got True"),
    ({"id": "7"}, "images[1]: image id must be an integer, got '7'"),
    ({"id": 2.0}, "images[1]: image id must be an integer, got 2.0"),
    ({"width": 3}, "images[1]: missing 'id'"),
    ([7], "images[1]: expected a JSON object"),
    ({"id": 1}, "images[1]: duplicate image id 1"),
])
def test_bad_images_are_named(image, message):
    gt = {**GT, "images": [GT["images"][0], image]}
    with pytest.raises(InputError) as err:
        read_coco(gt, side="reference")
    assert message in str(err.value)
