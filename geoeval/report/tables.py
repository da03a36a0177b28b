"""Readable terminal tables (rich) for the CLI."""

from __future__ import annotations

from typing import Any

from geoeval.matching.result import MANY_TO_ONE, ONE_TO_MANY, ONE_TO_ONE


def fmt(value: Any, digits: int = 4) -> str:
    """A number for a table cell: ``–`` for undefined (null) values."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def score_table(result: Any):
    """One column per matcher: objects, matched, missed, false alarms, P, R, F1, accuracy, kinds."""
    from rich.table import Table

    ref, sub = result.reference, result.submission
    title = f"{sub.path}  vs  {ref.path}"
    table = Table(title=title, title_style="bold", show_lines=False)
    table.add_column("", style="bold")
    names = list(result.results)
    for name in names:
        table.add_column(name, justify="right")
    rows: list[tuple[str, list[str]]] = []
    ms = [result.results[n] for n in names]
    rows.append(("reference objects", [str(len(ref))] * len(ms)))
    rows.append(("submitted objects", [str(len(sub))] * len(ms)))
    rows.append(("matched reference", [str(r.matching.n_reference - r.matching.missed.size)
                                       for r in ms]))
    rows.append(("matched submitted", [str(r.matching.n_submission - r.matching.false_alarms.size)
                                       for r in ms]))
    rows.append(("missed", [str(r.matching.missed.size) for r in ms]))
    rows.append(("false alarms", [str(r.matching.false_alarms.size) for r in ms]))
    rows.append(("precision", [fmt(r.precision) for r in ms]))
    rows.append(("recall", [fmt(r.recall) for r in ms]))
    rows.append(("F1", [fmt(r.f1) for r in ms]))
    rows.append(("accuracy", [fmt(r.accuracy) for r in ms]))
    if any(r.mallows is not None for r in ms):
        rows.append(("mallows", [fmt(None if r.mallows is None else r.mallows.scene)
                                 for r in ms]))
    for kind, label in ((ONE_TO_ONE, "one-to-one"), (ONE_TO_MANY, "one-to-many (over)"),
                        (MANY_TO_ONE, "many-to-one (under)")):
        rows.append((label, [str(r.matching.kind_counts()[kind]) for r in ms]))
    for label, cells in rows:
        table.add_row(label, *cells)
    ov = result.overlap
    table.caption = (f"{ov.n_pairs} overlapping pairs in {ov.n_components} components "
                     f"({ov.method}); accuracy: bgm eq. 1, hoover eq. 2, iou mean IoU, "
                     "mom Mallows")
    return table
