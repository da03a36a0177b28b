"""Sparse overlap between reference and submission objects, and its components.

``C_ij = |R_i ∩ O_j|`` (Özdemir et al. 2010, §4) is built

* from label co-occurrence when both inputs are labelled rasters on one grid
  (a joint histogram of the pixels where both sides hold an object), or
* from an R-tree (shapely's STRtree) and vectorised polygon intersections
  otherwise (vector layers, boxes, a raster against a vector layer: the raster
  is vectorised along pixel edges so its areas are exact).

Never as a dense ``Nr × No`` array. This module also holds the vectorised box
IoU that every box challenge uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from geoeval import parallel
from geoeval.grid import label_index
from geoeval.objects import ObjectSet, box_area, check_boxes
from geoeval.parallel import chunked
from geoeval.sums import ExactSum, exact_sum
from geoeval.thresholds import above, at_least, pixel_counts


@dataclass(frozen=True)
class Overlap:
    """The sparse overlap matrix ``C`` and object areas.

    Attributes
    ----------
    reference, submission : ObjectSet
    rows, cols : numpy.ndarray
        Reference and submission *indices* of every pair with ``C_ij > 0``,
        sorted by (row, col).
    values : numpy.ndarray
        ``C_ij`` of each pair (square CRS units).
    union : ExactSum
        Area of the union of all objects of both sides (``|I| − C_00`` for
        rasters), the denominator of the BGM score, as an exact sum
        (:mod:`geoeval.sums`; a float given is taken as it is): :attr:`union_area`
        is it rounded once.
    method : str
        ``co-occurrence`` or ``rtree``.
    pixel_area : float or None
        The area of one pixel when every area here is a whole number of pixels of
        one grid (both sides labelled rasters on it: ``co-occurrence``); threshold
        decisions are then taken on integer pixel counts
        (:mod:`geoeval.thresholds`). ``None`` otherwise.
    """

    reference: ObjectSet
    submission: ObjectSet
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    union: Any
    method: str
    pixel_area: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.union, ExactSum):
            object.__setattr__(self, "union", exact_sum([self.union], self.pixel_area))

    @property
    def union_area(self) -> float:
        """:attr:`union`, rounded once."""
        return float(self.union)

    def area_sum(self, areas: Any) -> ExactSum:
        """The exact sum of ``areas`` of this overlap (whole pixels on a label grid:
        :func:`geoeval.sums.exact_sum`)."""
        return exact_sum(areas, self.pixel_area)

    @property
    def area_total(self) -> ExactSum:
        """Every object's area minus every pair's overlap, exactly: the union when no
        two objects of one side share area (:attr:`union_is_sum`)."""
        return (self.area_sum(self.ref_area) + self.area_sum(self.sub_area)
                - self.area_sum(self.values))

    def __repr__(self) -> str:
        from geoeval.reprs import counted

        return (f"<Overlap {counted(self.n_pairs, 'pair')} of {self.n_reference} reference and "
                f"{self.n_submission} submitted objects ({self.method})>")

    @property
    def n_reference(self) -> int:
        return len(self.reference)

    @property
    def n_submission(self) -> int:
        return len(self.submission)

    @property
    def n_pairs(self) -> int:
        return int(self.values.size)

    @property
    def ref_area(self) -> np.ndarray:
        return self.reference.areas

    @property
    def sub_area(self) -> np.ndarray:
        return self.submission.areas

    def in_decision_units(self, area: np.ndarray) -> np.ndarray:
        """Areas as the solvers and tie-breaks see them: whole pixel counts on a
        label grid (:attr:`pixel_area` set), so that no choice among equal options
        depends on the pixel size; the areas themselves otherwise."""
        if self.pixel_area is None:
            return np.asarray(area, dtype=float)
        return pixel_counts(area, self.pixel_area).astype(float)

    @cached_property
    def weights(self) -> np.ndarray:
        """``C_ij`` in decision units (:meth:`in_decision_units`): the weights of the
        assignment and MOM solvers."""
        return self.in_decision_units(self.values)

    @cached_property
    def pair_union(self) -> np.ndarray:
        """``|R_i ∪ O_j| = |R_i| + |O_j| − C_ij`` of every pair."""
        return self.ref_area[self.rows] + self.sub_area[self.cols] - self.values

    @cached_property
    def iou(self) -> np.ndarray:
        """Intersection over union of every pair (:func:`iou_from_union`).

        On a label grid (:attr:`pixel_area` set) it is the ratio of the integer
        pixel counts, so it does not depend on the pixel size.
        """
        if self.pixel_area is not None:
            return iou_from_union(pixel_counts(self.values, self.pixel_area),
                                  pixel_counts(self.pair_union, self.pixel_area))
        return iou_from_union(self.values, self.pair_union)

    def iou_at_least(self, threshold: float) -> np.ndarray:
        """``IoU ≥ threshold`` of each pair (:func:`geoeval.thresholds.at_least`)."""
        return at_least(self.values, self.pair_union, threshold, unit=self.pixel_area)

    def iou_above(self, threshold: float) -> np.ndarray:
        """``IoU > threshold`` of each pair (:func:`geoeval.thresholds.above`)."""
        return above(self.values, self.pair_union, threshold, unit=self.pixel_area)

    def matrix(self):
        """``C`` as a ``scipy.sparse.csr_matrix`` of shape ``(Nr, No)``."""
        from scipy.sparse import csr_matrix

        return csr_matrix(
            (self.values, (self.rows, self.cols)), shape=(self.n_reference, self.n_submission)
        )

    @cached_property
    def _components(self) -> tuple[int, np.ndarray, np.ndarray]:
        return edge_components(self.rows, self.cols, self.n_reference, self.n_submission)

    @property
    def n_components(self) -> int:
        """Components of the bipartite overlap graph that hold at least one pair."""
        if self.n_pairs == 0:
            return 0
        return int(np.count_nonzero(np.bincount(self._components[2])))

    @cached_property
    def union_is_sum(self) -> bool:
        """True when no two objects of one side overlap, so that the union of all
        objects is their total area minus the pairwise overlaps."""
        return same_area(self.area_total, self.union)

    def restrict(self, ri: np.ndarray, si: np.ndarray) -> Overlap:
        """The overlap of the references at ``ri`` and the submissions at ``si``.

        Objects are :meth:`ObjectSet.subset` of both sides, the pairs between
        them are kept and renumbered, and the union area is recomputed (from the
        areas when :attr:`union_is_sum`, else from the geometries). Nothing is
        intersected again.
        """
        ri, si = np.asarray(ri, dtype=np.int64), np.asarray(si, dtype=np.int64)
        ref_pos = np.full(self.n_reference, -1, np.int64)
        ref_pos[ri] = np.arange(ri.size)
        sub_pos = np.full(self.n_submission, -1, np.int64)
        sub_pos[si] = np.arange(si.size)
        keep = (ref_pos[self.rows] >= 0) & (sub_pos[self.cols] >= 0)
        rows, cols, vals = ref_pos[self.rows[keep]], sub_pos[self.cols[keep]], self.values[keep]
        ref, sub = self.reference.subset(ri), self.submission.subset(si)
        if self.union_is_sum:
            union = (self.area_sum(self.ref_area[ri]) + self.area_sum(self.sub_area[si])
                     - self.area_sum(vals))
        else:  # the groups of objects sharing area united, each once (union_area)
            union = union_area(ref, sub, rows, cols, vals, ref.self_overlaps,
                               sub.self_overlaps)
        return Overlap(ref, sub, rows, cols, vals, union, self.method, self.pixel_area)


def same_area(a: Any, b: Any) -> bool:
    """Whether two areas agree to rounding (``1e-9`` relative or absolute): how a union
    is recognised as the sum of the areas (:attr:`Overlap.union_is_sum`)."""
    return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=1e-9))


def compute_overlap(reference: ObjectSet, submission: ObjectSet,
                    counts: Any = None) -> Overlap:
    """Build the sparse overlap of two object sets in one coordinate system.

    Parameters
    ----------
    reference, submission : ObjectSet
        Already in the same CRS (the readers see to that).
    counts : geoeval.io.raster.PairCounts, optional
        Label-pair counts of two rasters counted while reading them
        (:func:`geoeval.io.read_pair_counted`): used instead of reading both again
        when they belong to these grids.

    Returns
    -------
    Overlap

    Notes
    -----
    ``C_ij = |R_i ∩ O_j|`` (Özdemir et al. 2010, §4). Both labelled rasters on
    one grid: joint histogram of the pixels labelled on both sides. Otherwise an
    STRtree query for intersecting pairs and ``shapely.intersection`` areas of
    those pairs only; touching pairs (zero area) are dropped.

    Examples
    --------
    >>> from shapely import box
    >>> ref = ObjectSet.from_geometries([box(0, 0, 2, 2)])
    >>> sub = ObjectSet.from_geometries([box(1, 0, 3, 2), box(5, 5, 6, 6)])
    >>> ov = compute_overlap(ref, sub)
    >>> ov.rows.tolist(), ov.cols.tolist(), ov.values.tolist(), ov.union_area
    ([0], [0], [2.0], 7.0)
    """
    rg, sg = reference.grid, submission.grid
    if rg is not None and sg is not None and rg.same_grid(sg):
        return _cooccurrence(reference, submission, counts)
    return _vector_overlap(reference, submission)


def _cooccurrence(reference: ObjectSet, submission: ObjectSet, counts: Any = None) -> Overlap:
    """The joint histogram of two label grids on one grid: read window by window
    when both come from files (bounded memory; counted while reading when the
    reader scanned them together), else of the arrays in memory."""
    from geoeval.io.windowed import scan, scan_labels

    rg, sg = reference.grid, submission.grid
    assert rg is not None and sg is not None
    if not rg.in_memory and not sg.in_memory:
        if counts is not None and counts.belong_to(rg, sg):  # counted while reading
            found = counts.scan
        else:
            found = scan([rg.source, sg.source], per_label=False)  # the readers have those
    else:
        found = scan_labels([rg.labels, sg.labels], [rg.background, sg.background],
                            per_label=False)
    return overlap_from_scan(reference, submission, found)


def overlap_from_scan(reference: ObjectSet, submission: ObjectSet, found: Any) -> Overlap:
    """The ``co-occurrence`` overlap from label-pair counts (a
    :class:`geoeval.io.windowed.Scan` of the two grids): ``C_ij`` = pixels labelled
    ``i`` and ``j`` × pixel area (Özdemir et al. 2010, §4), the union = pixels
    labelled on either side × pixel area. Pairs come sorted by label, hence by
    (row, col)."""
    assert reference.grid is not None
    pa = reference.grid.pixel_area
    a, b = found.pair_a, found.pair_b
    assert a is not None and b is not None and found.pair_counts is not None
    rows = label_index(reference.ids, a).astype(np.int64)
    cols = label_index(submission.ids, b).astype(np.int64)
    return Overlap(reference, submission, rows, cols,
                   found.pair_counts.astype(float) * pa, ExactSum(int(found.union), pa),
                   "co-occurrence", pa)


def _vector_overlap(reference: ObjectSet, submission: ObjectSet) -> Overlap:
    rows, cols, vals = overlap_pairs(reference.polygons, submission.polygons,
                                     submission.strtree)
    order = np.lexsort((cols, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    total = _union_area(reference, submission, rows, cols, vals)
    return Overlap(reference, submission, rows, cols, vals.astype(float), total, "rtree")


def overlap_pairs(query: np.ndarray, tree: np.ndarray, index: Any = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair ``(i, j)`` of ``query[i]`` and ``tree[j]`` sharing a positive area.

    The one kernel of the vector overlap: an STRtree over ``tree`` queried with
    ``query`` ("intersects"), ``shapely.area(shapely.intersection(...))`` of
    those candidates, touching pairs (zero area) dropped. The in-memory engine
    runs it on whole layers, the Dask engine (:mod:`geoeval.engine`) on each
    partition, so both compute bit-identical areas. Pairs come unsorted.
    ``index`` is an STRtree of ``tree`` already built (e.g.
    :attr:`ObjectSet.strtree`), else one is built.

    Returns
    -------
    rows, cols : numpy.ndarray of int64
        Positions in ``query`` and ``tree``.
    areas : numpy.ndarray of float
        ``|query[i] ∩ tree[j]|``.

    Examples
    --------
    >>> from shapely import box
    >>> q = np.array([box(0, 0, 2, 2)]); t = np.array([box(2, 0, 3, 1), box(1, 1, 3, 3)])
    >>> [a.tolist() for a in overlap_pairs(q, t)]
    [[0], [1], [1.0]]
    """
    import shapely

    empty = np.zeros(0, dtype=np.int64)
    if len(query) == 0 or len(tree) == 0:
        return empty, empty.copy(), np.zeros(0)
    index = shapely.STRtree(tree) if index is None else index
    rows, cols = parallel.query(index, query, "intersects")
    vals = chunked(_intersection_area, query[rows], tree[cols])  # every core
    keep = vals > 0
    return (rows[keep].astype(np.int64), cols[keep].astype(np.int64),
            np.asarray(vals[keep], dtype=float))


