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

from geoeval.cli.options import with_examples


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
        json_path: Annotated[Path | None, typer.Option(
            "--json", help="Write the verdicts as JSON.")] = None,
        markdown_path: Annotated[Path | None, typer.Option(
            "--markdown", help="Write Tables 3–8.")] = None,
        figure_dir: Annotated[Path | None, typer.Option(
            "--figure-dir", help="Write curve PNGs here.")] = None,
        list_metrics: Annotated[bool, typer.Option(
            "--list", help="List the metrics and exit.")] = False,
    ) -> None:
        """Audit localisation metrics on altered ground truths (Hemery et al. 2010, §3)."""
        from rich.console import Console

        from geoeval.audit import audit
        from geoeval.outputs import write_json, write_text
        from geoeval.report.tables import audit_tables, metrics_table

        console = Console()
        if list_metrics:
            console.print(metrics_table())
            return
        with console.status("auditing…") as status:
            result = audit(metric or None, alteration or None, quick=quick,
                           progress=lambda s: status.update(f"auditing… {s}"))
        for r in audit_tables(result):
            console.print(r)
        if markdown_path:
            write_text(markdown_path, result.to_markdown())
        if json_path:
            write_json(json_path, result.to_dict())
        if figure_dir:
            from geoeval.audit.figures import write_figures

            write_figures(result, figure_dir)

    app.command("audit")(with_examples(audit_command, __doc__, "geoeval audit"))
