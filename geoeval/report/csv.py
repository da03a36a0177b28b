"""The per-object tables as CSV: ``reference.csv``, ``submission.csv``,
``instances.csv`` and ``summary.csv`` (the GeoPackage's tables without geometry).

Nulls are empty cells; each file is written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from geoeval.outputs import ensure_folder, output_run, published
from geoeval.report.objects import object_tables, to_frame
from geoeval.report.text_files import write_csv_table

if TYPE_CHECKING:  # pragma: no cover
    from geoeval.scoring import ScoreResult

CSV_FILES = ("reference", "submission", "instances", "summary")


def write_csv(result: ScoreResult, folder: str | Path, *,
              matcher: str | None = None) -> list[Path | str]:
    """Write the per-object tables of ``result`` as CSV files into ``folder``.

    Parameters
    ----------
    result : ScoreResult
    folder : path-like or str
        Created (with its parents) if missing; or a URL of object storage (an empty
        prefix), written whole when the output run ends (:mod:`geoeval.outputs`).
    matcher : str, optional
        Matcher whose result the tables show (default ``mom`` when it ran).

    Returns
    -------
    list of Path or str
        The files written, in :data:`CSV_FILES` order (their URLs in a store).

    Notes
    -----
    Columns are those of :func:`geoeval.report.objects.object_tables`
    (``docs/qgis.md``); statuses follow Özdemir et al. (2010), §4.1.
    """
    with output_run():  # this call's own, if not inside one: all files or none
        out = ensure_folder(folder)
        tables = object_tables(result, matcher)
        written = []
        for name in CSV_FILES:
            frame = to_frame(getattr(tables, name))
            written.append(write_csv_table(out / f"{name}.csv", frame))
        if result.strata is not None or result.bootstrap is not None:
            from geoeval.report.strata_tables import write_strata_csv

            written += write_strata_csv(result, out)  # strata.csv, bootstrap.csv
        return [published(p) for p in written]


def write_scenes_csv(result: Any, path: str | Path) -> Path:
    """Write a multi-scene result's rows (:meth:`geoeval.scoring.ScenesResult.rows`:
    one per scene and matcher, then the pooled ones) as CSV, atomically; columns
    in first-seen order, nulls empty."""
    import pandas as pd

    rows = result.rows()
    names = list(dict.fromkeys(k for r in rows for k in r))
    return write_csv_table(path, pd.DataFrame(rows, columns=names, dtype=object))
