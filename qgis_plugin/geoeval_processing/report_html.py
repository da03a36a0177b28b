"""HTML pages for the Processing results viewer, from geoeval's JSON reports.

Plain Python (no QGIS import). The numbers are the JSON report's, formatted
as the CLI's tables format them (4 decimals, ``–`` for an undefined value).
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

#: Rows of the score table: (JSON key, label), as ``geoeval score`` prints them.
SCORE_ROWS = (
    ("matched_reference", "matched reference"),
    ("matched_submission", "matched submitted"),
    ("missed", "missed"),
    ("false_alarms", "false alarms"),
    ("precision", "precision"),
    ("recall", "recall"),
    ("f1", "F1"),
    ("accuracy", "accuracy"),
    ("mallows", "mallows"),
)
KINDS = (("one-to-one", "one-to-one"), ("one-to-many", "one-to-many (over)"),
         ("many-to-one", "many-to-one (under)"))

STYLE = """<style>
body { font-family: sans-serif; font-size: 10pt; }
table { border-collapse: collapse; margin: 0.5em 0 1em 0; }
th, td { border: 1px solid #bbb; padding: 2px 8px; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: bold; padding-bottom: 4px; }
</style>"""


def fmt(value: Any, digits: int = 4) -> str:
    """A number as the CLI's tables show it."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def _table(caption: str, header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + f"<th>{r[0]}</th>" + "".join(f'<td class="n">{c}</td>' for c in r[1:]) + "</tr>"
        for r in rows)
    return f"<table><caption>{html.escape(caption)}</caption><tr>{head}</tr>{body}</table>"


def score_html(report: dict[str, Any], names: dict[str, str] | None = None) -> str:
    """The summary of a ``geoeval score`` JSON report: counts and scores per matcher,
    per class when there are classes, and the run's warnings."""
    names = names or {}
    results = report.get("results") or {}
    matchers = list(results)
    ref, sub = report.get("reference", {}), report.get("submission", {})
    parts = [f"<html><head><meta charset='utf-8'>{STYLE}</head><body>",
             "<h2>geoeval score</h2>",
             "<p>reference: <b>{}</b> ({} objects)<br>submission: <b>{}</b> ({} objects)</p>"
             .format(html.escape(names.get("reference", str(ref.get("path", "")))),
                     fmt(ref.get("objects")),
                     html.escape(names.get("submission", str(sub.get("path", "")))),
                     fmt(sub.get("objects")))]
    rows = [["reference objects"] + [fmt(ref.get("objects"))] * len(matchers),
            ["submitted objects"] + [fmt(sub.get("objects"))] * len(matchers)]
    rows += [[label] + [fmt(results[m].get(key)) for m in matchers] for key, label in SCORE_ROWS]
    rows += [[label] + [fmt((results[m].get("instances_by_kind") or {}).get(key))
                        for m in matchers] for key, label in KINDS]
    parts.append(_table("Scores", ["", *matchers], rows))
    per_class = (report.get("per_class") or {}).get("classes") or {}
    if per_class:
        crows = []
        for cls, info in per_class.items():
            for m, r in (info.get("results") or {}).items():
                crows.append([html.escape(str(cls)), html.escape(m),
                              fmt(info.get("reference_objects")),
                              fmt(info.get("submission_objects")), fmt(r.get("precision")),
                              fmt(r.get("recall")), fmt(r.get("f1")), fmt(r.get("accuracy"))])
        parts.append(_table("Per class", ["class", "matcher", "reference", "submitted",
                                          "precision", "recall", "F1", "accuracy"], crows))
    warnings = report.get("warnings") or []
    if warnings:
        items = "".join(f"<li>{html.escape(str(w))}</li>" for w in warnings)
        parts.append(f"<p>Warnings:</p><ul>{items}</ul>")
    parts.append(f"<p><small>geoeval {html.escape(str(report.get('geoeval', '')))}; the full "
                 "report is the JSON output.</small></p></body></html>")
    return "\n".join(parts)


def rank_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per submission, in rank order: rank, name, the indicators, the rank
    interval and the expected rank of the deciding CRF round (as ``geoeval rank``)."""
    values = report.get("submissions") or {}
    intervals = report.get("rank_intervals") or {}
    expected = report.get("deciding_expected_ranks") or report.get("expected_ranks") or {}
    rows = []
    for r, name in enumerate(report.get("ranking") or [], start=1):
        lo, hi = intervals.get(name, (None, None))
        row = {"rank": r, "name": name}
        row.update({k: values.get(name, {}).get(k) for k in report.get("indicators") or []})
        row.update(interval_low=lo, interval_high=hi, expected_rank=expected.get(name))
        rows.append(row)
    return rows


def rank_html(report: dict[str, Any], figure: str | Path | None = None) -> str:
    """The rank table of a ``geoeval rank`` JSON report and its Hasse diagram
    (Özdemir et al. 2010, §4.3), the figure embedded as a PNG."""
    indicators = list(report.get("indicators") or [])
    lower = set(report.get("lower_is_better") or [])
    k = report.get("deciding_round") or 0
    header = ["rank", "name", *[c + (" ↓" if c in lower else "") for c in indicators],
              "interval", "E(rank)" if k == 0 else f"E(rank), CRF {k}"]
    rows = [[str(r["rank"]), html.escape(r["name"]), *[fmt(r[c]) for c in indicators],
             f"[{r['interval_low']}, {r['interval_high']}]", fmt(r["expected_rank"], 3)]
            for r in rank_rows(report)]
    title = "Ranking" + (f" — matcher {report['matcher']}" if report.get("matcher") else "")
    parts = [f"<html><head><meta charset='utf-8'>{STYLE}</head><body>",
             "<h2>geoeval rank</h2>", _table(title, header, rows)]
    ext = report.get("linear_extensions")
    if ext is not None:
        parts.append(f"<p>{fmt(ext)} linear extensions ({html.escape(str(report.get('method')))})"
                     "</p>")
    for note in report.get("notes") or []:
        parts.append(f"<p>note: {html.escape(str(note))}</p>")
    if figure is not None and Path(figure).is_file():
        data = base64.b64encode(Path(figure).read_bytes()).decode("ascii")
        parts.append("<p>Hasse diagram (an edge: the upper submission is at least as good "
                     "on every indicator) and rank frequencies:</p>"
                     f"<img src='data:image/png;base64,{data}' style='max-width:100%'>")
    parts.append("</body></html>")
    return "\n".join(parts)
