"""COCO JSON ground truth and results (see :mod:`geoeval.io.boxes`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.arrays import has_duplicates
from geoeval.errors import InputError
from geoeval.io._boxset import BoxSet, ImageSize, outside_warnings
from geoeval.io._coco_arrow import (
    PolygonColumns,
    _arrow_columns,
    _arrow_polygon_columns,
    _valid_values,
)
from geoeval.io._coco_segm import (
    box_masks,
    image_grid,
    in_order,
    polygon_array_masks,
    read_masks,
)
from geoeval.io._json_values import _int_id, _is_number, _req, _short
from geoeval.io._masks import Masks
from geoeval.parallel import collector_paused


def load_json(path: str | Path) -> Any:
    """Parse a JSON file; errors as :class:`InputError` naming file and line.

    orjson parses a valid file several times faster than the standard library
    (a COCO-sized result file is most of a COCO run's reading time); anything it
    refuses (NaN literals, integers beyond 64 bits, invalid text) is parsed again
    by :mod:`json`, whose values and error messages are the reference.
    """
    return _parse_json(_read_bytes(path), Path(path))


def _read_bytes(path: str | Path) -> bytes:
    p = Path(path)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", p) from exc


def _parse_json(raw: bytes, p: Path) -> Any:
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


def read_coco(
    source: str | Path | dict | list, *, side: str | None = None, like: BoxSet | None = None,
    masks: bool = False, name: str | None = None,
) -> BoxSet:
    """Read COCO ground truth (a dict) or results (a list) from a path or a loaded object.

    Parameters
    ----------
    source : path, dict or list
        A JSON file, or its already-loaded content.
    side : {'reference', 'submission'}, optional
        Reference (ground truth) or submission (results). Default: the
        reference for an object with ``annotations``, a submission for a list.
    like : BoxSet, optional
        The reference, when reading a submission: gives class names, the image
        list (results on other images are refused) and image sizes.
    masks : bool
        Also read each record's ``segmentation`` into :attr:`BoxSet.masks`
        (:mod:`geoeval.io._coco_segm`), for mask and boundary evaluation.
    name : str, optional
        What messages call already-loaded content (the file it came from);
        default ``<memory>``.

    Returns
    -------
    BoxSet
        ``fmt == "coco"``; see the notes below for the fields.

    Notes
    -----
    Ground truth keeps ``iscrowd``, the annotation ``area`` (default: box
    area), annotation ids and the raw ``[w, h]``; categories give class names
    (a name used by two ids becomes ``name#id``). Results get ids ``1..n`` and
    ``area = w * h`` as the official loader (``COCO.loadRes``) gives them;
    their class names and image list come from ``like`` when given.

    With ``masks``, results take ``area`` and ``bbox`` as ``COCO.loadRes`` does: when
    the first result has a (non-empty) ``bbox``, every result's area is its box's
    ``w * h`` and a result without ``segmentation`` is its box's polygon; otherwise
    each result's area and box are its mask's (``maskUtils.area``, ``toBbox``).
    A ground-truth annotation without ``area`` gets its mask's area.
    """
    if isinstance(source, (dict, list)):
        return _coco_data(source, name or "<memory>", side, like, masks)
    path = str(source)
    if masks and side == "submission" and like is not None and like.masks is not None:
        polygons = _arrow_polygon_columns(source)
        box = None if polygons is None else _coco_polygon_results(polygons, path, like)
        if box is not None:
            return box
    cols = _arrow_columns(source) if side != "reference" and not masks else None
    if cols is not None:
        return _coco_results_arrays(*cols, path=path, like=like)
    # the parsed file (hundreds of thousands of containers) lives only in this call:
    # with the collector on, a collection would walk all of it once more for nothing
    with collector_paused():
        return _coco_data(load_json(source), path, side, like, masks)


def _coco_data(data: Any, path: str, side: str | None, like: BoxSet | None,
               masks: bool = False) -> BoxSet:
    """:func:`read_coco` of loaded JSON."""
    if isinstance(data, dict) and "annotations" in data and (side or "reference") == "reference":
        return _coco_gt(data, path, masks)
    if isinstance(data, dict) and side == "submission":
        data = data.get("annotations")
    if isinstance(data, list) and side != "reference":
        if masks:
            return _coco_mask_results(data, path, like)
        return _coco_results(data, path, like)
    raise InputError("not COCO JSON: expected ground truth (an object with 'images', "
                     "'annotations', 'categories') or results (a list)", path)


def read_coco_pair(reference: str | Path | dict | BoxSet,
                   submission: str | Path | list | BoxSet, *,
                   masks: bool = False) -> tuple[BoxSet, BoxSet]:
    """Ground truth and results, as ``read_coco(reference, side="reference")`` and
    ``read_coco(submission, side="submission", like=...)`` give them (with their
    masks when ``masks``).

    When the results are a file, Arrow parses it first (in its own threads), then
    the ground truth is read and the results' columns are checked against it.
    Reading the ground truth while Arrow parses was measured slower on two cores
    (three busy threads, the ground truth's reader holding the GIL). Errors are
    those of the two calls, the ground truth's first (the Arrow path never
    raises: it gives up and the record reader reports).
    """
    if masks:
        polygons = None if isinstance(submission, (dict, list, BoxSet)) else (
            _arrow_polygon_columns(submission))  # Arrow's parser runs in its own threads
        gt = reference if isinstance(reference, BoxSet) else read_coco(
            reference, side="reference", masks=True)
        dt = None
        if polygons is not None and gt.masks is not None:
            dt = _coco_polygon_results(polygons, str(submission), gt)
        if dt is None:
            dt = submission if isinstance(submission, BoxSet) else read_coco(
                submission, side="submission", like=gt, masks=True)
        for box in (gt, dt):
            if box.masks is None:
                raise InputError("these boxes hold no masks: read them with masks=True",
                                 box.path)
        return gt, dt
    if isinstance(reference, BoxSet) or isinstance(submission, (dict, list, BoxSet)):
        gt = reference if isinstance(reference, BoxSet) else read_coco(reference,
                                                                        side="reference")
        dt = submission if isinstance(submission, BoxSet) else read_coco(
            submission, side="submission", like=gt)
        return gt, dt
    cols = _arrow_columns(submission)  # Arrow's parser runs in its own threads
    gt = read_coco(reference, side="reference")
    if cols is not None and gt.fmt == "coco":
        return gt, _coco_results_arrays(*cols, path=str(submission), like=gt)
    return gt, read_coco(submission, side="submission", like=gt)


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


def _coco_gt(data: dict, path: str, masks: bool = False) -> BoxSet:
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
        name = str(c.get("name", cid))
        seen_names[name] = seen_names.get(name, 0) + 1
        cat_name[cid] = name
    cat_name = {cid: (n if seen_names[n] == 1 else f"{n}#{cid}") for cid, n in cat_name.items()}
    n = len(anns)
    keys = sorted(image_ids, key=lambda k: image_ids[k])
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
    box = box if keep.all() else box.subset(keep)
    if masks:
        return _with_gt_masks(box, anns, np.flatnonzero(keep), path)
    return _warn(box, sizes, path)


def _with_gt_masks(box: BoxSet, anns: list, rows: np.ndarray, path: str) -> BoxSet:
    """``box`` (the annotations ``anns[rows]``) with their masks; an annotation
    without ``area`` takes its mask's."""
    from dataclasses import replace

    heights, widths = image_grid(box.image_sizes, box.images)
    m = read_masks(anns, rows, box.image_index, heights, widths, path=path,
                   what="annotations", image_keys=box.images)
    no_area = np.fromiter(("area" not in anns[i] for i in rows.tolist()), dtype=bool,
                          count=rows.size)
    areas = box.areas
    if no_area.any():
        areas = np.where(no_area, m.areas(), box.areas)
    return replace(box, masks=m, areas=areas, warnings=_mask_warnings(m, path, "annotation"))


def _mask_warnings(m: Masks, path: str, what: str) -> tuple[str, ...]:
    """The warnings of a set read with its masks: the empty masks (the boxes' warnings
    do not apply: the boxes are not compared)."""
    empty = int((m.areas() == 0).sum())
    if not empty:
        return ()
    return (f"{path}: {empty} {what}(s) with an empty mask (no pixel of the image inside "
            "the segmentation); kept, as pycocotools keeps them",)


def _coco_mask_results(data: list, path: str, like: BoxSet | None) -> BoxSet:
    """Results with their masks, ``area`` and ``bbox`` as ``COCO.loadRes`` gives them
    (see :func:`read_coco`)."""
    from dataclasses import replace

    if like is None or like.masks is None:
        raise InputError("results' masks are read against the ground truth's images: "
                         "read the ground truth with masks=True and give it as like=", path)
    heights, widths = image_grid(like.image_sizes, like.images)
    n = len(data)
    rows = np.arange(n)
    first = data[0] if n else None
    if isinstance(first, dict) and "bbox" in first and first["bbox"] != []:
        box = _coco_results(data, path, like)
        xywh = np.column_stack([box.boxes[:, :2], box.wh])
        m = read_masks(data, rows, box.image_index, heights, widths, path=path,
                       what="results", image_keys=box.images, boxes=xywh)
        return replace(box, masks=m, warnings=_mask_warnings(m, path, "result"))
    scores, img, cat = _result_fields(data, path)
    pos = {k: i for i, k in enumerate(like.images)}
    image = np.array([pos.get(str(int(v)), -1) for v in img.tolist()], dtype=np.int64)
    if (image < 0).any():
        bad = int(img[np.argmax(image < 0)])
        raise InputError(f"results for image id {bad} that the ground truth does not list",
                         path)
    m = read_masks(data, rows, image, heights, widths, path=path, what="results",
                   image_keys=like.images)
    box = _coco_results_arrays(m.bboxes(), scores, img, cat, path=path, like=like)
    return replace(box, masks=m, areas=m.areas().astype(float),
                   warnings=_mask_warnings(m, path, "result"))


def _coco_polygon_results(cols: PolygonColumns, path: str, like: BoxSet) -> BoxSet | None:
    """:func:`_coco_mask_results` of polygon results read by Arrow, or ``None`` when a
    record breaks a rule (the record reader then names it)."""
    from dataclasses import replace

    n = cols.scores.size
    if n == 0 or not np.isfinite(cols.scores).all():
        return None
    by_box = bool(cols.has_bbox[0])
    if (by_box and not cols.has_bbox.all()) or (not by_box and not cols.has_segmentation.all()):
        return None
    boxes = cols.boxes if by_box else np.zeros((n, 4))
    if by_box and not _valid_values(boxes, cols.scores):
        return None
    box = _coco_results_arrays(boxes.copy(), cols.scores, cols.image_ids, cols.category_ids,
                               path=path, like=like)
    heights, widths = image_grid(like.image_sizes, like.images)
    h, w = heights[box.image_index], widths[box.image_index]
    if (h < 1).any():
        return None
    seg = np.flatnonzero(cols.has_segmentation)
    masks = polygon_array_masks(cols.coords, cols.ring_sizes, cols.n_rings[seg], h[seg], w[seg])
    if masks is None:
        return None
    if seg.size < n:  # results without segmentation are their boxes' polygons
        rest = np.flatnonzero(~cols.has_segmentation)
        masks = in_order([masks, box_masks(boxes[rest], h[rest], w[rest])], [seg, rest])
    warnings = _mask_warnings(masks, path, "result")
    if by_box:
        return replace(box, masks=masks, warnings=warnings)
    xywh = masks.bboxes()
    return replace(box, boxes=np.column_stack([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]]),
                   wh=xywh[:, 2:].copy(), areas=masks.areas().astype(float), masks=masks,
                   warnings=warnings)


def _result_fields(data: list, path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores, image ids and category ids of results (each a JSON number or integer)."""
    n = len(data)
    try:
        score = [d["score"] for d in data]
        img = [d["image_id"] for d in data]
        cat = [d["category_id"] for d in data]
        if set(map(type, score)) <= {int, float} and set(map(type, img)) | set(
                map(type, cat)) <= {int}:
            with np.errstate(all="ignore"):
                out = (np.array(score, dtype=float), np.array(img, dtype=np.int64),
                       np.array(cat, dtype=np.int64))
            if np.isfinite(out[0]).all():
                return out
    except (KeyError, TypeError, OverflowError):
        pass
    for i, d in enumerate(data):  # name the first bad record
        where = f"{path}: results[{i}]"
        s = _req(d, "score", where)
        if not _is_number(s) or not -math.inf < s < math.inf:
            raise InputError(f"score must be a finite number, got {_short(s)}", where)
        for key in ("image_id", "category_id"):
            v = _int_id(_req(d, key, where), key, where)
            if not -2**63 <= v < 2**63:
                raise InputError(f"{key} {v} does not fit in 64 bits", where)
    raise AssertionError(f"{n} results passed every check but could not be read")


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
        known_img = np.array(image_ids, dtype=np.int64)
        areas = np.array([0.0 if v is _NO_AREA else v for v in area], dtype=float)
    except (ValueError, OverflowError, TypeError):
        return None
    if boxes.shape != (n, 4) or not _valid_values(boxes, np.zeros(0)):
        return None
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
    crowd = np.array(isc, dtype=bool)
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
