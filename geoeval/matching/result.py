"""The result type every matcher returns: :class:`Matching` of :class:`Instance`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

ONE_TO_ONE = "one-to-one"
ONE_TO_MANY = "one-to-many"  # one reference, several submitted objects: over-detection
MANY_TO_ONE = "many-to-one"  # several references, one submitted object: under-detection


def instance_kind(n_reference: int, n_submission: int) -> str:
    """Kind of a match instance from the number of objects on each side."""
    if n_reference == 1 and n_submission == 1:
        return ONE_TO_ONE
    if n_reference == 1:
        return ONE_TO_MANY
    if n_submission == 1:
        return MANY_TO_ONE
    raise ValueError(f"not a star: {n_reference} references and {n_submission} submissions")


@dataclass(frozen=True)
class Instance:
    """One match instance.

    Attributes
    ----------
    reference, submission : tuple of int
        *Indices* (positions in the reference / submission :class:`ObjectSet`),
        not user ids; :meth:`Matching.to_dict` translates them to ids.
    overlap : float
        Area of the union of the pair intersections ``R_i ∩ O_j`` of the
        instance (area units): ``Σ C_ij`` unless objects of one side of the
        instance overlap each other, whose shared area then counts once
        (:mod:`geoeval.matching.areas`).
    kind : str
        ``one-to-one``, ``one-to-many`` or ``many-to-one``.
    score : float or None
        The matcher's own score of the instance: Hoover ``(s1 + s2) / 2``, the IoU
        for the IoU matcher, ``None`` for BGM and MOM.
    """

    reference: tuple[int, ...]
    submission: tuple[int, ...]
    overlap: float
    kind: str
    score: float | None = None


@dataclass(frozen=True)
class Matching:
    """What a matcher found: instances, missed references and false alarms.

    Attributes
    ----------
    matcher : str
        ``bgm``, ``hoover``, ``mom`` or ``iou``.
    instances : tuple of Instance
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
    overlap_area : float or None
        Area of the union of the intersections ``R_i ∩ O_j`` of all matched
        pairs (each point once), set by the matchers; ``None`` for a matching
        built by hand, whose :attr:`matched_overlap` is then the sum of its
        instances' overlaps.
    """

    matcher: str
    instances: tuple[Instance, ...]
    missed: np.ndarray
    false_alarms: np.ndarray
    n_reference: int
    n_submission: int
    params: dict[str, Any] = field(default_factory=dict)
    solver_stats: dict[str, int] = field(default_factory=dict)
    overlap_area: float | None = None

    @property
    def matched_overlap(self) -> float:
        """Matched area: the union of ``R_i ∩ O_j`` over the matched pairs.

        ``Σ C_ij`` over the pairs inside instances when no two objects of one
        side overlap; otherwise an area covered by several matched pairs counts
        once, so it never exceeds the union of all objects (BGM, eq. 1).
        """
        if self.overlap_area is not None:
            return float(self.overlap_area)
        return float(sum(inst.overlap for inst in self.instances))

    def kind_counts(self) -> dict[str, int]:
        counts = {ONE_TO_ONE: 0, ONE_TO_MANY: 0, MANY_TO_ONE: 0}
        for inst in self.instances:
            counts[inst.kind] += 1
        return counts
