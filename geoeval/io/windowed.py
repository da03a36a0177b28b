"""Labelled rasters read window by window: areas, boxes and label pairs in bounded memory.

A labelled raster is never read whole to be scored on its own grid. Its
blocks (the file's internal tiles or strips, grouped into windows of whole
blocks) are read one at a time; each window yields small arrays:

* per label: pixel count and bounding box (row/col min and max), and
* for two rasters on one grid: per (reference label, submission label) pair
  the number of pixels both hold, and the number of pixels either holds.

Objects crossing window edges are stitched by their label: counts add up,
boxes take the min/max. :func:`scan_window` (one window) and
:func:`merge_scans` (any number of partial results) are pure top-level
functions of small picklable inputs, so any executor can map them: local
threads here (:func:`scan`; GDAL releases the GIL while it decompresses), or a
Dask cluster. Memory is ``O(window + objects)``, never ``O(pixels)``.

The counting follows the joint histogram of Özdemir et al. (2010, §4), ``C_ij =
|R_i ∩ O_j|``, computed on runs of equal label pairs along rows (objects are
compact, so runs are far fewer than pixels).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval import parallel
from geoeval.arrays import SizedByArrays
from geoeval.cancel import threads
from geoeval.errors import InputError, sendable
from geoeval.grid import windows
from geoeval.io.raster_files import gdal_reason, open_raster, quiet_gdal, written_blocks

#: GDAL block cache (MB) while scanning: blocks are read once, caching them only costs memory.
SCAN_CACHE_MB = 64

Window = tuple[int, int, int, int]  # row0, row1, col0, col1 (ends exclusive)


@dataclass(frozen=True)
class RasterSource:
    """A small, picklable description of one labelled band: enough to read any window.

    Attributes
    ----------
    path : str
        File GDAL opens.
    band : int
        1-based band index.
    background : int
        Background label; nodata pixels read as it.
    dtype : str
        The band's integer data type (``uint32``, ``int64``, …).
    nodata : int or None
        The exact integer nodata value, when it fits ``dtype`` and GDAL reports it
        exactly (``None``: no nodata, or see ``gdal_mask``).
    gdal_mask : bool
        Use GDAL's nodata mask (64-bit bands whose nodata is beyond 2**53, which a
        double cannot hold exactly).
    shape : tuple of int
        ``(height, width)``.
    block_shape : tuple of int
        The band's internal block ``(rows, cols)``.
    sparse_background : bool
        The file is a GeoTIFF whose unwritten (sparse) blocks read as background
        (they read as the nodata value, else 0): windows made only of such blocks
        are skipped without being read.
    version : tuple of int
        The file's device, inode, size and modification time (ns) when it was opened
        (the identity :func:`_dataset` checks): which of its blocks are written is
        remembered per version (:func:`~geoeval.io.raster_files.written_blocks`).
    """

    path: str
    band: int
    background: int
    dtype: str
    nodata: int | None
    gdal_mask: bool
    shape: tuple[int, int]
    block_shape: tuple[int, int]
    sparse_background: bool = False
    version: tuple[int, ...] = ()

    @property
    def shown(self) -> str:
        """The file's name to show: a URL's secrets removed
        (:func:`geoeval.io.locations.redact`)."""
        from geoeval.io.locations import redact

        return redact(self.path)

    def is_empty(self, window: Window, dataset: Any = None) -> bool:
        """True when every block of ``window`` is absent from the file (sparse GeoTIFF)
        and so holds only background; never reads a pixel."""
        return self.written(window, dataset) is None

    def written(self, window: Window, dataset: Any = None) -> Window | None:
        """The part of ``window`` that can hold an object: the span of its blocks
        present in the file (GDAL's ``BLOCK_OFFSET_x_y`` of a sparse GeoTIFF: an
        unwritten block reads as background), ``None`` when there is none; the whole
        window for other sources. Never reads a pixel."""
        if not self.sparse_background:
            return window
        r0, r1, c0, c1 = window
        bh, bw = self.block_shape
        j0, j1 = c0 // bw, -(-c1 // bw)
        rows, cols = [], []
        for i in range(r0 // bh, -(-r1 // bh)):
            present = np.flatnonzero(written_blocks(self.path, self.band, i,
                                                     -(-self.shape[1] // bw),
                                                     self.version)[j0:j1])
            if present.size:
                rows.append(i)
                cols += [int(present[0]) + j0, int(present[-1]) + j0]
        if not rows:
            return None
        return (max(r0, min(rows) * bh), min(r1, (max(rows) + 1) * bh),
                max(c0, min(cols) * bw), min(c1, (max(cols) + 1) * bw))

    def label_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """Every label of the band and its bounding box ``(row0, row1, col0, col1)``
        (ends exclusive): one window-by-window :func:`scan`."""
        found = scan([self])
        assert found.boxes is not None
        return found.ids[0], found.boxes[0]

    def read(self, window: Window, dataset: Any = None,
             out: np.ndarray | None = None) -> np.ndarray:
        """Labels of ``window`` (row0, row1, col0, col1), nodata mapped to background;
        into ``out`` (C-contiguous, the window's shape and the band's dtype) when given."""
        from rasterio._err import CPLE_BaseError  # GDAL's errors (not RasterioErrors)
        from rasterio.errors import RasterioError
        from rasterio.windows import Window as RioWindow

        r0, r1, c0, c1 = window
        ds = dataset if dataset is not None else open_raster(self.path)
        w = RioWindow(c0, r0, c1 - c0, r1 - r0)
        try:
            labels = ds.read(self.band, window=w, out=out)
            mask = ds.read_masks(self.band, window=w) if self.gdal_mask else None
        except (RasterioError, CPLE_BaseError) as exc:
            from geoeval.io.url_paths import remote_failure

            mapped = remote_failure(exc, self.path)  # a URL: the stores' words
            if mapped is not None:
                raise mapped from None
            # the local engine's words, whichever window (GDAL's reason names the block)
            raise InputError(f"cannot read band {self.band} ({gdal_reason(exc)}); is the file "
                             "truncated or a source of it missing?", self.shown) from None
        if mask is not None:
            labels[mask == 0] = self.background
        elif self.nodata is not None and self.nodata != self.background:
            labels[labels == labels.dtype.type(self.nodata)] = self.background
        return labels


_LOCAL = threading.local()


@dataclass
class Scan(SizedByArrays):
    """Per-label and per-pair counts of one or more windows (see :func:`merge_scans`).

    Attributes
    ----------
    ids : list of numpy.ndarray
        Per source: distinct non-background labels (sorted once merged).
    counts : list of numpy.ndarray
        Per source: pixel count of each label.
    boxes : list of numpy.ndarray or None
        Per source: ``(row0, row1, col0, col1)`` of each label, ends exclusive;
        ``None`` when the scan was asked for counts only (``boxes=False``).
    pair_a, pair_b, pair_counts : numpy.ndarray or None
        Two sources: labels of each pair held by both, and its pixel count.
    union : int
        Two sources: pixels labelled on either side (``0`` for one source).
    """

    ids: list[np.ndarray]
    counts: list[np.ndarray]
    boxes: list[np.ndarray | None]
    pair_a: np.ndarray | None
    pair_b: np.ndarray | None
    pair_counts: np.ndarray | None
    union: int


def _runs(labels: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Start index (flat) and length of every run of equal labels (all sources) per row."""
    h, w = labels[0].shape
    n = h * w
    flats = [lab.ravel() for lab in labels]
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(flats[0][1:], flats[0][:-1], out=change[1:])
    for f in flats[1:]:
        change[1:] |= f[1:] != f[:-1]
    change[::w] = True  # every row starts a run
    starts = np.flatnonzero(change)
    lengths = np.diff(starts, append=n)
    return starts, lengths


