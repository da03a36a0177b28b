"""``geoeval boxes voc REFERENCE SUBMISSION``: PASCAL VOC precision × recall, AP and mAP.

$ geoeval boxes voc groundtruths/ detections/
$ geoeval boxes voc gt/ det/ --iou-threshold 0.3 --box-format xywh
$ geoeval boxes voc Annotations/ dets.json --voc-plus-one --figure-dir plots/
$ geoeval boxes voc gt/ det_rel/ --sub-coords rel --image-size 200,200
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from geoeval.cli import help as sections
from geoeval.cli.callbacks import IMAGE_SIZE, IOU
from geoeval.cli.groups import with_groups
from geoeval.cli.input_paths import input_path
from geoeval.cli.options import REPORTING
from geoeval.cli.printers import Reporting


class BoxFormat(str, Enum):
    xyrb = "xyrb"
    xywh = "xywh"


class Coords(str, Enum):
    abs = "abs"
    rel = "rel"


class FileFormat(str, Enum):
    text = "text"
    voc = "voc"
    coco = "coco"
    yolo = "yolo"


@with_groups
def voc_command(
    reference: Annotated[Path, typer.Argument(
        parser=input_path,
        help="Reference (ground truth): folder of .txt or VOC .xml files, COCO JSON, or "
             "YOLO folder.")],
    submission: Annotated[Path, typer.Argument(
        parser=input_path,
        help="Submission (detections): the same formats, with confidences.")],
    iou_threshold: Annotated[float, typer.Option(
        callback=IOU, help="Minimum IoU of a true positive.")] = 0.5,
    voc_plus_one: Annotated[bool, typer.Option(
        "--voc-plus-one", help="Devkit areas (x2 - x1 + 1)(y2 - y1 + 1).")] = False,
    box_format: Annotated[BoxFormat, typer.Option(
        help="Text files: <left> <top> <right> <bottom> (xyrb) or <width> <height> (xywh).")
    ] = BoxFormat.xyrb,
    image_size: Annotated[str | None, typer.Option(
        callback=IMAGE_SIZE,
        help="W,H of the images, for relative coordinates (text, YOLO): with no --ref-coords "
             "/ --sub-coords, text files of both sides are then read as relative.")] = None,
    ref_format: Annotated[FileFormat | None, typer.Option(
        "--ref-format", "--gt-format",
        help="Reference format (default: from the files).",
        rich_help_panel=sections.FORMATS)] = None,
    sub_format: Annotated[FileFormat | None, typer.Option(
        "--sub-format", "--det-format",
        help="Submission format (default: from the files).",
        rich_help_panel=sections.FORMATS)] = None,
    ref_box_format: Annotated[BoxFormat | None, typer.Option(
        "--ref-box-format", "--gt-box-format",
        help="Reference text files: xyrb or xywh (default: --box-format).",
        rich_help_panel=sections.FORMATS)] = None,
    sub_box_format: Annotated[BoxFormat | None, typer.Option(
        "--sub-box-format", "--det-box-format",
        help="Submission text files: xyrb or xywh (default: --box-format).",
        rich_help_panel=sections.FORMATS)] = None,
    ref_coords: Annotated[Coords | None, typer.Option(
        "--ref-coords", "--gt-coords",
        help="Reference text coordinates: abs, or rel (centre x, centre y, width, height "
             "relative to the image size, as Padilla et al.'s -gtcoords rel).",
        rich_help_panel=sections.FORMATS)] = None,
    sub_coords: Annotated[Coords | None, typer.Option(
        "--sub-coords", "--det-coords",
        help="Submission text coordinates: abs or rel (see --ref-coords).",
        rich_help_panel=sections.FORMATS)] = None,
    ref_image_size: Annotated[str | None, typer.Option(
        "--ref-image-size", "--gt-image-size", callback=IMAGE_SIZE,
        help="W,H of the reference images (default: --image-size).",
        rich_help_panel=sections.FORMATS)] = None,
    sub_image_size: Annotated[str | None, typer.Option(
        "--sub-image-size", "--det-image-size", callback=IMAGE_SIZE,
        help="W,H of the submission images (default: --image-size, else the reference's).",
        rich_help_panel=sections.FORMATS)
    ] = None,
    class_names: Annotated[Path | None, typer.Option(
        parser=input_path,
        help="YOLO: file of class names, one per line.")] = None,
    figure_dir: Annotated[Path | None, typer.Option(
        help="Write one precision x recall plot per class here.")] = None,
    out: Reporting = REPORTING,
) -> None:
    """PASCAL VOC: per-class precision x recall, AP (every-point and 11-point), mAP.

    Every --ref-* / --sub-* option also answers to its old --gt-* / --det-*
    spelling.
    """
    from geoeval.challenges.voc import evaluate_voc
    from geoeval.report.box_tables import voc_tables
    from geoeval.report.voc_figures import plot_voc

    result = evaluate_voc(
        reference, submission, iou_threshold=iou_threshold, plus_one=voc_plus_one,
        box_format=box_format.value, image_size=image_size,
        ref_fmt=ref_format.value if ref_format else None,
        sub_fmt=sub_format.value if sub_format else None,
        class_names=class_names,
        ref_box_format=ref_box_format.value if ref_box_format else None,
        sub_box_format=sub_box_format.value if sub_box_format else None,
        ref_image_size=ref_image_size,
        sub_image_size=sub_image_size,
        ref_relative=None if ref_coords is None else ref_coords is Coords.rel,
        sub_relative=None if sub_coords is None else sub_coords is Coords.rel,
    )
    out.finish(result, voc_tables)
    if figure_dir is not None:
        plot_voc(result, figure_dir)

