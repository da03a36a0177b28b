"""Per-object tables of a scored scene: what the GeoPackage, CSV and figure show.

One row per reference object, per submitted object and per match instance of
one matcher, plus a summary table (one row per matcher, and per class when
classes were scored). Columns are plain numpy arrays (``None`` in object
columns and NaN in float columns stand for null), computed with vectorised
numpy on the sparse overlap: no Python loop over objects except where strings
are built for the instance table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from geoeval.errors import InputError
from geoeval.io.attributes import PREFIXES, attribute_columns

if TYPE_CHECKING:  # pragma: no cover
    from geoeval.scoring import MatcherResult, ScoreResult

MATCHED, MISSED, FALSE_ALARM = "matched", "missed", "false_alarm"
#: Value of the summary table's ``class`` column for all classes together.
ALL_CLASSES = None


@dataclass(frozen=True)
class ObjectTables:
    """Per-object tables of one matcher's result.

    Attributes
    ----------
    matcher : str
    reference, submission, instances, summary : dict of str to numpy.ndarray
        Column name -> values (same length within a table; the inputs' dates and
        times, ``ref_<name>`` / ``sub_<name>``, as pandas arrays).
    instance_members : tuple of numpy.ndarray
        Reference indices, their instance numbers, submission indices and
        theirs (the data the instance geometries are built from).
    """

    matcher: str
    reference: dict[str, np.ndarray]
    submission: dict[str, np.ndarray]
    instances: dict[str, np.ndarray]
    summary: dict[str, np.ndarray]
    instance_members: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

    def frame(self, table: str) -> Any:
        """One table (``reference``, ``submission``, ``instances`` or ``summary``)
        as a pandas DataFrame, with the user's object ids (the columns of the
        GeoPackage and CSV outputs, ``docs/qgis.md``).

        Examples
        --------
        >>> import geoeval
        >>> from shapely import box
        >>> ref = geoeval.ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 30, 10)])
        >>> sub = geoeval.ObjectSet.from_geometries([box(1, 0, 11, 10)])
        >>> res = geoeval.score(ref, sub, matchers=["bgm"])
        >>> geoeval.object_tables(res, "bgm").frame("reference")["status"].tolist()
        ['matched', 'missed']
        """
        if table not in ("reference", "submission", "instances", "summary"):
            raise InputError(f"no table {table!r} (reference, submission, instances, summary)")
        return to_frame(getattr(self, table))

    def __repr__(self) -> str:
        return (f"<ObjectTables {self.matcher}: {len(next(iter(self.reference.values()), []))} "
                f"reference, {len(next(iter(self.submission.values()), []))} submitted, "
                f"{len(next(iter(self.instances.values()), []))} instances>")


def choose_matcher(result: ScoreResult, matcher: str | None) -> str:
    """The matcher whose per-object result is written: ``matcher``, else the first that
    ran whose accuracy is the shape score (MOM: splits and merges, each instance scored),
    else the first matcher run; :class:`InputError` if ``matcher`` did not run."""
    if matcher is None:
        from geoeval.matching import registry

        shaped = [n for n in result.results
                  if registry.get(n).accuracy == registry.MALLOWS]
        return shaped[0] if shaped else next(iter(result.results))
    if matcher not in result.results:
        raise InputError(f"matcher {matcher!r} was not run (ran: {', '.join(result.results)})")
    return matcher


def object_tables(result: ScoreResult, matcher: str | None = None, *,
                  instances: bool = True, attributes: bool = True) -> ObjectTables:
    """Build the per-object tables of ``result`` for one matcher.

    Parameters
    ----------
    result : ScoreResult
    matcher : str, optional
        Default: ``mom`` when it ran, else the first matcher.
    instances : bool
        Build the instance table too (its text columns are most of the time);
        without it ``instances`` is empty (the status maps need only the objects).
    attributes : bool
        Add the inputs' own attribute columns (``ref_<name>``, ``sub_<name>``);
        the figures do without. They are there when the score read them:
        :func:`geoeval.score` reads them when it writes a per-object output
        (GeoPackage, CSV, GeoParquet, objects dataset), and objects read with
        :func:`geoeval.read` keep theirs.

    Returns
    -------
    ObjectTables

    Notes
    -----
    Per object: ``status`` (``matched`` when the object is in an instance,
    else ``missed`` for a reference and ``false_alarm`` for a submitted
    object: Özdemir et al. 2010, §4.1, MD and FA), ``instance`` (position in the
    JSON report's ``instances`` list) and ``kind``, ``overlap`` (the object's
    overlap ``Σ C_ij`` with its partners in its instance), ``best_iou`` and
    ``best_partner`` (highest IoU with any overlapping object of the other side,
    matched or not: a missed building shows how close it came), the instance's
    own ``score`` (Hoover ``(s1 + s2)/2``, IoU; only for the matchers that score
    their instances: BGM scores the scene, eq. 1, and MOM's instances have
    their ``mallows``) and ``mallows`` (eq. 12), then the input layers' own
    attributes, ``ref_<name>`` / ``sub_<name>`` (:mod:`geoeval.io.attributes`).
    """
    from geoeval.matching import registry

    name = choose_matcher(result, matcher)
    scored = registry.get(name).scores_instances
    res = result.results[name]
    m = res.matching
    ov = result.overlap
    a = m.arrays
    nr, ns = len(result.reference), len(result.submission)

    ref_members, sub_members = a.ref_idx, a.sub_idx
    n_ref_in, n_sub_in = np.diff(a.ref_ptr), np.diff(a.sub_ptr)
    ref_inst, sub_inst = a.ref_instance(), a.sub_instance()
    inst_of_ref = np.full(nr, -1, np.int64)
    inst_of_ref[ref_members] = ref_inst
    inst_of_sub = np.full(ns, -1, np.int64)
    inst_of_sub[sub_members] = sub_inst

    kinds = np.append(m.kinds, None)
    inst_score = np.append(a.score, np.nan)
    mal = res.instance_mallows
    inst_mallows = np.append(np.asarray(mal, float), np.nan) if mal is not None else None

    rows, cols, vals = ov.rows, ov.cols, ov.values
    inside = (inst_of_ref[rows] >= 0) & (inst_of_ref[rows] == inst_of_sub[cols])
    ref_overlap = np.bincount(rows[inside], weights=vals[inside], minlength=nr)
    sub_overlap = np.bincount(cols[inside], weights=vals[inside], minlength=ns)
    iou = ov.iou
    ref_best, ref_partner = _best(rows, cols, iou, nr)
    sub_best, sub_partner = _best(cols, rows, iou, ns)

    def side(objects: Any, inst_of: np.ndarray, unmatched: str, overlap: np.ndarray,
             best: np.ndarray, partner: np.ndarray, other_ids: np.ndarray,
             partners_in: np.ndarray) -> dict[str, np.ndarray]:
        matched = inst_of >= 0
        cols_: dict[str, np.ndarray] = {"id": _plain(objects.ids)}
        if objects.classes is not None:
            cols_["class"] = _nullable(objects.classes)
        cols_["area"] = objects.areas.astype(float)
        cols_["status"] = np.where(matched, MATCHED, unmatched).astype(object)
        cols_["instance"] = _nullable(np.where(matched, inst_of, -1), null=-1)
        cols_["kind"] = kinds[inst_of]  # index -1 is the trailing None
        cols_["partners"] = np.where(matched, partners_in[inst_of], 0)
        cols_["overlap"] = overlap
        cols_["best_iou"] = best
        cols_["best_partner"] = _nullable(_take(other_ids, partner), mask=partner < 0)
        if scored:
            cols_["score"] = inst_score[inst_of]
        if inst_mallows is not None:
            cols_["mallows"] = inst_mallows[inst_of]
        return cols_

    n_ref_in_pad = np.append(n_ref_in, 0)
    n_sub_in_pad = np.append(n_sub_in, 0)
    reference = side(result.reference, inst_of_ref, MISSED, ref_overlap, ref_best,
                     ref_partner, result.submission.ids, n_sub_in_pad)
    submission = side(result.submission, inst_of_sub, FALSE_ALARM, sub_overlap, sub_best,
                      sub_partner, result.reference.ids, n_ref_in_pad)
    if getattr(result, "strata", None) is not None:
        from geoeval.report.strata_tables import add_stratum_columns

        add_stratum_columns(result, reference, submission)
    if attributes:
        reference.update(attribute_columns(result.reference.attributes,
                                           PREFIXES["reference"], list(reference)))
        submission.update(attribute_columns(result.submission.attributes,
                                            PREFIXES["submission"], list(submission)))
    table = {} if not instances else _instance_columns(
        result, res, ref_members, ref_inst, sub_members, sub_inst, n_ref_in, n_sub_in,
        kinds[:-1], inst_score[:-1] if scored else None,
        None if inst_mallows is None else inst_mallows[:-1])
    return ObjectTables(name, reference, submission, table, summary_columns(result),
                        (ref_members, ref_inst, sub_members, sub_inst))


def _best(own: np.ndarray, other: np.ndarray, iou: np.ndarray,
          n: int) -> tuple[np.ndarray, np.ndarray]:
    """Highest IoU per object over its overlapping pairs, and the partner index (−1: none)."""
    best = np.zeros(n)
    partner = np.full(n, -1, np.int64)
    if own.size:
        order = np.lexsort((other, -iou, own))  # per object: highest IoU first, then lowest index
        o = own[order]
        first = order[np.r_[True, o[1:] != o[:-1]]]
        best[own[first]] = iou[first]
        partner[own[first]] = other[first]
    return best, partner


def _instance_columns(result: ScoreResult, res: MatcherResult, ref_members: np.ndarray,
                      ref_inst: np.ndarray, sub_members: np.ndarray, sub_inst: np.ndarray,
                      n_ref_in: np.ndarray, n_sub_in: np.ndarray, kinds: np.ndarray,
                      score: np.ndarray | None,
                      mallows: np.ndarray | None) -> dict[str, np.ndarray]:
    n_inst = kinds.size
    rid = _plain(result.reference.ids)
    sid = _plain(result.submission.ids)
    ref_area = np.bincount(ref_inst, weights=result.reference.areas[ref_members],
                           minlength=n_inst)
    sub_area = np.bincount(sub_inst, weights=result.submission.areas[sub_members],
                           minlength=n_inst)
    overlap = res.matching.arrays.overlap.astype(float)
    cols: dict[str, np.ndarray] = {
        "instance": np.arange(n_inst, dtype=np.int64),
        "kind": kinds.astype(object),
        "n_reference": n_ref_in,
        "n_submission": n_sub_in,
        "reference_ids": _joined(rid[ref_members], n_ref_in),
        "submission_ids": _joined(sid[sub_members], n_sub_in),
        "overlap": overlap,
        "reference_area": ref_area,
        "submission_area": sub_area,
    }
    if score is not None:
        cols["score"] = score
    if mallows is not None:
        cols["mallows"] = mallows
    return cols


def summary_columns(result: ScoreResult) -> dict[str, np.ndarray]:
    """One row per matcher (all classes together, ``class`` null), then one per
    class and matcher when classes were scored: the report's numbers."""
    rows: list[dict[str, Any]] = []
    scopes: list[tuple[Any, dict[str, Any], int, int]] = [
        (ALL_CLASSES, result.results, len(result.reference), len(result.submission))]
    if result.per_class is not None:
        for cls, item in result.per_class.classes.items():
            scopes.append((cls, item.results, len(item.reference), len(item.submission)))
    for cls, results, nr, ns in scopes:
        for name, res in results.items():
            s = res.summary()
            kinds = s.pop("instances_by_kind")
            rows.append({"matcher": name, "class": cls, "reference_objects": nr,
                         "submission_objects": ns, **s,
                         **{k.replace("-", "_"): v for k, v in kinds.items()}})
    keys = list(rows[0]) if rows else ["matcher"]
    out: dict[str, np.ndarray] = {}
    for k in keys:
        vals = [r[k] for r in rows]
        if all(isinstance(v, int | np.integer) for v in vals):
            out[k] = np.asarray(vals, np.int64)
        elif all(v is None or isinstance(v, float | int | np.number) for v in vals) and \
                any(v is not None for v in vals):
            out[k] = np.array([np.nan if v is None else v for v in vals], float)
        else:
            out[k] = np.asarray(vals, dtype=object)
    return out