def _group(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort order of ``keys`` and the start of each group of equal keys in that order."""
    order = np.argsort(keys)  # groups need no stable order: sums, mins and maxes
    k = keys[order]
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if k.size else np.zeros(0, np.int64)
    return order, first


def _label_stats(lab: np.ndarray, r0: np.ndarray, r1: np.ndarray, c0: np.ndarray,
                 c1: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group runs (or partial results) by label: ids, summed counts, box min/max.

    Labels spanning a range at most a few times their number are grouped by
    position (``bincount`` and ``ufunc.at``, no sort); others by sorting.
    """
    if lab.size == 0:
        return lab, np.zeros(0, np.int64), np.zeros((0, 4), np.int64)
    lo, hi = int(lab.min()), int(lab.max())
    if hi - lo <= 4 * lab.size + 1024:
        wide = np.int64 if lab.dtype.kind == "i" else np.uint64
        pos = (lab.astype(wide) - wide(lo)).astype(np.intp)
        size = hi - lo + 1
        total = np.bincount(pos, weights=n, minlength=size)
        seen = total > 0  # every run (and partial count) is at least one pixel
        big = np.iinfo(np.int64).max
        stats = []
        for vals, ufunc, start in ((r0, np.minimum, big), (r1, np.maximum, -1),
                                   (c0, np.minimum, big), (c1, np.maximum, -1)):
            acc = np.full(size, start, dtype=np.int64)
            ufunc.at(acc, pos, vals)
            stats.append(acc[seen])
        where = np.flatnonzero(seen)
        ids = (where.astype(wide) + wide(lo)).astype(lab.dtype)
        return ids, total[seen].astype(np.int64), np.stack(stats, axis=1)
    order, first = _group(lab)
    boxes = np.stack([
        np.minimum.reduceat(r0[order], first),
        np.maximum.reduceat(r1[order], first),
        np.minimum.reduceat(c0[order], first),
        np.maximum.reduceat(c1[order], first),
    ], axis=1).astype(np.int64)
    return lab[order][first], np.add.reduceat(n[order], first).astype(np.int64), boxes


def _label_counts(lab: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct labels (sorted) and summed counts: :func:`_label_stats` without boxes.

    Labels in a range at most a few times their number: ``bincount``; else one
    sort of a packed ``(label - min, count)`` word when it fits 64 bits, else an
    argsort.
    """
    if lab.size == 0:
        return lab, np.zeros(0, np.int64)
    lo, hi = int(lab.min()), int(lab.max())
    wide = np.int64 if lab.dtype.kind == "i" else np.uint64
    if hi - lo <= 4 * lab.size + 1024:
        if lab.dtype.itemsize <= 4:  # exact in intp: fewer passes
            pos = lab.astype(np.intp)
            pos -= lo
        else:
            pos = (lab.astype(wide) - wide(lo)).astype(np.intp)
        total = np.bincount(pos, weights=n, minlength=hi - lo + 1)
        seen = total > 0  # every run (and partial count) is at least one pixel
        ids = (np.flatnonzero(seen).astype(wide) + wide(lo)).astype(lab.dtype)
        return ids, total[seen].astype(np.int64)
    bits_l, bits_n = (hi - lo).bit_length(), int(n.max()).bit_length()
    if bits_l + bits_n <= 64 and n.min() >= 0:
        u = np.uint64
        key = (lab.astype(wide) - wide(lo)).astype(u) << u(bits_n)
        key |= n.astype(u)
        key.sort()
        label = key >> u(bits_n)
        first = np.flatnonzero(np.r_[True, label[1:] != label[:-1]])
        counts = np.add.reduceat(key & u((1 << bits_n) - 1), first).astype(np.int64)
        return (label[first].astype(wide) + wide(lo)).astype(lab.dtype), counts
    order, first = _group(lab)
    return lab[order][first], np.add.reduceat(n[order], first).astype(np.int64)


def _masked_label_stats(lab: np.ndarray, fg: np.ndarray, r0: np.ndarray, r1: np.ndarray,
                        c0: np.ndarray, c1: np.ndarray, n: np.ndarray,
                        origin: tuple[int, int], shape: tuple[int, int]
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_label_stats` of one window's runs where ``fg`` holds. Labels packed
    in a range: grouped by position without copying the runs out (background runs
    go to one extra bin that is dropped; boxes accumulate per distinct label, a
    rank table); labels spread out: :func:`_packed_label_stats`."""
    present = lab[fg]
    if present.size == 0:
        return lab[:0], np.zeros(0, np.int64), np.zeros((0, 4), np.int64)
    lo, hi = int(present.min()), int(present.max())
    if hi - lo > present.size // 2:  # labels spread out: by sorting
        packed = _packed_label_stats(present, lo, hi, r0[fg], c0[fg], n[fg], origin, shape)
        if packed is not None:
            return packed
        if hi - lo > 4 * lab.size + 1024:
            return _label_stats(present, r0[fg], r1[fg], c0[fg], c1[fg], n[fg])
    wide = np.int64 if lab.dtype.kind == "i" else np.uint64
    size = hi - lo + 1
    if lab.dtype.itemsize <= 4:  # exact in intp: fewer passes
        pos = lab.astype(np.intp)
        pos -= lo
    else:
        pos = (lab.astype(wide) - wide(lo)).astype(np.intp)
    pos[~fg] = size
    total = np.bincount(pos, weights=n, minlength=size + 1)
    seen = total[:size] > 0
    rank = np.cumsum(seen) - 1
    k = int(rank[-1]) + 1
    idx = np.append(rank, k)[pos]  # background runs land in bin k, dropped below
    big = np.iinfo(np.int64).max
    stats = []
    for vals, ufunc, start in ((r0, np.minimum, big), (r0, np.maximum, -1),
                               (c0, np.minimum, big), (c1, np.maximum, -1)):
        acc = np.full(k + 1, start, dtype=np.int64)
        ufunc.at(acc, idx, vals)
        stats.append(acc[:k])
    stats[1] += 1  # a run covers one row: the last row's end
    ids = (np.flatnonzero(seen).astype(wide) + wide(lo)).astype(lab.dtype)
    return ids, total[:size][seen].astype(np.int64), np.stack(stats, axis=1)


def _packed_label_stats(present: np.ndarray, lo: int, hi: int, r0: np.ndarray,
                        c0: np.ndarray, n: np.ndarray, origin: tuple[int, int],
                        shape: tuple[int, int]
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per-label counts and boxes of one window's foreground runs (labels
    ``present`` in ``lo..hi``, rows ``r0``, first columns ``c0``, lengths ``n``) by
    sorting one packed word per run, ``(label - lo, row, column, length)`` side
    by side in 64 bits (a value sort is several times faster than an argsort);
    ``None`` when they do not fit.

    Sorted by label then row then column: a label's first run holds its first
    row, its last run its last row; columns and pixel counts are reduced per label.
    """
    h, w = shape
    bits_l, bits_r, bits_c = (hi - lo).bit_length(), (h - 1).bit_length(), w.bit_length()
    if bits_l + bits_r + 2 * bits_c > 64:
        return None
    u = np.uint64
    wide = np.int64 if present.dtype.kind == "i" else np.uint64
    sc, sr = u(bits_c), u(2 * bits_c)
    sl = u(2 * bits_c + bits_r)
    key = (present.astype(wide) - wide(lo)).astype(u) << sl
    key |= (r0 - origin[0]).astype(u) << sr
    key |= (c0 - origin[1]).astype(u) << sc
    key |= n.astype(u)
    key.sort()
    label = key >> sl
    first = np.flatnonzero(np.r_[True, label[1:] != label[:-1]])
    last = np.r_[first[1:], key.size] - 1
    cmask, rmask = u((1 << bits_c) - 1), u((1 << bits_r) - 1)
    length = (key & cmask).astype(np.int64)
    col = ((key >> sc) & cmask).astype(np.int64)
    row = ((key >> sr) & rmask).astype(np.int64)
    boxes = np.stack([row[first] + origin[0], row[last] + origin[0] + 1,
                      np.minimum.reduceat(col, first) + origin[1],
                      np.maximum.reduceat(col + length, first) + origin[1]], axis=1)
    ids = (label[first].astype(wide) + wide(lo)).astype(present.dtype)
    return ids, np.add.reduceat(length, first), boxes


def _u32(x: np.ndarray) -> np.ndarray:
    """Integers of at most 32 bits as ``uint64`` below 2**32, in the same order."""
    if x.dtype.kind == "i":
        return (x.astype(np.int64) + (1 << 31)).astype(np.uint64)
    return x.astype(np.uint64)


def _pair_stats(a: np.ndarray, b: np.ndarray,
                n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group (a, b) label pairs: distinct pairs sorted by (a, b) and summed counts (exact
    for every integer dtype: lexsort, never a combined key that could collide)."""
    if a.size == 0:
        return a, b, np.zeros(0, np.int64)
    packed = _packed_pair_stats(a, b, n)
    if packed is not None:
        return packed
    if a.dtype.itemsize <= 4 and b.dtype.itemsize <= 4:  # one 64-bit key, same order
        order = np.argsort((_u32(a) << np.uint64(32)) | _u32(b))
    else:
        order = np.lexsort((b, a))
    a, b, n = a[order], b[order], n[order]
    first = np.flatnonzero(np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])])
    return a[first], b[first], np.add.reduceat(n, first).astype(np.int64)


