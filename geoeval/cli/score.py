"""``geoeval score REFERENCE SUBMISSION``: score one submission against a reference.

$ geoeval score sample_data/reference.tif sample_data/submissions/s4_fragmented.tif
$ geoeval score ref.gpkg detections.shp --matcher mom --json report.json
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer


class MatcherChoice(str, Enum):
    all = "all"
    bgm = "bgm"
    hoover = "hoover"
    mom = "mom"
    iou = "iou"


def score_command(
    reference: Annotated[Path, typer.Argument(help="Reference: labelled raster or vector layer.")],
    submission: Annotated[Path, typer.Argument(
        help="Submission: labelled raster or vector layer.")],
    matcher: Annotated[list[MatcherChoice] | None, typer.Option(
        "--matcher", "-m", help="Matcher(s) to run; repeat the option for several.")] = None,
    hoover_threshold: Annotated[float, typer.Option(
        help="Hoover threshold T, 0.5 < T <= 1.")] = 0.6,
    iou_threshold: Annotated[float, typer.Option(help="IoU matcher threshold.")] = 0.5,
    min_overlap: Annotated[float | None, typer.Option(
        help="MOM: minimum overlap as a fraction of the smaller object.")] = None,
    mallows: Annotated[bool, typer.Option(
        "--mallows", help="Mallows score for the other matchers' instances too.")] = False,
    resolution: Annotated[float | None, typer.Option(
        help="Grid step (CRS units) for the Mallows score of two vector layers.")] = None,
    approximate: Annotated[bool | None, typer.Option(
        "--approximate/--exact",
        help="Mallows: pool large instances into blocks / never. Default: exact up to "
             "the announced size, pooled and flagged beyond.")] = None,
    band: Annotated[int, typer.Option(help="Raster band holding the labels.")] = 1,
    background: Annotated[int, typer.Option(help="Raster background label.")] = 0,
    layer: Annotated[str | None, typer.Option(help="Vector layer (both inputs).")] = None,
    ref_layer: Annotated[str | None, typer.Option(help="Reference layer.")] = None,
    sub_layer: Annotated[str | None, typer.Option(help="Submission layer.")] = None,
    id_field: Annotated[str | None, typer.Option(help="Vector field with object ids.")] = None,
    class_field: Annotated[str | None, typer.Option(
        help="Vector field with object classes.")] = None,
    json_path: Annotated[Path | None, typer.Option(
        "--json", help="Write the JSON report here.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No table, no progress.")] = False,
) -> None:
    """Score SUBMISSION against REFERENCE (counts, precision, recall, F1, accuracy)."""
    from rich.console import Console

    import geoeval
    from geoeval.matching import MATCHERS
    from geoeval.report.tables import score_table

    chosen = [m.value for m in (matcher or [MatcherChoice.all])]
    matchers = MATCHERS if "all" in chosen else tuple(chosen)
    err = Console(stderr=True)
    ref_opts = {"layer": ref_layer} if ref_layer else None
    sub_opts = {"layer": sub_layer} if sub_layer else None
    with err.status("reading", spinner="dots") if not quiet else _null() as status:
        def progress(step: str) -> None:
            if status is not None:
                status.update(step)

        result = geoeval.score(
            reference, submission, matchers=matchers, hoover_threshold=hoover_threshold,
            iou_threshold=iou_threshold, min_overlap=min_overlap, mallows=mallows,
            resolution=resolution, approximate=approximate, band=band,
            background=background, layer=layer, id_field=id_field, class_field=class_field,
            reference_options=ref_opts, submission_options=sub_opts, progress=progress,
        )
    for w in result.warnings:
        err.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    if json_path is not None:
        from geoeval.report.json import write_json

        write_json(json_path, result.to_dict())
    if not quiet:
        Console().print(score_table(result))


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def register(app: typer.Typer) -> None:
    """Add ``score`` to the main app."""
    app.command("score")(score_command)
