"""The audit's summaries: Tables 3–8 as Markdown, the JSON summary, and the
agreement with Hemery et al.'s (2010) own Tables 3–7.

Above :mod:`geoeval.audit.tables` (the table layout and marks) and
:mod:`geoeval.audit.compare` (the cell-by-cell comparison), which it joins.
"""

from __future__ import annotations

from typing import Any

from geoeval.audit.compare import compare
from geoeval.audit.tables import (
    MAX_SCORE,
    TITLES,
    groups_of,
    headers,
    score,
    synthesis_rows,
    table_rows,
)
from geoeval.encoding import clean
from geoeval.measures.localization.registry import METRICS


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def markdown(result: Any) -> str:
    """Tables 3–8 as Markdown, with the run's settings."""
    s = result.settings
    out = [
        f"Audit of {len(result.metrics)} metrics on {len(result.shapes)} ground truths, "
        f"alterations: {', '.join(result.alterations)}; {result.n_results:,} altered results "
        f"per metric; steps {s['step']:g} px / {s['angle_step']:g}°; quorum "
        f"{s['quorum']:g}; {result.seconds:.1f} s.",
        "",
    ]
    for g in groups_of(result):
        out += [f"### {TITLES[g]}", "", _md_table(headers(result, g), table_rows(result, g)), ""]
    out += ["### Table 8 — synthesis", "",
            _md_table(headers(result, "synthesis"), synthesis_rows(result)), ""]
    cmp = paper_comparison(result)
    if cmp["cells"]:
        out += [f"{cmp['agreeing']} of {cmp['cells']} property cells "
                f"({100 * cmp['rate']:.1f} %) agree with Hemery et al. (2010), Tables 3–7.", ""]
    return "\n".join(out)


def paper_comparison(result: Any) -> dict[str, Any]:
    """Agreement of the run's property cells with the paper's Tables 3–7 (:mod:`.compare`)."""
    c = compare(result.verdicts)
    return {"cells": c.n, "agreeing": c.n_agree, "rate": c.rate if c.n else None}


def result_dict(result: Any) -> dict[str, Any]:
    """JSON-ready audit summary: settings, per-metric verdicts, scores (``docs/audit.md``)."""
    metrics = {}
    for name in result.metrics:
        m, v = METRICS[name], result.verdicts[name]
        scores = {g: score(v, g) for g in groups_of(result)}
        metrics[name] = {
            "label": m.label, "representation": m.representation, "sense": m.sense,
            "verdicts": clean(v), "scores": scores, "final_score": sum(scores.values()),
        }
    return {
        "settings": clean(dict(result.settings)),
        "alterations": list(result.alterations),
        "shapes": list(result.shapes),
        "n_results": result.n_results,
        "seconds": round(result.seconds, 3),
        "max_score": sum(MAX_SCORE[g] for g in groups_of(result)),
        "paper_comparison": paper_comparison(result),
        "metrics": metrics,
    }
