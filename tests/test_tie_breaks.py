"""Places set by a tie-breaker, marked wherever the ranking is shown: what put each
entry above the next (``RankingResult.places``, the JSON's ``places``), the
tie-break column and ‡ in the terminal table and on the page, one sentence per
such place saying which indicators would have to change for the indicators to
order the two, and an ordering sentence that names only the rules used.
"""

from __future__ import annotations

import pytest

from geoeval.ranking.api import rank_indicators
from geoeval.report.ranking_answers import why_above

#: Six entries trading precision against recall: an antichain, so every ordering is
#: allowed, each entry is first in 1/6 of them and the CRF operator leaves all six
#: level; the accuracy (not an indicator) sets every place.
ACC = {"e1": 0.62, "e2": 0.91, "e3": 0.70, "e4": 0.55, "e5": 0.83, "e6": 0.74}
SIX = {f"e{k}": {"precision": 0.5 + 0.08 * k, "recall": 0.9 - 0.08 * k,
                 "accuracy": ACC[f"e{k}"]} for k in range(1, 7)}


def words(text: str) -> str:
    return " ".join(text.split())


def rank_six(scores: dict = SIX, **options) -> object:
    return rank_indicators(scores, indicators=("precision", "recall"), **options)


def text_of(result) -> str:
    from rich.console import Console

    from geoeval.report.ranking_tables import ranking_tables

    console = Console(width=200, record=True)
    for r in ranking_tables(result):
        console.print(r)
    return console.export_text()


def test_each_place_says_what_set_it_and_the_json_has_it():
    r = rank_six()
    by_accuracy = sorted(ACC, key=lambda n: -ACC[n])
    assert list(r.ranking) == by_accuracy
    places = r.to_dict()["places"]
    assert [p["name"] for p in places] == by_accuracy
    assert [p["next"] for p in places] == [*by_accuracy[1:], None]
    assert [p["decided_by"] for p in places] == ["tie-break"] * 5 + [None]
    # a dominance and a tie-break in one contest: a copy of e2 worse on both indicators
    scores = {**SIX, "low": {"precision": 0.1, "recall": 0.1, "accuracy": 0.99}}
    r = rank_six(scores)
    assert r.ranking[-1] == "low"
    assert r.to_dict()["places"][-2]["decided_by"] == "dominance"


def test_the_terminal_shows_the_tie_break_column_and_marks_its_places():
    r = rank_six()
    text = text_of(r)
    assert "(tie-break)" in text  # accuracy is no indicator, but it set the places
    order = list(r.ranking)
    for name in order[:-1]:
        row = next(line for line in text.splitlines() if f" {name} " in line and "│" in line)
        assert f"{ACC[name]:.4f}" in row and "‡ accuracy" in row
    last = next(line for line in text.splitlines() if f" {order[-1]} " in line and "│" in line)
    assert "‡" not in last
    flat = words(text)
    assert "17%" in flat  # each entry first in 1/6 of the orderings
    assert ("Ordered by dominance and the CRF operator, then by expected rank, then by accuracy "
            "(higher first), then by name: 5 places set by the tie-breaker accuracy.") in flat


@pytest.mark.parametrize("k", range(5))
def test_the_sentence_says_which_indicators_would_have_to_change(k):
    r = rank_six()
    a, b = r.ranking[k], r.ranking[k + 1]
    va, vb = SIX[a], SIX[b]
    flat = words(text_of(r))
    assert (f"{a} is above {b} only by the tie-breaker, accuracy (higher first): "
            f"{ACC[a]:.4f} against {ACC[b]:.4f}; the Hasse diagram leaves them "
            "incomparable:") in flat
    a_wins = [c for c in ("precision", "recall") if va[c] > vb[c]]
    b_wins = [c for c in ("precision", "recall") if vb[c] > va[c]]
    assert len(a_wins) == len(b_wins) == 1
    sentence = (f"The indicators would put {b} above if it were at least as good on "
                f"{a_wins[0]} ({va[a_wins[0]]:.4f}; it has {vb[a_wins[0]]:.4f}), or keep {a} "
                f"above if it were at least as good on {b_wins[0]} ({vb[b_wins[0]]:.4f}; it "
                f"has {va[b_wins[0]]:.4f}).")
    assert sentence in flat
    # and it is true: with that change the indicators order the two, whatever the accuracy
    swapped = {**SIX, b: {**vb, a_wins[0]: va[a_wins[0]]}}
    again = rank_six(swapped)
    assert again.ranking.index(b) < again.ranking.index(a)
    kept = {**SIX, a: {**va, b_wins[0]: vb[b_wins[0]], "accuracy": 0.0}}
    again = rank_six(kept)
    assert again.ranking.index(a) < again.ranking.index(b)


