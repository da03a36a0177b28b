"""Public ranking API: indicators in, :class:`RankingResult` out.

``rank_indicators`` ranks a mapping ``name → {indicator: value}``;
``rank_table`` reads the same from a CSV file; ``rank`` scores submissions
against a reference with one matcher first (precision, recall and that
matcher's accuracy) and ranks them. The ``geoeval rank`` command calls only
these.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from geoeval.encoding import number
from geoeval.errors import InputError, printable
from geoeval.ranking.crf import DEFAULT_MAX_ROUNDS, CRFRound, fallback, final_order, iterate_crf
from geoeval.ranking.extensions import (
    DEFAULT_BATCHES,
    DEFAULT_MAX_STATES,
    ExtensionStats,
    rank_statistics,
)
from geoeval.ranking.places import Place
from geoeval.ranking.places import places as find_places
from geoeval.ranking.poset import Poset

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

@dataclass(frozen=True)
class RankingResult:
    """A contest ranked with Hasse diagrams and the iterated CRF operator.

    Attributes
    ----------
    names : tuple of str
        Submissions, in input order.
    indicators : tuple of str
        Indicators that defined the order (after dropping undefined ones).
    values : dict
        ``name → {column: value}`` as given (original orientation), including
        the tie-break column.
    lower_is_better : tuple of str
        Indicators negated before comparing.
    tie_break : str or None
        Column used to break remaining ties (detection accuracy), or None.
    poset : Poset
        The dominance order of the indicators (round 0).
    stats : ExtensionStats
        Rank statistics of that order (exact or sampled; ``stats.method``).
    rounds : tuple of CRFRound
        The CRF rounds.
    converged : bool
        True iff the last order was linear up to ties; else the fallback was used.
    stop_reason : str
        Why the CRF iteration stopped.
    ranking : tuple of str
        Final ranking, best first.
    ties : tuple of dict
        Ties the CRF order left and how they were broken.
    notes : tuple of str
        Human-readable remarks (dropped indicators, sampling fallback …).
    matcher : str or None
        Matcher used to score the submissions (``rank`` only).
    bootstrap : dict or None
        Paired spatial block bootstrap of the contest (``rank(bootstrap=N)``):
        the share of replicates in which each entry is undominated, rank
        intervals, dominance frequencies.
    warnings : tuple of str
        What scoring the submissions accepted with a remark (``rank`` only): the
        reference's reading warnings, then each submission's, prefixed with its name
        (``s2: …``); the CLI prints them, ``--strict`` refuses them.
    """

    names: tuple[str, ...]
    indicators: tuple[str, ...]
    values: dict[str, dict[str, float | None]]
    lower_is_better: tuple[str, ...]
    tie_break: str | None
    poset: Poset
    stats: ExtensionStats
    rounds: tuple[CRFRound, ...]
    converged: bool
    stop_reason: str
    ranking: tuple[str, ...]
    ties: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = field(default=())
    matcher: str | None = None
    bootstrap: dict[str, Any] | None = None  # geoeval.scoring.contest_bootstrap (paired)
    warnings: tuple[str, ...] = ()

    # ------------------------------------------------------------------ views
    def __repr__(self) -> str:
        names = list(self.ranking)
        shown = ", ".join(names if len(names) <= 5 else [*names[:4], "…", names[-1]])
        n = len(names)
        fixed = int(np.count_nonzero(self.poset.better))
        share = float(self.stats.probabilities()[self.names.index(names[0]), 0])
        return (f"<RankingResult of {n}: {shown} (best first) on {', '.join(self.indicators)}; "
                f"{fixed} of {n * (n - 1) // 2} pair{'' if n == 2 else 's'} ordered by "
                f"dominance; {names[0]} first "
                f"in {100 * share:.0f}% of the orderings>")

    @property
    def method(self) -> str:
        """``"exact"`` or ``"mcmc"`` (round 0)."""
        return self.stats.method

    @property
    def linear_extensions(self) -> int | None:
        """Exact number of linear extensions of the indicator order, or None."""
        return self.stats.linear_extensions

    @property
    def final_rank(self) -> dict[str, int]:
        """``name → final rank`` (1 = best)."""
        return {name: r + 1 for r, name in enumerate(self.ranking)}

    @property
    def rank_intervals(self) -> dict[str, tuple[int, int]]:
        """``name → (best, worst)`` possible rank (Özdemir et al. 2010, eq. 18)."""
        return dict(zip(self.names, self.poset.rank_intervals(), strict=True))

    @property
    def rank_frequencies(self) -> dict[str, list[int] | list[float]]:
        """``name → f(1..n)``: counts if exact, probabilities if sampled (eq. 19)."""
        return dict(zip(self.names, self.stats.rank_frequencies, strict=True))

    @property
    def expected_ranks(self) -> dict[str, float]:
        """``name → expected rank`` over the linear extensions of round 0."""
        return {n: float(e) for n, e in zip(self.names, self.stats.expected_ranks(), strict=True)}

    @property
    def deciding_round(self) -> int:
        """The CRF round whose order decided the ranking: the last one computed
        (0, the indicator order itself, when no round was needed)."""
        return self.rounds[-1].round if self.rounds else 0

    @property
    def deciding_stats(self) -> ExtensionStats:
        """Linear-extension statistics of :attr:`deciding_round`."""
        return self.rounds[-1].stats if self.rounds else self.stats

    @property
    def deciding_expected_ranks(self) -> dict[str, float]:
        """``name → expected rank`` in :attr:`deciding_round`: never out of step
        with :attr:`ranking` (ties in it are broken by accuracy, then name)."""
        return {n: float(e)
                for n, e in zip(self.names, self.deciding_stats.expected_ranks(), strict=True)}

    @property
    def ties_broken_by_accuracy(self) -> list[list[str]]:
        """Tied groups whose order the accuracy decided (at least in part)."""
        return [list(t["items"]) for t in self.ties if str(t["by"]).startswith("accuracy")]

    @cached_property
    def places(self) -> list[Place]:
        """Every entry, best first, with what put it above the next one: dominance,
        a CRF round, expected rank, the tie-break column or the name
        (:mod:`geoeval.ranking.places`)."""
        return find_places(self)

    @cached_property
    def by_tie_breaker(self) -> bool:
        """Whether a tie-breaker (the tie-break column or the name) set any place."""
        return any(p.by_tie_breaker for p in self.places)

    @property
    def tie_break_shown(self) -> str | None:
        """The tie-break column to show beside the indicators: when it set a place and
        is no indicator itself (``None`` otherwise)."""
        tb = self.tie_break
        return tb if self.by_tie_breaker and tb is not None and tb not in self.indicators \
            else None

    def hasse_edges(self) -> list[tuple[str, str]]:
        """Hasse edges of the indicator order as ``(worse, better)`` names."""
        return [(self.names[i], self.names[j]) for i, j in self.poset.hasse_edges()]

    def levels(self) -> list[list[str]]:
        """Hasse diagram levels, best first, as names."""
        return [[self.names[a] for a in lv] for lv in self.poset.levels()]

    def hasse(self) -> nx.DiGraph:
        """Hasse diagram (edges worse → better) with indicators on the nodes."""
        return self.poset.hasse_graph(
            {n: {k: self.values[n].get(k) for k in self.indicators} for n in self.names}
        )

    # ------------------------------------------------------------------ output
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready report (see ``docs/ranking.md`` for every field)."""
        st = self.stats
        sampling = None
        if st.method == "mcmc":
            sampling = {
                "chain": "adjacent transpositions (Karzanov-Khachiyan, Bubley-Dyer weights)",
                "samples": st.samples,
                "burn_in": st.burn_in,
                "batches": st.batches,
                "seed": st.seed,
                "acceptance": st.acceptance,
                "rank_probability_se": {
                    n: _floats(row) for n, row in zip(self.names, st.probability_se, strict=True)
                },
                "expected_rank_se": dict(
                    zip(self.names, _floats(st.expected_rank_se), strict=True)
                ),
            }
        return {
            "matcher": self.matcher,
            "indicators": list(self.indicators),
            "lower_is_better": list(self.lower_is_better),
            "tie_break": self.tie_break,
            "submissions": {n: dict(self.values[n]) for n in self.names},
            "method": st.method,
            "linear_extensions": st.linear_extensions,
            "linear_extensions_estimate": st.linear_extensions_estimate,
            "linear_extensions_rse": st.linear_extensions_rse,
            "states": st.states,
            "max_states": st.states_cap,
            "sampling": sampling,
            "hasse_edges": [list(e) for e in self.hasse_edges()],
            "levels": self.levels(),
            "rank_intervals": {n: list(v) for n, v in self.rank_intervals.items()},
            "rank_frequency_unit": "count" if st.exact else "probability",
            "rank_frequencies": {
                n: (list(row) if st.exact else _floats(row))
                for n, row in self.rank_frequencies.items()
            },
            "expected_ranks": self.expected_ranks,
            "deciding_round": self.deciding_round,
            "deciding_expected_ranks": self.deciding_expected_ranks,
            "rounds": [_round_dict(rd) for rd in self.rounds],
            "n_rounds": len(self.rounds),
            "converged": self.converged,
            "stop_reason": self.stop_reason,
            "fallback": None if self.converged else fallback(self.tie_break),
            "ranking": list(self.ranking),
            "final_rank": self.final_rank,
            "ties_broken": [dict(t) for t in self.ties],
            "ties_broken_by_accuracy": self.ties_broken_by_accuracy,
            "places": [p.to_dict() for p in self.places],
            "notes": list(self.notes) + list(st.notes),
            "bootstrap": self.bootstrap,
            "warnings": list(self.warnings),
        }


