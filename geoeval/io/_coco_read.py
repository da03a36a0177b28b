"""COCO JSON read into a :class:`BoxSet`, with instance masks when asked: :func:`read_coco`
and :func:`read_coco_pair` (see :mod:`geoeval.io.boxes`).

The record readers of :mod:`geoeval.io._box_coco` (boxes) and :mod:`geoeval.io._coco_segm`
(segmentations) do the checking; Arrow's JSON reader (:mod:`geoeval.io._coco_arrow`)
parses well-formed files into columns first, and anything unusual goes to the record
readers, whose messages name the bad record.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError, swapped
from geoeval.io._box_coco import (
    _coco_gt,
    _coco_results,
    _coco_results_arrays,
    _gt_boxes,
    _parse_json,
    _read_bytes,
    _warn,
    load_json,
)
from geoeval.io._boxset import BoxSet
from geoeval.io._coco_arrow import (
    GtColumns,
    PolygonColumns,
    _arrow_columns,
    _arrow_gt_columns,
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
from geoeval.io.masks import Masks
from geoeval.io.store_paths import StorePath, box_path, is_remote
from geoeval.parallel import collector_paused


def read_coco(
    source: str | Path | StorePath | bytes | dict | list, *, side: str | None = None,
    like: BoxSet | None = None, masks: bool = False, name: str | None = None,
) -> BoxSet:
    """Read COCO ground truth (a dict) or results (a list) from a path or a loaded object.

    Parameters
    ----------
    source : path, URL, bytes, dict or list
        A JSON file (local, or a URL: ``s3://``, ``gs://``, ``az://``, ``https://``,
        read once into memory), its bytes, or its already-loaded content.
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
        What messages call bytes or already-loaded content (the file it came
        from); default ``<memory>``.

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
    source, path = _in_memory(source, name)
    if side != "submission":  # a ground truth whose annotations Arrow can read
        split = _arrow_gt_columns(source, polygons=masks)
        box = None if split is None else _gt_from_columns(*split, path=path, masks=masks)
        if box is not None:
            return box
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
        data = _parse_json(source, path) if isinstance(source, bytes) else load_json(source)
        return _coco_data(data, path, side, like, masks)


def _in_memory(source: str | Path | StorePath | bytes, name: str | None = None
               ) -> tuple[str | Path | bytes, str]:
    """A URL's file read once into memory (nothing written to disk), a local path or
    bytes as given; and the name messages give it (a URL without its secrets)."""
    if isinstance(source, bytes):
        return source, name or "<memory>"
    if is_remote(source):
        p = box_path(source)
        return _read_bytes(p), str(p)
    return source, str(source)


def _coco_data(data: Any, path: str, side: str | None, like: BoxSet | None,
               masks: bool = False) -> BoxSet:
    """:func:`read_coco` of loaded JSON."""
    if isinstance(data, dict) and "annotations" in data and (side or "reference") == "reference":
        if masks:
            box, rows = _gt_boxes(data, path)
            return _with_gt_masks(box, data["annotations"], rows, path)
        return _coco_gt(data, path)
    if isinstance(data, dict) and side == "submission":
        data = data.get("annotations")
    if isinstance(data, list) and side != "reference":
        if masks:
            return _coco_mask_results(data, path, like)
        return _coco_results(data, path, like)
    if isinstance(data, list) and side == "reference":
        raise InputError("a list of results where the ground truth (an object with 'images', "
                         "'annotations', 'categories') is expected: "
                         + swapped("ground truth", "results"), path)
    raise InputError("not COCO JSON: expected ground truth (an object with 'images', "
                     "'annotations', 'categories') or results (a list)", path)


