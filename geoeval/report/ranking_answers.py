"""A ranking read for the three questions an organiser is asked: *why is A above
B*, *how sure is this order*, *could another entry have won*.

Plain strings, so that the terminal (``geoeval rank``) and the contest page say
the same thing. Every number is the ranking's own
(:class:`~geoeval.ranking.api.RankingResult`, Özdemir et al. 2010, §4.3;
Patil & Taillie 2004):

* the *orderings the indicators allow* are the linear extensions of the
  dominance order; an entry's **share of them that rank it first** is the one
  probability of winning the page gives (every such ordering counted once);
* **dominance**: one entry at least as good as another on every indicator and
  better on one; with a bootstrap, how often it holds in the paired replicates
  (:mod:`geoeval.scoring.contest_bootstrap`), and how often an entry is
  **undominated** (no entry dominates it, so it could be ranked first);
* the cumulative rank frequency (CRF) operator, which orders two incomparable
  entries when one is in the top ``r`` of the orderings at least as often as the
  other for every ``r``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.ranking.places import TIE_BREAKERS, decided_by
from geoeval.report.explain import and_list, plural


@dataclass(frozen=True)
class Answer:
    """One question about a ranking and its answer in words."""

    key: str  # "why", "sure" or "won"
    question: str
    answer: str


def percent(share: float | None) -> str:
    """A share as a percentage that never rounds a possibility away: ``0.5%``
    for 0.005, ``99.5%`` for 0.995, whole percents otherwise.

    >>> [percent(x) for x in (0.0, 0.005, 0.566, 0.995, 1.0, None)]
    ['0%', '0.5%', '57%', '99.5%', '100%', '–']
    """
    if share is None or share != share:
        return "–"
    p = 100.0 * float(share)
    if 0 < p < 1 or 99 < p < 100:
        return f"{p:.1f}%"
    return f"{p:.0f}%"


def first_shares(result: Any) -> dict[str, float]:
    """``name → share`` of the orderings the indicators allow (linear extensions
    of round 0) that rank the entry first: exact, or estimated when sampled."""
    prob = result.stats.probabilities()
    return {name: float(prob[k, 0]) for k, name in enumerate(result.names)}


def orderings(result: Any) -> str:
    """``the 8,910 orderings the indicators allow`` (or about as many, sampled)."""
    st = result.stats
    if st.exact:
        n = st.linear_extensions
        return ("the orderings the indicators allow (here only one)" if n == 1 else
                f"the {n:,} orderings the indicators allow")
    est = st.linear_extensions_estimate
    about = f"about {est:.3g}" if est is not None else "the very many"
    return f"{about} orderings the indicators allow (sampled)"


def _oriented(result: Any) -> dict[str, np.ndarray]:
    sign = np.array([-1.0 if c in result.lower_is_better else 1.0 for c in result.indicators])
    return {n: np.array([result.values[n][c] for c in result.indicators], dtype=float) * sign
            for n in result.names}


def _on(result: Any, cols: list[int], a: str, b: str) -> str:
    """``recall (0.9707 against 0.9703) and accuracy (…)``: ``a``'s values first."""
    ind = result.indicators
    return and_list([f"{ind[c]} ({result.values[a][ind[c]]:.4f} against "
                     f"{result.values[b][ind[c]]:.4f})" for c in cols])


def trade_off(result: Any, a: str, b: str) -> str:
    """What each of two entries is better on, in words (empty when identical)."""
    v = _oriented(result)
    a_wins = list(np.flatnonzero(v[a] > v[b]))
    b_wins = list(np.flatnonzero(v[b] > v[a]))
    parts = []
    if a_wins:
        parts.append(f"{a} is better on {_on(result, a_wins, a, b)}")
    if b_wins:
        parts.append(f"{b} on {_on(result, b_wins, b, a)}" if a_wins else
                     f"{b} is better on {_on(result, b_wins, b, a)}")
    return ", ".join(parts)


