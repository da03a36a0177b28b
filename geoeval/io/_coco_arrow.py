"""COCO result files read by Arrow's JSON reader: the fast path of :func:`read_coco`.

A result file is one JSON array of records; its record separators become line breaks
in place and Arrow's newline-delimited JSON reader parses the records into columns,
without one Python object per record (see :func:`_arrow_columns`). Each reader takes a
local path, or the bytes of a file already read into memory (a URL's: never written to
disk first).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


def _valid_values(boxes: np.ndarray, scores: np.ndarray) -> bool:
    """Finite boxes and scores, ``x + w`` and ``y + h`` finite, no negative size.

    (A finite ``x + w`` needs finite ``x`` and ``w``: an infinite or NaN term makes
    the sum infinite or NaN, so the ends' check covers the four values.)"""
    with np.errstate(all="ignore"):
        ends = boxes[:, :2] + boxes[:, 2:]
        return bool(np.isfinite(ends).all() and np.isfinite(scores).all()
                    and (boxes[:, 2:] >= 0).all())


_JSON_SPACE = b" \t\r\n"
_BRACE, _COMMA, _SPACE, _OPEN, _NEWLINE = b"}, {\n"


def _arrow_columns(path: str | Path | bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                               np.ndarray] | None:
    """The columns of a COCO result file read by Arrow's JSON reader, or ``None``:
    :func:`_records_text`, :func:`_arrow_table` and :func:`_table_columns`.

    A result file is one JSON array of records. Arrow reads newline-delimited
    records in C++, into columns, without one Python object per record (a
    fraction of the memory and of the time of ``orjson.loads`` followed by a pass
    per column).

    ``None`` (the caller parses the file with :func:`load_json` and the record
    readers, whose messages name any bad record) whenever anything is unusual:
    text that is not ASCII or not one array, another layout (line breaks
    between records, pretty-printed), a parse error, a missing or null field, an
    id that is not a 64-bit integer, a ``bbox`` that is not 4 numbers, or a
    value that fails :func:`_valid_values`. Arrow's parser (RapidJSON) is
    strict JSON (no comments, trailing commas, leading zeros or duplicate
    keys) and reads numbers correctly rounded, as Python does.
    """
    records = _records_text(path)
    if records is None:
        return None
    text, n = records
    del records
    table = _arrow_table(text)
    del text  # before the columns are made: less memory at the peak
    return _table_columns(table, n)


def _records_text(path: str | Path | bytes) -> tuple[np.ndarray, int] | None:
    """The text of a result file as newline-delimited records, and their number, or
    ``None`` when it is not laid out as one array of records written by ``json.dumps``.

    The array becomes newline-delimited records in place: the comma of each
    separator ``},{`` or ``}, {`` becomes a line break. This is safe because a
    misplaced one makes the text invalid for Arrow's parser (a line break inside
    a string is a raw control character; a comma removed between the members of
    a nested array leaves two values side by side), so a successful parse with
    exactly one record more than the replaced commas proves that they were
    exactly the top-level ones (:func:`_table_columns` checks the count).
    """
    if isinstance(path, bytes):  # a URL's file, read into memory by the caller
        buf = np.frombuffer(path, dtype=np.uint8)
    else:
        try:
            with open(path, "rb") as fh:  # numpy's buffer is not zeroed first (a bytearray is)
                buf = np.empty(os.fstat(fh.fileno()).st_size, dtype=np.uint8)
                if fh.readinto(buf) != buf.size:
                    return None
        except OSError:
            return None  # the caller's reader reports it
    if buf.size == 0 or int(buf.max()) > 127:  # not ASCII
        return None
    first, last = 0, buf.size - 1
    while first <= last and int(buf[first]) in _JSON_SPACE:
        first += 1
    while last > first and int(buf[last]) in _JSON_SPACE:
        last -= 1
    if last - first < 2 or buf[first] != ord("[") or buf[last] != ord("]"):
        return None
    body = buf[first + 1:last]
    return _newline_records(body if body.flags.writeable else body.copy())


def _newline_records(text: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The body of a JSON array of records (``text``, uint8, changed in place) as
    newline-delimited records and their number (see :func:`_records_text`), or
    ``None`` for fewer than two records."""
    end = _positions(text[:-3], _BRACE)
    end = end[text[end + 1] == _COMMA]
    tight = text[end + 2] == _OPEN
    spaced = (text[end + 2] == _SPACE) & (text[end + 3] == _OPEN)
    comma = end[tight | spaced] + 1
    if comma.size == 0:  # one record (or none): as fast with the record readers
        return None
    text[comma] = _NEWLINE
    return text, comma.size + 1


def _arrow_table(text: np.ndarray, polygons: bool = False) -> Any:
    """Newline-delimited result records (:func:`_records_text`) parsed by Arrow into a
    table of the four fields (and ``segmentation`` as polygons), or ``None`` on a
    parse error (an RLE segmentation is one)."""
    import pyarrow as pa
    import pyarrow.json as pa_json

    fields = [("image_id", pa.int64()), ("category_id", pa.int64()),
              ("bbox", pa.list_(pa.float64())), ("score", pa.float64())]
    if polygons:
        fields.append(("segmentation", pa.list_(pa.list_(pa.float64()))))
    schema = pa.schema(fields)
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    blocks = pa_json.ReadOptions(block_size=1 << 18)  # less memory in flight than 1 MiB
    try:
        return pa_json.read_json(pa.BufferReader(pa.py_buffer(text)),
                                 read_options=blocks, parse_options=options)
    except (pa.ArrowException, ValueError):
        return None


def _table_columns(table: Any, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                np.ndarray] | None:
    """The numpy columns of an :func:`_arrow_table` of ``n`` records, or ``None`` when
    it is not exactly ``n`` complete records of valid values."""
    if table is None:
        return None
    if table.num_rows != n or any(c.null_count for c in table.columns):
        return None
    boxes = np.empty((n, 4))
    at = 0
    for chunk in table.column("bbox").chunks:  # 4 values per list, read from the offsets
        offsets = _numpy(chunk, np.int32, extra=1)
        m = len(chunk)
        if not (np.diff(offsets) == 4).all() or chunk.values.null_count:
            return None
        values = np.frombuffer(chunk.values.buffers()[1], dtype=np.float64)
        start = chunk.values.offset + int(offsets[0])
        boxes[at:at + m] = values[start:start + 4 * m].reshape(m, 4)
        at += m
    scores = _concat(table.column("score"), np.float64)
    img = _concat(table.column("image_id"), np.int64)
    cat = _concat(table.column("category_id"), np.int64)
    return (boxes, scores, img, cat) if _valid_values(boxes, scores) else None


def _positions(text: np.ndarray, byte: int, step: int = 1 << 20) -> np.ndarray:
    """Indices of ``byte`` in ``text`` (uint8), found a megabyte at a time: the
    comparison's temporary stays small and in cache, instead of a mask as large
    as the file (whose fresh pages cost more than the comparison)."""
    found = [np.flatnonzero(text[lo:lo + step] == byte) + lo
             for lo in range(0, text.size, step)]
    return np.concatenate(found) if found else np.zeros(0, np.intp)


def _concat(column: Any, dtype: type) -> np.ndarray:
    """The values of a chunked Arrow column without nulls, in one numpy array (one copy;
    ``combine_chunks`` would copy through Arrow first)."""
    parts = [_numpy(c, dtype) for c in column.chunks]
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def _numpy(array: Any, dtype: type, extra: int = 0) -> np.ndarray:
    """The values (or with ``extra=1`` the list offsets) of an Arrow array without nulls,
    as a numpy view of its buffer (``Array.to_numpy`` would import pandas, 0.1 s)."""
    data = np.frombuffer(array.buffers()[1], dtype=dtype)
    return data[array.offset:array.offset + len(array) + extra]


@dataclass(frozen=True)
class PolygonColumns:
    """Result records whose segmentations are polygons, as arrays (see
    :func:`_arrow_polygon_columns`). ``boxes`` is ``x, y, w, h`` (NaN where a record
    has no 4-number ``bbox``); ``coords`` every ring's coordinates, ``ring_sizes`` each
    ring's number of coordinates, ``n_rings`` each record's number of rings."""

    scores: np.ndarray
    image_ids: np.ndarray
    category_ids: np.ndarray
    boxes: np.ndarray
    has_bbox: np.ndarray
    has_segmentation: np.ndarray
    coords: np.ndarray
    ring_sizes: np.ndarray
    n_rings: np.ndarray


def _arrow_polygon_columns(path: str | Path | bytes) -> PolygonColumns | None:
    """The columns of a result file of polygon segmentations read by Arrow (as
    :func:`_arrow_columns` reads boxes: the same conditions), or ``None``: anything
    else (an RLE segmentation, a null ring, a missing id or score, a ``bbox`` that is
    neither 4 numbers nor absent) goes to the record reader."""
    records = _records_text(path)
    if records is None:
        return None
    text, n = records
    del records
    table = _arrow_table(text, polygons=True)
    del text
    if table is None or table.num_rows != n:
        return None
    if any(table.column(k).null_count for k in ("image_id", "category_id", "score")):
        return None
    bbox = table.column("bbox").combine_chunks()
    seg = table.column("segmentation").combine_chunks()
    if bbox.values.null_count or seg.values.null_count or seg.values.values.null_count:
        return None
    has_bbox = _valid(bbox) & (np.diff(_numpy(bbox, np.int32, extra=1)) == 4)
    boxes = np.full((n, 4), np.nan)
    values = np.frombuffer(bbox.values.buffers()[1], dtype=np.float64)
    start = bbox.values.offset + _numpy(bbox, np.int32, extra=1)[:-1]
    take = np.flatnonzero(has_bbox)
    boxes[take] = values[start[take, None] + np.arange(4)]
    has_seg = _valid(seg)
    outer = _numpy(seg, np.int32, extra=1)
    rings = seg.values
    inner = _numpy(rings, np.int32, extra=1)[outer[0]:outer[-1] + 1]
    coords = np.frombuffer(rings.values.buffers()[1], dtype=np.float64)
    coords = coords[rings.values.offset + inner[0]:rings.values.offset + inner[-1]]
    return PolygonColumns(
        scores=_concat(table.column("score"), np.float64),
        image_ids=_concat(table.column("image_id"), np.int64),
        category_ids=_concat(table.column("category_id"), np.int64),
        boxes=boxes, has_bbox=has_bbox, has_segmentation=has_seg, coords=coords,
        ring_sizes=np.diff(inner).astype(np.int64),
        n_rings=np.where(has_seg, np.diff(outer), 0).astype(np.int64))


def _valid(array: Any) -> np.ndarray:
    """Which entries of an Arrow array are not null (its validity bitmap, unpacked)."""
    n = len(array)
    bitmap = array.buffers()[0]
    if bitmap is None:
        return np.ones(n, dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[array.offset:array.offset + n].astype(bool)


@dataclass(frozen=True)
class GtColumns:
    """Ground-truth annotations as arrays (see :func:`_arrow_gt_columns`): the values
    :func:`geoeval.io._box_coco._gt_arrays` takes (``arrays``), and with
    ``polygons`` their segmentations as :class:`PolygonColumns` holds them."""

    arrays: tuple
    coords: np.ndarray | None = None
    ring_sizes: np.ndarray | None = None
    n_rings: np.ndarray | None = None


def _arrow_gt_columns(path: str | Path | bytes, polygons: bool = False
                      ) -> tuple[dict, GtColumns] | None:
    """A ground-truth file whose ``annotations`` Arrow can read: the rest of the file
    parsed by orjson (``annotations`` empty) and the annotations' columns; ``None``
    when anything is unusual (the caller parses the whole file, whose reader names any
    bad record).

    The annotations array is cut out of the text: from ``"annotations": [`` to the
    first ``}]`` after it. A wrong cut cannot pass: a record cut short fails Arrow's
    parse or its record count, text left behind fails orjson's parse, and a key met
    elsewhere than at the top level leaves the real ``annotations`` non-empty in the
    rest. ``bbox``, ``image_id``, ``category_id`` and ``id`` must be present; a missing
    ``area`` or ``iscrowd`` takes its default; with ``polygons`` every segmentation
    must be polygons.
    """
    import orjson

    try:
        raw = path if isinstance(path, bytes) else Path(path).read_bytes()
    except OSError:
        return None
    key = raw.find(b'"annotations"')
    at = key + len(b'"annotations"')
    while 0 <= key and at < len(raw) and raw[at] in _JSON_SPACE:
        at += 1
    if key < 0 or raw[at:at + 1] != b":":
        return None
    at += 1
    while at < len(raw) and raw[at] in _JSON_SPACE:
        at += 1
    end = raw.find(b"}]", at)
    if raw[at:at + 1] != b"[" or end < 0:
        return None
    if raw.find(b"null", at, end) >= 0:  # Arrow reads null as absent: the records decide
        return None
    body = np.frombuffer(raw, dtype=np.uint8)[at + 1:end + 1].copy()
    if body.size == 0 or int(body.max()) > 127:
        return None
    try:
        rest = orjson.loads(raw[:at] + b"[]" + raw[end + 2:])
    except orjson.JSONDecodeError:
        return None
    del raw
    if not isinstance(rest, dict) or rest.get("annotations") != []:
        return None
    records = _newline_records(body)
    if records is None:
        return None
    text, n = records
    table = _arrow_gt_table(text, polygons)
    del text, body
    cols = _gt_table_columns(table, n, polygons)
    return None if cols is None else (rest, cols)


def _arrow_gt_table(text: np.ndarray, polygons: bool) -> Any:
    """Newline-delimited annotations parsed by Arrow, or ``None`` on a parse error."""
    import pyarrow as pa
    import pyarrow.json as pa_json

    fields = [("id", pa.int64()), ("image_id", pa.int64()), ("category_id", pa.int64()),
              ("bbox", pa.list_(pa.float64())), ("area", pa.float64()),
              ("iscrowd", pa.int64())]
    if polygons:
        fields.append(("segmentation", pa.list_(pa.list_(pa.float64()))))
    options = pa_json.ParseOptions(explicit_schema=pa.schema(fields),
                                   unexpected_field_behavior="ignore")
    try:
        return pa_json.read_json(pa.BufferReader(pa.py_buffer(text)),
                                 read_options=pa_json.ReadOptions(block_size=1 << 18),
                                 parse_options=options)
    except (pa.ArrowException, ValueError):
        return None


def _gt_table_columns(table: Any, n: int, polygons: bool) -> GtColumns | None:
    """The arrays of an :func:`_arrow_gt_table` of ``n`` annotations, or ``None``."""
    if table is None or table.num_rows != n:
        return None
    if any(table.column(k).null_count for k in ("id", "image_id", "category_id", "bbox")):
        return None
    bbox = table.column("bbox").combine_chunks()
    offsets = _numpy(bbox, np.int32, extra=1)
    if bbox.values.null_count or not (np.diff(offsets) == 4).all():
        return None
    values = np.frombuffer(bbox.values.buffers()[1], dtype=np.float64)
    start = bbox.values.offset + int(offsets[0])
    boxes = values[start:start + 4 * n].reshape(n, 4).copy()
    area = table.column("area").combine_chunks()
    missing = ~_valid(area)
    areas = np.where(missing, 0.0, _numpy(area, np.float64))
    crowd_col = table.column("iscrowd").combine_chunks()
    crowd = np.where(_valid(crowd_col), _numpy(crowd_col, np.int64), 0)
    if not np.isin(crowd, (0, 1)).all():
        return None
    arrays = (boxes, _concat(table.column("image_id"), np.int64),
              _concat(table.column("category_id"), np.int64),
              _concat(table.column("id"), np.int64), areas, missing, crowd.astype(bool))
    if not polygons:
        return GtColumns(arrays)
    seg = table.column("segmentation").combine_chunks()
    if seg.null_count or seg.values.null_count or seg.values.values.null_count:
        return None
    outer = _numpy(seg, np.int32, extra=1)
    rings = seg.values
    inner = _numpy(rings, np.int32, extra=1)[outer[0]:outer[-1] + 1]
    coords = np.frombuffer(rings.values.buffers()[1], dtype=np.float64)
    coords = coords[rings.values.offset + inner[0]:rings.values.offset + inner[-1]]
    return GtColumns(arrays, coords=coords, ring_sizes=np.diff(inner).astype(np.int64),
                     n_rings=np.diff(outer).astype(np.int64))
