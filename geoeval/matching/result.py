"""The result type every matcher returns: a columnar :class:`Matching`.

A matching holds its instances in compressed sparse row (CSR) form, as numpy
arrays: instance ``k`` groups the reference objects
``ref_idx[ref_ptr[k]:ref_ptr[k + 1]]`` and the submitted objects
``sub_idx[sub_ptr[k]:sub_ptr[k + 1]]`` (indices into the object sets, sorted),
with its ``kind`` code, ``overlap`` and ``score``. Every stage that consumes
matches (counts, Mallows, reports) works on these arrays; :class:`Instance` is
only a view for users (``matching.instance(k)``, ``matching.instances``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from geoeval.sums import ExactSum, exact_sum

ONE_TO_ONE = "one-to-one"
ONE_TO_MANY = "one-to-many"  # one reference, several submitted objects: over-detection
MANY_TO_ONE = "many-to-one"  # several references, one submitted object: under-detection
MANY_TO_MANY = "many-to-many"  # never made by a matcher; allowed in hand-built instances
#: kind codes of :attr:`InstanceArrays.kind`: ``KINDS[code]`` is the name
KINDS: tuple[str, ...] = (ONE_TO_ONE, ONE_TO_MANY, MANY_TO_ONE, MANY_TO_MANY)


#: Why a matcher's instances have no score (:attr:`Instance.score_note`).
NO_SCORE: dict[str, str] = {
    "bgm": "BGM scores the scene, matched area over the union of all objects "
           "(Özdemir et al. 2010, eq. 1), not its instances",
    "mom": "MOM's instance score is its Mallows score (Özdemir et al. 2010, eq. 12), "
           "measured after matching: geoeval.score gives it, a matching alone has none",
}


def instance_kind(n_reference: int, n_submission: int) -> str:
    """Kind of a match instance from the number of objects on each side."""
    if n_reference == 1 and n_submission == 1:
        return ONE_TO_ONE
    if n_reference == 1:
        return ONE_TO_MANY
    if n_submission == 1:
        return MANY_TO_ONE
    raise ValueError(f"not a star: {n_reference} references and {n_submission} submissions")


def kind_codes(n_reference: np.ndarray, n_submission: np.ndarray) -> np.ndarray:
    """:func:`instance_kind` for arrays of member counts, as codes into :data:`KINDS`."""
    n_reference, n_submission = np.asarray(n_reference), np.asarray(n_submission)
    if np.any((n_reference < 1) | (n_submission < 1)):
        raise ValueError("every instance needs an object on each side")
    many_r, many_s = n_reference > 1, n_submission > 1
    return np.where(many_r & many_s, 3, np.where(many_r, 2, np.where(many_s, 1, 0))
                    ).astype(np.int8)


@dataclass(frozen=True)
class Instance:
    """One match instance (a view of one row of a :class:`Matching`).

    Attributes
    ----------
    reference, submission : tuple of int
        *Indices* (positions in the reference / submission :class:`ObjectSet`),
        not user ids (those are :attr:`reference_ids`, :attr:`submission_ids`).
    overlap : float
        Area of the union of the pair intersections ``R_i ∩ O_j`` of the
        instance (area units): ``Σ C_ij`` unless objects of one side of the
        instance overlap each other, whose shared area then counts once
        (:mod:`geoeval.matching.areas`).
    kind : str
        ``one-to-one``, ``one-to-many`` or ``many-to-one``.
    score : float or None
        The instance's score: Hoover ``(s1 + s2) / 2``, the IoU for the IoU
        matcher, the Mallows score (Özdemir et al. 2010, eq. 12) for MOM when it
        was computed; ``None`` for BGM, whose accuracy scores the scene, not its
        instances (:attr:`score_note` says why).
    reference_ids, submission_ids : tuple or None
        The objects' ids as the user knows them (label values, the id field),
        when the matching knows its object sets.
    score_note : str or None
        Why :attr:`score` is ``None``.
    """

    reference: tuple[int, ...]
    submission: tuple[int, ...]
    overlap: float
    kind: str
    score: float | None = None
    reference_ids: tuple[Any, ...] | None = None
    submission_ids: tuple[Any, ...] | None = None
    score_note: str | None = None

    def __repr__(self) -> str:
        def side(name: str, ids: tuple[Any, ...] | None, positions: tuple[int, ...]) -> str:
            shown = ids if ids is not None else positions
            what = "id" if ids is not None else "position"
            return f"{name} {what}{'s' if len(shown) != 1 else ''} {', '.join(map(str, shown))}"

        score = (f"{self.score:.4g}" if self.score is not None else
                 "None" + (f" ({self.score_note})" if self.score_note else ""))
        return (f"<Instance {self.kind}: {side('reference', self.reference_ids, self.reference)}"
                f" ↔ {side('submission', self.submission_ids, self.submission)}; overlap "
                f"{self.overlap:.6g}, score {score}>")


@dataclass(frozen=True, eq=False)
class InstanceArrays:
    """Match instances in CSR form (see the module docstring).

    Attributes
    ----------
    ref_ptr, sub_ptr : numpy.ndarray of int64, shape (n + 1,)
    ref_idx, sub_idx : numpy.ndarray of int64
        Member indices, sorted within each instance.
    overlap : numpy.ndarray of float, shape (n,)
    kind : numpy.ndarray of int8, shape (n,)
        Codes into :data:`KINDS`.
    score : numpy.ndarray of float, shape (n,)
        NaN where the matcher gives no score.
    """

    ref_ptr: np.ndarray
    ref_idx: np.ndarray
    sub_ptr: np.ndarray
    sub_idx: np.ndarray
    overlap: np.ndarray
    kind: np.ndarray
    score: np.ndarray

    def __repr__(self) -> str:
        from geoeval.reprs import counted

        return (f"<InstanceArrays {counted(len(self), 'instance')}, {self.ref_idx.size} "
                f"reference and {self.sub_idx.size} submitted members>")

    @classmethod
    def empty(cls) -> InstanceArrays:
        z = np.zeros(0, np.int64)
        return cls(np.zeros(1, np.int64), z, np.zeros(1, np.int64), z.copy(), np.zeros(0),
                   np.zeros(0, np.int8), np.zeros(0))

    @classmethod
    def from_members(cls, n: int, ref_inst: np.ndarray, ref_obj: np.ndarray,
                     sub_inst: np.ndarray, sub_obj: np.ndarray, overlap: np.ndarray,
                     score: np.ndarray | None = None) -> InstanceArrays:
        """Instances from (instance, object) memberships, in instance order.

        Duplicate memberships are dropped; members are sorted within each
        instance. ``score`` (one per instance) defaults to NaN (no score).
        """
        ref_ptr, ref_idx = _csr(n, ref_inst, ref_obj)
        sub_ptr, sub_idx = _csr(n, sub_inst, sub_obj)
        kind = kind_codes(np.diff(ref_ptr), np.diff(sub_ptr))
        score = np.full(n, np.nan) if score is None else np.asarray(score, float)
        return cls(ref_ptr, ref_idx, sub_ptr, sub_idx, np.asarray(overlap, float), kind, score)

    @classmethod
    def from_instances(cls, instances: Sequence[Instance]) -> InstanceArrays:
        """CSR arrays of ready-made :class:`Instance` objects (for users and tests)."""
        n = len(instances)
        if n == 0:
            return cls.empty()
        n_ref = np.fromiter((len(i.reference) for i in instances), np.int64, n)
        n_sub = np.fromiter((len(i.submission) for i in instances), np.int64, n)
        ref = np.fromiter((k for i in instances for k in i.reference), np.int64, n_ref.sum())
        sub = np.fromiter((k for i in instances for k in i.submission), np.int64, n_sub.sum())
        out = cls.from_members(
            n, np.repeat(np.arange(n), n_ref), ref, np.repeat(np.arange(n), n_sub), sub,
            np.fromiter((i.overlap for i in instances), float, n),
            np.fromiter((np.nan if i.score is None else i.score for i in instances), float, n))
        given = np.array([KINDS.index(i.kind) for i in instances], np.int8)
        if not np.array_equal(given, out.kind):
            raise ValueError("an instance's kind does not match its member counts")
        return out

    def __len__(self) -> int:
        return int(self.overlap.size)

    def take(self, order: np.ndarray) -> InstanceArrays:
        """The instances ``order`` (indices), in that order."""
        order = np.asarray(order, np.int64)
        ref_ptr, ref_idx = _take_rows(self.ref_ptr, self.ref_idx, order)
        sub_ptr, sub_idx = _take_rows(self.sub_ptr, self.sub_idx, order)
        return InstanceArrays(ref_ptr, ref_idx, sub_ptr, sub_idx, self.overlap[order],
                              self.kind[order], self.score[order])

    def sorted_by_reference(self) -> InstanceArrays:
        """Instances in the order of their first (smallest) reference index: the
        order of every report. Instances are disjoint, so this order is total."""
        first = self.ref_idx[self.ref_ptr[:-1]] if len(self) else np.zeros(0, np.int64)
        order = np.argsort(first, kind="stable")
        if np.array_equal(order, np.arange(order.size)):
            return self
        return self.take(order)

    def ref_instance(self) -> np.ndarray:
        """The instance of each entry of ``ref_idx``."""
        return np.repeat(np.arange(len(self)), np.diff(self.ref_ptr))

    def sub_instance(self) -> np.ndarray:
        """The instance of each entry of ``sub_idx``."""
        return np.repeat(np.arange(len(self)), np.diff(self.sub_ptr))


def _csr(n: int, inst: np.ndarray, obj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    inst = np.asarray(inst, np.int64)
    obj = np.asarray(obj, np.int64)
    if inst.size:
        order = np.lexsort((obj, inst))
        inst, obj = inst[order], obj[order]
        keep = np.r_[True, (inst[1:] != inst[:-1]) | (obj[1:] != obj[:-1])]
        inst, obj = inst[keep], obj[keep]
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(inst, minlength=n), out=ptr[1:])
    return ptr, obj


def _take_rows(ptr: np.ndarray, idx: np.ndarray,
               order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    counts = np.diff(ptr)[order]
    new_ptr = np.zeros(order.size + 1, np.int64)
    np.cumsum(counts, out=new_ptr[1:])
    starts = np.repeat(ptr[:-1][order] - new_ptr[:-1], counts)
    return new_ptr, idx[np.arange(new_ptr[-1]) + starts]


@dataclass(frozen=True, eq=False)
class Matching:
    """What a matcher found: instances (as arrays), missed references and false alarms.

    Attributes
    ----------
    matcher : str
        ``bgm``, ``hoover``, ``mom`` or ``iou``.
    arrays : InstanceArrays
        The instances in CSR form, ordered by their smallest reference index.
    missed : numpy.ndarray
        Indices of reference objects in no instance (MD).
    false_alarms : numpy.ndarray
        Indices of submitted objects in no instance (FA).
    n_reference, n_submission : int
    params : dict
        The matcher's parameters (threshold, minimum overlap, ...).
    solver_stats : dict
        How components were solved (for MOM: ``taken_whole``, ``tree_dp``,
        ``enumerated``, ``ilp``).
    overlap_area : ExactSum or None
        Area of the union of the intersections ``R_i ∩ O_j`` of all matched
        pairs (each point once), an exact sum (:mod:`geoeval.sums`) set by the
        matchers; ``None`` for a matching built by hand, whose
        :attr:`matched_overlap` is then the sum of its instances' overlaps.
    ids : tuple of two arrays, or None
        The reference and submitted objects' ids (set by the matchers from the
        overlap's object sets): what :meth:`instance` shows.
    instance_scores : numpy.ndarray or None
        Scores of the instances measured after matching (MOM's Mallows scores,
        :meth:`with_instance_scores`), shown by :meth:`instance` instead of the
        matcher's own (``arrays.score``, which the JSON report writes).
    """

    matcher: str
    arrays: InstanceArrays
    missed: np.ndarray
    false_alarms: np.ndarray
    n_reference: int
    n_submission: int
    params: dict[str, Any] = field(default_factory=dict)
    solver_stats: dict[str, int] = field(default_factory=dict)
    overlap_area: Any = None
    ids: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    instance_scores: np.ndarray | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        from geoeval.reprs import counted

        kinds = ", ".join(f"{v} {k}" for k, v in self.kind_counts().items() if v)
        return (f"<Matching {self.matcher}: {counted(self.n_instances, 'instance')} "
                f"({kinds or 'none'}), {self.missed.size} missed, "
                f"{counted(self.false_alarms.size, 'false alarm')}>")

    @classmethod
    def from_instances(cls, matcher: str, instances: Sequence[Instance], n_reference: int,
                       n_submission: int, **kwargs: Any) -> Matching:
        """A matching of ready-made instances; missed and false alarms derived."""
        arrays = InstanceArrays.from_instances(instances).sorted_by_reference()
        return cls(matcher, arrays, unmatched(n_reference, arrays.ref_idx),
                   unmatched(n_submission, arrays.sub_idx), n_reference, n_submission,
                   **kwargs)

    @property
    def n_instances(self) -> int:
        return len(self.arrays)

    def __len__(self) -> int:
        return len(self.arrays)

    @property
    def kinds(self) -> np.ndarray:
        """Kind name of each instance (object array)."""
        return np.asarray(KINDS, dtype=object)[self.arrays.kind]

    def with_instance_scores(self, scores: np.ndarray) -> Matching:
        """This matching, its :meth:`instance` views carrying ``scores`` (one per
        instance, NaN where undefined)."""
        from dataclasses import replace

        return replace(self, instance_scores=np.asarray(scores, dtype=float))

    def instance(self, k: int) -> Instance:
        """Instance ``k`` as an :class:`Instance` view (positions, and ids when known)."""
        a = self.arrays
        ref = a.ref_idx[a.ref_ptr[k]:a.ref_ptr[k + 1]]
        sub = a.sub_idx[a.sub_ptr[k]:a.sub_ptr[k + 1]]
        score = float((a.score if self.instance_scores is None else self.instance_scores)[k])
        defined = not np.isnan(score)
        return Instance(
            tuple(ref.tolist()), tuple(sub.tolist()), float(a.overlap[k]), KINDS[int(a.kind[k])],
            score if defined else None,
            None if self.ids is None else tuple(self.ids[0][ref].tolist()),
            None if self.ids is None else tuple(self.ids[1][sub].tolist()),
            None if defined else NO_SCORE.get(self.matcher, "undefined for this instance"))

    def __iter__(self) -> Iterator[Instance]:
        return (self.instance(k) for k in range(len(self)))

    @cached_property
    def instances(self) -> tuple[Instance, ...]:
        """All instances as :class:`Instance` views (built on first use; reports and
        measures use :attr:`arrays` instead)."""
        return tuple(self)

    @property
    def matched_overlap(self) -> float:
        """Matched area: the union of ``R_i ∩ O_j`` over the matched pairs.

        ``Σ C_ij`` over the pairs inside instances when no two objects of one
        side overlap; otherwise an area covered by several matched pairs counts
        once, so it never exceeds the union of all objects (BGM, eq. 1).
        """
        return float(self.matched_sum)

    @property
    def matched_sum(self) -> ExactSum:
        """:attr:`matched_overlap` as an exact sum (:mod:`geoeval.sums`): what the parts
        of a scene solved apart add up to exactly."""
        if isinstance(self.overlap_area, ExactSum):
            return self.overlap_area
        if self.overlap_area is not None:
            return exact_sum([self.overlap_area])
        return exact_sum(self.arrays.overlap)

    def kind_counts(self) -> dict[str, int]:
        """Number of instances of each kind (``many-to-many`` only when a
        hand-built matching has such instances)."""
        counts = np.bincount(self.arrays.kind, minlength=len(KINDS))
        out = {name: int(c) for name, c in zip(KINDS[:3], counts[:3], strict=True)}
        if counts[3]:
            out[MANY_TO_MANY] = int(counts[3])
        return out


def unmatched(n: int, matched: np.ndarray) -> np.ndarray:
    """Indices in ``0..n-1`` that are not in ``matched``."""
    mask = np.ones(n, dtype=bool)
    mask[np.asarray(matched, dtype=np.int64)] = False
    return np.flatnonzero(mask)
