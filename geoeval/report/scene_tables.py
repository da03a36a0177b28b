"""Terminal tables (rich) for per-class and multi-scene results."""

from __future__ import annotations

from typing import Any

from geoeval.report.tables import fmt

_COLUMNS = ("ref", "sub", "matched", "MD", "FA", "P", "R", "F1", "acc")


def _cells(nr: int, ns: int, s: dict[str, Any]) -> list[str]:
    return [str(nr), str(ns), str(s["matched_reference"]), str(s["missed"]),
            str(s["false_alarms"]), fmt(s["precision"], 3), fmt(s["recall"], 3),
            fmt(s["f1"], 3), fmt(s["accuracy"], 3)]


def per_class_table(summaries: dict[str, Any]):
    """One row per class and matcher, then the all-classes rows, from a result's
    summaries (:func:`geoeval.report.summaries.summaries`: the report's ``per_class``
    object)."""
    from rich.table import Table

    pc = summaries["per_class"]
    source = ("the submission's field" if pc["submission_classes"] == "field"
              else "the reference object each submitted object overlaps most")
    table = Table(title="per class", title_style="bold")
    table.add_column("class", style="bold", no_wrap=True)
    table.add_column("matcher")
    for c in _COLUMNS:
        table.add_column(c, justify="right")
    for name, item in pc["classes"].items():
        for m, summ in item["results"].items():
            table.add_row(name, m, *_cells(item["reference_objects"],
                                           item["submission_objects"], summ))
    nr, ns = summaries["objects"]
    for m, summ in summaries["results"].items():
        table.add_row("(all)", m, *_cells(nr, ns, summ), style="italic")
    table.caption = (f"MD missed, FA false alarms, P precision, R recall, acc accuracy; "
                     f"submitted objects' classes from {source}; "
                     f"{pc['unclassified_submission']} submitted object(s) without a class "
                     "(counted in (all) only)")
    return table


def scenes_table(result: Any):
    """One row per scene and matcher, then the pooled rows (SpaceNet pooling)."""
    from rich.table import Table

    table = Table(title=f"{len(result.scenes)} scenes", title_style="bold")
    table.add_column("scene", style="bold", no_wrap=True)
    table.add_column("matcher")
    for c in _COLUMNS:
        table.add_column(c, justify="right")
    for s in result.scenes:
        for m, r in s.results.items():
            p = s.pool[m]
            table.add_row(s.name, m, *_cells(p["nr"], p["no"], r))
    for m, r in result.pooled.items():
        table.add_row("(pooled)", m, *_cells(r["reference_objects"], r["submission_objects"], r),
                      style="bold")
    table.caption = ("MD missed, FA false alarms, P precision, R recall, acc accuracy; pooled: "
                     "counts summed over scenes, then P, R, F1 (SpaceNet)")
    return table
