"""``geoeval boxes crowdai REFERENCE.json SUBMISSION.json``: the building-polygon table.

$ geoeval boxes crowdai annotation.json results.json
$ geoeval boxes crowdai annotation.json results.json --json crowdai.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geoeval.cli.options import REPORTING, Reporting, add_command, rule, with_groups
from geoeval.measures.boundary_band import DILATION_RATIO


@with_groups
def crowdai_command(
    reference: Annotated[Path, typer.Argument(
        help="Reference (ground truth): COCO JSON with polygon segmentations and image "
             "sizes (CrowdAI's annotation.json).")],
    submission: Annotated[Path, typer.Argument(
        help="Submission: COCO results JSON with polygon segmentations and scores.")],
    dilation_ratio: Annotated[float, typer.Option(
        callback=rule("dilation_ratio"),
        help="Boundary AP's band width as a fraction of the image diagonal (at least one "
             "pixel).")] = DILATION_RATIO,
    out: Reporting = REPORTING,
) -> None:
    """CrowdAI building polygons: mask AP/AR, Boundary AP, IoU, C-IoU, N ratio, MTA and
    PoLiS, each as the script the papers use (docs/crowdai.md)."""
    from geoeval.challenges.crowdai import evaluate_crowdai
    from geoeval.report.box_tables import crowdai_tables

    result = evaluate_crowdai(reference, submission, dilation_ratio=dilation_ratio)
    out.finish(result, crowdai_tables)


def register(boxes_app: typer.Typer) -> None:
    """Add ``crowdai`` to the ``boxes`` command group."""
    add_command(boxes_app, "crowdai", crowdai_command, __doc__)
