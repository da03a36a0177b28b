"""COCO polygons rasterised exactly as the COCO mask API does (``rleFrPoly``), vectorised.

``maskApi.c`` (COCO API, Dollár and Lin 2015) turns a polygon ring into a mask in
three steps, reproduced here with the same integer and floating-point operations
(C casts truncate toward zero: :func:`numpy.trunc`):

1. Upsample by 5: each vertex becomes ``(int)(5·x + .5), (int)(5·y + .5)``, and
   every edge (the last vertex joined to the first) is walked one unit at a time
   along its major axis, the other coordinate ``(int)(start + s·t + .5)`` with
   ``s`` the slope, after the edge has been turned to run in increasing major
   coordinate.
2. Downsample: wherever the walk's upsampled column ``u`` changes, with ``xd``
   the smaller of the two columns, ``(xd + .5)/5 − .5`` must be a whole column
   ``x`` of the image (``0 ≤ x ≤ w − 1``, i.e. ``xd = 5x + 2``); the row is the
   smaller of the two upsampled rows ``yd``, mapped to ``ceil(clip((yd + .5)/5 −
   .5, 0, h))``. Each such point ``(x, y)`` toggles the mask from pixel ``x·h +
   y`` on (column-major order).
3. The toggles, sorted, become run lengths; toggles at one pixel cancel in pairs.

Walking every unit step would visit five points per pixel of outline. Only the
steps where ``u`` crosses a level ``5x + 2`` matter: along an x-major edge they are
every fifth step, found directly; along a y-major edge ``u`` is monotone in the step
(every floating-point operation is), so the crossing step of each level is computed
from the slope and checked with the exact expression (a binary search settles
the rare miss). Points outside the image's columns are never generated, so an
edge far outside the image costs nothing.

A multi-polygon annotation is the union of its rings' masks (``rleMerge``), as
``COCO.annToRLE`` merges them; a box ``[x, y, w, h]`` (``rleFrBbox``) is the ring
``x,y  x,y+h  x+w,y+h  x+w,y``.
"""

from __future__ import annotations

import numpy as np

from geoeval.cancel import threads
from geoeval.io.masks import Masks, concat_masks, empty_masks, masks_from_linear_runs, ranges
from geoeval.parallel import workers

SCALE = 5
#: |coordinate| beyond which ``(int)(5·x + .5)`` overflows the C ``int`` of ``maskApi.c``
COORD_LIMIT = (2**31 - 1) / SCALE - 1


def box_rings(boxes: np.ndarray) -> np.ndarray:
    """``rleFrBbox``'s ring of each ``[x, y, w, h]``: ``(n, 8)`` coordinates."""
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)
    xs, ys = b[:, 0], b[:, 1]
    xe, ye = xs + b[:, 2], ys + b[:, 3]
    return np.column_stack([xs, ys, xs, ye, xe, ye, xe, ys])


def polygon_masks(coords: np.ndarray, ring_sizes: np.ndarray, ring_object: np.ndarray,
                  height: np.ndarray, width: np.ndarray, *,
                  chunk_points: int = 1 << 15) -> Masks:
    """Masks of polygon rings, as ``rleFrPoly`` and ``rleMerge`` make them.

    Parameters
    ----------
    coords : numpy.ndarray
        Every ring's ``x0, y0, x1, y1, …`` concatenated (float64), in pixels.
    ring_sizes : numpy.ndarray
        Number of vertices of each ring (its coordinates are twice as many).
    ring_object : numpy.ndarray
        Object of each ring, non-decreasing; objects without a ring get an empty mask.
        Objects are rasterised in groups (in threads), each group's masks made at once.
    height, width : numpy.ndarray
        Image size of each object (int).
    chunk_points : int
        Rings are rasterised in groups of about this many vertices.

    Returns
    -------
    Masks
    """
    coords = np.asarray(coords, dtype=np.float64)
    ring_sizes = np.asarray(ring_sizes, dtype=np.int64)
    ring_object = np.asarray(ring_object, dtype=np.int64)
    height = np.asarray(height, dtype=np.int64)
    width = np.asarray(width, dtype=np.int64)
    n = height.size
    vertex_start = np.r_[0, np.cumsum(ring_sizes)]
    ring_start = np.searchsorted(ring_object, np.arange(n + 1))  # each object's rings
    # groups of whole objects of about chunk_points vertices
    cuts = np.unique(np.r_[0, np.searchsorted(vertex_start[ring_start], np.arange(
        chunk_points, int(vertex_start[-1]), chunk_points)), n])
    multi = np.diff(ring_start) > 1

    def chunk(k: int) -> Masks:
        o0, o1 = cuts[k], cuts[k + 1]
        r0, r1 = ring_start[o0], ring_start[o1]
        v0, v1 = vertex_start[r0], vertex_start[r1]
        owner = ring_object[r0:r1] - o0
        ring, start, end = _ring_runs(coords[2 * v0:2 * v1], ring_sizes[r0:r1],
                                      height[o0:o1][owner], width[o0:o1][owner])
        obj, start, end = _union(owner[ring], start, end, multi[o0:o1])
        return masks_from_linear_runs(obj, start, end, height[o0:o1], width[o0:o1])

    n_chunks = cuts.size - 1
    jobs = min(workers(), n_chunks)
    if jobs > 1:  # numpy's sorts and arithmetic release the GIL
        with threads(jobs) as pool:
            parts = list(pool.map(chunk, range(n_chunks)))
    else:
        parts = [chunk(k) for k in range(n_chunks)]
    return concat_masks(parts) if parts else empty_masks(height, width)