def why_above(result: Any, a: str, b: str) -> str:
    """Why ``a`` is ranked above ``b``: a dominance, the CRF round that ordered
    them, the tie-break or the fallback, with the numbers that decided."""
    idx = {n: k for k, n in enumerate(result.names)}
    i, j = idx[a], idx[b]
    v = _oriented(result)
    if result.poset.better[j, i]:
        wins = list(np.flatnonzero(v[a] > v[b]))
        same = len(wins) < len(result.indicators)
        return (f"{a} is {'at least as good as' if same else 'better than'} {b} on every "
                f"indicator{f' and better on {_on(result, wins, a, b)}' if same else ''}"
                f"{'' if same else ': ' + _on(result, wins, a, b)}. It dominates {b}, so "
                "every ordering the indicators allow puts it above.")
    identical = bool(np.array_equal(v[a], v[b]))
    first = (f"{a} and {b} have the same {and_list(list(result.indicators))}: they are tied."
             if identical else
             f"Neither is better on every indicator: {trade_off(result, a, b)}.")
    for rd in result.rounds:
        if rd.poset.better[j, i]:
            shares = first_shares(result)
            if rd.round == 1:
                how = (f"Of {orderings(result)}, {a} is first in {percent(shares[a])} and "
                       f"{b} in {percent(shares[b])}, and {a} is among the top r at least as "
                       f"often as {b} for every rank r: the cumulative rank frequency (CRF) "
                       f"operator puts {a} above (Patil & Taillie 2004).")
            else:
                how = (f"The cumulative rank frequency (CRF) operator put {a} above in its "
                       f"round {rd.round}: in the orderings round {rd.round - 1}'s order "
                       f"allows, {a} is among the top r at least as often as {b} for every "
                       "rank r (Patil & Taillie 2004).")
            return f"{first} {how}"
    by, _ = decided_by(result, a, b)
    k = len(result.rounds)
    if by in TIE_BREAKERS:
        level = ("the cumulative rank frequency (CRF) operator leaves them level"
                 if result.converged else
                 "they have the same expected rank in "
                 + (f"CRF round {k}'s orderings" if k else orderings(result)))
        col = result.tie_break
        if by == "name":
            rule = "they are ordered by name" + (
                f" ({col} is equal or undefined for both)" if col else
                " (there is no tie-break column)")
        else:
            rule = (f"the tie-break, {col} ({_first(result)}), decides: "
                    f"{_number(result.values[a].get(col))} against "
                    f"{_number(result.values[b].get(col))}")
        return f"{first} {level.capitalize()}, so {rule}."
    expected = result.deciding_expected_ranks
    where = f"round {k}'s orderings" if k else orderings(result)
    return (f"{first} The CRF operator stopped ({result.stop_reason}) before ordering them, "
            f"so they are ordered by expected rank in {where}: {expected[a]:.3f} against "
            f"{expected[b]:.3f}.")


def _number(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.4f}"


def _first(result: Any) -> str:
    """``higher first`` or ``lower first``: the tie-break column's direction."""
    return "lower first" if result.tie_break in result.lower_is_better else "higher first"


def decided_words(result: Any, place: Any) -> str:
    """What put an entry above the next one, in a few words (a table cell):
    ``dominance``, ``CRF round 1``, ``E(rank)``, ``‡ accuracy`` or ``‡ name``
    (‡: a tie-breaker, not the indicators)."""
    by = place.decided_by
    if by is None:
        return ""
    if by == "crf":
        return f"CRF round {place.crf_round}"
    if by == "expected rank":
        return "E(rank)"
    if by == "tie-break":
        return f"‡ {result.tie_break}"
    return f"‡ {by}"


def order_sentence(result: Any) -> str:
    """How the places were set, truthfully: how many by dominance, by the CRF
    operator, by expected rank, and by the tie-breakers (the tie-break column,
    then the name).

    >>> from geoeval.ranking import rank_indicators
    >>> r = rank_indicators({"A": {"p": .9, "r": .5, "accuracy": .6},
    ...                      "B": {"p": .5, "r": .9, "accuracy": .7}}, indicators=["p", "r"])
    >>> print(order_sentence(r))  # doctest: +NORMALIZE_WHITESPACE
    Ordered by dominance and the CRF operator, then by expected rank, then by accuracy
    (higher first), then by name: 1 place set by the tie-breaker accuracy.
    """
    counts: dict[str, int] = {}
    for p in result.places:
        if p.decided_by is not None:
            counts[p.decided_by] = counts.get(p.decided_by, 0) + 1
    col = result.tie_break
    rule = ("Ordered by dominance and the CRF operator"
            + ("" if result.converged else ", then by expected rank")
            + (f", then by {col} ({_first(result)})" if col else "") + ", then by name")
    words = {"dominance": "by dominance", "crf": "by the CRF operator",
             "expected rank": "by expected rank", "tie-break": f"by the tie-breaker {col}",
             "name": "by name"}
    keys = [k for k in words if k in counts]
    parts = [f"{counts[k]:,} {plural(counts[k], 'place', 'places')} set {words[k]}" if i == 0
             else f"{counts[k]:,} {words[k]}" for i, k in enumerate(keys)]
    return rule + (": " + and_list(parts) if parts else "") + "."