def _intersection_area(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import shapely

    return shapely.area(shapely.intersection(a, b))


def _union_area(reference: ObjectSet, submission: ObjectSet, rows: np.ndarray,
                cols: np.ndarray, vals: np.ndarray) -> ExactSum:
    """Area of the union of all objects of both sides (:func:`union_area`), with the
    same-side overlapping pairs of :attr:`ObjectSet.self_overlaps`."""
    return union_area(reference, submission, rows, cols, vals, reference.self_overlaps,
                      submission.self_overlaps)


def union_area(reference: ObjectSet, submission: ObjectSet, rows: np.ndarray,
               cols: np.ndarray, vals: np.ndarray,
               ref_self: tuple[np.ndarray, np.ndarray],
               sub_self: tuple[np.ndarray, np.ndarray]) -> ExactSum:
    """Area of the union of all objects of both sides, without a union of a whole side,
    as an exact sum (:mod:`geoeval.sums`: the same whatever the order of the terms, and
    the sum of a scene's parts' unions when no object crosses them).

    With no two objects of one side sharing area, every point lies in at most one
    reference and one submitted object: ``Σ areas − Σ C_ij``. Otherwise only the
    connected groups of mutually overlapping objects (cross pairs and same-side
    pairs ``ref_self`` / ``sub_self``, each ``(a, b)`` arrays) that hold a
    same-side overlap get a real union, one group at a time. The result depends
    on the pairs as a set, not on their order.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    ref_areas, sub_areas = reference.areas, submission.areas
    total = exact_sum(ref_areas) + exact_sum(sub_areas) - exact_sum(vals)
    ra, rb = ref_self
    sa, sb = sub_self
    if ra.size == 0 and sa.size == 0:
        return total
    gr, gs = reference.polygons, submission.polygons
    nr, n = gr.size, gr.size + gs.size
    u = np.concatenate([rows, ra, sa + nr])
    v = np.concatenate([cols + nr, rb, sb + nr])
    _, label = connected_components(
        coo_matrix((np.ones(u.size, np.int8), (u, v)), shape=(n, n)), directed=False)
    dirty = np.zeros(label.max() + 1, dtype=bool)
    dirty[label[np.concatenate([ra, sa + nr])]] = True
    members = np.flatnonzero(dirty[label])
    areas = np.concatenate([ref_areas, sub_areas])
    simple = exact_sum(areas[members]) - exact_sum(vals[dirty[label[rows]]])
    _, group = np.unique(label[members], return_inverse=True)
    geoms = np.concatenate([gr, gs])[members]
    exact = exact_sum(grouped_union_area(geoms, group, int(group.max()) + 1))
    return total - simple + exact


def grouped_union_area(geoms: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
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
        out[uniq[sel]] = chunked(lambda t: shapely.area(shapely.union_all(t, axis=1)), table)
    return out



def iou_from_union(inter: Any, union: Any, empty: float = 0.0) -> np.ndarray:
    """Intersection over union, ``|A ∩ B| / |A ∪ B|``: the one IoU formula of
    geoeval (the overlap's pairs and so the IoU matcher, boxes, the audit's
    single-pair scores). Arrays broadcast; ``empty`` where the union is empty (0
    for pairs, NaN for the audit's two empty masks).

    Examples
    --------
    >>> iou_from_union(np.array([2.0, 0.0]), np.array([6.0, 0.0])).tolist()
    [0.3333333333333333, 0.0]
    """
    inter, union = np.asarray(inter, dtype=float), np.asarray(union)
    return np.divide(inter, union, out=np.full(np.broadcast(inter, union).shape, empty),
                     where=union > 0)


def iou_values(inter: Any, area_a: Any, area_b: Any, empty: float = 0.0) -> np.ndarray:
    """:func:`iou_from_union` from the two areas: ``|A ∩ B| / (|A| + |B| − |A ∩ B|)``.

    Examples
    --------
    >>> iou_values(np.array([2.0, 0.0]), np.array([4.0, 0.0]), np.array([4.0, 0.0])).tolist()
    [0.3333333333333333, 0.0]
    """
    inter = np.asarray(inter, dtype=float)
    return iou_from_union(inter, np.asarray(area_a, dtype=float)
                          + np.asarray(area_b, dtype=float) - inter, empty)


# --- boxes -------------------------------------------------------------------

def box_intersection(a: np.ndarray, b: np.ndarray, *, plus_one: bool = False) -> np.ndarray:
    """Dense ``len(a) × len(b)`` intersection areas of two small box arrays (one image)."""
    a = check_boxes(a, "a")
    b = check_boxes(b, "b")
    e = 1.0 if plus_one else 0.0
    w = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]) + e
    h = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]) + e
    return np.clip(w, 0, None) * np.clip(h, 0, None)


def box_iou(a: np.ndarray, b: np.ndarray, *, plus_one: bool = False) -> np.ndarray:
    """Dense ``len(a) × len(b)`` IoU of two box arrays ``(x1, y1, x2, y2)`` of one image.

    Notes
    -----
    ``IoU = |A ∩ B| / (|A| + |B| − |A ∩ B|)``; 0 where the union is empty.
    Dense because it is used per image / frame / class, where both sides are
    small; whole scenes go through :func:`compute_overlap`.
    """
    inter = box_intersection(a, b, plus_one=plus_one)
    return iou_values(inter, box_area(a, plus_one=plus_one)[:, None],
                      box_area(b, plus_one=plus_one)[None, :])


def box_iou_pairs(
    a: np.ndarray, b: np.ndarray, ia: np.ndarray, ib: np.ndarray, *, plus_one: bool = False
) -> np.ndarray:
    """IoU of the box pairs ``(a[ia[k]], b[ib[k]])`` only (sparse form)."""
    inter, union = box_pair_areas(a, b, ia, ib, plus_one=plus_one)
    return iou_from_union(inter, union)


def box_pair_areas(
    a: np.ndarray, b: np.ndarray, ia: np.ndarray, ib: np.ndarray, *, plus_one: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Intersection and union areas of the box pairs ``(a[ia[k]], b[ib[k]])``: the two
    sides of a threshold decision on their IoU (:mod:`geoeval.thresholds`)."""
    inter = box_intersection_areas(a, b, ia, ib, plus_one=plus_one)
    ia, ib = np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64)
    union = (box_area(a, plus_one=plus_one)[ia] + box_area(b, plus_one=plus_one)[ib]) - inter
    return inter, union


def box_iou_xywh_pairs(d: np.ndarray, g: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """IoU of box pairs ``[x, y, w, h]`` with COCO's crowd rule, as ``maskApi.c`` ``bbIou``.

    ``d[k]`` against ``g[k]``; for a crowd ``g[k]`` the union is the area of
    ``d[k]`` alone. Unlike :func:`box_iou_pairs`, the official evaluator takes the
    areas as ``w·h`` of the boxes as written (not ``(x2 − x1)(y2 − y1)``) and
    divides by the detection's area for crowd regions; the same floating-point
    operations in the same order give bit-identical IoUs, so threshold
    decisions agree with it exactly.
    """
    w = np.minimum(d[:, 2] + d[:, 0], g[:, 2] + g[:, 0]) - np.maximum(d[:, 0], g[:, 0])
    h = np.minimum(d[:, 3] + d[:, 1], g[:, 3] + g[:, 1]) - np.maximum(d[:, 1], g[:, 1])
    inter = w * h
    da = d[:, 2] * d[:, 3]
    ga = g[:, 2] * g[:, 3]
    union = np.where(crowd, da, da + ga - inter)
    pos = (w > 0) & (h > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pos, inter / np.where(pos, union, 1.0), 0.0)


def box_intersection_areas(
    a: np.ndarray, b: np.ndarray, ia: np.ndarray, ib: np.ndarray, *, plus_one: bool = False
) -> np.ndarray:
    """Intersection area of the box pairs ``(a[ia[k]], b[ib[k]])`` only (sparse form).

    Computed directly as ``max(0, w) · max(0, h)`` of the overlap rectangle, so
    that a ratio such as "the share of a box inside another" is one division of
    two exact areas, never an area rebuilt from an IoU.

    Examples
    --------
    >>> box_intersection_areas(np.array([[0., 0, 10, 10]]), np.array([[8., 0, 20, 10]]),
    ...                        np.array([0]), np.array([0])).tolist()
    [20.0]
    """
    a = check_boxes(a, "a")[np.asarray(ia, dtype=np.int64)]
    b = check_boxes(b, "b")[np.asarray(ib, dtype=np.int64)]
    e = 1.0 if plus_one else 0.0
    w = np.clip(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]) + e, 0, None)
    h = np.clip(np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]) + e, 0, None)
    return w * h


