"""A contest: score every submission against one reference, then rank them.

The indicators are each submission's precision, recall and accuracy under one
matcher (Özdemir et al. 2010, §4.3, Figs. 5–7); the ranking is
:func:`geoeval.ranking.api.rank_indicators` (Hasse diagram, rank intervals,
rank frequencies, iterated CRF operator).
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from geoeval.errors import InputError, StrictError
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
from geoeval.scoring.options import check_keywords, score_options
from geoeval.scoring.scene import read_reference, score

#: The matcher a contest ranks by unless told (its accuracy the Mallows score).
DEFAULT_MATCHER = "mom"


def rank(
    reference: str | os.PathLike[str],
    submissions: Sequence[str | os.PathLike[str]],
    *,
    matchers: str | Sequence[str] = DEFAULT_MATCHER,
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
    matchers : str or sequence of one str
        The matcher of :mod:`geoeval.matching.registry` (``mom``, ``bgm``, ``hoover``,
        ``iou``) whose precision, recall and accuracy (Özdemir et al. 2010, Figs. 5–7) are
        the indicators; for ``mom`` the accuracy is the scene Mallows score. The keyword
        :func:`geoeval.score` takes, with one matcher; ``matcher=``, its former name,
        still works with a :class:`DeprecationWarning`.
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
        dropped from the indicators (noted in ``notes``). Its ``warnings`` are the
        reference's (once), then each submission's, named (``s2: 1 of 9 feature(s)
        skipped …``); with ``strict=True`` (``--strict``) the first that has any is
        refused with :class:`~geoeval.errors.StrictError` naming it, as soon as they
        are known (before the submissions, for the reference's).
    """
    matcher = one_matcher(matchers, options, "geoeval.scoring.rank")
    check_keywords(options, _OWN, "geoeval.rank")
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
    warned = list(ref.warnings)  # the reference's, once (each score repeats them)
    # a region: each score reads the reference's region itself, as `score` does (two
    # label rasters then share their window)
    scored_against = reference if value.region is not None else ref
    if value.strict and warned:  # known from reading the reference: refused before any
        raise StrictError(warned, _strict())
    left = TimeLeft(warm_up=0)  # every submission costs alike: measured from the first
    left.text(0, len(labels))
    for k, (label, path) in enumerate(zip(labels, submissions, strict=True), start=1):
        try:
            result = score(scored_against, path, value,
                           progress=_within(progress, matcher, label, k, len(labels), left))
        except StrictError as exc:  # the submission named, as in the contest's warnings
            raise StrictError([f"{label}: {w}" for w in exc.warnings], exc.label) from None
        own = [f"{label}: {w}" for w in result.warnings if w not in ref.warnings]
        if value.strict and own:  # known once it is scored: refused before the next one
            raise StrictError(own, _strict())
        warned += own
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
        undefined=functools.partial(_undefined, matcher),
    )
    ranked = replace(ranked, warnings=tuple(warned))
    if bootstrap is None:
        return ranked
    from geoeval.scoring.contest_bootstrap import contest_bootstrap

    if progress is not None:
        progress("bootstrap")
    boot = contest_bootstrap(ref, scored, matcher, ranked.indicators, n=bootstrap, seed=seed,
                             confidence=confidence, block_size=block_size)
    return replace(ranked, bootstrap=boot)


#: :func:`rank`'s own keywords (besides :func:`~geoeval.scoring.options.score_options`'),
#: for the message of a keyword mistyped.
_OWN = tuple(n for n in inspect.signature(rank).parameters
             if n not in ("reference", "submissions", "options"))


def one_matcher(matchers: str | Sequence[str], options: dict[str, Any],
                function: str, stacklevel: int = 3) -> str:
    """The one matcher a contest ranks by: ``matchers`` (a name, or a sequence of one),
    or the deprecated ``matcher=`` taken out of ``options`` with a
    :class:`DeprecationWarning` (``stacklevel`` pointing at the caller of ``function``);
    :class:`InputError` for several matchers, or an unknown one.

    Examples
    --------
    >>> one_matcher("bgm", {}, "rank"), one_matcher(["iou"], {}, "rank")
    ('bgm', 'iou')
    >>> one_matcher(["bgm", "iou"], {}, "geoeval.rank")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geoeval.errors.InputError: geoeval.rank ranks by one matcher's ... give one, e.g. matchers='bgm'
    """
    if "matcher" in options:  # its name before it was matchers=, as geoeval.score's
        old = options.pop("matcher")
        if matchers != DEFAULT_MATCHER and list(_names(matchers)) != [old]:
            raise InputError(f"{function}: matcher={old!r} and matchers={matchers!r} given; "
                             "give matchers= only (matcher= is its former name)")
        warnings.warn(f"{function}(matcher=...) is deprecated: use matchers= (the keyword "
                      "geoeval.score takes)", DeprecationWarning, stacklevel=stacklevel)
        matchers = old
    names = _names(matchers)
    if len(names) != 1:
        raise InputError(f"{function} ranks by one matcher's precision, recall and "
                         f"accuracy, got {len(names)} ({', '.join(map(str, names))}): give "
                         f"one, e.g. matchers={(names or ['mom'])[0]!r}")
    registry.get(names[0])  # InputError naming the registered matchers
    return names[0]


def _names(matchers: str | Sequence[str]) -> list[Any]:
    return [matchers] if isinstance(matchers, str) else list(matchers)


def _undefined(matcher: str, name: str, column: str) -> str:
    """Why submission ``name``'s ``column`` is undefined while the others' are not
    (:func:`~geoeval.ranking.api.rank_indicators`' ``undefined``): precision with no
    submitted object (Özdemir et al. 2010, eq. 14), an accuracy averaged over matched
    objects with none matched."""
    why = ("has no objects" if column == "precision"
           else f"matched no reference object with {matcher}")
    return (f"submission {name!r} {why}: its {column} is undefined, so it cannot be "
            "ranked against the others (fix it or leave it out of the contest)")


def _strict() -> str:
    """``--strict`` or ``strict=True``, as the caller knows it."""
    from geoeval.validate import option_name

    return option_name("strict", switch=True)


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
