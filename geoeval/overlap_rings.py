"""Intersection areas of pairs of small rings (oriented boxes), vectorised over the pairs.

The overlap of two layers goes through shapely (:mod:`geoeval.overlap`); an
oriented-box protocol compares hundreds of thousands of quadrilateral pairs, for
which one GEOS overlay each (about 25 µs) would dominate the run. Here the
pairs are clipped all at once with numpy, exactly, and the IoU is then the one
formula of :func:`geoeval.overlap.iou_from_union`.

Area of the intersection of two convex polygons by Green's theorem: the boundary
of ``A ∩ B`` is made of the parts of ``A``'s edges inside ``B`` and of ``B``'s
edges inside ``A``, so ``|A ∩ B| = ½ Σ (t₁ − t₀) (p × d)`` over every edge
``p + t d`` of either polygon, ``[t₀, t₁]`` being the part of the edge inside the
other polygon (clipped by its half-planes, Cyrus & Beck 1978). An edge shared by
both polygons counts once, from ``A``, when both interiors lie on its same side,
and not at all otherwise. Every pair is translated to its first vertex first, so
the products stay of the size of the objects, not of the image coordinates.

Rings that are not convex (concave, self-intersecting, degenerate) are cut into
the fan of triangles from their first vertex, each with the sign of its
orientation: the signed triangles add up to the ring's winding number, and
``∫ w_A · w_B`` over the plane is the sum of the signed triangle pairs'
intersection areas. For a simple ring it is its plain intersection area; for a
self-intersecting one it is the convention of DOTA_devkit's ``polyiou.cpp``
(Ding et al. 2019), which sums signed triangle intersections the same way.
Each ring is first oriented so that its shoelace area is not negative.

Polygons of any size (holes, several parts) are measured by trapezoids instead
(:func:`polygon_intersection_areas`), with a bound of the rounding, for tests
that only need to know on which side of a threshold an area lies.
"""

from __future__ import annotations

import numpy as np

from geoeval.arrays import expand
from geoeval.parallel import chunked


def ring_signed_areas(rings: np.ndarray) -> np.ndarray:
    """Shoelace area of each ring ``(n, k, 2)``, positive counter-clockwise (y up).

    ``½ Σᵢ (xᵢ yᵢ₊₁ − yᵢ xᵢ₊₁)``, the terms added in vertex order on the
    coordinates as given (a self-intersecting ring's lobes count with their own
    signs).

    Examples
    --------
    >>> ring_signed_areas(np.array([[[0., 0], [4, 0], [4, 2], [0, 2]]])).tolist()
    [8.0]
    """
    r = np.asarray(rings, dtype=float)
    return _shoelace(*_vertex_major(r)) if r.shape[0] else np.zeros(0)


