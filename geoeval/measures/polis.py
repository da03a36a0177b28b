"""The PoLiS distance between polygons (Avbelj, Müller and Bamler 2015, "A metric
for polygon comparison and building extraction evaluation", IEEE GRSL 12(1),
170–174, eq. 1).

    p(A, B) = 1/(2q) Σ_{a ∈ V(A)} min_{b ∈ ∂B} ‖a − b‖ + 1/(2r) Σ_{b ∈ V(B)} min_{a ∈ ∂A} ‖b − a‖

with ``V(A)`` the ``q`` vertices of ``A`` (each ring's closing vertex counted
once, holes included) and ``∂B`` the boundary of ``B``. Vertices on a straight
edge (collinear, as a pixel-edge vectorisation leaves them) are not corners and
are dropped first (``shapely.simplify`` with tolerance 0), so a polygon's
vertices are its corners whichever way it was drawn. Columnar: every vertex of
every pair in one ``shapely.distance`` call (per thread of
:func:`geoeval.parallel.chunked`), summed per pair with ``np.bincount``.

The implementation the building-extraction papers run (``PolisEval`` of HiSup,
Xu et al. 2023, after spgriffin/polis) differs in two ways, both available as
parameters: every vertex as written counts (``corners=False``), and each side's
sum is divided by ``2(q + 1)`` instead of ``2q`` (``closing_vertex=True``: the
ring's closing vertex is left out of the sum but counted in the denominator).
See :mod:`geoeval.challenges.crowdai_polygons`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely


def vertices(geoms: np.ndarray, corners: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Vertex coordinates of every geometry and the geometry each belongs to.

    Each ring's closing vertex is counted once (exterior and interior rings of
    every part of a MultiPolygon); with ``corners`` (default) collinear vertices
    are dropped first, otherwise every vertex as written counts (repeated ones
    too).
    """
    geoms = np.asarray(geoms, dtype=object)
    if corners:
        geoms = shapely.simplify(geoms, 0.0)
    parts, part_owner = shapely.get_parts(geoms, return_index=True)
    rings, ring_part = shapely.get_rings(parts, return_index=True)
    coords, coord_ring = shapely.get_coordinates(rings, return_index=True)
    closing = np.r_[coord_ring[1:] != coord_ring[:-1], True] if coord_ring.size else \
        np.zeros(0, bool)
    owner = part_owner[ring_part[coord_ring]]
    return coords[~closing], owner[~closing]


def polis(a: np.ndarray, b: np.ndarray, *, corners: bool = True,
          closing_vertex: bool = False) -> np.ndarray:
    """PoLiS distance of each pair ``(a[k], b[k])`` (CRS units); NaN where one is empty.

    Parameters
    ----------
    a, b : numpy.ndarray of shapely (Multi)Polygons, same length
    corners : bool
        Drop collinear vertices first (default); ``False`` counts every vertex
        as written.
    closing_vertex : bool
        Divide each side's sum by ``2(q + 1)`` instead of ``2q``, as HiSup's
        ``PolisEval`` does (its divisor is the length of the closed coordinate
        sequence); the sums are added in vertex order, as there.

    Returns
    -------
    numpy.ndarray of float

    Examples
    --------
    >>> import shapely
    >>> a, b = shapely.box(0, 0, 2, 2), shapely.box(0, 0, 2, 3)
    >>> polis(np.array([a]), np.array([b])).tolist()   # (0 + 0 + 0 + 0)/8 + (0 + 0 + 1 + 1)/8
    [0.25]
    >>> polis(np.array([a]), np.array([b]), corners=False, closing_vertex=True).tolist()
    [0.2]
    """
    from functools import partial

    from geoeval.parallel import chunked

    return chunked(partial(_polis, corners=corners, closing_vertex=closing_vertex),
                   np.asarray(a, dtype=object), np.asarray(b, dtype=object))


def _polis(a: np.ndarray, b: np.ndarray, corners: bool = True,
           closing_vertex: bool = False) -> np.ndarray:
    n = a.shape[0]
    ta, qa = _one_way(a, b, n, corners)
    tb, qb = _one_way(b, a, n, corners)
    with np.errstate(invalid="ignore", divide="ignore"):
        if closing_vertex:
            out = ta / (2.0 * (qa + 1)) + tb / (2.0 * (qb + 1))
        else:
            out = 0.5 * (ta / qa) + 0.5 * (tb / qb)
    return np.where((qa > 0) & (qb > 0), out, np.nan)


def _one_way(a: np.ndarray, b: np.ndarray, n: int,
             corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """Summed distance of the vertices of ``a[k]`` to the boundary of ``b[k]``
    (in vertex order), and their number."""
    coords, owner = vertices(a, corners)
    dist = shapely.distance(shapely.points(coords), shapely.boundary(b)[owner])
    return np.bincount(owner, weights=dist, minlength=n), np.bincount(owner, minlength=n)


def polis_measure(overlap: Any, pairs: dict[str, tuple[np.ndarray, np.ndarray]],
                  **_: Any) -> Any:
    """The registry's entry point (:mod:`geoeval.measures.geometry`): PoLiS of each
    matcher's one-to-one pairs."""
    from geoeval.measures.geometry import PairsByMatcher, PairValues

    rg, sg = overlap.reference.polygons, overlap.submission.polygons
    return PairsByMatcher({n: PairValues(r, s, polis(rg[r], sg[s])) for n, (r, s) in
                           pairs.items()}, overlap.reference.ids, overlap.submission.ids)


def table_rows(entry: dict[str, Any]) -> list[tuple[str, str, Any, Any, Any]]:
    """The terminal table's rows of the report's ``polis`` entry: one per matcher."""
    return [("PoLiS", m, v["mean"], v["median"], v["pairs"]) for m, v in entry.items()]
