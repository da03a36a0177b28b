"""Max tangent angle error of a polygon against reference contours (Girard, Smirnov,
Solomon and Tarabalka 2021, "Polygonal Building Extraction by Frame Field Learning",
CVPR, §4.3, "Mean max tangent angle error"; the authors' ``compute_contour_measure``
in lydorn_utils' ``polygon_utils.py``).

Each contour (ring) of a predicted polygon is sampled every ``spacing`` units
(each edge of length ``L`` cut into ``max(1, round(L / spacing))`` equal steps),
every sample is projected on its nearest point of the reference contours, and
each step of the sampled contour is compared with the step between the two
projections: ``|cos θ| = |e · p| / (|e| |p|)``. Steps of zero length on either
side, and steps stretched by the projection by a factor ``≥ max_stretch`` (or
``≤ 1 / max_stretch``) are left out. The polygon's value is
``arccos(min |cos θ|)`` over all its contours: its worst tangent angle.

Computed as the authors' code computes it, so that the numbers are the same:
the samples as ``numpy.linspace`` places them, rounding half to even; the
projection as GEOS's ``nearest_points`` of the sample against the collection
of reference rings (first nearest ring in order, first nearest segment in
it), computed in numpy with GEOS's own arithmetic for the distances and the
closest point and with its visiting order, on the rings and segments that
envelope bounds leave in (:func:`project`); norms and products in the same
order. One difference: a ``|cos θ|`` that
rounding puts above 1 is taken as 1 (the authors' code gives NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from geoeval.arrays import expand

#: The authors' parameters (``sampling_spacing=2.0``, ``max_stretch=2`` in their evaluation).
SPACING = 2.0
MAX_STRETCH = 2.0


def sample_rings(rings: np.ndarray, spacing: float = SPACING) -> tuple[np.ndarray, np.ndarray]:
    """Points along each ring (closed coordinate sequence), every ``spacing``.

    Edge ``k`` from ``a`` to ``b`` gives ``numpy.linspace(a, b, n)`` with
    ``n = max(1, round(|a − b| / spacing)) + 1``, without its first point after
    the ring's first edge, so the closing vertex ends the sequence.

    Returns
    -------
    points : numpy.ndarray
        ``(S, 2)`` sample coordinates, ring after ring.
    owner : numpy.ndarray
        ``(S,)`` index of each sample's ring.

    Examples
    --------
    >>> import shapely
    >>> pts, owner = sample_rings(np.array([shapely.LinearRing([(0, 0), (4, 0), (4, 1)])]))
    >>> pts.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [[0.0, 0.0], [2.0, 0.0], [4.0, 0.0], [4.0, 1.0], [2.0, 0.5], [0.0, 0.0]]
    """
    coords, ring = shapely.get_coordinates(np.asarray(rings, dtype=object), return_index=True)
    if coords.shape[0] < 2:
        return np.zeros((0, 2)), np.zeros(0, np.int64)
    edge = np.flatnonzero(ring[1:] == ring[:-1])
    a, b = coords[edge], coords[edge + 1]
    first = np.r_[True, ring[edge[1:]] != ring[edge[:-1]]]
    d = a - b
    length = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    num = np.maximum(1, np.rint(length / spacing).astype(np.int64)) + 1
    count = np.where(first, num, num - 1)
    e = np.repeat(np.arange(edge.size), count)
    t = (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
         + np.where(first, 0, 1)[e]).astype(float)
    edge_div = (num - 1).astype(float)
    edge_delta = b - a
    edge_step = edge_delta / edge_div[:, None]
    pts = t[:, None] * edge_step[e] + a[e]
    # linspace's other formula where its step is 0 (a flat edge, or one so short that
    # the step underflows)
    flat_edge = np.flatnonzero((edge_step == 0).any(axis=1))
    if flat_edge.size:
        at = np.flatnonzero(np.isin(e, flat_edge))
        k = e[at]
        alt = (t[at] / edge_div[k])[:, None] * edge_delta[k] + a[k]
        pts[at] = np.where(edge_step[k] == 0, alt, pts[at])
    last = t == edge_div[e]
    pts[last] = b[e[last]]
    return pts, ring[edge][e]


def envelope_distance(bounds: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """GEOS ``Envelope::distance`` between envelopes ``bounds`` (``minx, miny, maxx,
    maxy``) and the points ``xy``, with its floating-point operations."""
    x, y = xy[:, 0], xy[:, 1]
    dx = np.maximum(0.0, np.maximum(bounds[:, 2], x) - np.minimum(bounds[:, 0], x)
                    - (bounds[:, 2] - bounds[:, 0]) - (x - x))
    dy = np.maximum(0.0, np.maximum(bounds[:, 3], y) - np.minimum(bounds[:, 1], y)
                    - (bounds[:, 3] - bounds[:, 1]) - (y - y))
    return np.sqrt(dx * dx + dy * dy)


#: A segment shorter than this share of its ring's envelope diagonal is "short": runs of
#: short segments (the arcs a round buffer leaves at corners) are bounded together, at
#: most :data:`RUN` at a time; every other segment is a run of its own.
SHORT = 0.01
RUN = 32
#: Samples projected at once (the temporaries are some 30 times as many values): large
#: enough that two threads seldom wait for each other's Python steps (8,192 took 1.6×
#: the time of this on two cores, 1.1× on one).
SLICE = 1 << 17
#: Consecutive samples of a contour whose candidate runs are sifted together.
CHUNK = 8


def point_segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """GEOS ``Distance::pointToSegment`` of points ``p`` to segments ``a``–``b``, with its
    floating-point operations in its order (so the same bits)."""
    bx, by = b[:, 0] - a[:, 0], b[:, 1] - a[:, 1]
    px, py = p[:, 0] - a[:, 0], p[:, 1] - a[:, 1]
    len2 = bx * bx + by * by
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (px * bx + py * by) / len2
        s = ((a[:, 1] - p[:, 1]) * bx - (a[:, 0] - p[:, 0]) * by) / len2
        inner = np.abs(s) * np.sqrt(len2)
    qx, qy = p[:, 0] - b[:, 0], p[:, 1] - b[:, 1]
    to_a, to_b = np.sqrt(px * px + py * py), np.sqrt(qx * qx + qy * qy)
    point = (a[:, 0] == b[:, 0]) & (a[:, 1] == b[:, 1])
    return np.where(point | (r <= 0.0), to_a, np.where(r >= 1.0, to_b, inner))


def closest_point(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """GEOS ``LineSegment::closestPoint`` of points ``p`` on segments ``a``–``b``."""
    dx, dy = b[:, 0] - a[:, 0], b[:, 1] - a[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = ((p[:, 0] - a[:, 0]) * dx + (p[:, 1] - a[:, 1]) * dy) / (dx * dx + dy * dy)
    at_a = (p[:, 0] == a[:, 0]) & (p[:, 1] == a[:, 1])
    at_b = (p[:, 0] == b[:, 0]) & (p[:, 1] == b[:, 1])
    r = np.where(at_a, 0.0, np.where(at_b, 1.0, np.where((dx == 0) & (dy == 0), 0.0, r)))
    out = np.column_stack([a[:, 0] + r * dx, a[:, 1] + r * dy])
    end = np.flatnonzero(~((r > 0) & (r < 1)))  # the nearer end (b on a tie)
    pa, pb = p[end] - a[end], p[end] - b[end]
    nearer_a = np.sqrt(pa[:, 0] * pa[:, 0] + pa[:, 1] * pa[:, 1]) < np.sqrt(
        pb[:, 0] * pb[:, 0] + pb[:, 1] * pb[:, 1])
    out[end] = np.where(nearer_a[:, None], a[end], b[end])
    return out


@dataclass(frozen=True)
class Targets:
    """Reference rings by group, their segments cut into runs.

    Group ``g``'s rings are ``ring_start[g]:ring_start[g + 1]``, in the order of the
    reference collection; ring ``r``'s runs ``run_start[r]:run_start[r + 1]``; run
    ``c``'s segments ``seg_start[c]:seg_start[c + 1]`` (its ring ``run_ring[c]``),
    segment ``k`` from ``a[k]`` to ``b[k]``. A run is one segment, or consecutive short
    ones (see :data:`SHORT`).
    """

    ring_start: np.ndarray
    ring_bounds: np.ndarray
    run_start: np.ndarray
    run_bounds: np.ndarray
    run_ring: np.ndarray
    seg_start: np.ndarray
    a: np.ndarray
    b: np.ndarray

    @classmethod
    def from_rings(cls, rings: np.ndarray, ring_start: np.ndarray) -> Targets:
        coords, ring = shapely.get_coordinates(rings, return_index=True)
        seg = np.flatnonzero(ring[1:] == ring[:-1])
        seg_ring = ring[seg]
        a, b = coords[seg], coords[seg + 1]
        bounds = shapely.bounds(rings)
        w, h = bounds[:, 2] - bounds[:, 0], bounds[:, 3] - bounds[:, 1]
        d = b - a
        short = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] < (SHORT * SHORT * (w * w + h * h))[seg_ring]
        # a run starts at a ring's first segment, at a long segment, after a long
        # segment, and every RUN segments of a run of short ones
        new = np.r_[True, (seg_ring[1:] != seg_ring[:-1]) | ~short[1:] | ~short[:-1]]
        head = np.flatnonzero(new)
        pos = np.arange(seg.size) - np.repeat(head, np.diff(np.r_[head, seg.size]))
        new |= (pos % RUN == 0)
        first = np.flatnonzero(new)
        seg_start = np.r_[first, seg.size].astype(np.int64)
        run_start = np.searchsorted(seg_ring[first], np.arange(rings.size + 1)).astype(np.int64)
        # a run's envelope: its segments' first vertices, and its last segment's end
        end = b[seg_start[1:] - 1] if first.size else b[:0]
        rb = np.column_stack([np.minimum(np.minimum.reduceat(a, first), end),
                              np.maximum(np.maximum.reduceat(a, first), end)]
                             ) if first.size else np.zeros((0, 4))
        return cls(np.asarray(ring_start, np.int64), bounds, run_start, rb, seg_ring[first],
                   seg_start, a, b)


def project(points: np.ndarray, group: np.ndarray, targets: Targets,
            contour: np.ndarray | None = None) -> np.ndarray:
    """Nearest point of the reference rings of each point's group, as GEOS gives it.

    ``shapely.shortest_line(Point(p), GeometryCollection(rings))``'s second point:
    GEOS visits the rings in order, skips a ring whose envelope is farther than the
    nearest distance found so far, and keeps the first segment strictly nearer than
    that (``DistanceOp``). Here only the rings and the runs of segments that can be
    nearest are looked at, with GEOS's own arithmetic for the distances and the
    closest point, and its visiting order. Rings are sifted per contour and per
    chunk of :data:`CHUNK` consecutive points of a contour (the box's gap to a
    ring's envelope against the farthest point of the box from the envelope's
    nearest side), runs of segments per chunk (against the farthest point of the
    chunk from one segment of the run nearest by envelope), then per point
    (against the point's distance to the run nearest by envelope); each time with
    a margin for rounding (:func:`_within`). Where a point's nearest run by
    envelope is the only one left, its first nearest segment is the answer.

    Parameters
    ----------
    points : numpy.ndarray
        ``(S, 2)`` coordinates.
    group : numpy.ndarray
        ``(S,)`` group of each point (each with at least one ring).
    targets : Targets
    contour : numpy.ndarray, optional
        ``(S,)`` non-decreasing: points of one contour (one group) lie close together,
        so the rings and runs that can be nearest are found once for several points.
        Without it every point is sifted on its own.

    Returns
    -------
    numpy.ndarray
        ``(S, 2)`` nearest points.
    """
    n = points.shape[0]
    if n == 0:
        return np.zeros((0, 2))
    t = targets
    if contour is None:
        contour = np.arange(n)
    # chunks: at most CHUNK consecutive points of one contour
    c_new = np.r_[True, contour[1:] != contour[:-1]]
    c_start = np.flatnonzero(c_new)
    pos = np.arange(n) - c_start[np.cumsum(c_new) - 1]
    k_start = np.flatnonzero(c_new | (pos % CHUNK == 0))
    k_size = np.diff(np.r_[k_start, n])
    # rings that can be nearest to a point of each contour, then to one of each chunk, and
    # their runs that can be nearest to one of each chunk
    c_box = _Boxes(points, c_start)
    r_pair, r_ring = expand(np.arange(c_start.size), t.ring_start[group[c_start]],
                            t.ring_start[group[c_start] + 1])
    r_pair, r_ring = _sift_rings(c_box, r_pair, r_ring, t)
    k_box = _Boxes(points, k_start)
    k_contour = np.searchsorted(c_start, k_start, side="right") - 1
    r_first = np.searchsorted(r_pair, np.arange(c_start.size + 1))
    k_pair, r = expand(np.arange(k_start.size), r_first[k_contour], r_first[k_contour + 1])
    k_pair, k_ring = _sift_rings(k_box, k_pair, r_ring[r], t)
    k_pair, k_run = expand(k_pair, t.run_start[k_ring], t.run_start[k_ring + 1])
    k_pair, k_run = _sift_runs(k_box, k_pair, k_run, t, points, k_start)
    # every point with its chunk's runs: their envelopes' distances bound each segment's
    # below; the segments of the point's nearest envelope bound its nearest distance above
    k_first = np.searchsorted(k_pair, np.arange(k_start.size + 1))
    k_of = np.repeat(np.arange(k_start.size), k_size)
    c_pt, c_run = expand(np.arange(n), k_first[k_of], k_first[k_of + 1])
    c_run = k_run[c_run]
    xy = points[c_pt]
    lower = _box_distance(t.run_bounds[c_run], xy)
    guess = _first_least(c_pt, lower)
    g_pt, g_seg = expand(c_pt[guess], t.seg_start[c_run[guess]],
                          t.seg_start[c_run[guess] + 1])
    g_dist = point_segment_distance(points[g_pt], t.a[g_seg], t.b[g_seg])
    g_start = np.flatnonzero(np.r_[True, g_pt[1:] != g_pt[:-1]])
    upper = np.minimum.reduceat(g_dist, g_start)
    near = np.flatnonzero(_within(lower, upper[c_pt], xy))
    # where the guessed run is the only one near: its first nearest segment
    seg = g_seg[_first_least(g_pt, g_dist)]
    more = near[np.bincount(c_pt[near], minlength=n)[c_pt[near]] > 1]
    if more.size:
        c_pt, c_run = c_pt[more], c_run[more]
        # (point, ring) pairs, in ring order, and GEOS's envelope distance of each
        ring = t.run_ring[c_run]
        p_new = np.r_[True, (c_pt[1:] != c_pt[:-1]) | (ring[1:] != ring[:-1])]
        p_pt, p_ring = c_pt[p_new], ring[p_new]
        ring_lower = envelope_distance(t.ring_bounds[p_ring], points[p_pt])
        s_pair, s_seg = expand(np.cumsum(p_new) - 1, t.seg_start[c_run],
                               t.seg_start[c_run + 1])
        dist = point_segment_distance(points[p_pt[s_pair]], t.a[s_seg], t.b[s_seg])
        # per (point, ring): the nearest distance and its first segment
        ring_min, ring_seg = _first_min(s_pair, s_seg, dist, p_pt.size)
        seg[p_pt[np.r_[True, p_pt[1:] != p_pt[:-1]]]] = _visit(p_pt, ring_lower, ring_min,
                                                                ring_seg)
    return closest_point(points, t.a[seg], t.b[seg])


#: Relative and absolute (per unit of coordinate) margins of the sifting bounds.
MARGIN = 1e-9
ULP_MARGIN = 1e-12


def _within(lower: np.ndarray, upper: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """``lower <= upper`` with a margin for rounding: ``1e-9`` relative, and ``1e-12``
    times the coordinates' magnitude (distances near 0 are exact to a few ulps of the
    coordinates, not of themselves)."""
    scale = np.abs(xy[:, 0]) + np.abs(xy[:, 1])
    return lower <= upper * (1 + MARGIN) + ULP_MARGIN * scale


def _box_distance(bounds: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Distance from the points ``xy`` to the envelopes ``bounds`` (a lower bound of the
    distance to anything inside; not GEOS's arithmetic, use with :func:`_within`)."""
    dx = np.maximum(np.maximum(bounds[:, 0] - xy[:, 0], xy[:, 0] - bounds[:, 2]), 0.0)
    dy = np.maximum(np.maximum(bounds[:, 1] - xy[:, 1], xy[:, 1] - bounds[:, 3]), 0.0)
    return np.sqrt(dx * dx + dy * dy)


