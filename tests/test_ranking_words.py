"""The ranking in plain words: incomparable is not tied, the tie-break rule and its
numbers are named, and the CRF state is said in words."""

from __future__ import annotations

from geoeval.ranking.api import rank_indicators
from geoeval.report.explain import ranking_lines


def words(result) -> str:
    return " ".join(" ".join(ranking_lines(result)).split())


def test_incomparable_entries_are_called_incomparable_with_who_wins_where():
    # a is better on p, b on r: incomparable; the operator cannot order them
    r = rank_indicators({"a": {"p": 0.9, "r": 0.5, "acc": 0.7},
                         "b": {"p": 0.5, "r": 0.9, "acc": 0.6}},
                        indicators=("p", "r"), tie_break="acc")
    text = words(r)
    assert "1 of 1 pair is incomparable" in text
    assert "a and b have the same expected rank 1.500 and are incomparable" in text
    assert "best on p: a (0.9000); best on r: b (0.9000)" in text
    assert "ordered by the tie-breaker, acc (higher first): 0.7000 > 0.6000" in text
    assert "tied" not in text.replace("tie-breaker", "")
    assert "no iteration was needed" in text  # the CRF operator changed nothing
    assert "0 round(s)" not in text and "not converged" not in text


def test_identical_entries_are_tied_and_a_name_order_says_why():
    r = rank_indicators({"b": {"p": 0.5, "r": 0.5}, "a": {"p": 0.5, "r": 0.5},
                         "c": {"p": 0.9, "r": 0.9}}, indicators=("p", "r"), tie_break=None)
    text = words(r)
    assert "a and b" in text and "tied: identical on every indicator" in text
    assert "ordered by name" in text


def test_a_chain_needs_no_crf_round():
    r = rank_indicators({"a": {"p": 0.9}, "b": {"p": 0.5}}, indicators=("p",), tie_break=None)
    assert "That order already ranks the submissions: no CRF round was needed." in words(r)