def _need(result: Any, who: str, other: str) -> str:
    """``precision (1.0000; it has 0.9949)``: what ``who`` would need to be at least
    as good as ``other`` on every indicator ``other`` is better on."""
    v = _oriented(result)
    cols = list(np.flatnonzero(v[other] > v[who]))
    ind = result.indicators
    return and_list([f"{ind[c]} ({result.values[other][ind[c]]:.4f}; it has "
                     f"{result.values[who][ind[c]]:.4f})" for c in cols])


def tie_break_lines(result: Any) -> list[str]:
    """One sentence per place a tie-breaker set (the tie-break column, or the name):
    which entries, the numbers that decided, what each is better on, and which
    indicators would have to change for the indicators themselves to order the two
    (either one at least as good as the other on every indicator: a dominance,
    which every ordering keeps)."""
    out = []
    cols = and_list(list(result.indicators))
    for p in result.places:
        if not p.by_tie_breaker:
            continue
        a, b, col = p.name, p.next, result.tie_break
        if p.decided_by == "tie-break":
            head = (f"{a} is above {b} only by the tie-breaker, {col} ({_first(result)}): "
                    f"{_number(result.values[a].get(col))} against "
                    f"{_number(result.values[b].get(col))}")
        else:
            head = (f"{a} is above {b} only by name" +
                    (f" ({col} is equal or undefined for both)" if col else
                     " (there is no tie-break column)"))
        words = trade_off(result, b, a)
        if not words:
            out.append(f"{head}; they have the same {cols}, so the Hasse diagram cannot tell "
                       "them apart: the indicators would order them if either were better "
                       "on one of them.")
            continue
        out.append(f"{head}; the Hasse diagram leaves them incomparable: {words}. The "
                   f"indicators would put {b} above if it were at least as good on "
                   f"{_need(result, b, a)}, or keep {a} above if it were at least as good "
                   f"on {_need(result, a, b)}.")
    return out


def how_sure(result: Any) -> str:
    """How much of the order the indicators fix, how much rests on a trade-off,
    and, with a bootstrap, how often the dominances hold in the replicates."""
    names = list(result.ranking)
    n = len(names)
    pairs = n * (n - 1) // 2
    better = result.poset.better
    fixed = int(np.count_nonzero(better))
    shares = first_shares(result)
    top = names[0]
    parts = []
    if fixed == pairs:
        parts.append("The indicators fix the whole order: of every two entries one is at "
                     "least as good on every indicator and better on one.")
    else:
        rest = pairs - fixed
        parts.append(f"The indicators fix {fixed} of the {pairs} "
                     f"{plural(pairs, 'pair', 'pairs')} of entries (one at least "
                     "as good on every indicator); "
                     + ("the other rests" if rest == 1 else f"the other {rest} rest")
                     + f" on a trade-off between indicators, and the orderings they allow put "
                     f"{top} first in {percent(shares[top])} of cases.")
    boot = result.bootstrap
    if boot is None:
        parts.append("How much the order depends on which parts of the scene were scored is "
                     + ("not measured: rank with a bootstrap (--bootstrap N) to find out."
                        if result.matcher is not None else  # scored here, else a table
                        "not measured: precomputed indicators hold no scene to resample "
                        "(ranking the scenes with --bootstrap N would find out)."))
        return " ".join(parts)
    dom = boot["dominance"]
    conf = percent(boot["confidence"])
    over: dict[str, list[str]] = {}
    for a, b in boot["robust_edges"]:
        over.setdefault(a, []).append(b)
    robust = [f"{a} over {and_list(bs)}" for a, bs in over.items()]
    n_robust = len(boot["robust_edges"])
    parts.append(f"Resampling the scene ({boot['n']} paired spatial block bootstrap "
                 f"replicates, the same blocks for every entry), "
                 + (f"{n_robust} dominance{'s hold' if n_robust != 1 else ' holds'} in "
                    f"at least {conf} of them: {'; '.join(robust)}." if robust else
                    f"no dominance holds in {conf} of them."))
    if n > 1:
        second = names[1]
        ab, ba = dom[top][second], dom[second][top]
        parts.append(f"{top} dominates {second} in {percent(ab)} of the replicates and "
                     f"{second} dominates {top} in {percent(ba)}"
                     + ("; their order rests on the trade-off, not on a dominance."
                        if max(ab, ba) < 0.5 else "."))
    lo, hi = boot["rank_interval"][top]
    parts.append((f"{top} is ranked {lo}" if lo == hi else
                  f"The possible ranks of {top} lie within {lo} to {hi}")
                 + f" in {conf} of the replicates.")
    return " ".join(parts)


