"""The ranking read for an organiser's three questions (geoeval.report.ranking_answers):
why is A above B, how sure is this order, could another entry have won.

Hand-worked contests for each way one entry ends above another (a dominance, a
CRF round, the tie-break, the name, the fallback), and :func:`assert_answers`,
which checks a text (the terminal's or the page's) against facts recomputed here
from a JSON report by brute force; ``test_ranking_api.py`` applies it to the
bundled sample's contest, terminal and page.
"""

from __future__ import annotations

import dataclasses
import re
from itertools import combinations, permutations

import pytest

from geoeval.ranking.api import rank_indicators
from geoeval.report.ranking_answers import percent, ranking_answers, why_above


def words(text: str) -> str:
    return " ".join(text.split())


def pct(x: float) -> str:
    p = 100 * x
    return f"{p:.1f}%" if 0 < p < 1 or 99 < p < 100 else f"{p:.0f}%"


def dominates(values: dict, indicators: list, a: str, b: str) -> bool:
    return (all(values[a][c] >= values[b][c] for c in indicators)
            and any(values[a][c] > values[b][c] for c in indicators))


def first_share(report: dict, name: str) -> float:
    row = report["rank_frequencies"][name]
    return row[0] / sum(row)


def assert_answers(text: str, report: dict) -> None:
    """``text`` answers the three questions for the contest of ``report`` (a
    ranking JSON with a bootstrap), every fact recomputed from its indicators."""
    text = words(text)
    names, values, ind = report["ranking"], report["submissions"], report["indicators"]
    a, b = names[0], names[1]
    # why is the first above the second: what each is better on, with the numbers
    assert f"Why is {a} above {b}?" in text
    why = text.split(f"Why is {a} above {b}?")[1].split("How sure is this order?")[0]
    a_wins = [c for c in ind if values[a][c] > values[b][c]]
    b_wins = [c for c in ind if values[b][c] > values[a][c]]
    for winner, loser, cols in ((a, b, a_wins), (b, a, b_wins)):
        for c in cols:
            assert f"{c} ({values[winner][c]:.4f} against {values[loser][c]:.4f})" in why, c
    if a_wins and b_wins:  # incomparable: the answer says so and what decided
        assert "Neither is better on every indicator" in why
        assert ("cumulative rank frequency" in why or "tie-break" in why
                or "expected rank" in why or "by name" in why)
        if "cumulative rank frequency (CRF) operator puts" in why:
            assert f"{a} is first in {pct(first_share(report, a))}" in why
    else:
        assert f"It dominates {b}" in why
    # how sure: how many pairs the indicators fix, and the bootstrap's dominances
    assert "How sure is this order?" in text
    sure = text.split("How sure is this order?")[1].split("Could another entry have won?")[0]
    fixed = sum(dominates(values, ind, x, y) or dominates(values, ind, y, x)
                for x, y in combinations(names, 2))
    pairs = len(names) * (len(names) - 1) // 2
    assert (f"The indicators fix {fixed} of the {pairs} pair" in sure
            or fixed == pairs and "fix the whole order" in sure)
    boot = report["bootstrap"]
    dom = boot["dominance"]
    assert (f"{a} dominates {b} in {pct(dom[a][b])} of the replicates and {b} dominates {a} "
            f"in {pct(dom[b][a])}") in sure
    robust = len(boot["robust_edges"])
    assert (f"{robust} dominance{'s hold' if robust != 1 else ' holds'} in at least "
            f"{pct(boot['confidence'])}" in sure) if robust else "no dominance holds" in sure
    # could another have won: exactly the undominated entries, each with its share
    assert "Could another entry have won?" in text
    won = text.split("Could another entry have won?")[1]
    undominated = [x for x in names if not any(dominates(values, ind, y, x) for y in names)]
    for x in undominated:
        assert f"{x} in {pct(first_share(report, x))}" in won, x
    for x in names:
        if x not in undominated:
            assert f"{x} in {pct(first_share(report, x))}" not in won.split("bootstrap")[0]
    maybe = [x for x in names if x not in undominated and boot["undominated"][x] > 0]
    for x in maybe:
        assert re.search(rf"{x} (is undominated )?in {re.escape(pct(boot['undominated'][x]))}",
                         won), x
    if undominated != [a]:
        assert won.lstrip().startswith("Yes:")


def test_percent_never_rounds_a_possibility_away():
    assert [percent(x) for x in (0.0, 0.004, 0.0049, 0.5, 0.996, 1.0)] == [
        "0%", "0.4%", "0.5%", "50%", "99.6%", "100%"]


def test_a_dominance_is_named_with_its_numbers():
    r = rank_indicators({"A": {"p": 0.9, "r": 0.8}, "B": {"p": 0.9, "r": 0.5}},
                        indicators=("p", "r"), tie_break=None)
    text = why_above(r, "A", "B")
    assert text == ("A is at least as good as B on every indicator and better on r (0.8000 "
                    "against 0.5000). It dominates B, so every ordering the indicators allow "
                    "puts it above.")
    won = ranking_answers(r)[2].answer
    assert won.startswith("Not on these indicators: A dominates every other entry.")


def test_a_crf_round_is_named_with_the_shares_of_first_place():
    # A: best p, worst r; B and C below A on nothing; in the 3 orderings... brute force
    scores = {"A": {"p": 0.9, "r": 0.1}, "B": {"p": 0.5, "r": 0.6}, "C": {"p": 0.4, "r": 0.5}}
    r = rank_indicators(scores, indicators=("p", "r"), tie_break=None)
    # the orderings the indicators allow, by brute force: C never above B
    orders = [o for o in permutations("ABC") if o.index("B") < o.index("C")]
    assert r.linear_extensions == len(orders) == 3
    first = {n: sum(o[0] == n for o in orders) / len(orders) for n in "ABC"}
    top, second = r.ranking[0], r.ranking[1]
    text = words(why_above(r, top, second))
    assert "Neither is better on every indicator" in text
    assert (f"Of the 3 orderings the indicators allow, {top} is first in {pct(first[top])} "
            f"and {second} in {pct(first[second])}") in text
    assert "cumulative rank frequency (CRF) operator puts" in text


