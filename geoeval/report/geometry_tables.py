"""The geometry measures (:mod:`geoeval.measures.geometry`) as a terminal table."""

from __future__ import annotations

from typing import Any

from geoeval.report.tables import fmt


def geometry_rows(result: Any) -> list[tuple[str, str, Any, Any, Any]]:
    """``(measure, matcher, value or mean, median, pairs)`` rows of the report's
    ``geometry`` key (empty without it)."""
    g = result.summary.geometry
    if g is None:
        return []
    rows: list[tuple[str, str, Any, Any, Any]] = []
    if "pq" in g:
        pq = g["pq"]
        tp = f"{pq['tp']} TP"
        rows += [("PQ", "IoU>0.5", pq["pq"], None, tp), ("SQ", "IoU>0.5", pq["sq"], None, tp),
                 ("RQ", "IoU>0.5", pq["rq"], None, tp)]
    if "clinton" in g:
        c = g["clinton"]
        for key, label in (("over_segmentation", "over-segm."),
                           ("under_segmentation", "under-segm."), ("d", "D")):
            rows.append((f"Clinton {label}", c["rule"], c[key], None, c["pairs"]))
    for name, label in (("polis", "PoLiS"), ("boundary_iou", "Boundary IoU")):
        per = g.get(name)
        if per is None:
            continue
        per = per["matchers"] if name == "boundary_iou" else per
        for m, v in per.items():
            rows.append((label, m, v["mean"], v["median"], v["pairs"]))
    return rows


def geometry_table(result: Any) -> Any:
    """Terminal table of the geometry measures (≤ 80 columns)."""
    from rich import box
    from rich.table import Table

    table = Table(title="geometry measures", title_style="bold", box=box.SIMPLE_HEAD,
                  pad_edge=False, collapse_padding=True)
    for c, just in (("measure", "left"), ("matching", "left"), ("value/mean", "right"),
                    ("median", "right"), ("pairs", "right")):
        table.add_column(c, justify=just, no_wrap=True)
    for measure, matcher, value, median, n in geometry_rows(result):
        table.add_row(measure, matcher, fmt(value, 4), fmt(median, 4), str(n))
    table.caption = ("PQ/SQ/RQ: Kirillov et al. 2019; Clinton: Clinton et al. 2010 (0 best); "
                     "PoLiS (CRS units, 0 best): Avbelj et al. 2015, one-to-one pairs; "
                     "Boundary IoU: Cheng et al. 2021")
    return table
