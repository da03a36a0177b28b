"""Localisation metrics of Hemery et al. (2010), Hemery et al. (2010), Table 2, one function each.

Box metrics take ``(x0, y0, x1, y1)`` boxes, contour metrics contour images and
mask metrics binary masks; all accept single inputs or batches (a single
reference broadcasts against a batch of results). :data:`METRICS` registers
each with its representation and convention (dissimilarity, 0 = identical, or a
labelled similarity). Formulas and the choices made where the paper's are
ambiguous: ``docs/localization.md``.
"""

from __future__ import annotations

from geoeval.measures.localization.boxes import (
    robin_completeness,
    robin_correctness,
    robin_localization,
)
from geoeval.measures.localization.contours import (
    baddeley_distance,
    bhattacharyya_distance,
    figure_of_merit,
    hausdorff_distance,
    jensen_distance,
    kullback_distance,
    localization_error,
    lq_distance,
    mean_distance,
    mean_squared_distance,
    odet_over_detection,
    odet_under_detection,
    over_detection_error,
    root_mean_square,
    signal_to_noise_ratio,
    under_detection_error,
)
from geoeval.measures.localization.masks import (
    global_consistency_error,
    hafiane_matching,
    hafiane_weighted,
    hamming_similarity,
    henricsson_mismatch_error,
    henricsson_size_error,
    local_consistency_error,
    pascal_overlap,
    pixel_precision,
    pixel_recall,
    vinet_distance,
    yasnoff_distance_error,
    yasnoff_over_detection,
    yasnoff_under_detection,
)
from geoeval.measures.localization.pairs import (
    BoxPair,
    ContourPair,
    MaskPair,
    mask_box,
    mask_contour,
)
from geoeval.measures.localization.registry import METRICS, Metric, get_metric
from geoeval.measures.localization.single import (
    single_pair_bgm,
    single_pair_hoover,
    single_pair_iou,
    single_pair_mallows,
)

LOCALIZATION_METRICS = METRICS

__all__ = [
    "METRICS", "LOCALIZATION_METRICS", "Metric", "get_metric", "BoxPair", "ContourPair",
    "MaskPair", "mask_box", "mask_contour",
    "robin_localization", "robin_completeness", "robin_correctness",
    "localization_error", "under_detection_error", "over_detection_error",
    "signal_to_noise_ratio", "root_mean_square", "lq_distance", "kullback_distance",
    "bhattacharyya_distance", "jensen_distance", "mean_distance", "mean_squared_distance",
    "figure_of_merit", "hausdorff_distance", "baddeley_distance", "odet_over_detection",
    "odet_under_detection",
    "pascal_overlap", "henricsson_size_error", "henricsson_mismatch_error",
    "yasnoff_over_detection", "yasnoff_under_detection", "yasnoff_distance_error",
    "global_consistency_error", "local_consistency_error", "hamming_similarity",
    "hafiane_matching", "hafiane_weighted", "vinet_distance", "pixel_precision", "pixel_recall",
    "single_pair_iou", "single_pair_bgm", "single_pair_hoover", "single_pair_mallows",
]
