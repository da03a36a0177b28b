"""The contest report's content: plain data for the templates, then the page.

:func:`entry_report` takes what the page needs from one scored submission (its
scores, error breakdown, strata and status map) as soon as it is scored, so a
contest of 50 entries never holds 50 scenes in memory. :func:`render_page` puts
the entries and the ranking (:class:`~geoeval.ranking.api.RankingResult`) into
the Jinja2 templates shipped in ``geoeval/report/html/templates``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geoeval.report.explain import and_list
from geoeval.report.objects import choose_matcher
from geoeval.report.ranking_answers import (
    decided_words,
    order_sentence,
    orderings,
    percent,
    ranking_answers,
    tie_break_lines,
    trade_off,
)

if TYPE_CHECKING:  # pragma: no cover
    from geoeval.ranking.api import RankingResult
    from geoeval.scoring import ScoreResult

def matcher_words() -> dict[str, str]:
    """What each registered matcher is, in words (:mod:`geoeval.matching.registry`:
    its name, its accuracy and its source)."""
    from geoeval.matching import registry

    return {name: f"{m.name} ({m.title}, {m.source}): accuracy is {m.accuracy_words}"
            for name in registry.names() for m in [registry.get(name)]}

#: Error types of the breakdown, in words (docs/breakdown.md).
ERROR_WORDS = {"missed": "missed buildings (found)", "false_alarm": "false alarms (removed)",
               "merge": "merges (separated)", "split": "splits (joined)",
               "localisation": "outlines of one-to-one matches (made exact)",
               "all": "everything fixed"}

@dataclass(frozen=True)
class EntryReport:
    """One submission's part of the page (see :func:`entry_report`)."""

    name: str
    matcher: str
    reference_objects: int
    submitted_objects: int
    scores: list[dict[str, Any]]
    breakdown: list[dict[str, Any]] | None
    strata: list[dict[str, Any]]
    status_map: str
    worst: dict[str, Any] | None
    warnings: tuple[str, ...] = field(default=())
    breakdown_note: str | None = None  # a one-to-one matcher: where merges and splits went

def entry_report(name: str, result: ScoreResult, *, matcher: str | None = None,
                 index: int = 0) -> EntryReport:
    """The part of the page one scored submission gets.

    Parameters
    ----------
    name : str
        The entry's name on the page.
    result : ScoreResult
        The submission scored against the reference.
    matcher : str, optional
        The matcher whose map and breakdown are shown (default ``mom`` if it ran).
    index : int
        The entry's position (keeps the figures' ids apart).
    """
    from geoeval.report.breakdown import one_to_one_words
    from geoeval.report.html.figures import status_map_svg
    from geoeval.report.strata_tables import strata_rows

    matcher = choose_matcher(result, matcher)
    scores = []
    for m, r in result.results.items():
        s = r.summary()
        scores.append({"matcher": m, **{k: s[k] for k in (
            "matched_reference", "matched_submission", "missed", "false_alarms",
            "precision", "recall", "f1", "accuracy")},
            "split": s["instances_by_kind"].get("one-to-many", 0),
            "merged": s["instances_by_kind"].get("many-to-one", 0)})
    rows, note = None, None
    if result.breakdown is not None and matcher in result.breakdown:
        b = result.breakdown[matcher]
        note = one_to_one_words(matcher, b.errors["missed"], b.errors["false_alarm"])
        rows = [{"type": t, "label": ERROR_WORDS[t],
                 "count": (None if t == "all" or note is not None and t in ("merge", "split")
                           else b.errors[t]),
                 "f1": b.fixed[t]["f1"], "f1_gain": b.gain(t, "f1"),
                 "accuracy": b.fixed[t]["accuracy"], "accuracy_gain": b.gain(t, "accuracy")}
                for t in ("missed", "false_alarm", "merge", "split", "localisation", "all")]
        for key in ("f1_gain", "accuracy_gain"):  # bar lengths: share of the largest gain
            top = max((abs(r[key]) for r in rows[:-1] if r[key] is not None), default=0.0)
            for r in rows:
                g = r[key]
                r[key + "_bar"] = (None if g is None or r["type"] == "all" or not top
                                   else round(100.0 * abs(g) / top, 1))
        rows.insert(0, {"type": "now", "label": "now", "count": None, "f1": b.now["f1"],
                        "f1_gain": None, "accuracy": b.now["accuracy"], "accuracy_gain": None,
                        "f1_gain_bar": None, "accuracy_gain_bar": None})
    strata = [r for r in strata_rows(None if result.strata is None else result.strata.to_dict())
              if r["matcher"] == matcher]
    status, worst = status_map_svg(result, matcher, f"e{index}-map", name)
    return EntryReport(
        name=name, matcher=matcher, reference_objects=len(result.reference),
        submitted_objects=len(result.submission), scores=scores, breakdown=rows,
        strata=strata, status_map=status,
        worst=None if worst is None else {"bounds": worst[0], "errors": worst[1],
                                          "objects": worst[2]},
        warnings=tuple(result.warnings), breakdown_note=note)