class _Boxes:
    """Envelopes of runs of consecutive points (starting at ``start``): ``x0, y0, x1,
    y1`` and a magnitude of their coordinates (for :func:`_within`)."""

    def __init__(self, points: np.ndarray, start: np.ndarray) -> None:
        lo, hi = np.minimum.reduceat(points, start), np.maximum.reduceat(points, start)
        self.x0, self.y0, self.x1, self.y1 = lo[:, 0], lo[:, 1], hi[:, 0], hi[:, 1]
        self.scale = (np.maximum(np.abs(self.x0), np.abs(self.x1))
                      + np.maximum(np.abs(self.y0), np.abs(self.y1)))

    def gap(self, i: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """Distance between boxes ``i`` and envelopes ``bounds`` (``minx, miny, maxx,
        maxy``)."""
        dx = np.maximum(np.maximum(bounds[:, 0] - self.x1[i], self.x0[i] - bounds[:, 2]), 0.0)
        dy = np.maximum(np.maximum(bounds[:, 1] - self.y1[i], self.y0[i] - bounds[:, 3]), 0.0)
        return np.sqrt(dx * dx + dy * dy)

    def within(self, i: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """:func:`_within` for boxes ``i``."""
        return lower <= upper * (1 + MARGIN) + ULP_MARGIN * self.scale[i]


def _sift_rings(box: _Boxes, pair: np.ndarray, ring: np.ndarray,
                t: Targets) -> tuple[np.ndarray, np.ndarray]:
    """The ``(box, ring)`` pairs (sorted by box) whose ring can be nearest to some point
    of the box: its envelope within an upper bound of every point's nearest distance,
    the farthest point of the box from the nearest side of a ring's envelope (a ring
    touches every side of its envelope)."""
    rb = t.ring_bounds[ring]
    lower = box.gap(pair, rb)
    x0, y0, x1, y1 = box.x0[pair], box.y0[pair], box.x1[pair], box.y1[pair]
    # the farthest point of the box from each corner of the ring's envelope
    fx0 = np.maximum(np.abs(rb[:, 0] - x0), np.abs(rb[:, 0] - x1)) ** 2
    fx1 = np.maximum(np.abs(rb[:, 2] - x0), np.abs(rb[:, 2] - x1)) ** 2
    fy0 = np.maximum(np.abs(rb[:, 1] - y0), np.abs(rb[:, 1] - y1)) ** 2
    fy1 = np.maximum(np.abs(rb[:, 3] - y0), np.abs(rb[:, 3] - y1)) ** 2
    sides = np.minimum(np.minimum(np.maximum(fx0 + fy0, fx0 + fy1),
                                  np.maximum(fx1 + fy0, fx1 + fy1)),
                       np.minimum(np.maximum(fx0 + fy0, fx1 + fy0),
                                  np.maximum(fx0 + fy1, fx1 + fy1)))
    upper = np.full(box.x0.size, np.inf)
    np.minimum.at(upper, pair, np.sqrt(sides))
    keep = box.within(pair, lower, upper[pair])
    return pair[keep], ring[keep]


def _sift_runs(box: _Boxes, pair: np.ndarray, run: np.ndarray, t: Targets,
               points: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``(box, run)`` pairs (sorted by box) whose run can be nearest to some point
    of the box: the run's envelope within an upper bound of every point's nearest
    distance, the farthest of the box's points from one segment of the run nearest by
    envelope."""
    lower = box.gap(pair, t.run_bounds[run])
    guess = _first_least(pair, lower)
    seg = np.zeros(box.x0.size, np.int64)
    seg[pair[guess]] = t.seg_start[run[guess]]
    owner = np.repeat(np.arange(start.size), np.diff(np.r_[start, points.shape[0]]))
    s = seg[owner]
    d = point_segment_distance(points, t.a[s], t.b[s])
    upper = np.maximum.reduceat(d, start)
    keep = box.within(pair, lower, upper[pair])
    return pair[keep], run[keep]


def _first_least(key: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Index of the first least ``value`` of each run of equal ``key`` (sorted)."""
    start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    least = np.repeat(np.minimum.reduceat(value, start), np.diff(np.r_[start, key.size]))
    at = np.flatnonzero(value == least)
    return at[np.r_[True, key[at][1:] != key[at][:-1]]]


def _first_min(pair: np.ndarray, seg: np.ndarray, dist: np.ndarray,
               n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (``pair`` sorted): the least distance and the first segment with it
    (``inf`` and a segment past every other where the pair has none)."""
    best = np.full(n, np.inf)
    which = np.full(n, np.iinfo(np.int64).max)
    if pair.size == 0:
        return best, which
    start = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    low = np.minimum.reduceat(dist, start)
    owner = pair[start]
    best[owner] = low
    at = np.flatnonzero(dist == best[pair])
    firsts = at[np.r_[True, pair[at][1:] != pair[at][:-1]]]
    which[pair[firsts]] = seg[firsts]
    return best, which


def _visit(pt: np.ndarray, lower: np.ndarray, dist: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """GEOS's choice among each point's rings (sorted by point, then ring order): a
    ring skipped when its envelope is farther than the nearest distance so far, its
    nearest segment taken when strictly nearer. Returns the segment of each point."""
    start = np.r_[0, np.flatnonzero(pt[1:] != pt[:-1]) + 1]
    size = np.diff(np.r_[start, pt.size])
    best, choice = dist[start].copy(), seg[start].copy()
    for j in range(1, int(size.max())):
        has = size > j
        at = start[has] + j
        take = (lower[at] <= best[has]) & (dist[at] < best[has])
        idx = np.flatnonzero(has)[take]
        best[idx], choice[idx] = dist[at[take]], seg[at[take]]
    return choice


def max_tangent_angle(rings: np.ndarray, ring_owner: np.ndarray, n_owners: int,
                      ring_group: np.ndarray, targets: Targets,
                      spacing: float = SPACING, max_stretch: float = MAX_STRETCH
                      ) -> np.ndarray:
    """Max tangent angle error (radians) of each polygon; NaN where no step counts.

    Parameters
    ----------
    rings : numpy.ndarray
        Contours of the polygons (exterior, then interiors, polygon after polygon).
    ring_owner : numpy.ndarray
        Polygon of each contour (``0 … n_owners − 1``).
    n_owners : int
    ring_group : numpy.ndarray
        Group of each contour (its reference rings are group ``g``'s of ``targets``).
    targets : Targets
        Reference rings, by group (see :func:`project`).
    spacing, max_stretch : float
        The authors' 2.0 and 2.

    Returns
    -------
    numpy.ndarray
        ``(n_owners,)`` angles in radians.
    """
    from geoeval.parallel import chunked

    pts, pt_ring = sample_rings(rings, spacing)
    proj = chunked(lambda p, g, c: project(p, g, targets, c), pts, ring_group[pt_ring],
                   pt_ring, max_slice=SLICE)
    same = pt_ring[1:] == pt_ring[:-1]
    e, p = (pts[1:] - pts[:-1])[same], (proj[1:] - proj[:-1])[same]
    step_ring = pt_ring[1:][same]
    ne = np.sqrt(e[:, 0] * e[:, 0] + e[:, 1] * e[:, 1])
    npj = np.sqrt(p[:, 0] * p[:, 0] + p[:, 1] * p[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = 0 < ne * npj
        stretch = ne / npj
        keep &= (1 / max_stretch < stretch) & (stretch < max_stretch)
        cos = np.abs((e[:, 0] * p[:, 0] + e[:, 1] * p[:, 1]) / (ne * npj))
    worst = np.full(n_owners, np.inf)
    np.minimum.at(worst, ring_owner[step_ring[keep]], cos[keep])
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(worst), np.nan, np.arccos(np.minimum(worst, 1.0)))
