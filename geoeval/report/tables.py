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
    accuracy is (:mod:`geoeval.report.explain`): from the result's summary, the same
    for every route."""
    from rich.text import Text

    from geoeval.report.explain import explain, matcher_lines

    summary = result.summary
    out: list[Any] = [score_table(summary)]
    out += [Text(line) for line in explain(summary)]
    out += [Text(line, style="dim") for line in matcher_lines(summary)]
    return out


def score_table(result: Any):
    """One column per matcher: objects, matched, missed, false alarms, P, R, F1, accuracy, kinds.

    From the result's summary (:class:`~geoeval.scoring.summary.ScoreSummary`): the same
    table whatever the route. The Mallows row appears only for matchers whose accuracy
    is something else (``--mallows``); a matcher whose accuracy is the Mallows score
    (MOM) shows it once.
    """
    from rich.table import Table

    from geoeval.matching import registry
    from geoeval.report.explain import header

    s = result.summary
    title = f"{_name(s.submission.path)}  vs  {_name(s.reference.path)}"
    table = Table(title=title, title_style="bold", show_lines=False)
    table.add_column("", style="bold")
    names = list(s.results)
    for name in names:
        table.add_column(header(name, s), justify="right")
    ms = [s.results[n] for n in names]
    is_mallows = [name in registry.names() and registry.accuracy_rule(name) == registry.MALLOWS
                  for name in names]
    rows: list[tuple[str, list[str]]] = [
        ("reference objects", [str(s.reference.objects)] * len(ms)),
        ("submitted objects", [str(s.submission.objects)] * len(ms)),
        ("matched reference", [str(r.matched_reference) for r in ms]),
        ("matched submitted", [str(r.matched_submission) for r in ms]),
        ("missed", [str(r.missed) for r in ms]),
        ("false alarms", [str(r.false_alarms) for r in ms]),
        ("precision", [fmt(r.precision) for r in ms]),
        ("recall", [fmt(r.recall) for r in ms]),
        ("F1", [fmt(r.f1) for r in ms]),
        ("accuracy", [fmt(r.accuracy) for r in ms])]
    if any(r.mallows is not None for r, own in zip(ms, is_mallows, strict=True) if not own):
        rows.append(("Mallows score", ["= accuracy" if own else fmt(r.mallows)
                                       for r, own in zip(ms, is_mallows, strict=True)]))
    for kind, label in ((ONE_TO_ONE, "one-to-one"), (ONE_TO_MANY, "split (one-to-many)"),
                        (MANY_TO_ONE, "merge (many-to-one)")):
        rows.append((label, [str(r.instances_by_kind.get(kind, 0)) for r in ms]))
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
