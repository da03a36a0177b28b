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
(an STRtree self-query, cached), and only the groups holding two such
overlapping items are united (``shapely.union_all``, grouped by padding).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap

# id(object set) -> (weak reference to it, its "overlaps another object" mask)
_FLAGS: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def overlapping_objects(objects: ObjectSet) -> np.ndarray:
    """Which objects share a positive area with another object of the same set.

    Parameters
    ----------
    objects : ObjectSet

    Returns
    -------
    numpy.ndarray of bool
        One flag per object. All false for a labelled raster (one label per
        pixel) and for sets of fewer than two objects. Objects that only touch
        (shared edges or corners, zero area) are not flagged.

    Notes
    -----
    Cached per object set (it is immutable), so the matchers of one run share
    one STRtree self-query.
    """
    key = id(objects)
    hit = _FLAGS.get(key)
    if hit is not None and hit[0]() is objects:
        return hit[1]
    flags = _overlapping(objects)
    try:
        ref = weakref.ref(objects, lambda _r, k=key: _FLAGS.pop(k, None))
    except TypeError:  # not weak-referenceable: compute every time
        return flags
    _FLAGS[key] = (ref, flags)
    return flags


def _overlapping(objects: ObjectSet) -> np.ndarray:
    import shapely

    n = len(objects)
    flags = np.zeros(n, dtype=bool)
    if n < 2 or objects.grid is not None:
        return flags
    geoms = objects.polygons
    a, b = shapely.STRtree(geoms).query(geoms, predicate="intersects")
    keep = a < b
    a, b = a[keep], b[keep]
    if a.size == 0:
        return flags
    shared = shapely.area(shapely.intersection(geoms[a], geoms[b])) > 0
    flags[a[shared]] = True
    flags[b[shared]] = True
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
    return out + _grouped_union_area(geoms[involved], group[s[involved]], n_groups)


def _grouped_union_area(geoms: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """``|∪ geoms of g|`` per group, with one ``union_all`` call per power-of-two group size.

    Groups are padded with ``None`` (ignored by ``shapely.union_all``) to the next
    power of two of their size, so the padding at most doubles the array and the
    Python loop runs over size classes, not over groups.
    """
    import shapely

    out = np.zeros(n_groups)
    order = np.argsort(group, kind="stable")
    g_sorted, geoms = group[order], geoms[order]
    uniq, start, count = np.unique(g_sorted, return_index=True, return_counts=True)
    width = 1 << np.ceil(np.log2(count)).astype(np.int64)
    for w in np.unique(width).tolist():
        sel = np.flatnonzero(width == w)
        col = np.arange(w)
        valid = col[None, :] < count[sel, None]
        table = np.full((sel.size, w), None, dtype=object)
        table[valid] = geoms[(start[sel, None] + col[None, :])[valid]]
        out[uniq[sel]] = shapely.area(shapely.union_all(table, axis=1))
    return out


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
