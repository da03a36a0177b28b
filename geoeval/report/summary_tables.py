"""The terminal tables of a result's summaries: per class, error breakdown, strata and
bootstrap, the same for a local result and a partitioned Dask run's
(:func:`geoeval.report.summaries.summaries`)."""

from __future__ import annotations

from typing import Any

from geoeval.report.summaries import summaries


def summary_tables(result: Any) -> list[Any]:
    """The per-class, breakdown, strata and bootstrap tables of a result, from its
    summaries (:func:`geoeval.report.summaries.summaries`): the same tables for a local
    result and a partitioned Dask run's."""
    return tables_of(summaries(result))


def tables_of(summ: dict[str, Any]) -> list[Any]:
    """:func:`summary_tables` from the summaries themselves (e.g. a JSON report's
    objects)."""
    parts: list[Any] = []
    if summ["per_class"] is not None:
        from geoeval.report.scene_tables import per_class_table

        parts.append(per_class_table(summ))
    if summ["breakdown"] is not None:
        from geoeval.report.breakdown import breakdown_tables

        parts += breakdown_tables(summ)
    if summ["strata"] is not None:
        from geoeval.report.strata_tables import strata_table

        # the classes are the per-class table's already: each number once
        table = strata_table(summ, skip=("class",) if summ["per_class"] is not None else ())
        if table.row_count:
            parts.append(table)
    if summ["bootstrap"] is not None:
        from geoeval.report.strata_tables import bootstrap_table

        parts.append(bootstrap_table(summ))
    return parts
