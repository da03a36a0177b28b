"""Per-class scoring: each class on its own, next to all classes together.

With ``--class-field`` the reference's objects carry a class. Each class ``c``
is scored as a scene of its own: the class-``c`` references against the
class-``c`` submitted objects, with the same matchers and parameters as the
all-classes run. Submitted objects take their class from the same field when
the submission has it; otherwise (a detector that outputs no class) each one
takes the class of the reference object it overlaps most (largest ``C_ij``),
and one overlapping no reference has no class: it is a false alarm of the
all-classes run only.

The per-class overlap is the all-classes sparse overlap restricted to pairs
within the class (no geometry is intersected again). Mallows scores already
computed for an identical instance (same objects) in the all-classes run are
reused; only new instances are scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap
from geoeval.scoring.result import MatcherResult
from geoeval.scoring.subset import InstanceMallows, Subset, score_groups

__all__ = ["ClassResult", "InstanceMallows", "PerClass", "class_labels", "inherit_classes",
           "score_classes"]

FROM_FIELD = "field"
FROM_REFERENCE = "from_reference"


#: One class scored on its own (:class:`geoeval.scoring.subset.Subset`).
ClassResult = Subset


@dataclass(frozen=True)
class PerClass:
    """All classes of a scene.

    Attributes
    ----------
    submission_classes : {'field', 'from_reference'}
        Where the submitted objects' classes came from.
    unclassified_submission : int
        Submitted objects without a class (counted in the all-classes run only).
    classes : dict of str to ClassResult
        In sorted class order.
    """

    submission_classes: str
    unclassified_submission: int
    classes: dict[str, ClassResult]

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's ``per_class`` object (``docs/report.md``)."""
        return {
            "submission_classes": self.submission_classes,
            "unclassified_submission": self.unclassified_submission,
            "classes": {
                name: {
                    "reference_objects": len(c.reference),
                    "submission_objects": len(c.submission),
                    "results": {m: r.summary() for m, r in c.results.items()},
                }
                for name, c in self.classes.items()
            },
        }


def class_labels(values: np.ndarray | None) -> np.ndarray | None:
    """Class values as strings (``None`` for null), or ``None`` without classes."""
    if values is None:
        return None
    import pandas as pd

    vals = np.asarray(values, dtype=object)
    out = vals.astype(str).astype(object)
    out[np.asarray(pd.isna(vals), bool)] = None
    return out


def inherit_classes(overlap: Overlap, ref_classes: np.ndarray) -> np.ndarray:
    """Class of each submitted object = class of the reference it overlaps most.

    Ties go to the lowest reference index; objects overlapping no reference get
    ``None``.
    """
    out = np.full(overlap.n_submission, None, dtype=object)
    rows, cols, vals = overlap.rows, overlap.cols, overlap.values
    if cols.size:
        order = np.lexsort((rows, -vals, cols))
        c = cols[order]
        first = order[np.r_[True, c[1:] != c[:-1]]]
        out[cols[first]] = ref_classes[rows[first]]
    return out


def score_classes(
    reference: ObjectSet,
    submission: ObjectSet,
    overlap: Overlap,
    all_results: dict[str, MatcherResult],
    matcher_params: dict[str, dict[str, Any]],
    *,
    mallows_options: dict[str, Any] | None = None,
) -> PerClass | None:
    """Score every class of ``reference`` on its own.

    Parameters
    ----------
    reference, submission : ObjectSet
        The scene; ``reference.classes`` holds the classes (else ``None`` is
        returned). ``submission.classes``, when present, is used as well.
    overlap, all_results, matcher_params, mallows_options
        The all-classes scene, as in :func:`geoeval.scoring.subset.score_subset`
        (the all-classes Mallows scores are reused).

    Returns
    -------
    PerClass or None
    """
    ref_cls = class_labels(reference.classes)
    if ref_cls is None:
        return None
    sub_cls = class_labels(submission.classes)
    source = FROM_FIELD
    if sub_cls is None:
        sub_cls = inherit_classes(overlap, ref_cls)
        source = FROM_REFERENCE
    names = sorted({c for c in ref_cls if c is not None} | {c for c in sub_cls if c is not None})
    classes = score_groups(reference, submission, overlap, ref_cls, sub_cls, names, all_results,
                           matcher_params, mallows_options)
    unclassified = int(np.count_nonzero([c is None for c in sub_cls]))
    return PerClass(source, unclassified, classes)