def _packed_pair_stats(a: np.ndarray, b: np.ndarray, n: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_pair_stats` by sorting one packed word per run, ``(a - min a, b - min b,
    count)`` side by side in 64 bits (a value sort is several times faster than an
    argsort), or ``None`` when the three ranges do not fit in 64 bits."""
    alo, ahi, blo, bhi = int(a.min()), int(a.max()), int(b.min()), int(b.max())
    nmax = int(n.max())
    bits_a, bits_b, bits_n = ((ahi - alo).bit_length(), (bhi - blo).bit_length(),
                              nmax.bit_length())
    if bits_a + bits_b + bits_n > 64 or n.min() < 0:
        return None
    u = np.uint64
    wa = np.int64 if a.dtype.kind == "i" else np.uint64
    wb = np.int64 if b.dtype.kind == "i" else np.uint64
    key = (a.astype(wa) - wa(alo)).astype(u) << u(bits_b + bits_n)
    key |= (b.astype(wb) - wb(blo)).astype(u) << u(bits_n)
    key |= n.astype(u)
    key.sort()
    group = key >> u(bits_n)
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    counts = np.add.reduceat(key & u((1 << bits_n) - 1), first).astype(np.int64)
    g = group[first]
    pa = ((g >> u(bits_b)).astype(wa) + wa(alo)).astype(a.dtype)
    pb = ((g & u((1 << bits_b) - 1)).astype(wb) + wb(blo)).astype(b.dtype)
    return pa, pb, counts


def scan_labels(labels: Sequence[np.ndarray], backgrounds: Sequence[int],
                origin: tuple[int, int] = (0, 0), per_label: bool = True,
                boxes: bool = True) -> Scan:
    """Counts of one window of one or two label arrays (same shape) already in memory.

    ``origin`` is the window's (row, col) offset, so boxes are in whole-grid pixels.
    ``per_label=False`` (two sources) skips the per-label counts and boxes (empty
    arrays), when the reader has them already and only the pairs are wanted.
    ``boxes=False`` skips the bounding boxes (``Scan.boxes`` holds ``None``): the
    per-label counts alone cost a fraction of the boxes' accumulation.
    """
    h, w = labels[0].shape
    k = len(labels)
    if h * w == 0:
        e = [np.zeros(0, lab.dtype) for lab in labels]
        z = np.zeros(0, np.int64)
        return Scan(e, [z] * k, [np.zeros((0, 4), np.int64) if boxes else None] * k,
                    *((e[0], e[1], z) if k == 2 else (None, None, None)), 0)
    starts, lengths = _runs(labels)
    if boxes and (per_label or k == 1):  # run positions, for the boxes
        rows = starts // w
        r0 = rows + origin[0]
        c0 = starts - rows * w + origin[1]
        r1, c1 = r0 + 1, c0 + lengths
    vals = [lab.ravel()[starts] for lab in labels]
    fgs = [v != v.dtype.type(bg) for v, bg in zip(vals, backgrounds, strict=True)]
    ids, counts, found = [], [], []
    for v, fg in zip(vals, fgs, strict=True):
        if not per_label and k == 2:
            i, c, b = v[:0], np.zeros(0, np.int64), np.zeros((0, 4), np.int64) if boxes else None
        elif boxes:
            i, c, b = _masked_label_stats(v, fg, r0, r1, c0, c1, lengths, origin, (h, w))
        else:
            (i, c), b = _label_counts(v[fg], lengths[fg]), None
        ids.append(i)
        counts.append(c)
        found.append(b)
    if k == 1:
        return Scan(ids, counts, found, None, None, None, 0)
    both = fgs[0] & fgs[1]
    pa, pb, pc = _pair_stats(vals[0][both], vals[1][both], lengths[both])
    if per_label:  # pixels of either side: each side's, less those of both (the pairs')
        union = int(counts[0].sum() + counts[1].sum() - pc.sum())
    else:
        union = int(np.sum(lengths, where=fgs[0] | fgs[1]))
    return Scan(ids, counts, found, pa, pb, pc, union)


@sendable
def scan_window(sources: Sequence[RasterSource], window: Window,
                per_label: bool = True, boxes: bool = True, reuse: bool = False) -> Scan:
    """Counts of one window of one or two raster sources (pure; picklable in and out).

    Parameters
    ----------
    sources : sequence of RasterSource
        One raster, or a reference and a submission on the same grid.
    window : tuple of int
        ``(row0, row1, col0, col1)``, ends exclusive.
    per_label, boxes : bool
        See :func:`scan_labels`.
    reuse : bool
        Read into arrays kept by the calling thread from one window to the next
        (:func:`_window_buffer`), not fresh ones: a fresh array of tens of megabytes
        is new pages for the kernel to map and zero at every window. The counts
        returned never refer to them.
    """
    if all(s.is_empty(window) for s in sources):
        return empty_scan(sources, boxes)
    with quiet_gdal():
        labels = [s.read(window, out=_window_buffer(k, s, window) if reuse else None)
                  for k, s in enumerate(sources)]
    return scan_labels(labels, [s.background for s in sources], (window[0], window[2]),
                       per_label, boxes)


def _window_buffer(slot: int, source: RasterSource, window: Window) -> np.ndarray:
    """An array of ``window``'s shape and ``source``'s dtype, the ``slot``-th source's
    buffer of the calling thread: one flat array per slot, grown to the largest window
    asked for, whose leading part is reshaped (see :func:`release_window_buffers`)."""
    shape = (window[1] - window[0], window[3] - window[2])
    size = shape[0] * shape[1]
    buffers = getattr(_LOCAL, "buffers", None)
    if buffers is None:
        buffers = _LOCAL.buffers = {}
    dtype = np.dtype(source.dtype)
    buf = buffers.get(slot)
    if buf is None or buf.dtype != dtype or buf.size < size:
        buf = buffers[slot] = np.empty(size, dtype=dtype)
    return buf[:size].reshape(shape)


def release_window_buffers() -> None:
    """Drop the calling thread's window buffers (a pool's threads drop theirs on exit)."""
    _LOCAL.buffers = None


def empty_scan(sources: Sequence[RasterSource], boxes: bool = True) -> Scan:
    """The scan of a window holding only background."""
    return scan_labels([np.zeros((0, 0), np.dtype(s.dtype)) for s in sources],
                       [s.background for s in sources], boxes=boxes)


def merge_scans(parts: Iterable[Scan]) -> Scan:
    """Stitch partial counts (windows, or already merged groups) into one :class:`Scan`.

    Per label: counts add up, boxes take the min/max; per pair: counts add up.
    Associative and commutative, so it can run as a tree reduction. Boxes are
    merged when every part has them, else the result has none.
    """
    parts = list(parts)
    if not parts:
        raise ValueError("no scans to merge")
    k = len(parts[0].ids)
    ids, counts, boxes = [], [], []
    for s in range(k):
        lab = np.concatenate([p.ids[s] for p in parts])
        n = np.concatenate([p.counts[s] for p in parts])
        if any(p.boxes[s] is None for p in parts):
            (i, c), b = _label_counts(lab, n), None
        else:
            bx = np.concatenate([p.boxes[s] for p in parts])
            i, c, b = _label_stats(lab, bx[:, 0], bx[:, 1], bx[:, 2], bx[:, 3], n)
        ids.append(i)
        counts.append(c)
        boxes.append(b)
    if k == 1:
        return Scan(ids, counts, boxes, None, None, None, 0)
    pa, pb, pc = _pair_stats(np.concatenate([p.pair_a for p in parts]),  # type: ignore[misc]
                             np.concatenate([p.pair_b for p in parts]),  # type: ignore[misc]
                             np.concatenate([p.pair_counts for p in parts]))  # type: ignore[misc]
    return Scan(ids, counts, boxes, pa, pb, pc, sum(p.union for p in parts))


def scan(sources: Sequence[RasterSource], n_jobs: int | None = None,
         target: int | None = None, per_label: bool = True, boxes: bool = True) -> Scan:
    """:func:`scan_window` over every window of the first source, in threads, merged.

    Within :func:`geoeval.parallel.remote` the windows are mapped by its mapper
    instead (e.g. on a Dask cluster, whose workers must see the files).

    Partial results are merged in groups as they arrive, so memory stays about
    ``n_jobs`` windows plus the objects.
    """
    import rasterio

    wins = written_windows(sources, windows(sources[0].shape, sources[0].block_shape,
                                            target))
    if not wins:
        return empty_scan(sources, boxes)
    mapper = parallel.remote_mapper()
    if mapper is not None:  # e.g. the Dask engine: the workers open the files by window
        from functools import partial

        return _merge_stream(mapper(partial(scan_window, list(sources), per_label=per_label,
                                            boxes=boxes), wins), total=len(wins))
    jobs = max(1, min(n_jobs or parallel.workers(), len(wins)))
    # every block is read once: GDAL's block cache (5 % of the RAM by default) would only
    # hold decompressed blocks that are never asked for again
    with rasterio.Env(GDAL_CACHEMAX=SCAN_CACHE_MB):
        if jobs == 1:
            try:
                return _merge_stream((scan_window(sources, w, per_label, boxes, reuse=True)
                                      for w in wins), total=len(wins))
            finally:
                release_window_buffers()
        with threads(jobs) as pool:  # its threads, and their buffers, end with it
            return _merge_stream(pool.map(
                lambda w: scan_window(sources, w, per_label, boxes, reuse=True), wins),
                total=len(wins))


def written_windows(sources: Sequence[RasterSource], wins: list[Window]) -> list[Window]:
    """``wins`` cut to the blocks some source has in its file (:meth:`RasterSource.written`;
    windows of unwritten blocks only are background and left out): of a sparse GeoTIFF
    only the blocks that hold data are read."""
    if not any(s.sparse_background for s in sources):
        return wins
    out = []
    for w in wins:
        spans = [s.written(w) for s in sources]
        if any(x is not None for x in spans):
            b = np.array([x for x in spans if x is not None])
            out.append((int(b[:, 0].min()), int(b[:, 1].max()), int(b[:, 2].min()),
                        int(b[:, 3].max())))
    return out


def _merge_stream(results: Iterable[Scan], total: int | None = None,
                  floor: int = 1 << 18) -> Scan:
    """Merge a stream of scans, reporting the windows done to
    :func:`geoeval.parallel.reporting` when ``total`` is known.

    Partial results are merged when the entries waiting exceed four times the
    merged result (and ``floor``): memory stays a few times the objects' own
    (labels and pairs are counted, never pixels) and each entry is merged a
    bounded number of times, whereas merging every few windows re-sorted the
    whole accumulated result again and again.
    """
    acc: list[Scan] = []
    if total is not None:
        results = parallel.counted(results, total, "raster windows")
    merged = waiting = 0
    for r in results:
        acc.append(r)
        waiting += _entries(r)
        if waiting > max(4 * merged, floor):
            acc = [merge_scans(acc)]
            merged, waiting = _entries(acc[0]), 0
    return merge_scans(acc)


def _entries(s: Scan) -> int:
    """Labels and pairs held by a scan."""
    return sum(i.size for i in s.ids) + (0 if s.pair_a is None else s.pair_a.size)
