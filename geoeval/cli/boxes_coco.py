"""``geoeval boxes coco REFERENCE.json SUBMISSION.json``: the twelve COCO numbers and per-class AP.

$ geoeval boxes coco instances_val2017.json detections.json
$ geoeval boxes coco gt.json dt.json --json coco.json --per-class
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geoeval.cli.options import with_examples


def coco_command(
    reference: Annotated[Path, typer.Argument(
        help="Reference (ground truth): COCO ground-truth JSON.")],
    submission: Annotated[Path, typer.Argument(
        help="Submission: COCO results JSON (a list of detections).")],
    json_path: Annotated[Path | None, typer.Option(
        "--json", help="Write the JSON report here.")] = None,
    per_class: Annotated[bool, typer.Option(help="Also print per-class AP.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No table.")] = False,
) -> None:
    """COCO (bbox): AP, AP50, AP75, APs/m/l, AR1/10/100, ARs/m/l as the official evaluator."""
    from rich.console import Console

    from geoeval.challenges.coco import evaluate_coco

    result = evaluate_coco(reference, submission)
    for w in result.warnings:  # the readers' warnings (boxes outside the image, zero area)
        Console(stderr=True).print(f"[yellow]warning:[/yellow] {w}", highlight=False,
                                   soft_wrap=True)
    if json_path is not None:
        from geoeval.outputs import write_json

        write_json(json_path, result.to_dict())
    if quiet:
        return
    from geoeval.report.box_tables import coco_tables

    for r in coco_tables(result, per_class):
        Console().print(r)


def register(boxes_app: typer.Typer) -> None:
    """Add ``coco`` to the ``boxes`` command group."""
    boxes_app.command("coco")(with_examples(coco_command, __doc__, "geoeval boxes coco"))