def read_coco_pair(reference: str | Path | StorePath | dict | BoxSet,
                   submission: str | Path | StorePath | list | BoxSet, *,
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
    named = None
    if not isinstance(submission, (dict, list, BoxSet)):  # a URL's file read once
        try:
            submission, named = _in_memory(submission)
        except InputError:  # the ground truth's error comes first, as for local files
            if not isinstance(reference, BoxSet):
                read_coco(reference, side="reference", masks=masks)
            raise
    if masks:
        polygons = None if isinstance(submission, (dict, list, BoxSet)) else (
            _arrow_polygon_columns(submission))  # Arrow's parser runs in its own threads
        gt = reference if isinstance(reference, BoxSet) else read_coco(
            reference, side="reference", masks=True)
        dt = None
        if polygons is not None and gt.masks is not None:
            dt = _coco_polygon_results(polygons, str(named), gt)
        if dt is None:
            dt = submission if isinstance(submission, BoxSet) else read_coco(
                submission, side="submission", like=gt, masks=True, name=named)
        for box in (gt, dt):
            if box.masks is None:
                raise InputError("these boxes hold no masks: read them with masks=True",
                                 box.path)
        return gt, dt
    if isinstance(reference, BoxSet) or isinstance(submission, (dict, list, BoxSet)):
        gt = reference if isinstance(reference, BoxSet) else read_coco(reference,
                                                                        side="reference")
        dt = submission if isinstance(submission, BoxSet) else read_coco(
            submission, side="submission", like=gt, name=named)
        return gt, dt
    cols = _arrow_columns(submission)  # Arrow's parser runs in its own threads
    gt = read_coco(reference, side="reference")
    if cols is not None and gt.fmt == "coco":
        return gt, _coco_results_arrays(*cols, path=str(named), like=gt)
    return gt, read_coco(submission, side="submission", like=gt, name=named)


def _with_gt_masks(box: BoxSet, anns: list, rows: np.ndarray, path: str) -> BoxSet:
    """``box`` (the annotations ``anns[rows]``) with their masks; an annotation
    without ``area`` takes its mask's."""

    heights, widths = image_grid(box.image_sizes, box.images)
    m = read_masks(anns, rows, box.image_index, heights, widths, path=path,
                   what="annotations", image_keys=box.images)
    no_area = np.fromiter(("area" not in anns[i] for i in rows.tolist()), dtype=bool,
                          count=rows.size)
    return _gt_with(box, m, no_area, path)


def _gt_with(box: BoxSet, m: Masks, no_area: np.ndarray, path: str) -> BoxSet:
    """The ground truth ``box`` with its masks ``m``: an annotation without ``area``
    (``no_area``) takes its mask's; the warnings are the masks'."""
    from dataclasses import replace

    areas = np.where(no_area, m.areas(), box.areas) if no_area.any() else box.areas
    return replace(box, masks=m, areas=areas, warnings=_mask_warnings(m, path, "annotation"))


def _gt_from_columns(rest: dict, cols: GtColumns, *, path: str, masks: bool
                     ) -> BoxSet | None:
    """The ground truth from Arrow's columns of its annotations (``rest``: the file's
    other fields), or ``None`` when a value breaks a rule (the caller then reads the
    file record by record, naming the first bad annotation)."""
    from geoeval.io.masks import ranges

    got = _gt_boxes(rest, path, cols.arrays)
    if got is None:
        return None
    box, rows = got
    if not masks:
        return _warn(box, box.image_sizes, path)
    assert cols.coords is not None and cols.ring_sizes is not None and cols.n_rings is not None
    heights, widths = image_grid(box.image_sizes, box.images)
    h, w = heights[box.image_index], widths[box.image_index]
    if (h < 1).any():
        return None
    n_rings, ring_sizes, coords = cols.n_rings, cols.ring_sizes, cols.coords
    if rows.size < n_rings.size:  # annotations of unlisted images or categories dropped
        rings = ranges(np.cumsum(n_rings)[rows] - n_rings[rows], n_rings[rows])
        coords = coords[ranges(np.cumsum(ring_sizes)[rings] - ring_sizes[rings],
                               ring_sizes[rings])]
        n_rings, ring_sizes = n_rings[rows], ring_sizes[rings]
    m = polygon_array_masks(coords, ring_sizes, n_rings, h, w)
    if m is None:
        return None
    return _gt_with(box, m, cols.arrays[5][rows], path)


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
