"""Areas of unions: how objects that overlap others of their own side count.

The measures of Özdemir et al. (2010) and Hoover et al. (1996) were written for
segmentations, where the objects of one side never overlap each other; there a
sum of overlaps ``Σ_j C_ij`` is the area of ``R_i ∩ (O_1 ∪ … ∪ O_k)`` and a sum
of areas ``Σ_j |O_j|`` the area of ``O_1 ∪ … ∪ O_k``. Vector layers and boxes
can hold duplicated or overlapping objects, and then the sums count the shared
area twice (a duplicated polygon gave a Hoover score of 1.17 and BGM scores
reached 2). geoeval therefore takes every area inside a score as the area of a
point set: a point covered by several objects of one side counts **once**.
When no two objects of a side overlap (every raster, every partition) the
unions equal the sums and nothing changes.

The unions are computed only where they differ from the sums: objects that
share area with another object of their own side are found once per object set
(:attr:`ObjectSet.self_overlaps`, an STRtree self-query, cached), and only the
groups holding two such overlapping items are united (``shapely.union_all``, grouped by padding).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap, grouped_union_area
from geoeval.sums import ExactSum, exact_sum
from geoeval.thresholds import pixel_counts


def overlapping_objects(objects: ObjectSet) -> np.ndarray:
    """Which objects share a positive area with another object of the same set.

    Parameters
    ----------
    objects : ObjectSet

    Returns
    -------
    numpy.ndarray of bool
        One flag per object, from :attr:`ObjectSet.self_overlaps` (cached on the
        object set, so the overlap stage and every matcher share one self-query).
        All false for a labelled raster and for sets of fewer than two objects;
        objects that only touch are not flagged.
    """
    flags = np.zeros(len(objects), dtype=bool)
    a, b = objects.self_overlaps
    flags[a] = True
    flags[b] = True
    return flags


def union_areas(
    areas: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    suspect: np.ndarray,
    geometries: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """Area of the union of the items of each group.

    Parameters
    ----------
    areas : numpy.ndarray
        Area of each item.
    group : numpy.ndarray of int
        Group of each item, in ``0..n_groups-1``.
    n_groups : int
    suspect : numpy.ndarray of bool
        Items that may share area with another item; the others never do.
    geometries : callable
        ``geometries(index)`` returns the shapely geometries of the items at
        ``index`` (called once, for suspect items only).

    Returns
    -------
    numpy.ndarray
        ``|∪ items of g|`` for every group ``g``: the sum of the areas of its
        items, except that the items overlapping another item of the same group
        are replaced by the area of their union.
    """
    areas = np.asarray(areas, dtype=float)
    group = np.asarray(group, dtype=np.int64)
    plain, united = _split_unions(areas, group, n_groups, suspect, geometries)
    out = np.bincount(group[plain], weights=areas[plain], minlength=n_groups)
    return out if united is None else out + united


def union_total(areas: np.ndarray, suspect: np.ndarray,
                geometries: Callable[[np.ndarray], np.ndarray],
                unit: float | None = None) -> ExactSum:
    """:func:`union_areas` of one group holding every item, as an exact sum
    (:mod:`geoeval.sums`; ``unit``: the areas are whole pixels of that area)."""
    areas = np.asarray(areas, dtype=float)
    group = np.zeros(areas.size, np.int64)
    plain, united = _split_unions(areas, group, 1, suspect, geometries, clusters=True)
    total = exact_sum(areas[plain], unit)
    return total if united is None else total + exact_sum(united)


def _split_unions(areas: np.ndarray, group: np.ndarray, n_groups: int, suspect: np.ndarray,
                  geometries: Callable[[np.ndarray], np.ndarray], clusters: bool = False
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    """The items that share no area with another item of their group (their areas add
    up), and per group the area of the union of the others (``None`` when there are
    none); with ``clusters``, the area of each cluster of items sharing area instead
    (items connected by shared area): a cluster lies inside one overlap component, so
    its union is the same whichever part of a scene it is computed in."""
    import shapely

    plain = np.ones(areas.size, dtype=bool)
    s = np.flatnonzero(suspect)
    if s.size < 2:
        return plain, None
    geoms = np.asarray(geometries(s), dtype=object)
    a, b = shapely.STRtree(geoms).query(geoms, predicate="intersects")
    keep = (a < b) & (group[s[a]] == group[s[b]])
    a, b = a[keep], b[keep]
    if a.size:
        shared = shapely.area(shapely.intersection(geoms[a], geoms[b])) > 0
        a, b = a[shared], b[shared]
    if a.size == 0:
        return plain, None
    involved = np.unique(np.concatenate([a, b]))  # positions into s
    plain[s[involved]] = False
    if clusters:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n = s.size
        _, label = connected_components(coo_matrix((np.ones(a.size, np.int8), (a, b)),
                                                   shape=(n, n)), directed=False)
        _, cluster = np.unique(label[involved], return_inverse=True)
        return plain, grouped_union_area(geoms[involved], cluster, int(cluster.max()) + 1)
    return plain, grouped_union_area(geoms[involved], group[s[involved]], n_groups)


def pair_union_areas(
    overlap: Overlap, edges: np.ndarray, group: np.ndarray, n_groups: int
) -> np.ndarray:
    """Area of ``∪ (R_i ∩ O_j)`` over the pairs of each group.

    Parameters
    ----------
    overlap : Overlap
    edges : numpy.ndarray of int
        Indices of pairs (into ``overlap.rows``/``cols``/``values``).
    group : numpy.ndarray of int
        Group of each of those pairs.
    n_groups : int

    Returns
    -------
    numpy.ndarray
        For a star (one centre, its leaves) this is ``|centre ∩ ∪ leaves|``;
        it equals ``Σ C_ij`` unless objects of one side of the group overlap.
    """
    edges = np.asarray(edges, dtype=np.int64)
    suspect, pieces = _pair_pieces(overlap, edges)
    if overlap.pixel_area is not None and not suspect.any():  # whole pixels, counted
        counts = pixel_counts(overlap.values[edges], overlap.pixel_area)
        return np.bincount(group, weights=counts, minlength=n_groups) * overlap.pixel_area
    return union_areas(overlap.values[edges], group, n_groups, suspect, pieces)


def pair_union_total(overlap: Overlap, edges: np.ndarray) -> ExactSum:
    """Area of ``∪ (R_i ∩ O_j)`` over the pairs ``edges``, as an exact sum (whole pixels
    on a label grid, multiplied by the pixel area once): the matched area of a
    matching, the same whatever the order of its pairs or the parts it was solved in."""
    edges = np.asarray(edges, dtype=np.int64)
    suspect, pieces = _pair_pieces(overlap, edges)
    return union_total(overlap.values[edges], suspect, pieces, overlap.pixel_area)


def _pair_pieces(overlap: Overlap, edges: np.ndarray
                 ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Which pairs of ``edges`` may share area with another (an object of theirs overlaps
    one of its own side), and the intersections of pairs by position in ``edges``."""
    import shapely

    rows, cols = overlap.rows[edges], overlap.cols[edges]
    suspect = (overlapping_objects(overlap.reference)[rows]
               | overlapping_objects(overlap.submission)[cols])

    def pieces(index: np.ndarray) -> np.ndarray:
        return shapely.intersection(overlap.reference.polygons[rows[index]],
                                    overlap.submission.polygons[cols[index]])

    return suspect, pieces


def object_union_areas(
    objects: ObjectSet, index: np.ndarray, group: np.ndarray, n_groups: int
) -> np.ndarray:
    """Area of the union of the objects ``index`` of each group (``|∪ O_j|``)."""
    index = np.asarray(index, dtype=np.int64)
    return union_areas(objects.areas[index], group, n_groups,
                       overlapping_objects(objects)[index],
                       lambda k: objects.polygons[index[k]])
