"""The geometry measures (:mod:`geoeval.measures.geometry`) as a terminal table."""

from __future__ import annotations

from typing import Any

from geoeval.report.tables import fmt


def geometry_rows(result: Any) -> list[tuple[str, str, Any, Any, Any]]:
    """``(measure, matcher, value or mean, median, pairs)`` rows of the report's
    ``geometry`` key (empty without it): each registered measure's rows
    (:func:`geoeval.measures.geometry.table_rows`)."""
    from geoeval.measures.geometry import table_rows

    return table_rows(result.summary.geometry)


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
