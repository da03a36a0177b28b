"""Strata and bootstrap intervals as tables: CSV (``strata.csv``,
``bootstrap.csv``), terminal tables (rich) and the ``stratum_<kind>`` columns
of the GeoPackage / CSV object layers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from geoeval.report.tables import fmt

#: Measures of a stratum row, in the order of the scene's summary.
_MEASURES = ("matched_reference", "matched_submission", "missed", "false_alarms", "precision",
             "recall", "f1", "matched_overlap", "accuracy", "mallows")
_BOOT_MEASURES = ("precision", "recall", "f1", "accuracy", "mallows")


def add_stratum_columns(result: Any, reference: dict[str, np.ndarray],
                        submission: dict[str, np.ndarray]) -> None:
    """Add ``stratum_size`` / ``stratum_zone`` to the object tables' columns (the
    ``class`` kind is already the ``class`` column)."""
    strata = getattr(result, "strata", None)
    if strata is None:
        return
    for kind, k in strata.kinds.items():
        if kind == "class":
            continue
        reference[f"stratum_{kind}"] = np.asarray(k.reference_labels, dtype=object)
        submission[f"stratum_{kind}"] = np.asarray(k.submission_labels, dtype=object)


def strata_rows(strata: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per kind, stratum and matcher: object counts and the scene's measures,
    from the report's ``strata`` object (:meth:`geoeval.scoring.strata.Strata.to_dict`,
    or a partitioned Dask run's, which has the same keys)."""
    rows: list[dict[str, Any]] = []
    if strata is None:
        return rows
    for kind, k in strata.items():
        for name, s in k["strata"].items():
            for m, summ in s["results"].items():
                rows.append({"by": kind, "stratum": name, "matcher": m,
                             "reference_objects": int(s["reference_objects"]),
                             "submission_objects": int(s["submission_objects"]),
                             **{key: summ[key] for key in _MEASURES}})
    return rows


def bootstrap_rows(summaries: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per matcher and measure: the scene value and its interval
    (``summaries``: :func:`geoeval.report.summaries.summaries`)."""
    boot = summaries["bootstrap"]
    if boot is None:
        return []
    rows = []
    for m, summ in summaries["results"].items():
        for key in _BOOT_MEASURES:
            iv = boot["intervals"][m][key]
            rows.append({"matcher": m, "measure": key, "value": summ[key],
                         "low": None if iv is None else iv[0],
                         "high": None if iv is None else iv[1],
                         "confidence": boot["confidence"], "replicates": boot["n"],
                         "block_size": boot["block_size"], "seed": boot["seed"]})
    return rows


def write_strata_csv(result: Any, folder: str | Path) -> list[Path]:
    """``strata.csv`` and ``bootstrap.csv`` in ``folder`` when there is something to write."""
    import pandas as pd

    from geoeval.report.summaries import summaries
    from geoeval.report.text_files import write_csv_table

    summ = summaries(result)
    written = []
    for name, rows in (("strata", strata_rows(summ["strata"])),
                       ("bootstrap", bootstrap_rows(summ))):
        if rows:
            written.append(write_csv_table(Path(folder) / f"{name}.csv", pd.DataFrame(rows)))
    return written


def strata_table(summaries: dict[str, Any], skip: tuple[str, ...] = ()) -> Any:
    """Terminal table: one row per kind, stratum and matcher (kinds in ``skip`` left
    out, e.g. ``class`` when the per-class table shows them); ``summaries`` as
    :func:`geoeval.report.summaries.summaries` gives them."""
    from rich import box
    from rich.table import Table

    table = Table(title="strata", title_style="bold", box=box.SIMPLE_HEAD, pad_edge=False,
                  collapse_padding=True)
    table.add_column("stratum", no_wrap=True)
    for c in ("matcher", "ref", "sub", "MD", "FA", "P", "R", "F1", "acc"):
        table.add_column(c, justify="left" if c == "matcher" else "right", no_wrap=True)
    kind = None
    for r in strata_rows(summaries["strata"]):
        if r["by"] in skip:
            continue
        if kind is not None and r["by"] != kind:
            table.add_section()
        kind = r["by"]
        table.add_row(f"{r['by']} {r['stratum']}", r["matcher"], str(r["reference_objects"]),
                      str(r["submission_objects"]), str(r["missed"]), str(r["false_alarms"]),
                      fmt(r["precision"], 3), fmt(r["recall"], 3), fmt(r["f1"], 3),
                      fmt(r["accuracy"], 3))
    table.caption = ("each stratum scored as a scene of its own (its references and submitted "
                     "objects); MD missed, FA false alarms, P precision, R recall, acc accuracy")
    return table


def bootstrap_table(summaries: dict[str, Any]) -> Any:
    """Terminal table: each measure with its bootstrap interval (``summaries`` as
    :func:`geoeval.report.summaries.summaries` gives them)."""
    from rich.table import Table

    boot = summaries["bootstrap"]
    conf = boot["confidence"]
    table = Table(title=f"{conf:.0%} intervals, spatial block bootstrap", title_style="bold")
    table.add_column("matcher")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column(f"{conf:.0%} interval", justify="right")
    # one row per matcher and measure (a column per measure would not fit 80 columns);
    # measures undefined for a matcher (no Mallows score computed) are left out
    for m, summ in summaries["results"].items():
        first = True
        for key in _BOOT_MEASURES:
            iv = boot["intervals"][m][key]
            if summ.get(key) is None and iv is None:
                continue
            table.add_row(m if first else "", key, fmt(summ.get(key), 3),
                          "–" if iv is None else f"[{fmt(iv[0], 3)}, {fmt(iv[1], 3)}]",
                          end_section=False)
            first = False
        table.add_section()
    nx, ny = boot["blocks"]
    table.caption = (f"{boot['n']} replicates, seed {boot['seed']}, blocks "
                     f"{boot['block_size']:g} CRS units ({nx} × {ny}), percentile intervals")
    return table