def could_have_won(result: Any) -> str:
    """Who else could be first: the entries no entry dominates (their share of the
    orderings ranking them first) and, with a bootstrap, those undominated in
    some replicates."""
    names = list(result.ranking)
    top = names[0]
    shares = first_shares(result)
    lo = result.rank_intervals
    undominated = [n for n in names if lo[n][0] == 1]
    others = [n for n in undominated if n != top]
    dominated = [n for n in names if lo[n][0] > 1]
    if len(names) == 1:
        return f"{top} is the only entry."
    if others:
        parts = [f"Yes: {and_list(others)}, like {top}, "
                 f"{'is' if len(others) == 1 else 'are'} dominated by no entry, so some "
                 f"orderings put {'it' if len(others) == 1 else 'them'} first: "
                 + and_list([f"{n} in {percent(shares[n])}" for n in others])
                 + f" of {orderings(result)} ({top} in {percent(shares[top])})."]
    else:
        parts = [f"Not on these indicators: {top} dominates every other entry."
                 if len(dominated) == len(names) - 1 else f"{top} is the only undominated entry."]
    if dominated and others:
        if len(dominated) == 1:
            idx = {n: k for k, n in enumerate(result.names)}
            above = [n for n in names if result.poset.better[idx[dominated[0]], idx[n]]]
            parts.append(f"{dominated[0]} is dominated ({and_list(above)} at least as good on "
                         "every indicator and better on one), so no ordering puts it first.")
        else:
            parts.append(f"The other {len(dominated)} are each dominated (another entry is at "
                         "least as good on every indicator and better on one), so no ordering "
                         "puts them first.")
    boot = result.bootstrap
    if boot is not None:
        und = boot["undominated"]
        maybe = [n for n in dominated if und[n] > 0]
        never = [n for n in dominated if und[n] == 0]
        if maybe:
            parts.append(f"With other samples of the scene (the bootstrap), {maybe[0]} is "
                         + and_list([f"{n} in {percent(und[n])}" if k else
                                     f"undominated in {percent(und[n])}"
                                     for k, n in enumerate(maybe)])
                         + f" of the replicates, so {'it' if len(maybe) == 1 else 'they'} "
                         "could have been first too"
                         + (f"; {and_list(never)} {'is' if len(never) == 1 else 'are'} "
                            "dominated in every replicate." if never else "."))
        elif dominated:
            parts.append("In the bootstrap, the others are dominated in every replicate too.")
        shaky = [n for n in undominated if und[n] < 1]
        if shaky:
            parts.append(and_list([f"{n} is undominated in only {percent(und[n])}"
                                   for n in shaky]) + " of the replicates.")
    return " ".join(parts)


def ranking_answers(result: Any) -> list[Answer]:
    """The three answers, the first about the entries ranked first and second."""
    names = list(result.ranking)
    out = []
    if len(names) > 1:
        a, b = names[0], names[1]
        out.append(Answer("why", f"Why is {a} above {b}?", why_above(result, a, b)))
    out.append(Answer("sure", "How sure is this order?", how_sure(result)))
    out.append(Answer("won", "Could another entry have won?", could_have_won(result)))
    return out
