"""Boundary IoU with the reference implementation's pixel band (Cheng, Girshick, Dollár,
Berg and Kirillov 2021, "Boundary IoU: Improving Object-Centric Image Segmentation
Evaluation", CVPR, §4, and the authors' ``boundary-iou-api``).

The authors' code turns a binary mask into its boundary band by eroding it with a
3 × 3 square ``d`` times (the image padded with background, so an object cut by the
image border has a band along the border too) and keeping what the erosion removed:
``G_d ∩ G = G − erode(G)``. ``d = max(1, round(0.02 · diagonal))``, the diagonal of
the whole image in pixels. Boundary IoU of a pair is then
``|B_G ∩ B_P| / |B_G ∪ B_P|`` counted in pixels.

Here the two label rasters are read strip by strip through the grids' own
interface (:meth:`geoeval.grid.LabelGrid.read`, each strip with ``d`` rows of halo),
every object's band is found at once (a pixel of label ``L`` survives ``d``
erosions exactly when the ``(2d+1) × (2d+1)`` square around it holds only ``L``:
one minimum and one maximum filter), and the band pixels are counted per label and
per pair of labels like the overlap itself. This is what users need to reproduce
published Boundary IoU numbers; geoeval's default band (:mod:`geoeval.measures.
boundary_iou`) is the exact distance band of the polygons instead.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from geoeval.arrays import lookup
from geoeval.io.masks import Masks, empty_masks

#: The paper's and the reference code's dilation ratio (of the image diagonal).
DILATION_RATIO = 0.02
RULE = ("erosion by a 3 x 3 square d times, d = max(1, round(0.02 x diagonal of the "
        "raster in pixels)) (Cheng et al. 2021, boundary-iou-api)")


def reference_dilation(shape: tuple[int, int], ratio: float = DILATION_RATIO) -> int:
    """``d`` of the reference code for an image of ``shape`` (rows, columns) pixels:
    ``max(1, int(round(ratio · sqrt(h² + w²))))`` (``round``: half to even, as Python's).

    Examples
    --------
    >>> [reference_dilation(s) for s in ((1668, 1668), (20, 20), (512, 512))]
    [47, 1, 14]
    """
    h, w = shape
    return max(1, int(round(ratio * math.sqrt(h * h + w * w))))


def band_labels(labels: np.ndarray, d: int, background: int) -> np.ndarray:
    """Each object's inner boundary band of ``d`` pixels (the rest is background).

    A pixel of label ``L`` stays in the eroded object when every pixel of the
    ``(2d+1)²`` square around it is ``L`` (outside the array counts as background,
    as the reference code's zero padding); the band is what does not stay.

    Examples
    --------
    >>> lab = np.zeros((5, 5), np.int32); lab[:, :] = 1
    >>> band_labels(lab, 1, 0)
    array([[1, 1, 1, 1, 1],
           [1, 0, 0, 0, 1],
           [1, 0, 0, 0, 1],
           [1, 0, 0, 0, 1],
           [1, 1, 1, 1, 1]], dtype=int32)
    """
    from scipy.ndimage import maximum_filter, minimum_filter

    size = 2 * int(d) + 1
    lo = minimum_filter(labels, size=size, mode="constant", cval=background)
    hi = maximum_filter(labels, size=size, mode="constant", cval=background)
    kept = (lo == labels) & (hi == labels)
    return np.where(kept, labels.dtype.type(background), labels)


def _binary_band(inside: np.ndarray, d: int) -> np.ndarray:
    """:func:`band_labels` of a 0/1 image whose objects never touch: the pixels of
    an object with a background pixel in their ``(2d+1)²`` square (outside the
    array is background), counted by a summed-area table of the background (exact
    integers; no scipy import, a fifth of a second of every run)."""
    d = int(d)
    rows, cols = inside.shape
    # background of the image padded by d (+1 leading zero row and column for the sums)
    shape = (rows + 2 * d + 1, cols + 2 * d + 1)
    table = np.zeros(shape, dtype=np.int32 if shape[0] * shape[1] < 2**31 else np.int64)
    table[1:, 1:] = 1
    table[d + 1:d + 1 + rows, d + 1:d + 1 + cols] = inside == 0
    np.cumsum(table, axis=0, out=table)
    np.cumsum(table, axis=1, out=table)
    k = 2 * d + 1
    background = (table[k:, k:] - table[:-k, k:] - table[k:, :-k] + table[:-k, :-k])
    return (inside != 0) & (background > 0)


def _sliding(values: np.ndarray, size: int, fill: int, reduce: np.ufunc) -> np.ndarray:
    """``reduce`` (``np.maximum`` or ``np.minimum``) of each centred window of
    ``size`` (odd) values, ``fill`` beyond the ends."""
    half = size // 2
    padded = np.concatenate([np.full(half, fill, values.dtype), values,
                             np.full(half, fill, values.dtype)])
    return reduce.reduce(np.lib.stride_tricks.sliding_window_view(padded, size), axis=1)


def raster_boundary_iou(ref_grid: Any, sub_grid: Any, ref_labels: np.ndarray,
                        sub_labels: np.ndarray, d: int, *,
                        strip_rows: int = 1024) -> np.ndarray:
    """Boundary IoU of the pairs ``(ref_labels[k], sub_labels[k])`` with the reference
    code's band of ``d`` pixels; NaN where both bands are empty.

    Parameters
    ----------
    ref_grid, sub_grid : LabelGrid
        The two label rasters, on one grid.
    ref_labels, sub_labels : numpy.ndarray
        Label values of the pairs, one pair per position.
    d : int
        Erosions by a 3 × 3 square (:func:`reference_dilation` for the paper's rule).
    strip_rows : int
        Rows read at once (plus ``d`` rows of halo on each side).

    Returns
    -------
    numpy.ndarray of float
    """
    from geoeval.io.windowed import merge_scans, scan_labels

    ref_labels, sub_labels = np.asarray(ref_labels), np.asarray(sub_labels)
    if ref_labels.size == 0:
        return np.zeros(0)
    h, w = ref_grid.shape
    bg_r, bg_s = int(ref_grid.background), int(sub_grid.background)
    parts = []
    for r0 in range(0, h, strip_rows):
        r1 = min(r0 + strip_rows, h)
        a0, a1 = max(r0 - d, 0), min(r1 + d, h)
        core = slice(r0 - a0, r0 - a0 + (r1 - r0))
        br = band_labels(np.asarray(ref_grid.read((a0, a1, 0, w))), d, bg_r)[core]
        bs = band_labels(np.asarray(sub_grid.read((a0, a1, 0, w))), d, bg_s)[core]
        parts.append(scan_labels([br, bs], [bg_r, bg_s], origin=(r0, 0), boxes=False))
    found = merge_scans(parts)
    ref_ids, ref_n = found.ids[0], found.counts[0]
    sub_ids, sub_n = found.ids[1], found.counts[1]
    g = _counts_at(ref_ids, ref_n, ref_labels)
    p = _counts_at(sub_ids, sub_n, sub_labels)
    # pair counts, looked up by a key over the band labels' positions
    pa, pb, pc = found.pair_a, found.pair_b, found.pair_counts
    assert pa is not None and pb is not None and pc is not None
    n_sub = max(sub_ids.size, 1)
    keys = lookup(ref_ids, pa)[0].astype(np.int64) * n_sub + lookup(sub_ids, pb)[0]
    order = np.argsort(keys, kind="stable")
    ri, r_ok = lookup(ref_ids, ref_labels)
    si, s_ok = lookup(sub_ids, sub_labels)
    both = _counts_at(keys[order], pc[order], ri.astype(np.int64) * n_sub + si)
    both = np.where(r_ok & s_ok, both, 0.0)
    union = g + p - both
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, both / np.where(union > 0, union, 1.0), np.nan)


def _counts_at(ids: np.ndarray, counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``counts`` of each of ``values`` among the sorted ``ids`` (0 where absent)."""
    pos, found = lookup(ids, values)
    return np.where(found, counts[pos], 0).astype(float) if ids.size else np.zeros(values.size)


def mask_bands(masks: Masks, ratio: float = DILATION_RATIO, *,
               canvas_pixels: int = 1 << 22) -> Masks:
    """Each instance mask's inner boundary band, as the reference code's ``mask_to_boundary``
    computes it on the mask's whole image: ``d = reference_dilation((h, w), ratio)``
    erosions by a 3 × 3 square, the image padded with background.

    The band of an object depends only on its pixels and the image border, both
    inside its bounding box, and the erosion by a square is an erosion along the
    columns followed by one along the rows:

    * an object with one run in each column of its box (a convex shape, most
      buildings) is eroded on its runs: each run shrinks by ``d`` at both ends, then
      a column keeps the rows its ``2d + 1`` neighbouring columns all keep (a sliding
      maximum of the runs' starts and minimum of their ends, a missing or emptied
      column keeping nothing);
    * the others are cut to their boxes, laid side by side on a few binary canvases
      one background pixel apart (the canvas edge is background, as the image
      border is) and banded a whole canvas at once by one minimum filter
      (:func:`band_labels` of objects that never touch).

    Parameters
    ----------
    masks : Masks
        Column runs (:class:`geoeval.io.masks.Masks`).
    ratio : float
        The dilation ratio of the image diagonal (0.02 in the paper and the code).
    canvas_pixels : int
        About how many pixels one canvas holds.

    Returns
    -------
    Masks
        The bands, one per object, on the same images.
    """
    n = len(masks)
    if n == 0 or masks.x.size == 0:
        return empty_masks(masks.height, masks.width)
    size_key = masks.height * (int(masks.width.max()) + 1) + masks.width
    uniq, first_of, inverse = np.unique(size_key, return_index=True, return_inverse=True)
    d_of = np.array([reference_dilation((int(masks.height[i]), int(masks.width[i])), ratio)
                     for i in first_of.tolist()])[inverse.reshape(-1)]
    box = masks.bboxes().astype(np.int64)  # x, y, w, h of each object's pixels
    obj = masks.run_object
    n_runs = np.diff(masks.ptr)
    # one run in each column of its box: the k-th run of an object in its k-th column
    first = masks.ptr[:-1][obj]
    off_column = (masks.x - masks.x[first]) != (np.arange(obj.size) - first)
    simple = (n_runs > 0) & (np.bincount(obj[off_column], minlength=n) == 0)
    parts = [_sliding_bands(masks, obj, np.flatnonzero(simple & (d_of == d)), int(d))
             for d in np.unique(d_of[simple])]
    cell_w, cell_h = box[:, 2] + 1, box[:, 3]  # one background column after each
    order = np.lexsort((cell_h, d_of))  # same d together, then by height
    order = order[~simple[order] & (n_runs[order] > 0)]
    start = 0
    while start < order.size:  # canvases of objects of one d and similar heights
        d = d_of[order[start]]
        same_d = start + int(np.searchsorted(d_of[order[start:]], d, side="right"))
        # objects are sorted by height: the canvas is as high as its last one
        cum = np.cumsum(cell_w[order[start:same_d]]) * cell_h[order[start:same_d]]
        stop = start + max(1, int(np.searchsorted(cum, canvas_pixels, side="right")))
        stop = min(stop, same_d)
        parts.append(_canvas_bands(masks, obj, box, order[start:stop], int(d)))
        start = stop
    # each part lists an object's runs in order: gather the objects
    band_obj, x, y0, y1 = (np.concatenate(c) for c in zip(*parts, strict=True))
    srt = np.argsort(band_obj, kind="stable")
    band_obj, x, y0, y1 = band_obj[srt], x[srt], y0[srt], y1[srt]
    ptr = np.r_[0, np.cumsum(np.bincount(band_obj, minlength=n))].astype(np.int64)
    return Masks(ptr=ptr, x=x.astype(np.int32), y0=y0.astype(np.int32),
                 y1=y1.astype(np.int32), height=masks.height, width=masks.width)


def _sliding_bands(masks: Masks, obj: np.ndarray, members: np.ndarray, d: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bands of objects with one run in each column of their box (see
    :func:`mask_bands`): the bands' runs (object, x, y0, y1)."""
    from geoeval.io.masks import ranges

    runs = ranges(masks.ptr[members], np.diff(masks.ptr)[members])
    if runs.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, z
    o = obj[runs]
    y0 = masks.y0[runs].astype(np.int64)
    y1 = masks.y1[runs].astype(np.int64)
    # the columns of the objects one after the other, one empty column after each
    slot = np.arange(runs.size) + np.cumsum(np.r_[False, o[1:] != o[:-1]])
    big = np.int64(1) << 40
    lo = np.full(int(slot[-1]) + 2, big)
    hi = np.full(lo.size, -big)
    keep = y1 - y0 > 2 * d  # the run shrunk by d at both ends is not empty
    lo[slot[keep]] = y0[keep] + d
    hi[slot[keep]] = y1[keep] - d
    size = 2 * d + 1
    e0 = _sliding(lo, size, big, np.maximum)[slot]
    e1 = _sliding(hi, size, -big, np.minimum)[slot]
    inner = e0 < e1  # the eroded object's rows in this column: [e0, e1)
    # band = the run minus [e0, e1): the run itself, or its two ends (in order)
    top_end = np.where(inner, e0, y1)
    pieces = np.column_stack([np.ones(runs.size, bool), inner]).ravel()
    return (np.repeat(o, 2)[pieces], np.repeat(masks.x[runs], 2)[pieces],
            np.column_stack([y0, e1]).ravel()[pieces],
            np.column_stack([top_end, y1]).ravel()[pieces])


def _canvas_bands(masks: Masks, obj: np.ndarray, box: np.ndarray, members: np.ndarray,
                  d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bands of the objects ``members`` laid out on one binary canvas: one canvas row per
    column of each object's box, one background row after each object; returns the
    bands' runs (object, x, y0, y1)."""
    from geoeval.io.masks import ranges

    # one empty canvas row after each object: its band then needs only "is this pixel
    # the object's", not which object (a neighbour is as much background as the gap)
    widths = box[members, 2] + 1
    height = int(box[members, 3].max())
    offset = np.r_[0, np.cumsum(widths)]
    rows = int(offset[-1])
    local = np.full(len(masks), -1, dtype=np.int64)
    local[members] = np.arange(members.size)
    runs = ranges(masks.ptr[members], np.diff(masks.ptr)[members])
    k = local[obj[runs]]
    row = offset[k] + masks.x[runs] - box[members[k], 0]
    a = masks.y0[runs] - box[members[k], 1]
    b = masks.y1[runs] - box[members[k], 1]
    # runs of one canvas row never touch: start and end marks never collide
    step = np.zeros((rows, height + 1), dtype=np.int8)
    step[row, a] = 1
    step[row, b] = -1
    inside = np.cumsum(step[:, :height], axis=1, dtype=np.int8)
    band = _binary_band(inside.view(np.uint8), d)
    edge = np.diff(band.astype(np.int8), axis=1, prepend=0, append=0)
    r0, c0 = np.nonzero(edge == 1)
    r1, c1 = np.nonzero(edge == -1)  # row-major: the ends pair with the starts in order
    kk = np.searchsorted(offset, r0, side="right") - 1
    m = members[kk]
    return (m, r0 - offset[kk] + box[m, 0], c0 + box[m, 1], c1 + box[m, 1])