def edge_components(
    rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int
) -> tuple[int, np.ndarray, np.ndarray]:
    """Connected components of a bipartite graph given by its edges.

    Returns
    -------
    n_components : int
    node_labels : numpy.ndarray
        Component of each node, rows first (``0..n_rows-1``) then columns.
    edge_labels : numpy.ndarray
        Component of each edge.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = n_rows + n_cols
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    adj = coo_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols + n_rows)), shape=(n, n))
    n_comp, labels = connected_components(adj, directed=False)
    return n_comp, labels, labels[rows] if rows.size else np.zeros(0, dtype=np.int64)


def component_kinds(
    rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How much solving each component of a bipartite overlap graph needs.

    Returns
    -------
    edge_component : numpy.ndarray
        Component of each edge.
    has_hub : numpy.ndarray
        Per component: some object is in two or more pairs. Without one the
        component is a single pair, already one-to-one.
    has_hub_pair : numpy.ndarray
        Per component: some pair joins two such objects. Without one the
        component is a star forest (one-to-one, one-to-many, many-to-one),
        already a valid multi-object matching.
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    _, _, comp = edge_components(rows, cols, n_rows, n_cols)
    n_comp = int(comp.max()) + 1 if comp.size else 0
    hub_r = np.bincount(rows, minlength=n_rows)[rows] > 1
    hub_c = np.bincount(cols, minlength=n_cols)[cols] > 1
    has_hub = np.zeros(n_comp, dtype=bool)
    has_hub[comp[hub_r | hub_c]] = True
    has_hub_pair = np.zeros(n_comp, dtype=bool)
    has_hub_pair[comp[hub_r & hub_c]] = True
    return comp, has_hub, has_hub_pair