def _vertex_major(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` as ``(k, P)`` arrays: every operation then loops over the pairs."""
    return np.ascontiguousarray(r[..., 0].T), np.ascontiguousarray(r[..., 1].T)


def _next(v: np.ndarray) -> np.ndarray:
    """The next vertex of each ring (vertex-major), cyclically."""
    return np.concatenate([v[1:], v[:1]])


def _shoelace(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    terms = x * _next(y) - y * _next(x)
    total = terms[0].copy()
    for i in range(1, terms.shape[0]):  # in vertex order
        total += terms[i]
    return total / 2.0


def ring_intersection_areas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``∫ w_a · w_b`` of each pair of rings ``(a[k], b[k])``: their intersection area.

    Parameters
    ----------
    a, b : numpy.ndarray
        ``(P, n, 2)`` and ``(P, m, 2)`` ring vertices (open rings, any orientation).

    Returns
    -------
    numpy.ndarray
        ``(P,)``; for two simple rings, ``|a ∩ b|``; for self-intersecting ones
        the integral of the product of their winding numbers, each ring
        oriented to a non-negative shoelace area (module docstring).

    Examples
    --------
    >>> sq = np.array([[[0., 0], [2, 0], [2, 2], [0, 2]]])
    >>> ring_intersection_areas(sq, sq + 1).tolist()
    [1.0]
    >>> bow = np.array([[[0., 0], [2, 2], [2, 0], [0, 2]]])  # two lobes of area 1
    >>> ring_intersection_areas(bow, sq).tolist()  # +1 on one lobe, -1 on the other
    [0.0]
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape[0] == 0:
        return np.zeros(0)
    return chunked(_intersections, a, b)


def _intersections(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ax, ay = _vertex_major(a)
    bx, by = _vertex_major(b)
    # each ring oriented by its shoelace area on the coordinates as given
    sign = (1.0 - 2.0 * (_shoelace(ax, ay) < 0)) * (1.0 - 2.0 * (_shoelace(bx, by) < 0))
    ox, oy = ax[0].copy(), ay[0].copy()  # each pair translated to a's first vertex
    ax, ay, bx, by = ax - ox, ay - oy, bx - ox, by - oy
    out = np.zeros(a.shape[0])
    ca, cb = _convex_turn(ax, ay), _convex_turn(bx, by)
    both = (ca != 0) & (cb != 0)
    if both.any():  # two convex rings turned counter-clockwise: their plain intersection
        pa = _counter_clockwise(ax[:, both], ay[:, both], ca[both] < 0)
        pb = _counter_clockwise(bx[:, both], by[:, both], cb[both] < 0)
        out[both] = _convex_areas(*pa, *pb)
    rest = np.flatnonzero(~both)
    if rest.size:  # signed fans of triangles
        ta, wa = _fan(ax[:, rest], ay[:, rest])
        tb, wb = _fan(bx[:, rest], by[:, rest])
        w = wa[:, None, :] * wb[None, :, :]  # (ka, kb, R)
        i, j, pair = np.nonzero(w)
        area = _convex_areas(ta[0][:, i, pair], ta[1][:, i, pair],
                             tb[0][:, j, pair], tb[1][:, j, pair])
        out[rest] = np.bincount(pair, weights=w[i, j, pair] * area,
                                minlength=rest.size) * sign[rest]
    return out


def convex_rings(rings: np.ndarray) -> np.ndarray:
    """Whether each ring ``(n, k, 2)`` is strictly convex (every turn the same way, none
    straight): then simple, and its intersection with anything at most its area.

    Examples
    --------
    >>> square, bow_tie = [[0., 0], [2, 0], [2, 2], [0, 2]], [[0., 0], [2, 2], [2, 0], [0, 2]]
    >>> convex_rings(np.array([square, bow_tie])).tolist()
    [True, False]
    """
    r = np.asarray(rings, dtype=float)
    return _convex_turn(*_vertex_major(r)) != 0 if r.shape[0] else np.zeros(0, dtype=bool)


def _convex_turn(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """+1 (counter-clockwise) or -1 (clockwise) for strictly convex rings, else 0."""
    ex, ey = _next(x) - x, _next(y) - y
    turn = ex * _next(ey) - ey * _next(ex)
    return 1.0 * (turn > 0).all(axis=0) - 1.0 * (turn < 0).all(axis=0)


def _counter_clockwise(x: np.ndarray, y: np.ndarray, flip: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    x, y = x.copy(), y.copy()
    x[:, flip], y[:, flip] = x[::-1, flip], y[::-1, flip]
    return x, y


def _fan(x: np.ndarray, y: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """The fan of triangles ``(r₀, rᵢ, rᵢ₊₁)`` of each ring, as ``(3, k − 2, P)`` ``x`` and
    ``y``, each turned counter-clockwise, and its orientation's sign ``(k − 2, P)``
    (0 for a degenerate triangle)."""
    k = x.shape[0]
    tx = np.stack([np.broadcast_to(x[:1], (k - 2, x.shape[1])), x[1:-1], x[2:]])
    ty = np.stack([np.broadcast_to(y[:1], (k - 2, y.shape[1])), y[1:-1], y[2:]])
    sign = np.sign((tx[1] - tx[0]) * (ty[2] - ty[0]) - (ty[1] - ty[0]) * (tx[2] - tx[0]))
    back = sign < 0
    tx[1], tx[2] = np.where(back, tx[2], tx[1]), np.where(back, tx[1], tx[2])
    ty[1], ty[2] = np.where(back, ty[2], ty[1]), np.where(back, ty[1], ty[2])
    return (tx, ty), sign


def convex_intersection_areas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``|a[k] ∩ b[k]|`` for strictly convex counter-clockwise rings (Green's theorem).

    Examples
    --------
    >>> t = np.array([[[0., 0], [4, 0], [0, 4]]])
    >>> convex_intersection_areas(t, t).tolist(), convex_intersection_areas(t, t + 2).tolist()
    ([8.0], [0.0])
    """
    return _convex_areas(*_vertex_major(np.asarray(a, dtype=float)),
                         *_vertex_major(np.asarray(b, dtype=float)))


def _convex_areas(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray
                  ) -> np.ndarray:
    return 0.5 * (_inside_edges(ax, ay, bx, by, shared=True)
                  + _inside_edges(bx, by, ax, ay, shared=False))


def _inside_edges(sx: np.ndarray, sy: np.ndarray, cx: np.ndarray, cy: np.ndarray,
                  shared: bool) -> np.ndarray:
    """``Σ (t₁ − t₀) (p × d)`` over the edges ``p + t d`` of ring ``s``, clipped to ring ``c``
    (vertex-major ``(k, P)`` coordinates).

    An edge lying on an edge of ``c`` is inside when ``shared`` and both point the
    same way (the interiors are on one side), else outside.
    """
    dx, dy = _next(sx) - sx, _next(sy) - sy
    ex, ey = _next(cx) - cx, _next(cy) - cy
    total = np.zeros(sx.shape[1])
    for i in range(sx.shape[0]):  # the edges of s (3 or 4), each against every half-plane
        # inside the half-plane left of edge j of c: num + t·den >= 0
        num = ex * (sy[i] - cy) - ey * (sx[i] - cx)
        den = ex * dy[i] - ey * dx[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = -num / den
            # masks by multiplication (masked selection is slow on random masks); a
            # parallel edge's t is ±inf or NaN, and inf·0 = NaN is skipped by fmax / fmin
            lo = np.fmax(np.fmax.reduce(t * (den > 0), axis=0), 0.0)
            hi = np.fmin(np.fmin.reduce(t * (den < 0) + (den >= 0), axis=0), 1.0)
        flat = den == 0
        if shared:
            out = flat & ((num < 0) | ((num == 0) & ((ex * dx[i] + ey * dy[i]) <= 0)))
        else:
            out = flat & (num <= 0)
        length = np.maximum(hi - lo, 0.0) * ~out.any(axis=0)
        total += length * (sx[i] * dy[i] - sy[i] * dx[i])
    return total


# --- polygons of any size: trapezoids ---------------------------------------------------

#: Rounding bound of :func:`polygon_intersection_areas`, per unit of its terms' sizes.
TRAPEZOID_ROUNDING = 1e-10


def polygon_intersection_areas(a: np.ndarray, b: np.ndarray, b_index: np.ndarray
                               ) -> tuple[np.ndarray, np.ndarray]:
    """``|a[k] ∩ b[b_index[k]]|`` for polygons of any size (holes, several parts), and a
    bound of its rounding error.

    By trapezoids: a point lies in a region as many times as the region's edges
    above it cross its vertical, with signs, ``1_A(x, y) = Σ_e w_e [x in e's span,
    y < e(x)]`` (``w_e = ±1``: the edge's direction in ``x``, turned for
    counter-clockwise rings around the region and clockwise ones around holes).
    Below a common ``y₀``, ``|A ∩ B| = Σ_e Σ_f w_e w_f ∫ (min(e(x), f(x)) − y₀) dx``
    over the common span of each edge ``e`` of ``A`` and ``f`` of ``B``: a
    piecewise-linear integral in closed form, ``∫ min = ∫ (e + f) / 2 − ∫ |e − f| / 2``.
    Only edges whose spans meet are paired. Vertical edges add nothing.

    Parameters
    ----------
    a, b : numpy.ndarray
        Shapely polygons or multipolygons.
    b_index : numpy.ndarray
        ``(len(a),)`` the ``b`` that each ``a`` meets.

    Returns
    -------
    area : numpy.ndarray
        ``(len(a),)`` intersection areas (floating point: not GEOS's bits).
    error : numpy.ndarray
        ``(len(a),)`` a bound of ``|area − exact area|`` (:data:`TRAPEZOID_ROUNDING`
        times the sum of the terms' sizes, generous by several orders of magnitude;
        infinite where a ring is too flat for its orientation to be sure).

    Examples
    --------
    >>> import shapely
    >>> sq = shapely.box(0, 0, 2, 2)
    >>> area, error = polygon_intersection_areas(
    ...     np.array([sq, shapely.box(1, 1, 3, 3)]), np.array([sq.difference(
    ...         shapely.box(0.5, 0.5, 1.5, 1.5))]), np.array([0, 0]))
    >>> np.round(area, 12).tolist(), bool((error < 1e-6).all())
    ([3.0, 0.75], True)
    """
    import shapely

    n = len(a)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    ea, eb = _Edges(a), _Edges(b)
    bounds = shapely.bounds(a)
    ax0, ay0, ax1 = bounds[:, 0], bounds[:, 1], bounds[:, 2]
    # b's edges across the span of each a, but those below it: at each x, a's edges
    # add up to no sign, so an edge of b below all of them adds nothing
    first = np.searchsorted(eb.owner, np.arange(len(b) + 1))
    k, f = expand(np.arange(n), first[b_index], first[b_index + 1])
    keep = (eb.lo[f] < ax1[k]) & (eb.hi[f] > ax0[k]) & (eb.top[f] > ay0[k])
    k, f = k[keep], f[keep]
    # a common floor per a: its lowest point and its b edges'
    y0 = ay0.copy()
    np.minimum.at(y0, k, eb.bottom[f])
    # every a edge against every kept b edge of its a
    first = np.searchsorted(k, np.arange(n + 1))
    e, j = expand(np.arange(ea.owner.size), first[ea.owner], first[ea.owner + 1])
    f = f[j]
    xl, xr = np.maximum(ea.lo[e], eb.lo[f]), np.minimum(ea.hi[e], eb.hi[f])
    keep = np.flatnonzero(xl < xr)
    e, f, xl, xr = e[keep], f[keep], xl[keep], xr[keep]
    own = ea.owner[e]
    floor = y0[own]
    el, er = ea.at(e, xl) - floor, ea.at(e, xr) - floor
    fl, fr = eb.at(f, xl) - floor, eb.at(f, xr) - floor
    width = xr - xl
    dl, dr = el - fl, er - fr
    adl, adr = np.abs(dl), np.abs(dr)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(dl * dr >= 0, (adl + adr) / 2, (dl * dl + dr * dr) / (2 * (adl + adr)))
    term = width * ((el + er + fl + fr) / 4 - gap / 2)
    size = width * (np.abs(el) + np.abs(er) + np.abs(fl) + np.abs(fr) + 4 * np.abs(floor)
                    + 1.0)
    area = np.bincount(own, weights=ea.w[e] * eb.w[f] * term, minlength=n).astype(float)
    error = TRAPEZOID_ROUNDING * np.bincount(own, weights=size, minlength=n).astype(float)
    error[ea.doubtful | eb.doubtful[b_index]] = np.inf
    return area, error


class _Edges:
    """The non-vertical edges of polygons (or multipolygons), sorted by owner: ends
    ``(x1, y1)``, ``(x2, y2)``, span ``lo``–``hi`` in x, ``bottom`` and ``top`` in y,
    trapezoid sign ``w``; ``doubtful`` owners have a ring too flat for its
    orientation to be sure."""

    def __init__(self, polys: np.ndarray) -> None:
        import shapely

        n = len(polys)
        parts, owner = shapely.get_parts(polys, return_index=True)
        rings, part = shapely.get_rings(parts, return_index=True)
        n_rings = rings.size
        ring_owner = owner[part]
        shell = np.r_[True, part[1:] != part[:-1]]
        xy, ring = shapely.get_coordinates(rings, return_index=True)
        ring_off = np.searchsorted(ring, np.arange(n_rings + 1))
        x, y = xy[:, 0], xy[:, 1]
        seg = np.flatnonzero(ring[1:] == ring[:-1])
        # each ring's orientation: shoelace about its first vertex
        ox, oy = x[ring_off[:-1]][ring[seg]], y[ring_off[:-1]][ring[seg]]
        cross = (x[seg] - ox) * (y[seg + 1] - oy) - (x[seg + 1] - ox) * (y[seg] - oy)
        twice = np.bincount(ring[seg], weights=cross, minlength=n_rings)
        size = np.bincount(ring[seg], weights=np.abs(cross), minlength=n_rings)
        flat = np.abs(twice) <= 1e-9 * size
        self.doubtful = np.zeros(n, dtype=bool)
        self.doubtful[ring_owner[flat & (size > 0)]] = True
        ring_w = np.where(twice > 0, -1.0, 1.0) * np.where(shell, 1.0, -1.0)
        seg = seg[x[seg] != x[seg + 1]]
        self.owner = ring_owner[ring[seg]]
        self.x1, self.y1, self.x2, self.y2 = x[seg], y[seg], x[seg + 1], y[seg + 1]
        self.w = np.where(self.x2 > self.x1, 1.0, -1.0) * ring_w[ring[seg]]
        self.lo, self.hi = np.minimum(self.x1, self.x2), np.maximum(self.x1, self.x2)
        self.bottom, self.top = np.minimum(self.y1, self.y2), np.maximum(self.y1, self.y2)

    def at(self, i: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``y`` of edges ``i`` at ``x`` (within their spans)."""
        x1, y1 = self.x1[i], self.y1[i]
        return y1 + (self.y2[i] - y1) * ((x - x1) / (self.x2[i] - x1))