def test_identical_entries_set_by_the_tie_break_then_the_name():
    # three identical entries; two share the accuracy, so the name orders those two
    scores = {"c": {"p": 0.5, "accuracy": 0.7}, "b": {"p": 0.5, "accuracy": 0.7},
              "a": {"p": 0.5, "accuracy": 0.8}}
    r = rank_indicators(scores, indicators=("p",))
    assert r.ranking == ("a", "b", "c")
    assert [p.decided_by for p in r.places] == ["tie-break", "name", None]
    assert "ordered by name (accuracy is equal or undefined for both)" in why_above(r, "b", "c")
    flat = words(text_of(r))
    assert "‡ name" in flat
    assert "b is above c only by name (accuracy is equal or undefined for both)" in flat


def test_the_fallback_names_the_tie_break_it_used():
    # no accuracy column: the CRF operator stops (no change) and the fallback orders
    # by expected rank, then by name -- never "then accuracy"
    scores = {n: {"precision": v["precision"], "recall": v["recall"]} for n, v in SIX.items()}
    r = rank_six(scores)
    assert not r.converged and r.tie_break is None
    report = r.to_dict()
    assert report["fallback"] == "expected rank in the last round, then name"
    assert not any("accuracy" in note for note in report["notes"]
                   if note.startswith("CRF stopped"))
    assert [p["decided_by"] for p in report["places"]] == ["name"] * 5 + [None]
    flat = words(text_of(r))
    assert "then by name: 5 places set by name." in flat
    assert "(there is no tie-break column)" in flat
    # another tie-break column is named as such
    r = rank_six({n: {**v, "speed": ACC[n]} for n, v in scores.items()}, tie_break="speed")
    assert r.to_dict()["fallback"] == "expected rank in the last round, then speed, then name"


def test_the_page_marks_the_places_and_shows_the_tie_break_column():
    from geoeval.report.html import render_page

    r = rank_six()
    page = words(render_page(entries=[], ranking=r, command="geoeval rank …"))
    assert "accuracy<br>(tie-break)" in page
    assert page.count("‡ accuracy</td>") == 5
    a, b = r.ranking[:2]
    assert f"‡ {a} is above {b} only by the tie-breaker, accuracy" in page
    assert "5 places set by the tie-breaker accuracy." in page


def test_the_hasse_diagram_marks_the_places():
    from matplotlib.figure import Figure

    from geoeval.report.figures_ranking import plot_hasse

    r = rank_six()
    ax = Figure().subplots()
    plot_hasse(r, ax)
    labels = {t.get_text().split()[1]: t.get_text().split()[0] for t in ax.texts}
    assert labels == {n: f"#{k}‡" if k < 6 else "#6" for k, n in enumerate(r.ranking, 1)}
    assert "#k‡: above the next only by a tie-breaker (accuracy, then name)" in ax.get_title()
    scores = {"A": {"p": 0.9, "accuracy": 0.1}, "B": {"p": 0.5, "accuracy": 0.9}}
    ax = Figure().subplots()
    plot_hasse(rank_indicators(scores, indicators=("p",)), ax)  # a dominance: no mark
    assert "‡" not in ax.get_title() + " ".join(t.get_text() for t in ax.texts)
