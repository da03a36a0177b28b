"""``geoeval boxes robin`` and ``geoeval boxes robin-categories``: the ROBIN protocol.

$ geoeval boxes robin gt/ detections/ --preset precise --json robin.json
$ geoeval boxes robin gt/ run1/ run2/ run3/ run4/ run5/        # five operating points
$ geoeval boxes robin-categories gt/ labels/ --known-categories car,truck,tank
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from geoeval.cli.callbacks import ALPHA, EPS, IMAGE_SIZE
from geoeval.cli.groups import Group, with_groups
from geoeval.cli.input_paths import input_path
from geoeval.cli.options import REPORTING
from geoeval.cli.printers import Reporting


class Preset(str, Enum):
    rough = "rough"
    precise = "precise"


RefArg = Annotated[Path, typer.Argument(
    parser=input_path,
    help="Reference (ground truth): folder of text/VOC files, COCO JSON, or YOLO folder.")]
Eps1 = Annotated[float | None, typer.Option(
    "--eps1", callback=EPS, help="Localisation threshold ε1 (overrides the preset).")]
Eps2 = Annotated[float | None, typer.Option(
    "--eps2", callback=EPS, help="Completeness threshold ε2.")]
Eps3 = Annotated[float | None, typer.Option(
    "--eps3", callback=EPS, help="Correctness threshold ε3.")]
PresetOpt = Annotated[Preset, typer.Option(help="Thresholds: rough 0.15/0.5/0.15, "
                                                "precise 0.05/0.2/0.05.")]
FmtOpt = Annotated[str | None, typer.Option("--format", help="text, voc, coco or yolo "
                                                             "(default: detected).")]
BoxFmtOpt = Annotated[str, typer.Option("--box-format", help="Text files: xyrb or xywh.")]
SizeOpt = Annotated[str | None, typer.Option("--image-size", callback=IMAGE_SIZE,
                                            help="W,H for relative "
                                                                  "coordinates.")]


def _thresholds(preset: PresetOpt = Preset.rough, eps1: Eps1 = None, eps2: Eps2 = None,
                eps3: Eps3 = None) -> dict[str, Any]:
    return {"preset": preset.value, "eps1": eps1, "eps2": eps2, "eps3": eps3}


def _reader(fmt: FmtOpt = None, box_format: BoxFmtOpt = "xyrb",
            image_size: SizeOpt = None) -> dict[str, Any]:
    opts: dict[str, Any] = {"fmt": fmt, "box_format": box_format}
    if image_size is not None:  # checked and parsed by the IMAGE_SIZE callback
        opts["image_size"] = image_size
    return opts


#: ``--preset``, ``--eps1``..``--eps3`` and the box readers' options of both commands.
THRESHOLDS, READER = Group(_thresholds), Group(_reader)


@with_groups
def robin_command(
    reference: RefArg,
    submissions: Annotated[list[Path], typer.Argument(
        parser=input_path,
        help="Submissions (detections): one run (with confidences: a full sweep) or several "
             "runs.")],
    thresholds: dict = THRESHOLDS,
    points: Annotated[bool, typer.Option(
        "--points", help="Detections are access points (box centres): G uses m1 only.")] = False,
    difficult_alpha: Annotated[float, typer.Option(
        callback=ALPHA, help="Significance level of the difficult-image test.")] = 0.05,
    per_category: Annotated[bool, typer.Option(
        "--per-category", help="Also score each category as its own detector "
        "(categorisation as multiple detections, D'Angelo et al. 2006 §4.2.4).")] = False,
    reader: dict = READER,
    out: Reporting = REPORTING,
) -> None:
    """ROBIN detection: criterion G, precision/recall over all images, R*, P*, EER, AUC."""
    import geoeval

    result = geoeval.evaluate_robin(
        reference, submissions, points=points, difficult_alpha=difficult_alpha,
        per_category=per_category, **thresholds, **reader)
    from geoeval.report.box_tables import robin_tables

    out.finish(result, robin_tables)


@with_groups
def robin_categories_command(
    reference: RefArg,
    submissions: Annotated[list[Path], typer.Argument(
        parser=input_path,
        help="Submissions: the categoriser's outputs (labelled boxes), one run or several "
             "runs.")],
    thresholds: dict = THRESHOLDS,
    known_categories: Annotated[str | None, typer.Option(
        help="Comma-separated categories of the learning database; others are 'Other'.")
    ] = None,
    reader: dict = READER,
    out: Reporting = REPORTING,
) -> None:
    """ROBIN categorisation: confusion matrix η, D, U, D*, U*, EDU, rejection, ERR."""
    import geoeval

    known = None if known_categories is None else [
        c.strip() for c in known_categories.split(",") if c.strip()]
    result = geoeval.robin_categories(reference, submissions, known_categories=known,
                                      **thresholds, **reader)
    from geoeval.report.box_tables import robin_category_tables

    out.finish(result, robin_category_tables)