def _floats(row: Sequence[float] | np.ndarray | None) -> list[float | None]:
    if row is None:
        return []
    return [number(x) for x in row]


def _round_dict(rd: CRFRound) -> dict[str, Any]:
    names = rd.poset.names
    return {
        "round": rd.round,
        "method": rd.stats.method,
        "linear_extensions": rd.stats.linear_extensions,
        "linear_extensions_estimate": rd.stats.linear_extensions_estimate,
        "hasse_edges": [[names[i], names[j]] for i, j in rd.poset.hasse_edges()],
        "ties": [[names[a] for a in g] for g in rd.poset.ties],
        "linear_up_to_ties": rd.poset.is_linear_up_to_ties(),
    }


# ---------------------------------------------------------------------- ranking


def _as_float(value: object, where: str, path: object | None) -> float | None:
    """A finite float, or None for undefined (None, NaN, empty string)."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text == "" or text.lower() in ("nan", "null", "none", "na"):
            return None
        try:
            value = float(text)
        except ValueError:
            raise InputError(f"{where}: not a number: {value!r}", path) from None
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{where}: not a number: {value!r}", path) from None
    if math.isnan(x):
        return None
    if math.isinf(x):
        raise InputError(f"{where}: infinite value", path)
    return x


def rank_indicators(
    scores: Mapping[str, Mapping[str, object]],
    *,
    indicators: Sequence[str] | None = None,
    lower_is_better: Sequence[str] = (),
    tie_break: str | None = "accuracy",
    method: str = "auto",
    max_states: int = DEFAULT_MAX_STATES,
    samples: int | None = None,
    burn_in: int | None = None,
    batches: int = DEFAULT_BATCHES,
    seed: int = 0,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    matcher: str | None = None,
    source: object | None = None,
    lines: Mapping[str, int] | None = None,
    undefined: Callable[[str, str], str] | None = None,
) -> RankingResult:
    """Rank submissions from their indicators with Hasse diagrams and the CRF operator.

    Parameters
    ----------
    scores : mapping
        ``name → {indicator: value}``; values are numbers, or None/NaN when
        undefined.
    indicators : sequence of str, optional
        Columns that define the order; default every column of the first entry
        except the name.
    lower_is_better : sequence of str
        Indicators where smaller is better (negated before comparing).
    tie_break : str or None
        Column that breaks the remaining ties, higher first (detection accuracy);
        if it is absent, ties are broken by name and a note says so.
    method : {"auto", "exact", "mcmc"}
        Exact counting while the up-sets stay within ``max_states``, else
        sampling (``auto``); or force one.
    max_states : int
        Cap on the number of up-sets for exact counting.
    samples, burn_in, batches, seed : int
        Markov chain settings (see
        :func:`geoeval.ranking.extensions.sample_rank_frequencies`).
    max_rounds : int
        Limit on CRF rounds; beyond it the fallback orders by expected rank.
    matcher : str, optional
        Recorded in the result (``rank`` sets it).
    source, lines : optional
        File and line numbers used in error messages (``rank_table``).
    undefined : callable, optional
        ``undefined(name, column)``: the message of the error when ``name``'s
        ``column`` is undefined but another submission's is defined, saying what the
        caller can do (``rank`` names the submission's missing objects). Default: the
        submission and column (with its line), and to choose the indicators
        (``indicators=``, ``--indicators`` in the CLI) or fix the input.

    Returns
    -------
    RankingResult

    Notes
    -----
    ``a < b`` iff every indicator of ``a`` is ≤ that of ``b`` and the vectors
    differ; identical vectors are tied, i.e. incomparable (an antichain of
    equal elements, counted both ways round in the linear extensions). Rank
    interval ``|U_a| + 1 ≤ r ≤ |S| − |L_a|`` (Özdemir et al. 2010, eq. 16–18), rank frequencies
    (eq. 19), CRF operator (Patil & Taillie 2004). An indicator undefined for
    every submission is dropped (noted); one undefined for only some is an error.

    Examples
    --------
    >>> r = rank_indicators({"A": {"precision": 0.9, "recall": 0.5},
    ...                      "B": {"precision": 0.6, "recall": 0.8},
    ...                      "C": {"precision": 0.5, "recall": 0.4}})
    >>> r.linear_extensions, r.rank_intervals["C"]
    (2, (3, 3))
    """
    check_options(method, max_states, samples, burn_in, batches, max_rounds)
    names = [str(n) for n in scores]
    if not names:
        raise InputError("no submissions to rank", source)
    columns = list(indicators) if indicators is not None else None
    if columns is None:
        first = scores[next(iter(scores))]
        columns = [c for c in first if c != "name"]
    if not columns:
        raise InputError("no indicators to rank on", source)
    if len(set(columns)) != len(columns):
        raise InputError(f"indicator listed twice: {columns}", source)
    for col in lower_is_better:
        if col not in columns:
            raise InputError(f"lower-is-better column {col!r} is not an indicator", source)

    def where(name: str, col: str) -> str:
        line = (lines or {}).get(name)
        at = f"line {line}: " if line is not None else ""
        return f"{at}submission {name!r}, {col!r}"

    values: dict[str, dict[str, float | None]] = {}
    extra = [tie_break] if tie_break is not None and tie_break not in columns else []
    for name in names:
        row = scores[name]
        vals: dict[str, float | None] = {}
        for col in columns:
            if col not in row:
                raise InputError(f"{where(name, col)}: no such column", source)
            vals[col] = _as_float(row[col], where(name, col), source)
        for col in extra:
            if col in row:
                vals[col] = _as_float(row[col], where(name, col), source)
        values[name] = vals

    def message(name: str, col: str) -> str:
        if undefined is not None:
            return undefined(name, col)
        from geoeval.validate import option_name

        return (f"{where(name, col)}: undefined (e.g. no objects); choose the indicators "
                f"with {option_name('indicators')} or fix the input")

    notes: list[str] = []
    used = []
    for col in columns:
        missing = [n for n in names if values[n][col] is None]
        if len(missing) == len(names):
            notes.append(f"indicator {col!r} is undefined for every submission: not used")
        elif missing:
            raise InputError(message(missing[0], col), source)
        else:
            used.append(col)
    if not used:
        raise InputError("no indicator is defined for every submission", source)

    sign = np.array([-1.0 if c in lower_is_better else 1.0 for c in used])
    matrix = np.array([[values[n][c] for c in used] for n in names], dtype=float) * sign
    poset = Poset.from_values(names, matrix)

    accuracy: list[float | None] | None = None
    if tie_break is not None and any(tie_break in values[n] for n in names):
        accuracy = [values[n].get(tie_break) for n in names]
        if all(a is None for a in accuracy):
            notes.append(f"tie-break column {tie_break!r} is undefined: ties broken by name")
            accuracy = None
        elif tie_break in lower_is_better:
            accuracy = [None if a is None else -a for a in accuracy]
    else:
        notes.append(
            "no tie-break column"
            + (f" {tie_break!r}" if tie_break else "")
            + ": remaining ties broken by name"
        )

    def count(p: Poset) -> ExtensionStats:
        return rank_statistics(
            p,
            method=method,
            max_states=max_states,
            samples=samples,
            burn_in=burn_in,
            batches=batches,
            seed=seed,
        )

    stats = count(poset)
    outcome = iterate_crf(poset, stats, count, max_rounds)
    last_poset, last_stats = (
        (outcome.rounds[-1].poset, outcome.rounds[-1].stats) if outcome.rounds else (poset, stats)
    )
    order, ties = final_order(last_poset, last_stats, outcome.converged, accuracy)
    if not outcome.converged:
        used_tie_break = tie_break if accuracy is not None else None
        notes.append(f"CRF stopped ({outcome.stop_reason}): ordered by "
                     f"{fallback(used_tie_break)}")
    if any(rd.stats.method == "mcmc" for rd in outcome.rounds) or stats.method == "mcmc":
        notes.append("sampled rank frequencies: CRF comparisons use estimates")
    return RankingResult(
        names=tuple(names),
        indicators=tuple(used),
        values=values,
        lower_is_better=tuple(c for c in lower_is_better if c in used),
        tie_break=tie_break if accuracy is not None else None,
        poset=poset,
        stats=stats,
        rounds=outcome.rounds,
        converged=outcome.converged,
        stop_reason=outcome.stop_reason,
        ranking=tuple(names[a] for a in order),
        ties=tuple(ties),
        notes=tuple(notes),
        matcher=matcher,
    )


def check_options(
    method: str,
    max_states: int,
    samples: int | None,
    burn_in: int | None,
    batches: int,
    max_rounds: int,
) -> None:
    """Reject bad counting options with a one-line :class:`InputError`."""
    from geoeval import validate

    if method not in ("auto", "exact", "mcmc"):
        raise InputError(f"method must be auto, exact or mcmc, got {method!r}")
    for name, value in (("max_states", max_states), ("burn_in", burn_in),
                        ("max_rounds", max_rounds)):
        validate.check(name, value)  # one rule per option (geoeval.validate.RULES)
    validate.count("batches", batches, minimum=2)
    validate.count("samples", samples, minimum=batches)


def read_table(path: str | os.PathLike[str]) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
    """Read a CSV of indicators: a ``name`` column and one column per indicator.

    Returns ``(rows, lines)``: ``name → {column: text}`` and ``name → line number``.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", p)
    try:
        with p.open(newline="", encoding="utf-8-sig") as fh:
            sample = fh.read(4096)
            fh.seek(0)
            try:
                dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
            except csv.Error:
                dialect = csv.excel
            reader = csv.reader(fh, dialect)
            header = next(reader, None)
            if header is None:
                raise InputError("empty file", p)
            header = [h.strip() for h in header]
            if "name" not in header:
                raise InputError(f"line 1: no 'name' column (columns: {header})", p)
            if len(set(header)) != len(header):
                raise InputError(f"line 1: a column appears twice: {header}", p)
            rows: dict[str, dict[str, str]] = {}
            lines: dict[str, int] = {}
            for row in reader:
                if not row or all(not c.strip() for c in row):
                    continue
                line = reader.line_num
                if len(row) != len(header):
                    raise InputError(f"line {line}: {len(row)} fields, expected {len(header)}", p)
                rec = dict(zip(header, (c.strip() for c in row), strict=True))
                name = rec.pop("name")
                if not name:
                    raise InputError(f"line {line}: empty name", p)
                if name in rows:
                    raise InputError(f"line {line}: name {name!r} already on line {lines[name]}", p)
                rows[name] = rec
                lines[name] = line
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", p) from None
    if not rows:
        raise InputError("no rows", p)
    return rows, lines


def rank_table(
    path: str | os.PathLike[str],
    *,
    indicators: Sequence[str] | None = None,
    lower_is_better: Sequence[str] = (),
    tie_break: str | None = "accuracy",
    **options: Any,
) -> RankingResult:
    """Rank precomputed indicators read from a CSV file (``geoeval rank --table``).

    Parameters
    ----------
    path : path-like
        CSV with a ``name`` column and one column per indicator (comma,
        semicolon or tab separated; empty cells or ``nan`` are undefined).
    indicators : sequence of str, optional
        Columns to rank on; default every column but ``name``. The tie-break
        column need not be among them.
    lower_is_better, tie_break, **options
        As in :func:`rank_indicators`.

    Returns
    -------
    RankingResult
    """
    rows, lines = read_table(path)
    header = list(next(iter(rows.values())))
    if indicators is not None:
        for col in indicators:
            if col not in header:
                raise InputError(f"no column {col!r} (columns: {['name', *header]})", path)
    return rank_indicators(
        rows,
        indicators=indicators if indicators is not None else header,
        lower_is_better=lower_is_better,
        tie_break=tie_break,
        source=path,
        lines=lines,
        **options,
    )


def submission_names(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Short unique names for submission files: the file stem, or more of the
    path when two stems clash (with the suffix when only it differs: ``s5.shp``,
    ``s5.gpkg``); one file given twice (however spelt) is an error naming it."""
    from geoeval.io.locations import is_url, locate

    # a URL by its bucket and key (a web URL's query, where a signature lives, left out)
    paths = [locate(os.fspath(q)).url.split("?", 1)[0] if is_url(os.fspath(q))
             else q for q in paths]
    first: dict[str, str] = {}
    for p in (str(os.fspath(q)) for q in paths):
        key = p if is_url(p) else os.path.normcase(os.path.abspath(p))
        if key in first:
            also = "" if first[key] == p else f" (also as {printable(first[key])})"
            raise InputError(f"the same submission is given twice: {printable(p)}{also}")
        first[key] = p
    for keep_suffix in (False, True):
        parts = [(Path(p) if keep_suffix else Path(p).with_suffix("")).parts for p in paths]
        for depth in range(1, max(len(pp) for pp in parts) + 1):
            names = [Path(*pp[-depth:]).as_posix() for pp in parts]
            if len(set(names)) == len(names):
                return [printable(n) for n in names]  # names go into reports: valid UTF-8
    raise InputError(f"submissions without distinct names: {names}")  # pragma: no cover
