"""``geoeval boxes coco REFERENCE.json SUBMISSION.json``: the twelve COCO numbers and per-class AP.

$ geoeval boxes coco instances_val2017.json detections.json
$ geoeval boxes coco gt.json dt.json --json coco.json --per-class
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geoeval.cli.options import REPORTING, Reporting, with_groups


@with_groups
def coco_command(
    reference: Annotated[Path, typer.Argument(
        help="Reference (ground truth): COCO ground-truth JSON.")],
    submission: Annotated[Path, typer.Argument(
        help="Submission: COCO results JSON (a list of detections).")],
    per_class: Annotated[bool, typer.Option(help="Also print per-class AP.")] = False,
    out: Reporting = REPORTING,
) -> None:
    """COCO (bbox): AP, AP50, AP75, APs/m/l, AR1/10/100, ARs/m/l as the official evaluator."""
    from geoeval.challenges.coco import evaluate_coco
    from geoeval.report.box_tables import coco_tables

    result = evaluate_coco(reference, submission)
    # the readers' warnings (boxes outside the image, zero area)
    out.finish(result, lambda r: coco_tables(r, per_class))

