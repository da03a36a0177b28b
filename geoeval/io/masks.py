"""Instance masks as column runs, and the COCO run-length encoding (RLE) they come from.

A mask lives on its image's pixel grid (``height`` rows, ``width`` columns) and is
stored as its runs of foreground pixels cut at column boundaries: run ``r`` covers
rows ``y0[r] <= y < y1[r]`` of column ``x[r]``. An object's runs are consecutive
(``ptr``, CSR), sorted by column then row, disjoint and never touching inside a
column. No object owns a Python object or a dense array: areas, boxes and every
pairwise intersection are array operations over the runs.

COCO stores a mask as run lengths over the pixels in column-major order (Lin et
al. 2014, "Microsoft COCO: Common Objects in Context"; ``maskApi.c`` of the COCO
API, Dollár and Lin 2015): counts ``c0, c1, …`` of alternately background and
foreground pixels, the first count background (possibly 0), summing to
``height × width``. *Uncompressed* RLE writes the counts as a JSON list;
*compressed* RLE writes them as text (``rleToString``): each count minus the count
two places before it (from the fourth count on), in 5-bit groups, least
significant first, each group a character ``48 + bits`` with ``0x20`` set when
more groups follow and the last group's ``0x10`` bit the sign. Decoding and
encoding here are vectorised over all strings at once and give exactly the counts
``rleFrString`` / ``rleToString`` give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Masks:
    """Instance masks of ``n`` objects as column runs (see the module docstring).

    Attributes
    ----------
    ptr : numpy.ndarray
        ``(n + 1,)`` int64: object ``i``'s runs are ``ptr[i]:ptr[i + 1]``.
    x, y0, y1 : numpy.ndarray
        int32 column, first row and end row (exclusive) of each run.
    height, width : numpy.ndarray
        ``(n,)`` int64: the size of each object's image, in pixels.
    """

    ptr: np.ndarray
    x: np.ndarray
    y0: np.ndarray
    y1: np.ndarray
    height: np.ndarray
    width: np.ndarray

    def __len__(self) -> int:
        return int(self.ptr.size - 1)

    def __repr__(self) -> str:
        return f"<Masks of {len(self)} objects: {self.x.size} runs of pixels>"

    @property
    def run_object(self) -> np.ndarray:
        """The object of each run."""
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.ptr))

    def areas(self) -> np.ndarray:
        """Foreground pixels of each object (int64; ``rleArea``)."""
        per_run = np.cumsum(np.r_[0, self.y1 - self.y0], dtype=np.int64)
        return per_run[self.ptr[1:]] - per_run[self.ptr[:-1]]

    def bboxes(self) -> np.ndarray:
        """``[x, y, w, h]`` of each object's pixels (float, ``toBbox``); zeros when empty.

        A run that goes on from the last row of a column to the first of the next
        makes ``toBbox`` span every row; such a pair of runs covers both the last
        and the first row, so the pixel box is the same.
        """
        n = len(self)
        out = np.zeros((n, 4))
        has = np.diff(self.ptr) > 0
        if not has.any():
            return out
        first = self.ptr[:-1][has]
        xs = self.x[first]
        xe = np.maximum.reduceat(self.x, first)
        ys = np.minimum.reduceat(self.y0, first)
        ye = np.maximum.reduceat(self.y1, first) - 1
        out[has] = np.column_stack([xs, ys, xe - xs + 1, ye - ys + 1]).astype(float)
        return out

    def subset(self, index: np.ndarray) -> Masks:
        """The masks of the objects at ``index`` (integer or boolean), in that order."""
        idx = np.arange(len(self))[np.asarray(index)]
        lengths = np.diff(self.ptr)[idx]
        runs = ranges(self.ptr[:-1][idx], lengths)
        return Masks(ptr=np.r_[0, np.cumsum(lengths)].astype(np.int64), x=self.x[runs],
                     y0=self.y0[runs], y1=self.y1[runs], height=self.height[idx],
                     width=self.width[idx])

    def linear_runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each object's foreground as maximal runs ``[start, end)`` of column-major pixel
        indices (runs that continue into the next column joined): object, start, end."""
        obj = self.run_object
        col = self.x * self.height[obj]  # int64
        start = col + self.y0
        end = col + self.y1
        if obj.size == 0:  # no object, or every mask empty: no run to join
            return obj, start, end
        joined = np.r_[False, (obj[1:] == obj[:-1]) & (start[1:] == end[:-1])]
        head = np.flatnonzero(~joined)
        tail = np.r_[head[1:], obj.size] - 1
        return obj[head], start[head], end[tail]

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """The COCO counts of every object, concatenated, and each object's number of
        counts; canonical as ``rleEncode`` writes them (every count positive but the
        first, no empty last count)."""
        obj, start, end = self.linear_runs()
        n = len(self)
        runs_per = np.bincount(obj, minlength=n)
        run_first = np.r_[0, np.cumsum(runs_per)][:-1]
        has = runs_per > 0
        prev_end = np.r_[0, end[:-1]]
        prev_end[run_first[has]] = 0
        last_end = np.zeros(n, dtype=np.int64)
        last_end[has] = end[run_first[has] + runs_per[has] - 1]
        tail = self.height * self.width - last_end
        with_tail = (tail > 0) | ~has
        m = 2 * runs_per + with_tail
        off = np.r_[0, np.cumsum(m)][:-1]
        out = np.empty(int(m.sum()), dtype=np.int64)
        pos = off[obj] + 2 * (np.arange(obj.size) - run_first[obj])
        out[pos] = start - prev_end
        out[pos + 1] = end - start
        out[(off + 2 * runs_per)[with_tail]] = tail[with_tail]
        return out, m.astype(np.int64)

    def encode(self) -> list[bytes]:
        """Compressed RLE counts (``rleToString``) of every object."""
        counts, lengths = self.counts()
        return encode_counts(counts, lengths)

    def dense(self, k: int) -> np.ndarray:
        """Object ``k``'s mask as a ``(height, width)`` bool array (for tests and figures)."""
        out = np.zeros((int(self.width[k]), int(self.height[k])), dtype=bool)
        for r in range(int(self.ptr[k]), int(self.ptr[k + 1])):
            out[self.x[r], self.y0[r]:self.y1[r]] = True
        return out.T


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lengths)])``, vectorised."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, lengths) + np.arange(total)


