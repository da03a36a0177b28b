"""``geoeval boxes coco REFERENCE.json SUBMISSION.json``: the twelve COCO numbers and per-class AP.

$ geoeval boxes coco instances_val2017.json detections.json
$ geoeval boxes coco gt.json dt.json --json coco.json --per-class
$ geoeval boxes coco gt.json segm_results.json --iou-type segm
$ geoeval boxes coco gt.json segm_results.json --iou-type boundary --dilation-ratio 0.02
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from geoeval.cli.callbacks import rule
from geoeval.cli.groups import with_groups
from geoeval.cli.input_paths import input_path
from geoeval.cli.options import REPORTING
from geoeval.cli.printers import Reporting
from geoeval.measures.boundary_band import DILATION_RATIO


class IouType(str, Enum):
    """``--iou-type``: boxes, instance masks or boundaries (COCOeval's ``iouType``)."""

    bbox = "bbox"
    segm = "segm"
    boundary = "boundary"


@with_groups
def coco_command(
    reference: Annotated[Path, typer.Argument(
        parser=input_path, help="Reference (ground truth): COCO ground-truth JSON.")],
    submission: Annotated[Path, typer.Argument(
        parser=input_path, help="Submission: COCO results JSON (a list of detections).")],
    iou_type: Annotated[IouType, typer.Option(
        help="Compare boxes (bbox, pycocotools' default), instance masks (segm: polygons "
             "and RLE as the COCO mask API rasterises them) or Boundary IoU (boundary, as "
             "boundary-iou-api).")] = IouType.bbox,
    dilation_ratio: Annotated[float, typer.Option(
        callback=rule("dilation_ratio"),
        help="--iou-type boundary: band width as a fraction of the image diagonal "
             "(at least one pixel).")] = DILATION_RATIO,
    per_class: Annotated[bool, typer.Option(help="Also print per-class AP.")] = False,
    out: Reporting = REPORTING,
) -> None:
    """COCO (bbox, segm, boundary): AP, AP50, AP75, APs/m/l, AR1/10/100, ARs/m/l as the
    official evaluators."""
    from geoeval.challenges.coco import evaluate_coco
    from geoeval.report.box_tables import coco_tables

    result = evaluate_coco(reference, submission, iou_type=iou_type.value,
                           dilation_ratio=dilation_ratio)
    # the readers' warnings (boxes outside the image, zero area)
    out.finish(result, lambda r: coco_tables(r, per_class))

