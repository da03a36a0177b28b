"""COCO ``segmentation`` fields read into :class:`~geoeval.io.masks.Masks`.

A segmentation is what ``COCO.annToRLE`` (pycocotools) accepts, on the grid of the
annotation's image (``images[].height`` × ``width``):

* polygons ``[[x0, y0, x1, y1, …], …]``: each ring rasterised as ``rleFrPoly`` does
  (:mod:`geoeval.io._polygon_masks`), the rings of one annotation merged (union);
* uncompressed RLE ``{"size": [h, w], "counts": [c0, c1, …]}`` (crowd regions);
* compressed RLE ``{"size": [h, w], "counts": "…"}`` (``rleToString``).

Checks (each failure an :class:`InputError` naming the file and the record): a ring
holds an even number of finite numbers, the first ring at least three points
(pycocotools reads a first ring of four numbers as a box and fails), later rings at
least two (a two-point ring encloses nothing); an RLE's ``size`` is its image's
``[height, width]`` and its counts are non-negative and sum to ``height × width``;
the image has integer ``height`` and ``width``. pycocotools drops the last number of
an odd ring, compares masks of different sizes as IoU -1 and reads past the end of
counts that sum to too much; geoeval refuses all three.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from geoeval.errors import InputError
from geoeval.io._json_values import _short
from geoeval.io._polygon_masks import COORD_LIMIT, box_rings, polygon_masks
from geoeval.io.masks import (
    Masks,
    RleError,
    concat_masks,
    decode_counts,
    empty_masks,
    masks_from_counts,
)

_MISSING = object()


def image_grid(sizes: dict[str, tuple[float, float]], images: Sequence[str]
               ) -> tuple[np.ndarray, np.ndarray]:
    """Height and width (int64) of each image of ``images`` from ``sizes`` (key ->
    ``(width, height)``); -1 where unknown or not whole numbers of pixels."""
    nan = (np.nan, np.nan)
    wh = np.array([sizes.get(key, nan) for key in images], dtype=float).reshape(-1, 2)
    with np.errstate(invalid="ignore"):
        whole = (wh == np.floor(wh)) & (wh >= 1) & (wh < 2**31)  # NaN: unknown
    ok = whole.all(axis=1)
    w = np.where(ok, wh[:, 0], -1).astype(np.int64)
    h = np.where(ok, wh[:, 1], -1).astype(np.int64)
    return h, w


def read_masks(records: Sequence[Any], rows: np.ndarray, image_index: np.ndarray,
               heights: np.ndarray, widths: np.ndarray, *, path: str, what: str,
               image_keys: Sequence[str], boxes: np.ndarray | None = None) -> Masks:
    """The masks of the records ``records[rows]`` on their images' grids.

    Parameters
    ----------
    records : sequence of dict
        The annotations (ground truth) or results, already checked to be objects.
    rows : numpy.ndarray
        Which records, in the order of the masks returned.
    image_index : numpy.ndarray
        Image of each of them, an index into ``heights``, ``widths``, ``image_keys``.
    heights, widths : numpy.ndarray
        Each image's grid (-1: unknown, an error if a record needs it).
    path, what : str
        The file, and ``"annotations"`` or ``"results"``, for messages.
    boxes : numpy.ndarray, optional
        ``[x, y, w, h]`` of each record: a record without ``segmentation`` is then
        its box (``COCO.loadRes`` gives a result with a box and no segmentation the
        box's polygon); without ``boxes`` a missing segmentation is an error.
    """
    rows = np.asarray(rows, dtype=np.int64)
    image_index = np.asarray(image_index, dtype=np.int64)
    n = rows.size

    def where(j: int) -> str:
        return f"{path}: {what}[{int(rows[j])}]"

    h, w = heights[image_index], widths[image_index]
    no_grid = np.flatnonzero(h < 1)
    if no_grid.size:
        j = int(no_grid[0])
        raise InputError(f"image {image_keys[image_index[j]]} needs whole-number 'height' "
                         "and 'width' in the ground truth's images (masks are rasterised "
                         "on the image grid)", where(j))
    segs = [records[i].get("segmentation", _MISSING) for i in rows.tolist()]
    kind = np.fromiter((_kind(s) for s in segs), dtype=np.int8, count=n)
    missing = np.flatnonzero(kind == _NONE)
    if missing.size and boxes is None:
        raise InputError("missing 'segmentation'", where(int(missing[0])))
    other = np.flatnonzero(kind == _OTHER)
    if other.size:
        j = int(other[0])
        raise InputError("segmentation must be polygons [[x0, y0, x1, y1, ...], ...] or RLE "
                         f"{{'size': [h, w], 'counts': ...}}, got {_short(segs[j])}", where(j))
    parts, order = [], []
    poly = np.flatnonzero(kind == _POLY)
    if poly.size:
        parts.append(_polygons([segs[j] for j in poly.tolist()], h[poly], w[poly],
                               lambda k: where(int(poly[k]))))
        order.append(poly)
    if missing.size:
        assert boxes is not None
        parts.append(box_masks(boxes[missing], h[missing], w[missing]))
        order.append(missing)
    rle = np.flatnonzero(kind == _RLE)
    if rle.size:
        parts.append(_rles([segs[j] for j in rle.tolist()], h[rle], w[rle],
                           lambda k: where(int(rle[k]))))
        order.append(rle)
    if not parts:
        return empty_masks(h, w)
    return in_order(parts, order)


def box_masks(boxes: np.ndarray, h: np.ndarray, w: np.ndarray) -> Masks:
    """The masks of boxes ``[x, y, w, h]`` (``rleFrBbox``: each box's polygon)."""
    n = len(boxes)
    return polygon_masks(box_rings(boxes).ravel(), np.full(n, 4), np.arange(n), h, w)


def in_order(parts: list[Masks], order: list[np.ndarray]) -> Masks:
    """One :class:`Masks` from groups: ``parts[i]`` holds the objects ``order[i]``."""
    at = np.concatenate(order)
    inverse = np.empty(at.size, dtype=np.int64)
    inverse[at] = np.arange(at.size)
    return concat_masks(parts).subset(inverse)


_NONE, _POLY, _RLE, _OTHER = 0, 1, 2, 3


def _kind(seg: Any) -> int:
    if seg is _MISSING:
        return _NONE
    if type(seg) is list:
        return _POLY
    if type(seg) is dict:
        return _RLE
    return _OTHER


def _polygons(segs: list, h: np.ndarray, w: np.ndarray, where: Any) -> Masks:
    """Masks of polygon segmentations; the checks of the module docstring."""
    coords, sizes, n_rings = polygon_rings(segs, where)
    return polygon_masks(coords, sizes, np.repeat(np.arange(len(segs)), n_rings), h, w)


def polygon_rings(segs: list, where: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rings of polygon segmentations as written, checked (module docstring): every
    coordinate ``x0, y0, x1, y1, …`` of every ring concatenated (float64), the vertices
    of each ring and the rings of each segmentation. ``where(k)`` names record ``k``."""
    n_rings = np.fromiter(map(len, segs), dtype=np.int64, count=len(segs))
    rings = list(itertools.chain.from_iterable(segs))
    if set(map(type, rings)) <= {list}:
        sizes = np.fromiter(map(len, rings), dtype=np.int64, count=len(rings))
        if set(map(type, itertools.chain.from_iterable(rings))) <= {int, float}:
            try:
                coords = np.fromiter(itertools.chain.from_iterable(rings), dtype=np.float64,
                                     count=int(sizes.sum()))
            except OverflowError:
                coords = None
            if coords is not None and rings_valid(coords, sizes, n_rings):
                return coords, sizes // 2, n_rings
    for k, seg in enumerate(segs):  # name the first bad one
        _check_polygons(seg, where(k))
    raise AssertionError("a polygon check failed without naming a record")


def rings_valid(coords: np.ndarray, ring_sizes: np.ndarray, n_rings: np.ndarray) -> bool:
    """Whether polygon rings given as arrays (every ring's coordinates concatenated,
    each ring's number of coordinates, each object's number of rings) pass the checks
    of the module docstring."""
    first = np.cumsum(n_rings) - n_rings
    return bool((n_rings > 0).all() and (ring_sizes % 2 == 0).all()
                and (ring_sizes >= 4).all() and (ring_sizes[first[n_rings > 0]] >= 6).all()
                and np.isfinite(coords).all() and (np.abs(coords) <= COORD_LIMIT).all())


def polygon_array_masks(coords: np.ndarray, ring_sizes: np.ndarray, n_rings: np.ndarray,
                        h: np.ndarray, w: np.ndarray) -> Masks | None:
    """Masks of polygon segmentations given as arrays (every ring's coordinates
    concatenated, each ring's number of coordinates, each object's number of rings),
    or ``None`` when one fails a check of the module docstring (the caller then names
    it from the records)."""
    if not rings_valid(coords, ring_sizes, n_rings):
        return None
    return polygon_masks(coords, ring_sizes // 2, np.repeat(np.arange(n_rings.size), n_rings),
                         h, w)


def _check_polygons(seg: list, where: str) -> None:
    if not seg:
        raise InputError("segmentation holds no polygon", where)
    for r, ring in enumerate(seg):
        if type(ring) is not list:
            raise InputError(f"polygon ring {r} must be a list of coordinates, got "
                             f"{_short(ring)}", where)
        if len(ring) % 2:
            raise InputError(f"polygon ring {r} has an odd number of coordinates "
                             f"({len(ring)})", where)
        if r == 0 and len(ring) < 6:
            raise InputError(f"the first polygon ring needs at least 3 points (6 numbers), "
                             f"got {len(ring)} number(s) (pycocotools reads a first ring of "
                             "4 numbers as a box and fails)", where)
        if len(ring) < 4:
            raise InputError(f"polygon ring {r} needs at least 2 points, got {len(ring)} "
                             "number(s)", where)
        for v in ring:
            if type(v) not in (int, float) or not math.isfinite(v):
                raise InputError(f"polygon ring {r} holds {_short(v)}: coordinates must be "
                                 "finite numbers", where)
            if abs(v) > COORD_LIMIT:
                raise InputError(f"polygon coordinate {v!r} is beyond ±{COORD_LIMIT:.4g} "
                                 "(the COCO mask API's integer range)", where)


def _rles(segs: list, h: np.ndarray, w: np.ndarray, where: Any) -> Masks:
    """Masks of RLE segmentations (compressed and uncompressed)."""
    n = len(segs)
    for k, seg in enumerate(segs):  # size and counts' type: one cheap test each
        size = seg.get("size")
        if "size" not in seg or "counts" not in seg:
            raise InputError("RLE segmentation needs 'size' and 'counts'", where(k))
        if (type(size) is not list or len(size) != 2 or size[0] != h[k] or size[1] != w[k]
                or type(size[0]) is not int or type(size[1]) is not int):
            raise InputError(f"RLE size {_short(size)} does not match the image's "
                             f"[height, width] [{int(h[k])}, {int(w[k])}]", where(k))
        if type(seg.get("counts")) not in (str, bytes, list):
            raise InputError("RLE counts must be a string (compressed) or a list of "
                             f"integers (uncompressed), got {_short(seg.get('counts'))}",
                             where(k))
    compressed = np.fromiter((type(s["counts"]) is not list for s in segs), dtype=bool,
                             count=n)
    parts, order = [], []
    for sel, decode in ((np.flatnonzero(compressed), _compressed),
                        (np.flatnonzero(~compressed), _uncompressed)):
        if sel.size:
            group = [segs[k] for k in sel.tolist()]
            try:
                counts, lengths = decode(group, lambda j, sel=sel: where(int(sel[j])))
                parts.append(masks_from_counts(counts, lengths, h[sel], w[sel]))
            except RleError as exc:
                raise InputError(exc.reason, where(int(sel[exc.index]))) from None
            order.append(sel)
    return in_order(parts, order)


def _compressed(segs: list, where: Any) -> tuple[np.ndarray, np.ndarray]:
    strings = [s["counts"] for s in segs]
    for j, text in enumerate(strings):
        if isinstance(text, str) and not text.isascii():
            raise InputError("compressed RLE counts hold a character outside '0'..'o'",
                             where(j))
    return decode_counts(strings)


def _uncompressed(segs: list, where: Any) -> tuple[np.ndarray, np.ndarray]:
    lists = [s["counts"] for s in segs]
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    if set(map(type, itertools.chain.from_iterable(lists))) <= {int}:
        try:
            counts = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64,
                                 count=int(lengths.sum()))
            if (counts < 2**32).all():
                return counts, lengths
        except OverflowError:
            pass
    for j, values in enumerate(lists):
        for v in values:
            if type(v) is not int:
                raise InputError(f"uncompressed RLE counts must be integers, got {_short(v)}",
                                 where(j))
            if not 0 <= v < 2**32:
                raise InputError(f"uncompressed RLE count {v} is not in [0, 2^32)", where(j))
    raise AssertionError("an RLE check failed without naming a record")