def _best(values: list[float | None], lower: bool) -> float | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return min(vals) if lower else max(vals)

def leaderboard(ranking: RankingResult) -> dict[str, Any]:
    """The leaderboard's rows and columns, every number as the JSON report has it
    (:meth:`RankingResult.to_dict`): final order, indicators (best marked), the
    ranks the indicators allow, the share of the orderings ranking the entry
    first, the expected rank where it decided the order (``decides``: the CRF
    operator stopped before a ranking), with a bootstrap, how often the entry
    is undominated and its ranks in the replicates, and -- where a tie-breaker set a
    place -- the tie-break column and what put each entry above the next
    (:attr:`RankingResult.places`)."""
    report = ranking.to_dict()
    names = list(report["ranking"])
    index = {n: i for i, n in enumerate(ranking.names)}
    freq = report["rank_frequencies"]
    boot = report["bootstrap"]
    columns = []
    for col in report["indicators"]:
        lower = col in report["lower_is_better"]
        best = _best([report["submissions"][n].get(col) for n in names], lower)
        columns.append({"name": col, "lower": lower, "best": best})
    placed = {p.name: p for p in ranking.places}
    marked, extra = ranking.by_tie_breaker, ranking.tie_break_shown
    rows = []
    for name in names:
        row_freq = freq[name]
        total = float(sum(v for v in row_freq if v is not None))
        rows.append({
            "rank": report["final_rank"][name], "name": name,
            "values": [report["submissions"][name].get(c["name"]) for c in columns],
            "interval": report["rank_intervals"][name],
            "expected": report["deciding_expected_ranks"][name],
            "first_share": None if not total else float(row_freq[0]) / total,
            "undominated": None if boot is None else boot["undominated"][name],
            "boot_interval": None if boot is None else boot["rank_interval"][name],
            "level": next(k for k, lv in enumerate(report["levels"]) if name in lv),
            "index": index[name],
            "tie_break": None if extra is None else report["submissions"][name].get(extra),
            "decided": decided_words(ranking, placed[name]),
            "by_tie_breaker": placed[name].by_tie_breaker,
        })
    return {"columns": columns, "rows": rows, "report": report,
            "decides": not report["converged"], "round": report["deciding_round"],
            "orderings": orderings(ranking), "tie_break_column": extra, "marked": marked,
            "order_sentence": order_sentence(ranking),
            "tie_break_lines": tie_break_lines(ranking)}