def test_a_tie_broken_by_accuracy_and_by_name():
    r = rank_indicators({"a": {"p": 0.9, "r": 0.5, "acc": 0.6},
                         "b": {"p": 0.5, "r": 0.9, "acc": 0.7}},
                        indicators=("p", "r"), tie_break="acc")
    text = why_above(r, *r.ranking)
    assert r.ranking == ("b", "a")
    assert "the tie-break, acc (higher first), decides: 0.7000 against 0.6000" in text
    r = rank_indicators({"b": {"p": 0.5}, "a": {"p": 0.5}}, indicators=("p",), tie_break=None)
    text = why_above(r, *r.ranking)
    assert text.startswith("a and b have the same p: they are tied.")
    assert "ordered by name" in text


def test_fallback_by_expected_rank_is_said():
    # s1 and s3 are incomparable; with no CRF round allowed, round 0's expected
    # ranks order them (s3 2.8 before s1 3.0: brute force over the orderings)
    table = {"s0": {"p": 0.4, "r": 0.6, "a": 0.6}, "s1": {"p": 0.0, "r": 0.0, "a": 1.0},
             "s2": {"p": 0.8, "r": 1.0, "a": 0.6}, "s3": {"p": 0.8, "r": 0.2, "a": 0.4},
             "s4": {"p": 0.8, "r": 0.0, "a": 0.2}}
    r = rank_indicators(table, indicators=("p", "r", "a"), tie_break="a", max_rounds=0)
    assert not r.converged and r.stop_reason == "round limit"
    ind = ["p", "r", "a"]
    orders = [o for o in permutations(table) if not any(
        dominates(table, ind, o[j], o[i]) for i in range(5) for j in range(i + 1, 5))]
    mean = {n: sum(o.index(n) + 1 for o in orders) / len(orders) for n in table}
    assert mean["s3"] < mean["s1"]
    text = words(why_above(r, "s3", "s1"))
    assert text.startswith("Neither is better on every indicator")
    assert "The CRF operator stopped (round limit) before ordering them" in text
    assert (f"ordered by expected rank in the {len(orders)} orderings the indicators allow: "
            f"{mean['s3']:.3f} against {mean['s1']:.3f}") in text


def test_without_a_bootstrap_the_answer_says_how_to_measure_it():
    r = rank_indicators({"A": {"p": 0.9, "r": 0.5}, "B": {"p": 0.5, "r": 0.9}},
                        indicators=("p", "r"), tie_break=None)
    sure = ranking_answers(r)[1]
    assert sure.question == "How sure is this order?"
    assert "--bootstrap N" in sure.answer and "fix 0 of the 1 pair of entries" in sure.answer
    # a table of indicators (no matcher: nothing scored here) cannot be bootstrapped
    assert "precomputed indicators hold no scene to resample" in sure.answer
    scored = ranking_answers(dataclasses.replace(r, matcher="bgm"))[1].answer
    assert "not measured: rank with a bootstrap (--bootstrap N) to find out." in scored
    won = ranking_answers(r)[2].answer
    assert won.startswith("Yes: B, like A, is dominated by no entry")
    assert "B in 50%" in won


def test_bootstrap_answers_name_undominated_and_dominance():
    r = rank_indicators({"A": {"p": 0.9, "r": 0.5}, "B": {"p": 0.5, "r": 0.9},
                         "C": {"p": 0.4, "r": 0.4}}, indicators=("p", "r"), tie_break=None)
    boot = {"n": 10, "confidence": 0.95, "robust_edges": [["A", "C"]],
            "dominance": {"A": {"B": 0.1, "C": 1.0}, "B": {"A": 0.0, "C": 0.9},
                          "C": {"A": 0.0, "B": 0.0}},
            "undominated": {"A": 1.0, "B": 0.9, "C": 0.05},
            "rank_interval": {"A": [1, 2], "B": [1, 3], "C": [2, 3]}}
    r = dataclasses.replace(r, bootstrap=boot)
    report = {**r.to_dict()}
    text = " ".join(f"{a.question} {a.answer}" for a in ranking_answers(r))
    assert_answers(text, report)
    assert "1 dominance holds in at least 95% of them: A over C." in text
    assert "C is undominated in 5% of the replicates, so it could have been first too" in text
    assert "B is undominated in only 90% of the replicates." in text


def test_repr_of_incomparable_entries_does_not_order_them_by_dominance():
    r = rank_indicators({"A": {"p": 0.9, "r": 0.5}, "B": {"p": 0.5, "r": 0.9}},
                        indicators=("p", "r"), tie_break=None)
    text = repr(r)
    assert ">" not in text.strip("<>") and len(text) < 300
    assert "A, B (best first)" in text and "0 of 1 pair ordered by dominance" in text
    assert "A first in 50% of the orderings" in text


@pytest.mark.parametrize("n", [1, 12])
def test_answers_for_one_entry_and_a_long_chain(n):
    r = rank_indicators({f"e{k:02d}": {"p": float(n - k)} for k in range(n)},
                        indicators=("p",), tie_break=None)
    answers = ranking_answers(r)
    assert [a.key for a in answers] == (["sure", "won"] if n == 1 else ["why", "sure", "won"])
    if n == 1:
        assert answers[-1].answer == "e00 is the only entry."
    else:
        assert "fix the whole order" in answers[1].answer
    assert len(repr(r)) < 300
