"""Class confusion in the error breakdown: what each class's scores would be if
every matched submitted object had the class of the reference it matches.

The all-classes measures ignore classes, so a class error shows only in the
per-class scores (:mod:`geoeval.scoring.classes`): a submitted object of the
wrong class is, in its own class, a false alarm and, in the reference's class,
a miss. The fix (TIDE's oracle delta, Bolya et al. 2020, §2.3, for the
classification error) gives every submitted object inside an instance of the
all-classes matching the class of the reference of its instance that it
overlaps most (the rule :func:`~geoeval.scoring.classes.inherit_classes` uses),
then re-scores every class with the same matchers; false alarms keep their
class. Details: ``docs/breakdown.md``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from geoeval.matching.result import Matching
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap
from geoeval.scoring.classes import PerClass, class_labels, inherit_classes, score_classes
from geoeval.scoring.result import MatcherResult

#: Per-class measures of the class-confusion breakdown.
MEASURES: tuple[str, ...] = ("precision", "recall", "f1", "accuracy")


def matched_classes(matching: Matching, overlap: Overlap, ref_classes: np.ndarray,
                    sub_classes: np.ndarray) -> np.ndarray:
    """Submission classes with every matched object given its reference's class.

    Within each instance a submitted object takes the class of the instance's
    reference it overlaps most (ties: lowest reference index); objects in no
    instance keep their class.
    """
    a = matching.arrays
    inst_ref = np.full(overlap.n_reference, -1, np.int64)
    inst_ref[a.ref_idx] = a.ref_instance()
    inst_sub = np.full(overlap.n_submission, -2, np.int64)
    inst_sub[a.sub_idx] = a.sub_instance()
    same = inst_ref[overlap.rows] == inst_sub[overlap.cols]
    inside = replace(overlap, rows=overlap.rows[same], cols=overlap.cols[same],
                     values=overlap.values[same])
    best = inherit_classes(inside, ref_classes)
    out = np.asarray(sub_classes, dtype=object).copy()
    out[a.sub_idx] = best[a.sub_idx]
    return out


def class_confusion(reference: ObjectSet, submission: ObjectSet, overlap: Overlap,
                    results: dict[str, MatcherResult], matcher_params: dict[str, dict[str, Any]],
                    per_class: PerClass, *,
                    mallows_options: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """The class-confusion entry of each matcher's breakdown.

    Returns
    -------
    dict
        matcher -> ``{"count": confused submitted objects, "classes": {class:
        {"now": ..., "fixed": ..., "gain": ...}}}`` over :data:`MEASURES`
        (gain ``None`` where either side is undefined).
    """
    ref_cls = class_labels(reference.classes)
    sub_cls = class_labels(submission.classes)
    if sub_cls is None:
        sub_cls = inherit_classes(overlap, ref_cls)
    out: dict[str, dict[str, Any]] = {}
    for name, res in results.items():
        fixed_cls = matched_classes(res.matching, overlap, ref_cls, sub_cls)
        confused = int(np.count_nonzero(fixed_cls != sub_cls))
        fixed = score_classes(reference, replace(submission, classes=fixed_cls), overlap,
                              {name: res}, {name: matcher_params[name]},
                              mallows_options=mallows_options)
        classes = {}
        for c in sorted(set(per_class.classes) | set(fixed.classes)):
            now = _values(per_class.classes.get(c), name)
            then = _values(fixed.classes.get(c), name)
            classes[c] = {"now": now, "fixed": then,
                          "gain": {k: None if now[k] is None or then[k] is None
                                   else then[k] - now[k] for k in MEASURES}}
        out[name] = {"count": confused, "classes": classes}
    return out


def _values(cls: Any, matcher: str) -> dict[str, float | None]:
    if cls is None:
        return dict.fromkeys(MEASURES)
    r = cls.results[matcher]
    return {"precision": r.precision, "recall": r.recall, "f1": r.f1, "accuracy": r.accuracy}