def _joined(ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Comma-joined ids per instance (``ids`` grouped in instance order)."""
    text = ids.astype(str)
    ends = np.cumsum(counts)
    return np.array([",".join(text[e - c:e]) for e, c in zip(ends, counts, strict=True)],
                    dtype=object)


def _plain(ids: np.ndarray) -> np.ndarray:
    """Ids as int64 when integral and within its range, else as text.

    GeoPackage and most tables store signed 64-bit integers: uint64 labels at or
    above 2**63 are written as their exact decimal text rather than wrapped.
    """
    ids = np.asarray(ids)
    if ids.dtype.kind in "iub":
        if ids.dtype == np.uint64 and ids.size and ids.max() > np.iinfo(np.int64).max:
            return ids.astype(str).astype(object)
        return ids.astype(np.int64)
    return ids.astype(object)


def _take(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    v = _plain(values)
    if v.size == 0:
        return np.zeros(index.size, v.dtype)
    return v[np.clip(index, 0, None)]


def _nullable(values: np.ndarray, *, null: Any = None,
              mask: np.ndarray | None = None) -> np.ndarray:
    """Null where ``mask`` (or ``values == null``) holds: integer columns become a
    masked array (writers make them nullable integers), others an object array
    with ``None``."""
    values = np.asarray(values)
    if mask is None:
        mask = np.zeros(values.shape, bool) if null is None else values == null
    if values.dtype.kind in "iu":
        return np.ma.MaskedArray(values.astype(np.int64), mask=mask)
    out = values.astype(object)
    if values.dtype.kind == "f":
        mask = mask | np.isnan(values)
    elif values.dtype.kind == "O" and out.size:
        import pandas as pd

        mask = mask | pd.isna(out)
    out[mask] = None
    return out


def to_frame(columns: dict[str, np.ndarray]) -> Any:
    """A pandas DataFrame of a table; masked integer columns become ``Int64``."""
    import pandas as pd

    data: dict[str, Any] = {}
    for k, v in columns.items():
        if isinstance(v, np.ma.MaskedArray):
            data[k] = pd.arrays.IntegerArray(np.asarray(v.data, np.int64),
                                             np.ma.getmaskarray(v))
        else:
            data[k] = v
    return pd.DataFrame(data)
