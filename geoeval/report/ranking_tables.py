"""A ranking in the terminal (``geoeval rank``): the ranking table, the
bootstrap's table when there is one, the answers to the organiser's three
questions (:mod:`geoeval.report.ranking_answers`), then how the order was found
(:func:`geoeval.report.explain.ranking_lines`) and the notes.
"""

from __future__ import annotations

from typing import Any

from geoeval.report.ranking_answers import (
    decided_words,
    first_shares,
    order_sentence,
    orderings,
    percent,
    ranking_answers,
    tie_break_lines,
)
from geoeval.report.tables import fmt


def ranking_tables(result: Any) -> list[Any]:
    """Everything ``geoeval rank`` prints about a ranking, as rich renderables."""
    from rich.text import Text

    from geoeval.report.explain import ranking_lines

    out: list[Any] = [ranking_table(result)]
    if result.bootstrap is not None:
        out.append(rank_bootstrap_table(result))
    out += [Text(f"‡ {line}") for line in tie_break_lines(result)]
    for a in ranking_answers(result):
        out.append(Text.assemble((a.question, "bold"), " ", a.answer))
    out.append(Text("How the order was found:", style="bold"))
    out += [Text(line) for line in ranking_lines(result)]
    out += [Text(f"note: {note}") for note in (*result.notes, *result.stats.notes)]
    return out


def ranking_table(result: Any) -> Any:
    """Rank, name, indicators, the ranks the indicators allow, the share of the
    orderings ranking the entry first, and -- only where it decided the order
    (the CRF operator stopped before a ranking) -- the expected rank. Where a
    tie-breaker set a place, the tie-break column (when it is no indicator) and
    what put each entry above the next (‡: a tie-breaker)."""
    from rich.table import Table

    st = result.stats
    title = "Ranking" + (f" — matcher {result.matcher}" if result.matcher else "")
    tab = Table(title=title, title_style="bold")
    tab.add_column("#", justify="right")
    tab.add_column("name", no_wrap=True)
    for col in result.indicators:
        tab.add_column(col + (" ↓" if col in result.lower_is_better else ""), justify="right")
    placed = result.places
    marked, extra = result.by_tie_breaker, result.tie_break_shown
    if extra is not None:
        tab.add_column(f"{extra}\n(tie-break)", justify="right")
    tab.add_column("possible\nranks", justify="right")
    tab.add_column("first in\norderings", justify="right")
    k = result.deciding_round
    decides = not result.converged
    if decides:
        tab.add_column(f"E(rank),\nround {k}" if k else "E(rank)", justify="right")
    if marked:
        tab.add_column("above the\nnext by")
    shares = first_shares(result)
    intervals, expected = result.rank_intervals, result.deciding_expected_ranks
    for r, name in enumerate(result.ranking, start=1):
        vals = [result.values[name].get(c) for c in result.indicators]
        lo, hi = intervals[name]
        cells = [str(r), name, *[fmt(v) for v in vals]]
        if extra is not None:
            cells.append(fmt(result.values[name].get(extra)))
        cells += [f"{lo}–{hi}", percent(shares[name])]
        if decides:
            cells.append(fmt(float(expected[name]), 3))
        if marked:
            cells.append(decided_words(result, placed[r - 1]))
        tab.add_row(*cells)
    tab.geoeval_keys = 2  # rank and name: repeated in every band (report.layout)
    count = (f" (exact count, {st.states:,} up-sets)" if st.exact else
             f", {st.samples:,} chain steps, seed {st.seed},")
    caption = (f"possible ranks: the best and worst rank the indicators allow; first in "
               f"orderings: the share of {orderings(result)}{count} that rank it first")
    if decides:
        where = f"CRF round {k}'s orderings" if k else "those orderings"
        caption += (f"; E(rank): expected rank in {where}, which orders the entries the CRF "
                    "operator left incomparable")
    if marked:
        caption += ("; above the next by: what put the entry above the next one (‡: a "
                    "tie-breaker, where the indicators leave the two level)")
    tab.caption = f"{caption}. {order_sentence(result)}"
    return tab


def rank_bootstrap_table(result: Any) -> Any:
    """A contest's paired bootstrap (:mod:`geoeval.scoring.contest_bootstrap`): how
    often each entry is undominated in the replicates, and the ranks the
    indicators allow it in the confidence share of them."""
    from rich.table import Table

    b = result.bootstrap
    conf = percent(b["confidence"])
    table = Table(title=f"Bootstrap of the ranking: {b['n']} paired replicates",
                  title_style="bold")
    table.add_column("#", justify="right")
    table.add_column("name", no_wrap=True)
    table.add_column("undominated in\nreplicates", justify="right")
    table.add_column(f"possible ranks,\n{conf} of replicates", justify="right")
    for r, name in enumerate(result.ranking, start=1):
        lo, hi = b["rank_interval"][name]
        table.add_row(str(r), name, percent(b["undominated"][name]), f"{lo}–{hi}")
    table.geoeval_keys = 2
    table.caption = (f"The scene cut into blocks of {b['block_size']:g} CRS units, resampled "
                     f"with the same blocks for every entry (seed {b['seed']}); undominated: no "
                     f"entry is at least as good on every indicator ({', '.join(b['indicators'])})"
                     f" and better on one, so it could be ranked first.")
    return table
