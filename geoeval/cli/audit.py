"""``geoeval audit``: the metric audit of Hemery et al. (2010), Tables 3–8.

Usage::

    $ geoeval audit --quick
    $ geoeval audit --metric pas --metric mar_gce --alteration translation
    $ geoeval audit --markdown audit.md --json audit.json --figure-dir figures/
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geoeval.cli.groups import add_command
from geoeval.cli.options import JsonOpt, QuietOpt
from geoeval.cli.printers import show, write_report


def register(app: typer.Typer) -> None:
    """Add the ``audit`` command to the main app."""

    def audit_command(
        metric: Annotated[list[str] | None, typer.Option(
            "--metric", "-m", help="Metric name (repeatable); default all but Mallows.")] = None,
        alteration: Annotated[list[str] | None, typer.Option(
            "--alteration", "-a",
            help="translation, scale, rotation or perspective (repeatable); default all.",
        )] = None,
        quick: Annotated[bool, typer.Option(
            "--quick", help="Coarse grid, 7 ground truths.")] = False,
        markdown_path: Annotated[Path | None, typer.Option(
            "--markdown", help="Write Tables 3–8 ('-': standard output).")] = None,
        figure_dir: Annotated[Path | None, typer.Option(
            "--figure-dir", help="Write curve PNGs here.")] = None,
        list_metrics: Annotated[bool, typer.Option(
            "--list", help="List the metrics and exit.")] = False,
        json_path: JsonOpt = None,
        quiet: QuietOpt = False,
    ) -> None:
        """Audit localisation metrics on altered ground truths (Hemery et al. 2010, §3)."""
        from geoeval.audit import audit
        from geoeval.cli.progress import Progress
        from geoeval.report.markdown import write_markdown
        from geoeval.report.tables import audit_tables, metrics_table

        if list_metrics:
            show([metrics_table()])
            return
        with Progress(quiet, "auditing") as progress:
            result = audit(metric or None, alteration or None, quick=quick,
                           progress=lambda s: progress(f"auditing: {s}"))
        show(audit_tables(result), quiet=quiet)
        if markdown_path:
            write_markdown(result, markdown_path)
        write_report(json_path, result)
        if figure_dir:
            from geoeval.report.audit_figures import write_figures

            write_figures(result, figure_dir)

    add_command(app, "audit", audit_command, __doc__)
