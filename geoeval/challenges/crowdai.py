"""The building-polygon table of the CrowdAI Mapping Challenge papers, in one run.

Polygonal building extraction papers (Girard et al. 2021, frame-field learning;
Zorzi et al. 2022, PolyWorld; Xu et al. 2023, HiSup; and their successors) report
on the CrowdAI Mapping Challenge (300 × 300 px tiles, COCO format, one category)
the same columns, computed by five scripts of four repositories. Here from one
reading of the two files:

* ``stats``: COCO mask AP and AR, as pycocotools' ``COCOeval(iouType="segm")``
  (:func:`geoeval.evaluate_coco` with ``iou_type="segm"``), and ``recall_at_iou``:
  AR at IoU 0.50 and 0.75 (100 detections, all areas), which frame-field
  learning's ``eval_coco.py`` prints as AR50 and AR75 and the papers copy;
* ``boundary_stats``: Boundary AP and AR, as boundary-iou-api's COCO evaluator
  (``iou_type="boundary"``, dilation ratio 0.02);
* ``polygon_metrics``: IoU, C-IoU, N-ratio, max tangent angle error and PoLiS,
  each as its script computes it (:mod:`geoeval.challenges.crowdai_polygons`).

docs/crowdai.md says which script each number equals, at which commit, and which
of their quirks are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.challenges.coco import IOU_THRESHOLDS, MAX_DETS, CocoResult
from geoeval.challenges.crowdai_polygons import PolygonMetrics
from geoeval.heap import memory_kept
from geoeval.io.store_paths import box_path
from geoeval.measures.boundary_band import DILATION_RATIO
from geoeval.parallel import collector_paused
from geoeval.reprs import number, warned

#: The papers' AR50 and AR75: recall at one IoU threshold, all areas, 100 detections.
RECALL_AT = {"AR50": 0.5, "AR75": 0.75}


@dataclass(frozen=True)
class CrowdaiResult:
    """The building-polygon table of one submission.

    Attributes
    ----------
    segm, boundary : CocoResult
        COCO mask and Boundary IoU evaluations.
    polygons : PolygonMetrics
        IoU, C-IoU, N-ratio, max tangent angle error, PoLiS.
    name : str
        What the table calls the submission (its file name).
    n_images, n_reference, n_submission : int
        Tiles, reference annotations and submitted results read.
    warnings : tuple of str
    """

    segm: CocoResult
    boundary: CocoResult
    polygons: PolygonMetrics
    name: str = "submission"
    n_images: int = 0
    n_reference: int = 0
    n_submission: int = 0
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:
        p = self.polygons
        return (f"<CrowdaiResult {self.name}: {self.n_images} tiles, {self.n_reference} "
                f"reference and {self.n_submission} submitted polygons; AP "
                f"{number(self.stats['AP'])}, boundary AP {number(self.boundary_stats['AP'])}, "
                f"IoU {number(p.iou)}, C-IoU {number(p.ciou)}, N ratio {number(p.n_ratio)}, "
                f"MTA {number(p.mta)}, PoLiS {number(p.polis)}{warned(self.warnings)}>")

    @property
    def stats(self) -> dict[str, float | None]:
        """The twelve COCO mask numbers (``None`` undefined)."""
        return self.segm.stats

    @property
    def boundary_stats(self) -> dict[str, float | None]:
        """The twelve Boundary IoU numbers (``None`` undefined)."""
        return self.boundary.stats

    @property
    def recall_at_iou(self) -> dict[str, float | None]:
        """AR50 and AR75 of the mask evaluation (``None`` undefined)."""
        return recall_at_iou(self.segm)

    def to_dict(self) -> dict[str, Any]:
        """The JSON report: ``stats``, ``boundary_stats``, ``polygon_metrics`` …"""
        return {
            "protocol": "crowdai",
            "n_images": self.n_images,
            "n_reference": self.n_reference,
            "n_submission": self.n_submission,
            "stats": dict(self.segm.stats),
            "recall_at_iou": self.recall_at_iou,
            "boundary_stats": dict(self.boundary.stats),
            "dilation_ratio": self.boundary.dilation_ratio,
            "polygon_metrics": self.polygons.values(),
            "polygon_counts": self.polygons.counts(),
            "polygon_metrics_unavailable": self.polygons.unavailable,
            "warnings": list(self.warnings),
        }


def recall_at_iou(result: CocoResult) -> dict[str, float | None]:
    """Mean recall over the categories at IoU 0.50 and 0.75 (all areas, 100 detections),
    as frame-field learning's ``summarize`` computes its AR50 and AR75; ``None`` where
    undefined (no reference object)."""
    out: dict[str, float | None] = {}
    for name, t in RECALL_AT.items():
        r = result.recall[np.flatnonzero(IOU_THRESHOLDS == t), :, 0, MAX_DETS.index(100)]
        out[name] = float(np.mean(r[r > -1])) if (r > -1).any() else None
    return out


def evaluate_crowdai(reference: str | Path | dict, submission: str | Path | list, *,
                     dilation_ratio: float = DILATION_RATIO) -> CrowdaiResult:
    """The CrowdAI building-polygon table: mask AP, Boundary AP and the polygon metrics.

    Parameters
    ----------
    reference : path or dict
        COCO ground truth with polygon (or RLE) segmentations and image sizes.
    submission : path or list
        COCO results with ``segmentation``, ``score`` (and ``bbox``).
    dilation_ratio : float
        Boundary IoU's band, a fraction of the image diagonal (0.02 as the paper).

    Returns
    -------
    CrowdaiResult

    Notes
    -----
    Python's cyclic garbage collector is paused during the call: the loaded files
    are millions of containers, which every collection would walk again while
    hundreds of thousands of geometries are made (PoLiS took four times as long).
    The polygon metrics need polygons: when a segmentation is an RLE mask they are
    all ``None`` and a warning says why; the mask and boundary numbers are computed
    all the same.
    """
    from geoeval.validate import check

    check("dilation_ratio", dilation_ratio)
    with collector_paused(), memory_kept():
        return _evaluate(reference, submission, dilation_ratio)


def _evaluate(reference: str | Path | dict, submission: str | Path | list,
              dilation_ratio: float) -> CrowdaiResult:
    from geoeval.challenges import crowdai_polygons as cp
    from geoeval.challenges.coco import masks_and_boundaries
    from geoeval.io.coco_rings import NotPolygons
    from geoeval.parallel import concurrently

    gt, dt, gt_records, dt_records = cp.read(reference, submission)
    try:
        g, d = cp.sides(gt, dt, gt_records, dt_records)
    except NotPolygons as exc:
        segm, boundary = masks_and_boundaries(gt, dt, dilation_ratio)
        side, k = (gt, exc.index) if exc.index < len(gt_records) else (
            dt, exc.index - len(gt_records))
        what = "annotations" if side is gt else "results"
        polygons = PolygonMetrics(unavailable=(
            f"{side.path}: {what}[{k}] holds {exc.reason}: IoU, C-IoU, N ratio, MTA and "
            "PoLiS need polygon segmentations"))
    else:
        def masks_and_columns() -> tuple[CocoResult, CocoResult, Any, Any]:
            segm, boundary = masks_and_boundaries(gt, dt, dilation_ratio)
            return (segm, boundary,
                    cp.iou_ciou(g, d, gt.masks.linear_runs(), dt.masks.linear_runs()),
                    cp.polis_hisup(g, d))

        # the polygons of the tangent angles (GEOS, which lets go of the interpreter)
        # made beside the mask numbers and the other columns (numpy and Python)
        (segm, boundary, ious, polis), mta_polygons = concurrently(
            masks_and_columns, lambda: cp.mta_polygons(g, d))
        polygons = cp.assembled(g, d, ious, polis, cp.mta_ffl(g, d, fixed=mta_polygons))
    warnings = [*gt.warnings, *dt.warnings, *segm.warnings]
    if polygons.unavailable:
        warnings.append(polygons.unavailable)
    name = box_path(submission).name if isinstance(submission, (str, Path)) else "submission"
    return CrowdaiResult(segm=segm, boundary=boundary, polygons=polygons, name=name,
                         n_images=len(gt.images), n_reference=len(gt), n_submission=len(dt),
                         warnings=tuple(dict.fromkeys(warnings)))
