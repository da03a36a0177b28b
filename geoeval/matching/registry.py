"""The registry of matchers: name → :class:`Matcher`, one entry each.

Every later stage reads this table instead of naming matchers: scoring runs
:meth:`Matcher.run` with the keywords :meth:`Matcher.arguments` picks from the
scoring options and reports :attr:`Matcher.parameters`; the measures compute
the accuracy :attr:`Matcher.accuracy` names
(:func:`geoeval.measures.counts.scene_measures`, the same formula for one
scene, bootstrap replicates, pooled scenes and the error breakdown); the
command line offers :func:`names` as choices and the report prints
:attr:`Matcher.title`, :attr:`Matcher.header` and :attr:`Matcher.accuracy_label`.

A new matcher is one module (a function ``f(overlap, **arguments) -> Matching``)
and one :func:`register` call (below, or in a plug-in at import time).

Each parameter (:class:`Parameter`) carries its rule (range, default, help) so
that the API checks and the command-line options derive from one place.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from geoeval import validate
from geoeval.errors import InputError

#: Accuracy rules (what the measures compute for a matcher, ``geoeval.measures.counts``):
#: matched overlap over the union of all objects (Özdemir et al. 2010, eq. 1) …
MATCHED_AREA = "matched_area"
#: … the mean of the instances' own scores (``Matching.arrays.score``; Hoover eq. 2, mean IoU) …
INSTANCE_SCORE = "instance_score"
#: … or the scene Mallows score of the instances (eq. 13).
MALLOWS = "mallows"
ACCURACY_RULES: tuple[str, ...] = (MATCHED_AREA, INSTANCE_SCORE, MALLOWS)


@dataclass(frozen=True)
class Parameter:
    """One matcher parameter and its rule.

    Attributes
    ----------
    keyword : str
        Keyword of :func:`geoeval.score` and key of the report's ``parameters``
        (``hoover_threshold``); the command-line option is :attr:`option`.
    argument : str
        Keyword of the matcher function (``threshold``).
    default : float or None
        Value when not given (``None``: the rule is off).
    help : str
        What it is, for ``--help`` (followed there by its range) and the docs.
    rule : geoeval.validate.Rule
        Its valid range (the API's check and the command line's, one rule).
    symbol : str
        Short name in plain-language texts (``T``).
    """

    keyword: str
    argument: str
    default: float | None
    help: str
    rule: validate.Rule
    symbol: str = ""

    @property
    def option(self) -> str:
        """The command-line option: ``--`` and the keyword with dashes."""
        return "--" + self.keyword.replace("_", "-")

    @property
    def range(self) -> str:
        """The valid range in words (``in (0.5, 1]``)."""
        return self.rule.text

    def check(self, value: Any, name: str | None = None) -> Any:
        """``value`` if it obeys the rule (``None`` passes), else
        :class:`~geoeval.validate.BadValue` naming ``name`` (default :attr:`keyword`)."""
        return self.rule.check(name or self.keyword, value)


@dataclass(frozen=True)
class Matcher:
    """One registered matcher.

    Attributes
    ----------
    name : str
        Registry key (``--matcher``, the report's ``results`` keys).
    function : callable or str
        ``f(overlap, **arguments) -> Matching``, or ``"module:function"``
        imported on first use (so that a solver is imported only when needed).
    accuracy : str
        One of :data:`ACCURACY_RULES`.
    title : str
        Plain-language name (``Hoover et al.'s tolerance rule``).
    allows : str
        What it allows, in words; ``{keyword}`` fields are the parameters' values.
    header : str
        Short words under its column header, formatted like ``allows``.
    accuracy_label : str
        Short name of its accuracy (``hoover eq. 2``).
    accuracy_words : str
        Its accuracy in words, with the source.
    parameters : tuple of Parameter
    one_to_one : bool
        Every instance pairs one reference with one submitted object.
    source : str
        Where the matching comes from (authors, year, section).
    partitionable : bool
        It matches each overlap component on its own (the instances of a component
        depend on that component alone), so the Dask engine may solve a scene's
        components in different tasks (:mod:`geoeval.scoring.dispatch`).
    """

    name: str
    function: Callable[..., Any] | str
    accuracy: str
    title: str
    allows: str
    header: str
    accuracy_label: str
    accuracy_words: str
    parameters: tuple[Parameter, ...] = ()
    one_to_one: bool = False
    source: str = ""
    partitionable: bool = False

    def __post_init__(self) -> None:
        if self.accuracy not in ACCURACY_RULES:
            raise ValueError(f"matcher {self.name!r}: accuracy {self.accuracy!r} is not one of "
                             f"{', '.join(ACCURACY_RULES)}")

    @property
    def scores_instances(self) -> bool:
        """Its instances carry their own score (a perfect one scores 1)."""
        return self.accuracy == INSTANCE_SCORE

    def callable(self) -> Callable[..., Any]:
        """The matcher function (imported on first use when given by name)."""
        if not isinstance(self.function, str):
            return self.function
        module, _, attr = self.function.partition(":")
        return getattr(importlib.import_module(module), attr)

    def arguments(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The matcher function's keywords from scoring options (by parameter
        keyword; the default where one is absent)."""
        return {p.argument: options.get(p.keyword, p.default) for p in self.parameters}

    def run(self, overlap: Any, **arguments: Any) -> Any:
        """Match ``overlap``: ``function(overlap, **arguments)``."""
        return self.callable()(overlap, **arguments)

    def words(self, text: str, values: Mapping[str, Any] | None = None) -> str:
        """``text`` (:attr:`allows` or :attr:`header`) with its parameters' values
        (given ones, else the defaults)."""
        fields = {p.keyword: (values or {}).get(p.keyword, p.default) for p in self.parameters}
        return text.format(**fields)


HOOVER_THRESHOLD = Parameter(
    "hoover_threshold", "threshold", 0.6, "Hoover threshold T",
    validate.Rule(low=0.5, high=1.0, low_open=True,
                  why="below one half an object could be part of two correct detections "
                      "(Hoover et al. 1996, §3.1)"), symbol="T")
IOU_THRESHOLD = Parameter(
    "iou_threshold", "threshold", 0.5, "IoU matcher threshold", validate.IOU, symbol="t")
MIN_OVERLAP = Parameter(
    "min_overlap", "min_overlap", None,
    "MOM: minimum overlap as a fraction of the smaller object",
    validate.Rule(low=0.0, high=1.0, why="a fraction of the smaller object"))

_MATCHERS: dict[str, Matcher] = {}
#: Every registered parameter by keyword, in the order the report lists them.
_PARAMETERS: dict[str, Parameter] = {
    p.keyword: p for p in (HOOVER_THRESHOLD, IOU_THRESHOLD, MIN_OVERLAP)}


def register(matcher: Matcher) -> Matcher:
    """Add ``matcher`` to the registry (its name must be new, its parameters'
    keywords new or the same parameter)."""
    if matcher.name in _MATCHERS or matcher.name == "all":
        raise ValueError(f"a matcher called {matcher.name!r} is already registered")
    for p in matcher.parameters:
        if _PARAMETERS.get(p.keyword, p) != p:
            raise ValueError(f"parameter {p.keyword!r} is already registered with another rule")
    _MATCHERS[matcher.name] = matcher
    for p in matcher.parameters:
        _PARAMETERS.setdefault(p.keyword, p)
    return matcher


def entries(names: Iterable[str]) -> dict[str, Matcher]:
    """The entries of the matchers ``names`` by name (:func:`get`: an unknown name is an
    :class:`~geoeval.errors.InputError`), to hand to another process whose registry may
    lack them (a Dask worker)."""
    return {n: get(n) for n in names}


def unregister(name: str) -> None:
    """Remove a matcher (and the parameters only it had) from the registry."""
    gone = _MATCHERS.pop(name)
    used = {p.keyword for m in _MATCHERS.values() for p in m.parameters}
    for p in gone.parameters:
        if p.keyword not in used:
            _PARAMETERS.pop(p.keyword, None)


@contextmanager
def registered(matcher: Matcher) -> Iterator[Matcher]:
    """``matcher`` registered for the ``with`` block only (tests, experiments)."""
    register(matcher)
    try:
        yield matcher
    finally:
        unregister(matcher.name)


def names() -> tuple[str, ...]:
    """Names of the registered matchers, in registration order."""
    return tuple(_MATCHERS)


def get(name: str) -> Matcher:
    """The registered matcher called ``name``.

    Raises
    ------
    InputError
        Unknown name (the message lists the known ones).
    """
    try:
        return _MATCHERS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown matcher {name!r} (choose from {', '.join(_MATCHERS)})") \
            from None


def parameters() -> tuple[Parameter, ...]:
    """Every registered parameter, in report order."""
    return tuple(_PARAMETERS.values())


def parameter(keyword: str) -> Parameter:
    """The registered parameter ``keyword`` (:class:`InputError` listing the known ones)."""
    try:
        return _PARAMETERS[keyword]
    except KeyError:
        raise InputError(f"unknown matcher parameter {keyword!r} (known: "
                         f"{', '.join(_PARAMETERS)})") from None


def accuracy_rule(name: str) -> str:
    """The accuracy rule of matcher ``name`` (:data:`ACCURACY_RULES`)."""
    return get(name).accuracy


register(Matcher(
    "bgm", "geoeval.matching.bgm:match_bgm", MATCHED_AREA,
    title="bipartite graph matching",
    allows="one detection per reference object at most, for the most total overlap",
    header="one-to-one",
    accuracy_label="bgm eq. 1",
    accuracy_words="matched area / area of all objects (Özdemir et al. 2010, eq. 1)",
    one_to_one=True, partitionable=True,
    source="Jiang, Marti, Irniger & Bunke 2006; Özdemir et al. 2010, §4.1.1"))
register(Matcher(
    "hoover", "geoeval.matching.hoover:match_hoover", INSTANCE_SCORE,
    title="Hoover et al.'s tolerance rule",
    allows="splits and merges too, when the pieces cover at least {hoover_threshold:g} of "
           "each other",
    header="splits ≥ {hoover_threshold:g}",
    accuracy_label="hoover eq. 2",
    accuracy_words="mean (s1 + s2)/2 of the correct, over- and under-detections "
                   "(Hoover et al. 1996; Özdemir et al. 2010, eq. 2)",
    parameters=(HOOVER_THRESHOLD,), partitionable=True,
    source="Hoover et al. 1996; Özdemir et al. 2010, §4.1.2"))
register(Matcher(
    "mom", "geoeval.matching.mom:match_mom", MALLOWS,
    title="multi-object maximum overlap",
    allows="splits and merges too, with any overlap, for the most total overlap",
    header="splits, merges",
    accuracy_label="mom Mallows eq. 13",
    accuracy_words="Mallows shape score (Özdemir et al. 2010, §4.2, eq. 13)",
    parameters=(MIN_OVERLAP,), partitionable=True,
    source="Özdemir et al. 2010, §4.1.3"))
register(Matcher(
    "iou", "geoeval.matching.iou:match_iou", INSTANCE_SCORE,
    title="one-to-one matching at an IoU threshold",
    allows="one detection per reference object at most, and only at IoU ≥ {iou_threshold:g}",
    header="IoU ≥ {iou_threshold:g}",
    accuracy_label="iou mean IoU",
    accuracy_words="mean IoU of the pairs",
    parameters=(IOU_THRESHOLD,),
    one_to_one=True, partitionable=True,
    source="SpaceNet (Van Etten et al. 2018); Everingham et al. 2010"))

#: The built-in matchers (``matchers=`` default: all of them).
BUILTIN: tuple[str, ...] = names()
