"""A contest: score every submission against one reference, then rank them.

The indicators are each submission's precision, recall and accuracy under one
matcher (Özdemir et al. 2010, §4.3, Figs. 5–7); the ranking is
:func:`geoeval.ranking.api.rank_indicators` (Hasse diagram, rank intervals,
rank frequencies, iterated CRF operator).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from geoeval.errors import InputError
from geoeval.matching import registry
from geoeval.progress import TimeLeft
from geoeval.ranking.api import (
    RankingResult,
    check_options,
    rank_indicators,
    submission_names,
)
from geoeval.ranking.crf import DEFAULT_MAX_ROUNDS
from geoeval.ranking.extensions import DEFAULT_BATCHES, DEFAULT_MAX_STATES
from geoeval.scoring.options import score_options
from geoeval.scoring.scene import read_reference, score


def rank(
    reference: str | os.PathLike[str],
    submissions: Sequence[str | os.PathLike[str]],
    *,
    matcher: str = "mom",
    names: Sequence[str] | None = None,
    method: str = "auto",
    max_states: int = DEFAULT_MAX_STATES,
    samples: int | None = None,
    burn_in: int | None = None,
    batches: int = DEFAULT_BATCHES,
    seed: int = 0,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    bootstrap: int | None = None,
    confidence: float = 0.95,
    block_size: float | None = None,
    progress: Callable[[str], None] | None = None,
    each: Callable[[str, Any], None] | None = None,
    **options: Any,
) -> RankingResult:
    """Score every submission against the reference with one matcher and rank them.

    Parameters
    ----------
    reference : path-like
        Reference raster or vector layer.
    submissions : sequence of path-like
        The submissions (at least one).
    matcher : str
        A matcher of :mod:`geoeval.matching.registry` (``mom``, ``bgm``, ``hoover``, ``iou``)
        whose precision, recall and accuracy (Özdemir et al. 2010, Figs. 5–7) are the
        indicators; for ``mom`` the accuracy is the scene Mallows score.
    **options
        The options of :func:`geoeval.scoring.score` (the matcher's parameters such as
        ``hoover_threshold``, ``iou_threshold``, ``min_overlap``; ``band``,
        ``background``, ``layer``, ``id_field``, ``crs``, ``reference_options``,
        ``submission_options``, ``resolution`` …), built once
        (:func:`geoeval.scoring.options.score_options`). The reference is read once.
    names : sequence of str, optional
        Submission names; default the file stems.
    method, max_states, samples, burn_in, batches, seed, max_rounds
        As in :func:`geoeval.ranking.api.rank_indicators`.
    bootstrap : int, optional
        Replicates of a paired spatial block bootstrap (same blocks for every
        submission, seeded by ``seed``): how often no submission dominates each
        one (it could be first), its rank interval and how often each dominance holds
        (:mod:`geoeval.scoring.contest_bootstrap`), in ``RankingResult.bootstrap``.
    confidence, block_size
        Coverage of the bootstrap intervals; block side in CRS units.
    progress : callable, optional
        Called with a text for each step: reading the reference, each submission's
        steps (``scoring: s2 (2/4) with mom, about 60 s left — Mallows score (mom):
        412/2,877 instances, about 5 s left``; the contest's time left once a
        submission is scored, the step's when it can be estimated), ranking.
    each : callable, optional
        Called as ``each(name, result)`` with every submission's
        :class:`~geoeval.scoring.ScoreResult` as soon as it is scored (the HTML
        report takes its per-entry part from it); nothing of it is kept here
        unless the bootstrap needs it.

    Returns
    -------
    RankingResult
        With ``matcher`` set; an accuracy undefined for every submission is
        dropped from the indicators (noted in ``notes``).
    """
    registry.get(matcher)  # InputError naming the registered matchers
    check_options(method, max_states, samples, burn_in, batches, max_rounds)
    value = score_options(matchers=(matcher,), **options)  # built and checked once
    if not submissions:
        raise InputError("no submissions to rank")
    labels = list(names) if names is not None else submission_names(submissions)
    if len(labels) != len(submissions):
        raise InputError(f"{len(labels)} names for {len(submissions)} submissions")
    if len(set(labels)) != len(labels):
        raise InputError(f"submission names are not unique: {labels}")
    table: dict[str, dict[str, object]] = {}
    scored: dict[str, Any] = {}
    if bootstrap is not None:
        from geoeval.scoring.bootstrap import check_bootstrap

        check_bootstrap(bootstrap, confidence, seed, block_size)
    if progress is not None:
        progress("reading the reference")
    ref = read_reference(reference, value)  # read once, scored many times
    left = TimeLeft(warm_up=0)  # every submission costs alike: measured from the first
    left.text(0, len(labels))
    for k, (label, path) in enumerate(zip(labels, submissions, strict=True), start=1):
        result = score(ref, path, value,
                       progress=_within(progress, matcher, label, k, len(labels), left))
        m = result.results[matcher]
        if each is not None:
            each(label, result)
        if bootstrap is not None:
            scored[label] = result
        table[label] = {"precision": m.precision, "recall": m.recall, "accuracy": m.accuracy}
    if progress is not None:
        progress("ranking")
    ranked = rank_indicators(
        table,
        indicators=("precision", "recall", "accuracy"),
        tie_break="accuracy",
        method=method,
        max_states=max_states,
        samples=samples,
        burn_in=burn_in,
        batches=batches,
        seed=seed,
        max_rounds=max_rounds,
        matcher=matcher,
    )
    if bootstrap is None:
        return ranked
    from dataclasses import replace

    from geoeval.scoring.contest_bootstrap import contest_bootstrap

    if progress is not None:
        progress("bootstrap")
    boot = contest_bootstrap(ref, scored, matcher, ranked.indicators, n=bootstrap, seed=seed,
                             confidence=confidence, block_size=block_size)
    return replace(ranked, bootstrap=boot)


def _within(progress: Callable[[str], None] | None, matcher: str, label: str, k: int,
            n: int, left: TimeLeft) -> Callable[[str], None] | None:
    """A submission's progress texts: ``scoring: s1 (1/4) with mom``, the contest's
    time left (:class:`geoeval.progress.TimeLeft` over the submissions scored), then
    the step of :func:`geoeval.scoring.scene.score` that runs. The step (the text
    before the first colon) stays ``scoring`` and its first count is the
    submission's: the QGIS plugin fills its bar from them (``rank_plan``)."""
    if progress is None:
        return None
    where = f"scoring: {label} ({k}/{n}) with {matcher}{left.text(k - 1, n) if k > 1 else ''}"
    progress(where)

    def report(step: str) -> None:
        progress(f"{where} — {step}")

    return report