def _ring_runs(coords: np.ndarray, ring_sizes: np.ndarray, h: np.ndarray,
               w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Foreground runs ``[start, end)`` (column-major pixel index) of each ring of one
    chunk: ring (local index), start, end; sorted by ring then start."""
    n_rings = ring_sizes.size
    xy = np.trunc(SCALE * coords.reshape(-1, 2) + 0.5).astype(np.int64)
    n = xy.shape[0]
    ring_of = np.repeat(np.arange(n_rings), ring_sizes)
    first = np.cumsum(ring_sizes) - ring_sizes
    nxt = np.arange(1, n + 1)
    filled = ring_sizes > 0
    nxt[(first + ring_sizes - 1)[filled]] = first[filled]  # the last vertex joins the first
    xs, ys = xy[:, 0], xy[:, 1]
    xe, ye = xs[nxt], ys[nxt]
    dx, dy = np.abs(xe - xs), np.abs(ye - ys)
    major_x = dx >= dy
    flip = np.where(major_x, xs > xe, ys > ye)
    xs, xe = np.where(flip, xe, xs), np.where(flip, xs, xe)
    ys, ye = np.where(flip, ye, ys), np.where(flip, ys, ye)
    ew = w[ring_of]
    # x-major edges: u = xs + t; the pair (t-1, t) has xd = xs + t - 1
    xm = np.flatnonzero(major_x & (dx > 0))
    r1, k1, yd1 = _x_major(xs[xm], ys[xm], ye[xm], dx[xm], ew[xm])
    # y-major edges: v = ys + t; u crosses each level xd = 5k + 2 once
    ym = np.flatnonzero(~major_x)
    r2, k2, yd2 = _y_major(xs[ym], xe[ym], ys[ym], dy[ym], ew[ym])
    ring = ring_of[np.concatenate([xm[r1], ym[r2]])]
    hh = h[ring]
    # the row: ceil(clip((yd + .5)/5 - .5, 0, h)), which is exactly ceil((yd - 2)/5) clipped
    y = np.minimum(np.maximum((np.concatenate([yd1, yd2]) + 2) // SCALE, 0), hh)
    return _toggles_to_runs(ring, np.concatenate([k1, k2]) * hh + y, h * w)


def _x_major(xs: np.ndarray, ys: np.ndarray, ye: np.ndarray, dx: np.ndarray,
             w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crossings of x-major edges: edge, image column ``k`` and upsampled row ``yd``.

    The steps ``t`` with ``xd = xs + t − 1 = 5k + 2`` (``0 ≤ k ≤ w − 1``) are every fifth
    one; ``yd`` is the smaller of the rows at ``t − 1`` and ``t``, and the rows are
    monotone along the edge (every floating-point operation is), so it is the row at
    ``t − 1`` when the edge rises and at ``t`` otherwise: one evaluation per point.
    """
    s = (ye - ys) / dx
    lo = np.maximum(1, 3 - xs)
    hi = np.minimum(dx, SCALE * w - 2 - xs)
    t0 = lo + (3 - xs - lo) % SCALE
    count = np.maximum((hi - t0) // SCALE + 1, 0)
    edge = np.repeat(np.arange(xs.size), count)
    j = ranges(np.zeros(xs.size, np.int64), count)
    t = (t0 - (s > 0))[edge] + SCALE * j  # the step whose row is the smaller
    v = np.trunc(ys.astype(np.float64)[edge] + s[edge] * t + 0.5)
    k = ((xs + t0 - 3) // SCALE)[edge] + j
    return edge, k, v.astype(np.int64)


def _y_major(xs: np.ndarray, xe: np.ndarray, ys: np.ndarray, dy: np.ndarray,
             w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crossings of y-major edges: edge, image column ``k`` and upsampled row ``yd``."""
    s = (xe - xs) / dy
    xsf = xs.astype(np.float64)
    u0 = np.trunc(xsf + 0.5)
    un = np.trunc(xsf + s * dy + 0.5)
    lo = np.maximum(np.minimum(u0, un), 2).astype(np.int64)
    hi = np.minimum(np.maximum(u0, un) - 1, SCALE * w - 3).astype(np.int64)
    l0 = lo + (2 - lo) % SCALE
    count = np.where(s != 0, np.maximum((hi - l0) // SCALE + 1, 0), 0)
    edge = np.repeat(np.arange(xs.size), count)
    j = ranges(np.zeros(xs.size, np.int64), count)
    level = l0[edge] + SCALE * j
    se, xse = s[edge], xsf[edge]
    # first step past the level, from the slope (checked by _crossing_steps)
    guess = (level + 0.5 - xse) / se
    t = np.where(se > 0, np.ceil(guess), np.floor(guess) + 1).astype(np.int64)
    best = _crossing_steps(xse, se, level, dy[edge], t)
    k = ((l0 - 2) // SCALE)[edge] + j
    return edge, k, ys[edge] + best - 1


def _crossing_steps(xse: np.ndarray, se: np.ndarray, level: np.ndarray, n: np.ndarray,
                    t: np.ndarray) -> np.ndarray:
    """The step ``t`` in ``[1, n]`` at which ``u(t) = (int)(xs + s·t + .5)`` leaves
    ``level`` (``u(t) ≥ level + 1`` rising, ``≤ level`` falling) for the first time,
    with ``t`` a guess: the guess is checked with the exact expression, a binary
    search settles the others (the guess from the slope is almost always right)."""
    up = se > 0

    def reached(t: np.ndarray, sel: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Whether the walk has left the level by step t (t clipped to [0, n])."""
        t = np.minimum(np.maximum(t, 0), n[sel])
        u = np.trunc(xse[sel] + se[sel] * t + 0.5)
        return np.where(up[sel], u >= level[sel] + 1, u <= level[sel])

    found = reached(t) & ~reached(t - 1) & (t >= 1) & (t <= n)
    best = np.where(found, t, 0)
    miss = np.flatnonzero(~found)
    if miss.size:  # binary search: reached(0) is false and reached(dy) true
        a, b = np.zeros(miss.size, np.int64), n[miss].copy()
        while (b - a > 1).any():
            mid = (a + b) // 2
            r = reached(mid, miss)
            a, b = np.where(r, a, mid), np.where(r, mid, b)
        best[miss] = b
    return best


def _toggles_to_runs(ring: np.ndarray, pos: np.ndarray, total: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Runs of each ring from its toggle positions: sorted, paired toggles at one
    pixel cancelled, then ``[p0, p1), [p2, p3), …`` (an odd last one runs to
    ``total``, the ring's ``h·w``).

    A closed ring crosses each column's level an even number of times, so every
    ring has an even number of toggles and, sorted, they pair up in place; the
    general path (an odd ring) is kept for safety.
    """
    if pos.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    stride = int(total.max()) + 1
    key = ring * stride + pos
    key.sort()
    dup = np.flatnonzero(key[1:] == key[:-1])
    if dup.size:  # toggles at one pixel cancel in pairs: an odd number leaves one
        brk = np.flatnonzero(np.diff(dup) != 1)
        run_first = dup[np.r_[0, brk + 1]]
        run_size = dup[np.r_[brk, dup.size - 1]] - run_first + 2
        keep = np.ones(key.size, dtype=bool)
        keep[dup] = False
        keep[dup + 1] = False
        keep[run_first[run_size % 2 == 1]] = True
        key = key[keep]
    ring, pos = np.divmod(key, stride)
    count = np.bincount(ring)
    if not (count % 2).any():  # every ring even: they pair up in place
        return ring[0::2], pos[0::2], pos[1::2]
    first = np.cumsum(count) - count
    idx = np.arange(key.size) - np.repeat(first, count)
    s = np.flatnonzero(idx % 2 == 0)
    last = np.append(ring[1:] != ring[:-1], True)
    end = np.where(last[s], total[ring[s]], pos[np.minimum(s + 1, pos.size - 1)])
    return ring[s], pos[s], end


def _union(obj: np.ndarray, start: np.ndarray, end: np.ndarray, multi: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per object, the union of its runs (``rleMerge``): sorted, disjoint, not touching.

    ``obj`` is non-decreasing and the runs of a one-ring object are already such a
    union: only the objects flagged in ``multi`` (several rings) are merged."""
    sel = multi[obj]
    if not sel.any():
        return obj, start, end
    o, a, b = obj[sel], start[sel], end[sel]
    stride = int(b.max()) + 1
    key = o * stride + a
    order = np.argsort(key, kind="stable")
    o, key, b = o[order], key[order], o[order] * stride + b[order]
    reach = np.maximum.accumulate(b)  # running end within each object
    new = np.empty(o.size, dtype=bool)
    new[0] = True
    np.greater(key[1:], reach[:-1], out=new[1:])  # a new object, or a gap
    head = np.flatnonzero(new)
    tail = np.append(head[1:], o.size) - 1
    base = o[head] * stride
    o, a, b = o[head], key[head] - base, reach[tail] - base
    keep = ~sel
    obj = np.concatenate([obj[keep], o])
    order = np.argsort(obj, kind="stable")  # two sorted sequences: one merge
    return obj[order], np.concatenate([start[keep], a])[order], np.concatenate(
        [end[keep], b])[order]