def empty_masks(height: np.ndarray, width: np.ndarray) -> Masks:
    """Masks without any foreground pixel, one per image size given."""
    z = np.zeros(0, dtype=np.int32)
    n = np.asarray(height).size
    return Masks(ptr=np.zeros(n + 1, dtype=np.int64), x=z, y0=z, y1=z,
                 height=np.asarray(height, dtype=np.int64),
                 width=np.asarray(width, dtype=np.int64))


def concat_masks(parts: Sequence[Masks]) -> Masks:
    """The objects of several :class:`Masks`, one after the other."""
    if not parts:
        return empty_masks(np.zeros(0, np.int64), np.zeros(0, np.int64))
    sizes = np.cumsum([0] + [p.x.size for p in parts[:-1]])
    ptr = np.concatenate([[0]] + [p.ptr[1:] + s for p, s in zip(parts, sizes, strict=True)])
    return Masks(ptr=ptr.astype(np.int64), x=np.concatenate([p.x for p in parts]),
                 y0=np.concatenate([p.y0 for p in parts]),
                 y1=np.concatenate([p.y1 for p in parts]),
                 height=np.concatenate([p.height for p in parts]),
                 width=np.concatenate([p.width for p in parts]))


def masks_from_linear_runs(obj: np.ndarray, start: np.ndarray, end: np.ndarray,
                           height: np.ndarray, width: np.ndarray) -> Masks:
    """:class:`Masks` from runs ``[start, end)`` of column-major pixel indices.

    The runs of one object must be sorted, disjoint and not touching (``end <
    next start``), objects in increasing order; empty runs are dropped. Each run
    is cut at the column boundaries it crosses.
    """
    height = np.asarray(height, dtype=np.int64)
    width = np.asarray(width, dtype=np.int64)
    keep = end > start
    if not keep.all():
        obj, start, end = obj[keep], start[keep], end[keep]
    h = height[obj]
    x0, y0 = np.divmod(start, h)
    x1 = (end - 1) // h
    if (x0 == x1).all():  # no run goes on into the next column (the usual case)
        x, y1 = x0, end - x0 * h
        counts = np.bincount(obj, minlength=height.size)
    else:
        pieces = x1 - x0 + 1
        run = np.repeat(np.arange(obj.size), pieces)
        x = ranges(x0, pieces)
        col_start = x * h[run]
        y0 = np.maximum(start[run] - col_start, 0)
        y1 = np.minimum(end[run] - col_start, h[run])
        counts = np.bincount(obj[run], minlength=height.size)
    ptr = np.zeros(height.size + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return Masks(ptr=ptr, x=x.astype(np.int32), y0=y0.astype(np.int32),
                 y1=y1.astype(np.int32), height=height, width=width)


class RleError(ValueError):
    """A malformed RLE: ``index`` is the position of the bad mask in the input."""

    def __init__(self, index: int, reason: str) -> None:
        self.index = index
        self.reason = reason
        super().__init__(reason)


def masks_from_counts(counts: np.ndarray, lengths: np.ndarray, height: np.ndarray,
                      width: np.ndarray) -> Masks:
    """:class:`Masks` from COCO counts (concatenated; ``lengths`` per object).

    Raises :class:`RleError` naming the first object whose counts are negative or do
    not sum to ``height × width`` (``maskApi.c`` would read past the mask or stop
    short). Zero counts anywhere are allowed (uncompressed RLE may hold them).
    """
    counts = np.asarray(counts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    height = np.asarray(height, dtype=np.int64)
    width = np.asarray(width, dtype=np.int64)
    n = lengths.size
    obj = np.repeat(np.arange(n), lengths)
    neg = np.flatnonzero(np.bincount(obj[counts < 0], minlength=n))
    if neg.size:
        raise RleError(int(neg[0]), "RLE counts must not be negative")
    ends = np.cumsum(counts)
    base = np.r_[0, ends][np.r_[0, np.cumsum(lengths)][:-1]]
    totals = np.zeros(n, dtype=np.int64)
    has = lengths > 0
    totals[has] = ends[np.cumsum(lengths)[has] - 1] - base[has]
    bad = np.flatnonzero(totals != height * width)
    if bad.size:
        k = int(bad[0])
        raise RleError(k, f"RLE counts sum to {int(totals[k])}, not height x width = "
                          f"{int(height[k])} x {int(width[k])} = {int(height[k] * width[k])}")
    local = ends - np.repeat(base, lengths)  # end of each count, from the object's start
    index = np.arange(counts.size) - np.repeat(np.r_[0, np.cumsum(lengths)][:-1], lengths)
    fg = (index % 2 == 1) & (counts > 0)
    start, end, o = local[fg] - counts[fg], local[fg], obj[fg]
    # join foreground runs separated by an empty background count
    joined = np.r_[False, (o[1:] == o[:-1]) & (start[1:] == end[:-1])]
    head = np.flatnonzero(~joined)
    tail = np.r_[head[1:], o.size] - 1
    return masks_from_linear_runs(o[head], start[head], end[tail], height, width)


def decode_counts(strings: Sequence[str | bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The counts of compressed RLE strings (``rleFrString``), concatenated, and their
    number per string.

    Raises :class:`RleError` for a character outside ``'0'``..``'o'`` or a string
    that ends inside a count. Counts are returned as int64 (``rleFrString`` keeps
    them as 32-bit unsigned integers: a valid mask's counts fit either way).
    """
    n = len(strings)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    raw = [s.encode("latin-1") if isinstance(s, str) else bytes(s) for s in strings]
    size = np.fromiter(map(len, raw), dtype=np.int64, count=n)
    c = np.frombuffer(b"".join(raw), dtype=np.uint8).astype(np.int64) - 48
    string_of = np.repeat(np.arange(n), size)
    bad_char = (c < 0) | (c > 63)
    if bad_char.any():
        raise RleError(int(string_of[np.argmax(bad_char)]),
                       "compressed RLE counts hold a character outside '0'..'o'")
    last = (c & 0x20) == 0  # the last 5-bit group of a value
    closed = np.ones(n, dtype=bool)
    closed[size > 0] = last[np.cumsum(size)[size > 0] - 1]
    if not closed.all():
        raise RleError(int(np.argmin(closed)), "compressed RLE counts end inside a count")
    value_end = np.flatnonzero(last)
    value_start = np.r_[0, value_end[:-1] + 1]
    n_groups = value_end - value_start + 1
    group = np.arange(c.size) - np.repeat(value_start, n_groups)
    x = np.add.reduceat((c & 0x1F) << (5 * group), value_start) if c.size else c
    x = np.where((c[value_end] & 0x10) != 0, x - (np.int64(1) << (5 * n_groups)), x)
    per_string = np.bincount(string_of[value_end], minlength=n).astype(np.int64)
    # from the fourth count on, a value is the difference with the count two before:
    # counts 1, 3, 5, ... and 2, 4, 6, ... are running sums of their values
    index = np.arange(x.size) - np.repeat(np.r_[0, np.cumsum(per_string)][:-1], per_string)
    chain = np.repeat(np.arange(n), per_string) * 3 + np.where(
        index == 0, 0, np.where(index % 2 == 1, 1, 2))
    order = np.argsort(chain, kind="stable")
    sums = np.cumsum(x[order])
    key = chain[order]
    head = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else key
    before = np.repeat(np.r_[0, sums][head], np.diff(np.r_[head, key.size]))
    out = np.empty_like(x)
    out[order] = sums - before
    return out, per_string


def encode_counts(counts: np.ndarray, lengths: np.ndarray) -> list[bytes]:
    """Compressed RLE strings (``rleToString``) of concatenated counts."""
    counts = np.asarray(counts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n = lengths.size
    first = np.r_[0, np.cumsum(lengths)][:-1]
    index = np.arange(counts.size) - np.repeat(first, lengths)
    x = counts.copy()
    later = index > 2
    x[later] -= counts[np.flatnonzero(later) - 2]
    chars, order_keys = [], []
    value = np.arange(x.size)
    active = np.ones(x.size, dtype=bool)
    k = 0
    while active.any():
        sel = np.flatnonzero(active)
        xv = x[sel]
        c = xv & 0x1F
        xv = xv >> 5
        more = np.where((c & 0x10) != 0, xv != -1, xv != 0)
        chars.append((c | (more.astype(np.int64) << 5)) + 48)
        order_keys.append(value[sel] * 8 + k)
        x[sel] = xv
        active[sel] = more
        k += 1
    if not chars:
        return [b""] * n
    key = np.concatenate(order_keys)
    text = np.concatenate(chars)[np.argsort(key)].astype(np.uint8).tobytes()
    per_value = np.bincount(key // 8, minlength=x.size)
    string_of = np.repeat(np.arange(n), lengths)
    per_string = np.bincount(string_of, weights=per_value, minlength=n).astype(np.int64)
    cut = np.r_[0, np.cumsum(per_string)]
    return [text[cut[i]:cut[i + 1]] for i in range(n)]