def incomparable_pairs(ranking: RankingResult) -> list[str]:
    """Each pair of entries that neither dominates, in words: who is better on what.

    Entries with identical indicators are listed as tied. Pairs are given in
    final order (the better-ranked entry first).
    """
    names = list(ranking.ranking)
    index = {n: k for k, n in enumerate(ranking.names)}
    better = ranking.poset.better
    out = []
    for k, a in enumerate(names):
        for b in names[k + 1:]:
            if better[index[a], index[b]] or better[index[b], index[a]]:
                continue
            words = trade_off(ranking, a, b)
            out.append(f"{a} and {b} are incomparable: {words}." if words else
                       f"{a} and {b} are tied: the same {and_list(list(ranking.indicators))}.")
    return out

def order_in_words(ranking: RankingResult) -> list[str]:
    """How the final order came about: the number of orderings the indicators
    allow, then the terminal's reading of the ranking
    (:func:`geoeval.report.explain.ranking_lines`: the dominance rule, the CRF
    rounds, each group left level and the rule that ordered it)."""
    from geoeval.report.explain import ranking_lines

    st = ranking.stats
    if st.exact:
        count = f"{st.linear_extensions:,}"
    else:
        est = st.linear_extensions_estimate
        count = "about " + (f"{est:.3g}" if est is not None else "very many")
    first = ("The indicators order every pair of entries: there is one ordering."
             if st.linear_extensions == 1 else
             f"The indicators leave {count} orderings of the entries (linear extensions of "
             f"the dominance order) possible{'' if st.exact else ', estimated by sampling'}.")
    return [first, *ranking_lines(ranking)]

def _fmt(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)

def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("geoeval.report.html", "templates"),
        autoescape=jinja2.select_autoescape(("html", "j2")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _fmt
    env.filters["percent"] = percent
    env.filters["signed"] = lambda x, d=4: "–" if x is None else f"{x:+.{d}f}"
    env.filters["raw"] = lambda x: "" if x is None else repr(float(x))
    return env

def render_page(*, entries: list[EntryReport], ranking: RankingResult | None = None,
                command: str, title: str | None = None, reference: str | None = None,
                strata_given: bool = False) -> str:
    """The whole page as text: one self-contained HTML document.

    Parameters
    ----------
    entries : list of EntryReport
        In the contest's input order (shown in final order when ranked).
    ranking : RankingResult, optional
        The contest's ranking; without it the page is one submission's report.
    command : str
        The exact command (or Python call) that produced the page.
    title : str, optional
    reference : str, optional
        The reference's file name.
    strata_given : bool
        Whether size bins or zones were asked for.
    """
    from markupsafe import Markup

    from geoeval._version import __version__
    from geoeval.report.html.figures import hasse_svg, rank_frequency_svg

    env = _environment()
    order = {e.name: k for k, e in enumerate(entries)}
    board = None
    if ranking is not None:
        board = leaderboard(ranking)
        entries = sorted(entries, key=lambda e: ranking.final_rank.get(e.name, len(order)))
    context = {
        "title": title or ("Contest report" if ranking is not None else
                           f"Report: {entries[0].name}" if entries else "geoeval report"),
        "version": __version__,
        "command": command,
        "reference": reference,
        "ranking": ranking,
        "board": board,
        "incomparable": [] if ranking is None else incomparable_pairs(ranking),
        "order_words": [] if ranking is None else order_in_words(ranking),
        "answers": [] if ranking is None else ranking_answers(ranking),
        "hasse": None if ranking is None else Markup(hasse_svg(ranking)),
        "rank_frequencies": None if ranking is None else Markup(rank_frequency_svg(ranking)),
        "entries": entries,
        "markup": Markup,
        "matcher_words": matcher_words(),
        "strata_given": strata_given,
        "slug": _slug,
        "css": Markup(env.loader.get_source(env, "style.css")[0]),
    }
    return env.get_template("page.html.j2").render(**context)

def _slug(name: str) -> str:
    import re

    return "entry-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")

def write_html(path: str | os.PathLike[str], page: str) -> Path | str:
    """Write the page atomically (:func:`geoeval.report.text_files.write_text`)."""
    from geoeval.output_targets import output_target
    from geoeval.report.text_files import write_text

    write_text(path, page)
    return output_target(path)
