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
    import shapely

    areas = np.asarray(areas, dtype=float)
    group = np.asarray(group, dtype=np.int64)
    s = np.flatnonzero(suspect)
    if s.size < 2:
        return np.bincount(group, weights=areas, minlength=n_groups)
    geoms = np.asarray(geometries(s), dtype=object)
    a, b = shapely.STRtree(geoms).query(geoms, predicate="intersects")
    keep = (a < b) & (group[s[a]] == group[s[b]])
    a, b = a[keep], b[keep]
    if a.size:
        shared = shapely.area(shapely.intersection(geoms[a], geoms[b])) > 0
        a, b = a[shared], b[shared]
    if a.size == 0:
        return np.bincount(group, weights=areas, minlength=n_groups)
    involved = np.unique(np.concatenate([a, b]))  # positions into s
    plain = np.ones(areas.size, dtype=bool)
    plain[s[involved]] = False
    out = np.bincount(group[plain], weights=areas[plain], minlength=n_groups)
    return out + grouped_union_area(geoms[involved], group[s[involved]], n_groups)


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
    import shapely

    edges = np.asarray(edges, dtype=np.int64)
    rows, cols = overlap.rows[edges], overlap.cols[edges]
    suspect = (overlapping_objects(overlap.reference)[rows]
               | overlapping_objects(overlap.submission)[cols])

    def pieces(index: np.ndarray) -> np.ndarray:
        return shapely.intersection(overlap.reference.polygons[rows[index]],
                                    overlap.submission.polygons[cols[index]])

    return union_areas(overlap.values[edges], group, n_groups, suspect, pieces)


def object_union_areas(
    objects: ObjectSet, index: np.ndarray, group: np.ndarray, n_groups: int
) -> np.ndarray:
    """Area of the union of the objects ``index`` of each group (``|∪ O_j|``)."""
    index = np.asarray(index, dtype=np.int64)
    return union_areas(objects.areas[index], group, n_groups,
                       overlapping_objects(objects)[index],
                       lambda k: objects.polygons[index[k]])
