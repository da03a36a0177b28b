"""COCO JSON ground truth and results (see :mod:`geoeval.io.boxes`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.arrays import has_duplicates
from geoeval.errors import InputError
from geoeval.io._boxset import BoxSet, ImageSize, checked_class, outside_warnings
from geoeval.io._coco_arrow import _valid_values
from geoeval.io._json_values import _int_id, _is_number, _req, _short
from geoeval.io.store_paths import StorePath, box_path
from geoeval.parallel import collector_paused


def load_json(path: str | Path | StorePath) -> Any:
    """Parse a JSON file (local, or a URL read into memory:
    :func:`~geoeval.io.store_paths.box_path`); errors as :class:`InputError` naming
    file and line.

    orjson parses a valid file several times faster than the standard library
    (a COCO-sized result file is most of a COCO run's reading time); anything it
    refuses (NaN literals, integers beyond 64 bits, invalid text) is parsed again
    by :mod:`json`, whose values and error messages are the reference.
    """
    p = box_path(path)
    return _parse_json(_read_bytes(p), p)


def _read_bytes(path: str | Path | StorePath) -> bytes:
    p = box_path(path)
    if isinstance(p, StorePath):
        if not p.location.is_store and p.is_dir():  # a web URL ending with / (no request)
            raise InputError("a folder, where a JSON file is expected", p)
        try:
            return p.read_bytes()
        except InputError:
            if p.location.is_store and p.is_dir():  # asked only when the read fails
                raise InputError("a prefix (folder), where a JSON file is expected",
                                 p) from None
            raise
    if p.is_dir():
        inside = sorted(q.name for q in p.glob("*.json") if q.is_file())
        named = f" (it holds {', '.join(inside[:3])}{', ...' if len(inside) > 3 else ''})" \
            if inside else ""
        raise InputError(f"a folder, where a JSON file is expected{named}", p)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", p) from exc


def _parse_json(raw: bytes, p: str | Path | StorePath) -> Any:
    """:func:`load_json` of bytes already read, with Python's cyclic garbage collector
    paused: parsing builds hundreds of thousands of containers, each of which would
    otherwise count towards a full collection (0.7 s instead of 0.25 s for 500,000
    results; the parsed objects hold no reference cycle)."""
    with collector_paused():
        try:
            import orjson

            return orjson.loads(raw)
        except Exception:  # not valid for orjson: the standard library decides
            pass
    try:
        return json.loads(raw)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", p) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 JSON ({exc.reason} at byte {exc.start})", p) from None
    except RecursionError:
        raise InputError("JSON nested too deeply to be COCO", p) from None
    except ValueError as exc:  # e.g. an integer literal with too many digits
        raise InputError(f"invalid JSON ({exc})", p) from None


def _bbox(value: Any, where: str) -> tuple[float, float, float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        raise InputError(f"bbox must be [x, y, width, height], got {_short(value)}", where)
    # JSON numbers only: the official evaluator would fail on strings ("10") later
    if not all(_is_number(v) for v in value):
        raise InputError(f"bbox must hold numbers, got {_short(value)}", where)
    try:
        x, y, w, h = (float(v) for v in value)
    except OverflowError:
        raise InputError(f"bbox must be finite, got {_short(value)}", where) from None
    if not all(math.isfinite(v) for v in (x, y, w, h)):
        raise InputError(f"bbox must be finite, got {_short(value)}", where)
    if not (math.isfinite(x + w) and math.isfinite(y + h)):
        raise InputError(f"bbox x + width or y + height is not finite: {_short(value)}", where)
    if w < 0 or h < 0:
        raise InputError(f"negative bbox width or height {_short(value)}", where)
    return x, y, w, h


def _coco_gt(data: dict, path: str) -> BoxSet:
    """Ground truth from loaded JSON (boxes only), with the readers' warnings."""
    box, _ = _gt_boxes(data, path)
    return _warn(box, box.image_sizes, path)


def _gt_boxes(data: dict, path: str, arrays: tuple | None = None
              ) -> tuple[BoxSet, np.ndarray] | None:
    """The annotations of listed images and categories as a :class:`BoxSet` (no
    warnings yet), and their positions in ``data["annotations"]``.

    With ``arrays`` (the annotations' columns as :func:`_gt_arrays` takes them, read by
    Arrow; ``data["annotations"]`` is then empty), ``None`` when a value breaks a rule:
    the caller reads the file record by record."""
    images_raw = data.get("images")
    cats_raw = data.get("categories")
    anns = data.get("annotations")
    if not isinstance(images_raw, list) or not isinstance(cats_raw, list) or not isinstance(
            anns, list):
        raise InputError("COCO ground truth needs lists 'images', 'annotations', 'categories'",
                         path)
    image_ids: dict[str, int] = {}
    sizes: dict[str, ImageSize] = {}
    for i, im in enumerate(images_raw):
        iid = im.get("id") if type(im) is dict else None
        if type(iid) is not int:  # the checks, naming the image (the message is made here)
            where = f"{path}: images[{i}]"
            iid = _int_id(_req(im, "id", where), "image id", where)
        key = str(iid)
        if key in image_ids:
            raise InputError(f"duplicate image id {iid!r}", f"{path}: images[{i}]")
        image_ids[key] = iid
        w, h = im.get("width"), im.get("height")
        if _is_number(w) and _is_number(h) and 0 < w < math.inf and 0 < h < math.inf:
            sizes[key] = (float(w), float(h))
    cat_name: dict[Any, str] = {}
    seen_names: dict[str, int] = {}
    for i, c in enumerate(cats_raw):
        where = f"{path}: categories[{i}]"
        cid = _int_id(_req(c, "id", where), "category id", where)
        if cid in cat_name:
            raise InputError(f"duplicate category id {cid!r}", where)
        name = checked_class(str(c.get("name", cid)), where)
        seen_names[name] = seen_names.get(name, 0) + 1
        cat_name[cid] = name
    cat_name = {cid: (n if seen_names[n] == 1 else f"{n}#{cid}") for cid, n in cat_name.items()}
    keys = sorted(image_ids, key=lambda k: image_ids[k])
    if arrays is not None:
        n = arrays[0].shape[0]
        cols = _gt_arrays(*arrays, [image_ids[k] for k in keys], cat_name)
        if cols is None:
            return None
    else:
        n = len(anns)
        cols = _gt_columns(anns, [image_ids[k] for k in keys], cat_name)
    if cols is not None:
        rows, wh, image, cls_ids, areas, ids, crowd, keep, classes = cols
    else:  # record by record: the first bad annotation is named
        rows = np.empty((n, 4))
        wh = np.empty((n, 2))
        image = np.empty(n, dtype=np.int64)
        cls_ids = np.empty(n, dtype=np.int64)
        areas = np.empty(n)
        ids = np.empty(n, dtype=np.int64)
        crowd = np.empty(n, dtype=bool)
        pos = {k: i for i, k in enumerate(keys)}
        keep = np.ones(n, dtype=bool)
        seen_ids: set[Any] = set()
        for i, a in enumerate(anns):
            where = f"{path}: annotations[{i}]"
            x, y, w, h = _bbox(_req(a, "bbox", where), where)
            iid = _int_id(_req(a, "image_id", where), "image_id", where)
            cid = _int_id(_req(a, "category_id", where), "category_id", where)
            aid = _int_id(_req(a, "id", where), "annotation id", where)
            if aid in seen_ids:
                raise InputError(f"duplicate annotation id {aid!r}", where)
            seen_ids.add(aid)
            k = pos.get(str(iid))
            if k is None or cid not in cat_name:
                # the official evaluator only looks at annotations of listed images/categories
                keep[i] = False
                k = 0
            rows[i] = (x, y, x + w, y + h)
            wh[i] = (w, h)
            image[i] = k
            cls_ids[i] = cid if keep[i] and -2**63 <= cid < 2**63 else -1
            area = a.get("area", w * h)
            if not _is_number(area) or not 0 <= area < math.inf:
                raise InputError(f"area must be a number >= 0, got {_short(area)}", where)
            areas[i] = float(area)
            if not -2**63 <= aid < 2**63:
                raise InputError(f"annotation id {aid} does not fit in 64 bits", where)
            ids[i] = aid
            isc = a.get("iscrowd", 0)
            if isc not in (0, 1) or not isinstance(isc, (int, bool)):
                raise InputError(f"iscrowd must be 0 or 1, got {_short(isc)}", where)
            crowd[i] = bool(isc)
        classes = np.asarray([cat_name.get(a["category_id"], "") for a in anns], dtype=str)
        cls_ids = np.where(keep, cls_ids, -1)
    box = BoxSet(
        boxes=rows, image_index=image, classes=classes if n else np.zeros(0, str),
        images=tuple(keys),
        iscrowd=crowd, areas=areas, ids=ids, wh=wh, class_ids=cls_ids,
        image_sizes=sizes, categories={v: k for k, v in cat_name.items()},
        image_ids={k: image_ids[k] for k in keys}, path=path, fmt="coco",
    )
    return (box if keep.all() else box.subset(keep)), np.flatnonzero(keep)


_NO_AREA = object()


def _gt_columns(anns: list, image_ids: list[int], cat_name: dict) -> tuple | None:
    """The ground truth's annotation columns when every annotation is well formed, else
    ``None`` (the record reader then names the first bad one).

    The checks of the record reader, one pass per column: ``bbox`` 4 JSON numbers,
    finite, ``x + w`` and ``y + h`` finite, no negative size; ``image_id``,
    ``category_id`` and ``id`` JSON integers of 64 bits, ids distinct; ``area`` a
    finite number >= 0 (default ``w * h``); ``iscrowd`` 0 or 1 (default 0).
    Annotations of images or categories absent from the lists are marked in
    ``keep = False``, as the record reader does.
    """
    import itertools

    n = len(anns)
    if n == 0:
        return None
    try:
        bbox = [a["bbox"] for a in anns]
        img = [a["image_id"] for a in anns]
        cat = [a["category_id"] for a in anns]
        aid = [a["id"] for a in anns]
        area = [a.get("area", _NO_AREA) for a in anns]
        isc = [a.get("iscrowd", 0) for a in anns]
    except (KeyError, TypeError, AttributeError):
        return None
    if not set(map(type, bbox)) <= {list} or not set(
            map(type, itertools.chain.from_iterable(bbox))) <= {int, float}:
        return None
    if set(map(type, img)) | set(map(type, cat)) | set(map(type, aid)) != {int}:
        return None
    if not set(map(type, area)) <= {int, float, object} or not set(map(type, isc)) <= {
            int, bool} or not set(isc) <= {0, 1}:
        return None
    missing = np.fromiter((v is _NO_AREA for v in area), dtype=bool, count=n)
    try:
        boxes = np.array(bbox, dtype=float)
        img_a = np.array(img, dtype=np.int64)
        cat_a = np.array(cat, dtype=np.int64)
        ids = np.array(aid, dtype=np.int64)
        areas = np.array([0.0 if v is _NO_AREA else v for v in area], dtype=float)
    except (ValueError, OverflowError, TypeError):
        return None
    if boxes.shape != (n, 4):
        return None
    return _gt_arrays(boxes, img_a, cat_a, ids, areas, missing, np.array(isc, dtype=bool),
                      image_ids, cat_name)


def _gt_arrays(boxes: np.ndarray, img_a: np.ndarray, cat_a: np.ndarray, ids: np.ndarray,
               areas: np.ndarray, missing: np.ndarray, crowd: np.ndarray,
               image_ids: list[int], cat_name: dict) -> tuple | None:
    """:func:`_gt_columns` of the annotations' values as arrays (``boxes`` ``[x, y, w,
    h]``; ``areas`` where not ``missing``; ``crowd`` bool), or ``None`` when one
    breaks a rule."""
    n = boxes.shape[0]
    known_img = np.array(image_ids, dtype=np.int64)
    if not _valid_values(boxes, np.zeros(0)):
        return None
    areas = areas.copy()
    wh = boxes[:, 2:].copy()
    areas[missing] = wh[missing, 0] * wh[missing, 1]
    if not (np.isfinite(areas).all() and (areas >= 0).all()):
        return None
    if has_duplicates(ids):
        return None
    rows = np.column_stack([boxes[:, :2], boxes[:, :2] + wh])
    image = np.searchsorted(known_img, img_a)  # the image list is sorted by id
    image = np.minimum(image, max(known_img.size - 1, 0))
    known_cat = np.array(sorted(c for c in cat_name if -2**63 <= c < 2**63), dtype=np.int64)
    c_pos = np.minimum(np.searchsorted(known_cat, cat_a), max(known_cat.size - 1, 0))
    keep = ((known_img[image] == img_a) if known_img.size else np.zeros(n, bool)) & (
        (known_cat[c_pos] == cat_a) if known_cat.size else np.zeros(n, bool))
    image = np.where(keep, image, 0)
    names = np.array([cat_name[int(c)] for c in known_cat] or [""], dtype=str)
    classes = np.where(keep, names[c_pos], "")
    return rows, wh, image, np.where(keep, cat_a, -1), areas, ids, crowd, keep, classes


def _warn(box: BoxSet, sizes: dict[str, ImageSize], path: str) -> BoxSet:
    """Attach the out-of-image and zero-area warnings (the official evaluator keeps such
    boxes as given, so do we)."""
    from dataclasses import replace

    warns = outside_warnings(box.boxes, box.image_index, box.images, sizes, path,
                             "beyond the 'images' width/height, or negative")
    return replace(box, warnings=tuple(warns)) if warns else box


def _columns(data: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The results' columns as arrays when every record is well formed, else ``None``.

    One C-level pass per column checks the JSON types exactly (``bbox`` and
    ``score`` numbers, ids integers; never a bool or a string), then numpy checks
    the values (finite, ``x + w`` and ``y + h`` finite, no negative size). Any
    doubt returns ``None`` and the record-by-record reader names the bad record.
    """
    import itertools

    try:
        bbox = [d["bbox"] for d in data]
        score = [d["score"] for d in data]
        img = [d["image_id"] for d in data]
        cat = [d["category_id"] for d in data]
    except (KeyError, TypeError):
        return None
    if not set(map(type, bbox)) <= {list}:
        return None
    if not set(map(type, itertools.chain.from_iterable(bbox))) | set(map(type, score)) \
            <= {int, float}:
        return None
    if set(map(type, img)) | set(map(type, cat)) != {int}:
        return None
    with np.errstate(all="ignore"):
        try:
            boxes = np.array(bbox, dtype=float)
            img_a, cat_a = np.array(img), np.array(cat)
        except (ValueError, OverflowError):
            return None
        scores = np.array(score, dtype=float)
    if boxes.shape != (len(data), 4) or img_a.dtype != np.int64 or cat_a.dtype != np.int64:
        return None
    return (boxes, scores, img_a, cat_a) if _valid_values(boxes, scores) else None


def _coco_results(data: list, path: str, like: BoxSet | None) -> BoxSet:
    n = len(data)
    cols = _columns(data) if n else None
    if cols is not None:
        return _coco_results_arrays(*cols, path=path, like=like)
    rows = np.empty((n, 4))
    wh = np.empty((n, 2))
    scores = np.empty(n)
    img_keys: list[str] = []
    cat_ids: list[Any] = []
    for i, d in enumerate(data):
        where = f"{path}: results[{i}]"
        x, y, w, h = _bbox(_req(d, "bbox", where), where)
        s = _req(d, "score", where)
        if not _is_number(s) or not -math.inf < s < math.inf:
            raise InputError(f"score must be a finite number, got {_short(s)}", where)
        rows[i] = (x, y, x + w, y + h)
        wh[i] = (w, h)
        scores[i] = s
        img_keys.append(str(_int_id(_req(d, "image_id", where), "image_id", where)))
        cat_ids.append(_int_id(_req(d, "category_id", where), "category_id", where))
    if like is not None and like.image_ids:
        known = like.image_ids
        bad = next((k for k in img_keys if k not in known), None)
        if bad is not None:
            raise InputError(f"results for image id {bad} that the ground truth does not "
                             "list", path)
        images = list(like.images)
        id_of = dict(like.image_ids)
    else:
        images = sorted(set(img_keys), key=_numeric_key)
        id_of = {k: _as_int(k) for k in images}
    pos = {k: i for i, k in enumerate(images)}
    image = np.fromiter((pos[k] for k in img_keys), dtype=np.int64, count=n)
    name_of = {v: k for k, v in like.categories.items()} if like is not None else {}
    classes = np.asarray([name_of.get(c, str(c)) for c in cat_ids], dtype=str) if n else np.zeros(
        0, str)
    cls_ids = np.fromiter((c if -2**63 <= c < 2**63 else -1 for c in cat_ids), dtype=np.int64,
                          count=n)
    box = BoxSet(
        boxes=rows, image_index=image, classes=classes, images=tuple(images), scores=scores,
        areas=_box_areas(wh), ids=np.arange(1, n + 1, dtype=np.int64), wh=wh,
        class_ids=cls_ids, image_sizes=dict(like.image_sizes) if like is not None else {},
        categories=dict(like.categories) if like is not None else {},
        image_ids=id_of, path=path, fmt="coco",
    )
    return _warn(box, box.image_sizes, path)


def _coco_results_arrays(boxes: np.ndarray, scores: np.ndarray, img: np.ndarray,
                         cat: np.ndarray, *, path: str, like: BoxSet | None) -> BoxSet:
    """:func:`_coco_results` for well-formed columns: the same BoxSet, vectorised."""
    n = len(scores)
    wh = boxes[:, 2:].copy()
    rows = boxes  # x, y, w, h -> x1, y1, x2, y2 in place (the caller's array)
    rows[:, 2:] += rows[:, :2]
    uniq_img, img_inv = _unique_inverse(img)
    uniq_keys = [str(int(k)) for k in uniq_img]
    if like is not None and like.image_ids:
        known = like.image_ids
        unknown = np.array([k not in known for k in uniq_keys], dtype=bool)
        if unknown.any():  # name the first such record's image, as the record reader does
            bad = uniq_keys[int(img_inv[np.flatnonzero(unknown[img_inv])[0]])]
            raise InputError(f"results for image id {bad} that the ground truth does not "
                             "list", path)
        images = list(like.images)
        id_of = dict(like.image_ids)
    else:
        images = sorted(uniq_keys, key=_numeric_key)
        id_of = {k: _as_int(k) for k in images}
    pos = {k: i for i, k in enumerate(images)}
    image = np.array([pos[k] for k in uniq_keys], dtype=np.int64)[img_inv]
    name_of = {v: k for k, v in like.categories.items()} if like is not None else {}
    uniq_cat, cat_inv = _unique_inverse(cat)
    names = np.asarray([name_of.get(int(c), str(int(c))) for c in uniq_cat], dtype=str)
    classes = names[cat_inv] if n else np.zeros(0, str)
    box = BoxSet(
        boxes=rows, image_index=image, classes=classes, images=tuple(images), scores=scores,
        areas=_box_areas(wh), ids=np.arange(1, n + 1, dtype=np.int64), wh=wh,
        class_ids=cat.astype(np.int64), image_sizes=dict(like.image_sizes) if like is not None
        else {}, categories=dict(like.categories) if like is not None else {},
        image_ids=id_of, path=path, fmt="coco",
    )
    return _warn(box, box.image_sizes, path)


def _box_areas(wh: np.ndarray) -> np.ndarray:
    """``w * h`` per box, as ``COCO.loadRes`` gives results their area; a product beyond
    the float range is ``inf`` (such a box is refused downstream), without a warning."""
    with np.errstate(over="ignore"):
        return wh[:, 0] * wh[:, 1]


def _unique_inverse(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(ids, return_inverse=True)`` for int64 ids: a lookup table when they
    span a range at most a few times their number (image and category ids usually
    do), else the sort."""
    if ids.size and int(ids.max()) - int(ids.min()) <= 4 * ids.size + 1024:
        lo = int(ids.min())
        shifted = ids - lo
        seen = np.zeros(int(shifted.max()) + 1, dtype=bool)
        seen[shifted] = True
        uniq = np.flatnonzero(seen)
        rank = np.cumsum(seen) - 1
        return uniq + lo, rank[shifted]
    return np.unique(ids, return_inverse=True)


def _numeric_key(k: str) -> tuple[int, float, str]:
    try:
        return (0, float(k), k)
    except ValueError:
        return (1, 0.0, k)


def _as_int(k: str) -> int:
    try:
        return int(k)
    except ValueError:
        return -1
