"""Readable terminal tables (rich) for the CLI."""

from __future__ import annotations

from typing import Any

from geoeval.matching.result import MANY_TO_ONE, ONE_TO_MANY, ONE_TO_ONE


def fmt(value: Any, digits: int = 4) -> str:
    """A number for a table cell: ``–`` for undefined (null) values."""
    if value is None or (isinstance(value, float) and value != value):  # null or NaN
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def accuracy_label(name: str) -> str:
    """What a matcher's accuracy row is (its registry entry's short label, e.g.
    ``hoover eq. 2``); the name itself for a matcher the registry does not hold."""
    from geoeval.matching import registry

    return registry.get(name).accuracy_label if name in registry.names() else name


def score_tables(result: Any) -> list[Any]:
    """The score table (one column per matcher, named in words: objects, matched,
    missed, false alarms, P, R, F1, accuracy, instance kinds), then a few plain
    sentences reading it and one per matcher saying what it allows and what its
    accuracy is (:mod:`geoeval.report.explain`)."""
    from rich.text import Text

    from geoeval.report.explain import explain, matcher_lines

    out: list[Any] = [score_table(result)]
    out += [Text(line) for line in explain(result)]
    out += [Text(line, style="dim") for line in matcher_lines(result)]
    return out


def score_table(result: Any):
    """One column per matcher: objects, matched, missed, false alarms, P, R, F1, accuracy, kinds.

    The Mallows row appears only for matchers whose accuracy is something else
    (``--mallows``); MOM's accuracy is its Mallows score, shown once.
    """
    from rich.table import Table

    from geoeval.report.explain import header

    ref, sub = result.reference, result.submission
    title = f"{_name(sub.path)}  vs  {_name(ref.path)}"
    table = Table(title=title, title_style="bold", show_lines=False)
    table.add_column("", style="bold")
    names = list(result.results)
    for name in names:
        table.add_column(header(name, result), justify="right")
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
    if any(r.mallows is not None for n, r in zip(names, ms, strict=True) if n != "mom"):
        rows.append(("Mallows score", [
            "= accuracy" if n == "mom" else fmt(None if r.mallows is None else r.mallows.scene)
            for n, r in zip(names, ms, strict=True)]))
    for kind, label in ((ONE_TO_ONE, "one-to-one"), (ONE_TO_MANY, "split (one-to-many)"),
                        (MANY_TO_ONE, "merge (many-to-one)")):
        rows.append((label, [str(r.matching.kind_counts()[kind]) for r in ms]))
    for label, cells in rows:
        table.add_row(label, *cells)
    return table


def metrics_table() -> Any:
    """The localisation metrics the audit knows (Hemery et al. 2010, Table 2)."""
    from rich.table import Table

    from geoeval.measures.localization import METRICS

    t = Table("name", "label", "representation", "sense")
    for m in METRICS.values():
        t.add_row(m.name, m.label, m.representation, m.sense)
    return t


def audit_tables(result: Any) -> list[Any]:
    """The audit's synthesis (Hemery et al. 2010, Table 8), its size and time, and
    its agreement with the paper's Tables 3–7."""
    from rich.table import Table
    from rich.text import Text

    from geoeval.audit import tables as tb
    from geoeval.audit.summary import paper_comparison

    t = Table(*tb.headers(result, "synthesis"), title="Hemery et al. 2010, Table 8 — synthesis")
    t.geoeval_keys = 1  # the metric: repeated in every band (report.layout)
    for row in tb.synthesis_rows(result):
        t.add_row(*row)
    out: list[Any] = [t, Text(f"{result.n_results:,} altered results per metric in "
                              f"{result.seconds:.1f} s")]
    cmp = paper_comparison(result)
    if cmp["cells"]:
        out.append(Text(f"{cmp['agreeing']} of {cmp['cells']} property cells "
                        f"({100 * cmp['rate']:.1f} %) agree with Hemery et al. (2010), "
                        "Tables 3–7 (docs/audit.md)"))
    return out


def _name(path: Any) -> str:
    """A file's name for a title (the whole path would wrap an 80-column table)."""
    from pathlib import PurePath

    return PurePath(str(path)).name or str(path)
