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
"""

from __future__ import annotations

import numpy as np
import shapely


def vertices(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Corner coordinates of every geometry and the geometry each belongs to.

    Collinear vertices are dropped, and each ring's closing vertex is counted
    once (exterior and interior rings of every part of a MultiPolygon).
    """
    geoms = shapely.simplify(np.asarray(geoms, dtype=object), 0.0)
    parts, part_owner = shapely.get_parts(geoms, return_index=True)
    rings, ring_part = shapely.get_rings(parts, return_index=True)
    coords, coord_ring = shapely.get_coordinates(rings, return_index=True)
    closing = np.r_[coord_ring[1:] != coord_ring[:-1], True] if coord_ring.size else \
        np.zeros(0, bool)
    owner = part_owner[ring_part[coord_ring]]
    return coords[~closing], owner[~closing]


def polis(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PoLiS distance of each pair ``(a[k], b[k])`` (CRS units); NaN where one is empty.

    Parameters
    ----------
    a, b : numpy.ndarray of shapely (Multi)Polygons, same length

    Returns
    -------
    numpy.ndarray of float
    """
    from geoeval.parallel import chunked

    return chunked(_polis, np.asarray(a, dtype=object), np.asarray(b, dtype=object))


def _polis(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = a.shape[0]
    return 0.5 * _one_way(a, b, n) + 0.5 * _one_way(b, a, n)


def _one_way(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """Mean distance of the vertices of ``a[k]`` to the boundary of ``b[k]``."""
    coords, owner = vertices(a)
    dist = shapely.distance(shapely.points(coords), shapely.boundary(b)[owner])
    q = np.bincount(owner, minlength=n)
    total = np.bincount(owner, weights=dist, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(q > 0, total / np.maximum(q, 1), np.nan)
