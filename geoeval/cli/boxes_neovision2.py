"""``geoeval boxes neovision2 REFERENCE SUBMISSION``: the DARPA Neovision2 protocol.

$ geoeval boxes neovision2 truth/ results/ --json neovision2.json
$ geoeval boxes neovision2 truth/TowerF/001.csv results/TowerF/001.csv
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geoeval.cli.callbacks import IOU, POSITIVE
from geoeval.cli.groups import with_groups
from geoeval.cli.input_paths import input_path
from geoeval.cli.options import REPORTING
from geoeval.cli.printers import Reporting


@with_groups
def neovision2_command(
    reference: Annotated[Path, typer.Argument(
        parser=input_path,
        help="Reference (ground truth): a CSV file or a folder of per-sequence CSV files.")],
    submission: Annotated[Path, typer.Argument(
        parser=input_path,
        help="Submission (system output): a CSV file or a folder laid out like the "
             "reference.")],
    iou_threshold: Annotated[float, typer.Option(
        callback=IOU, help="Match when IoU ≥ this.")] = 0.2,
    roc_max_fppf: Annotated[float | None, typer.Option(
        callback=POSITIVE,
        help="Right end of the FPPF axis for Az (default: each curve's largest FPPF).")
    ] = None,
    out: Reporting = REPORTING,
) -> None:
    """Neovision2: NMOTDA per class and domain, detection only, ROC and Az.

    NMOTDA sums the frames of all sequences (the ground-truth-weighted mean of
    the sequences); the plain mean and median over sequences, and the weighted
    mean, mean and median over classes, are the other candidates of
    Ekambaram et al. (2012) §3.4.
    """
    import geoeval
    from geoeval.report.box_tables import neovision2_tables

    result = geoeval.evaluate_neovision2(reference, submission, iou_threshold=iou_threshold,
                                         roc_max_fppf=roc_max_fppf)
    out.finish(result, neovision2_tables)

