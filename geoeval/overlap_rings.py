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
"""

from __future__ import annotations

import numpy as np

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
