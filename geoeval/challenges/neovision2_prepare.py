"""Neovision2's data made ready to match: the detections' sequences paired with the ground
truth's, don't-care frames dropped and detections inside don't-care regions removed
(Ekambaram et al., *Neovision2 Performance Evaluation Protocol* v3.0, 2012, §3), every
array indexed by class, frame and sequence for :mod:`geoeval.challenges.neovision2`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geoeval.arrays import unique
from geoeval.challenges._box_groups import (
    group_codes,
    overlapping_pairs,
    pair_intersection,
)
from geoeval.errors import InputError, swapped
from geoeval.io.neovision2 import (
    ROLE_DCF,
    ROLE_DCO,
    ROLE_DCR,
    ROLE_OBJECT,
    Neovision2Boxes,
)
from geoeval.thresholds import above


@dataclass
class Prepared:
    """The two sides of a data set as arrays, after the don't-care rules (:func:`prepare`)."""

    classes: list[str]
    domain_names: list[str | None]
    sequence_names: list[str]
    seq_domain: np.ndarray  # domain index of each sequence
    frames_per_seq: np.ndarray
    # ground truth objects and don't-care objects
    g_frame: np.ndarray
    g_class: np.ndarray  # class index, -1 for class-less don't-care objects
    g_boxes: np.ndarray
    g_care: np.ndarray  # True: a real object; False: a don't-care object
    g_seq: np.ndarray
    # detections kept after don't-care frames and regions
    d_frame: np.ndarray
    d_class: np.ndarray
    d_boxes: np.ndarray
    d_conf: np.ndarray
    d_seq: np.ndarray
    dont_care: dict[str, int]
    warnings: list[str]


def _swapped(gt: Neovision2Boxes, det: Neovision2Boxes) -> None:
    """An error when the ground truth has detection scores (a Confidence on every row,
    not all 1) and the results none: the two arguments given the wrong way round. (A
    ground truth with Confidence 1 throughout and results without scores is valid.)"""
    conf = gt.confidence
    if (conf.size and det.confidence.size and not np.isnan(conf).any()
            and (conf != 1).any() and np.isnan(det.confidence).all()):
        raise InputError("every row here has a Confidence score and no row of the submission "
                         f"({det.path}) has one: " + swapped("ground truth", "results"),
                         gt.path)


def _one_file_and_a_folder(gt: Neovision2Boxes, det: Neovision2Boxes) -> None:
    """One side a single CSV file and the other a folder of several: an error naming the
    other side's file of that sequence (a file is paired with a file, a folder with a
    folder), if there is one."""
    one, many = (gt, det) if len(gt.sequences) == 1 else (det, gt)
    if one.files != (one.path,):  # not one file read as itself (a folder)
        return
    same = [f for k, f in zip(many.sequences, many.files, strict=True)
            if k.rsplit("/", 1)[-1] == one.sequences[0]]
    if one is gt:
        what = ("REFERENCE is one ground-truth file and SUBMISSION a folder: give the "
                "results file of that sequence as SUBMISSION")
        other = "or the ground-truth folder as REFERENCE"
    else:
        what = ("SUBMISSION is one results file and REFERENCE a folder: give the "
                "ground-truth file of that sequence as REFERENCE")
        other = "or the results folder as SUBMISSION"
    named = f" ({same[0]})" if len(same) == 1 else ""
    raise InputError(f"{what}{named}, {other}", one.path)


def prepare(gt: Neovision2Boxes, det: Neovision2Boxes, dcr_threshold: float) -> Prepared:
    """Pair the sequences of ``det`` with those of ``gt``, drop the detections of don't-care
    frames and those inside a don't-care region by more than ``dcr_threshold`` of their
    area (Ekambaram et al. 2012, §3.2), and index both sides by class."""
    _swapped(gt, det)
    warnings: list[str] = list(gt.warnings) + list(det.warnings)
    # pair the sequences of the detections with those of the ground truth
    if len(gt.sequences) == 1 and len(det.sequences) == 1:
        det_seq = np.zeros(len(det), dtype=np.int64)
    else:
        index = {k: i for i, k in enumerate(gt.sequences)}
        unknown = [k for k in det.sequences if k not in index]
        if unknown:
            _one_file_and_a_folder(gt, det)
            f = det.files[det.sequences.index(unknown[0])]
            raise InputError(f"sequence {unknown[0]!r} has no ground-truth file in {gt.path}", f)
        det_seq = np.array([index[k] for k in det.sequences], dtype=np.int64)[det.sequence]
        absent = sorted(set(gt.sequences) - set(det.sequences))
        if absent:
            warnings.append(f"{len(absent)} ground-truth sequence(s) without detections "
                            f"(scored as all missed): {', '.join(absent[:5])}")
    n_seq = len(gt.sequences)
    domain_names = sorted(set(gt.domains), key=lambda d: (d is None, d or ""))
    seq_domain = np.array([domain_names.index(d) for d in gt.domains], dtype=np.int64)

    # frame codes shared by both sides; don't-care frames
    seq_all = np.concatenate([gt.sequence, det_seq])
    frame_all = np.concatenate([gt.frame, det.frame])
    fcode, _ = group_codes(seq_all, frame_all)
    g_fc, d_fc = fcode[: len(gt)], fcode[len(gt):]
    dcf = unique(g_fc[gt.role == ROLE_DCF])
    g_in = ~np.isin(g_fc, dcf)
    d_in = ~np.isin(d_fc, dcf)
    # evaluated frames per sequence: 0 .. last frame seen, minus don't-care frames
    last = np.full(n_seq, -1, dtype=np.int64)
    np.maximum.at(last, seq_all, frame_all)
    dcf_seq = np.zeros(n_seq, dtype=np.int64)
    if dcf.size:
        first_row = np.unique(g_fc[gt.role == ROLE_DCF], return_index=True)[1]
        np.add.at(dcf_seq, gt.sequence[gt.role == ROLE_DCF][first_row], 1)
    frames_seq = np.maximum(last + 1 - dcf_seq, 0)

    # don't-care regions (§3.7): drop detections with > dcr_threshold of their
    # area inside; a ground-truth object inside by the same rule is eliminated:
    # it becomes a don't-care object of its class (never missed, and a detection
    # matched to it is neither TP nor FP, as for the DCOs of §3.7)
    is_dcr = (gt.role == ROLE_DCR) & g_in
    frac = inside_fraction(d_fc, det.boxes, g_fc[is_dcr], gt.boxes[is_dcr])
    d_keep = d_in & ~inside_above(frac, dcr_threshold)
    obj = (gt.role == ROLE_OBJECT) & g_in
    g_frac = np.zeros(len(gt))
    g_frac[obj] = inside_fraction(g_fc[obj], gt.boxes[obj], g_fc[is_dcr], gt.boxes[is_dcr])
    obj_in_dcr = obj & inside_above(g_frac, dcr_threshold)
    labelled = obj.copy()
    obj &= ~obj_in_dcr

    # classes: of ground-truth objects first, then of detections
    dco = (gt.role == ROLE_DCO) & g_in
    g_labels = gt.label[labelled | (dco & ~gt.all_classes)].astype(str)
    d_labels = det.label[d_keep].astype(str)
    class_arr = np.union1d(g_labels, d_labels).astype(str)
    classes = class_arr.tolist()
    extra = np.setdiff1d(d_labels, gt.label[labelled].astype(str)).tolist()
    if extra:
        warnings.append(f"detection class(es) absent from the ground truth: {', '.join(extra)}")

    g_sel = labelled | dco
    g_class = class_index(class_arr, gt.label[g_sel].astype(str))
    g_class[gt.all_classes[g_sel]] = -1
    conf = det.confidence[d_keep]
    n_no_conf = int(np.isnan(conf).sum())
    if n_no_conf:
        warnings.append(f"{n_no_conf} detection(s) without confidence: kept at every "
                        "ROC threshold")
    dont_care = {
        "frames": int(dcf.size),
        "regions": int(is_dcr.sum()),
        "objects": int(dco.sum()),
        "detections_in_frames": int((~d_in).sum()),
        "detections_in_regions": int((d_in & ~d_keep).sum()),
        "objects_in_regions": int(obj_in_dcr.sum()),
    }
    return Prepared(
        classes=classes,
        domain_names=domain_names,
        sequence_names=list(gt.sequences),
        seq_domain=seq_domain,
        frames_per_seq=frames_seq.astype(np.int64),
        g_frame=g_fc[g_sel],
        g_class=g_class,
        g_boxes=gt.boxes[g_sel],
        g_care=obj[g_sel],
        g_seq=gt.sequence[g_sel].astype(np.int64),
        d_frame=d_fc[d_keep],
        d_class=class_index(class_arr, d_labels),
        d_boxes=det.boxes[d_keep],
        d_conf=np.where(np.isnan(conf), np.inf, conf),
        d_seq=det_seq[d_keep].astype(np.int64),
        dont_care=dont_care,
        warnings=warnings,
    )


def class_index(classes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Index of each label in the sorted ``classes``, -1 where absent."""
    if classes.size == 0:
        return np.full(labels.size, -1, dtype=np.int64)
    k = np.minimum(np.searchsorted(classes, labels), classes.size - 1)
    return np.where(classes[k] == labels, k, -1).astype(np.int64)


def inside_above(frac: np.ndarray, threshold: float) -> np.ndarray:
    """A box's inside fraction is more than ``threshold`` (§3.7: "more than 20 %"),
    by geoeval's rule for ratios of float areas (:func:`geoeval.thresholds.above`)."""
    return above(frac, np.ones_like(frac), threshold)


def inside_fraction(
    d_frame: np.ndarray, d_boxes: np.ndarray, r_frame: np.ndarray, r_boxes: np.ndarray
) -> np.ndarray:
    """Fraction of each box's area inside the union of its frame's regions.

    ``|box ∩ ∪ regions| / |box|``: one division of two areas, the
    intersections computed directly (:func:`pair_intersection`), so a box with
    exactly 20 % inside gives exactly ``0.2``. A zero-area box touching a
    region counts as wholly inside.
    """
    from geoeval.overlap import box_area

    frac = np.zeros(d_frame.size)
    if r_frame.size == 0 or d_frame.size == 0:
        return frac
    i, j = overlapping_pairs(d_frame, d_boxes, r_frame, r_boxes)
    if i.size == 0:
        return frac
    inter = np.zeros(d_frame.size)
    np.add.at(inter, i, pair_intersection(d_boxes, r_boxes, i, j))
    # several regions over one detection may overlap each other: exact union there
    n_hit = np.bincount(i, minlength=d_frame.size)
    multi = np.flatnonzero(n_hit > 1)
    if multi.size:
        import shapely

        starts = np.searchsorted(i, multi)
        for d, s in zip(multi, starts, strict=True):  # only detections under ≥ 2 regions
            regions = shapely.union_all(shapely.box(*r_boxes[j[s:s + n_hit[d]]].T))
            inter[d] = shapely.area(shapely.intersection(shapely.box(*d_boxes[d]), regions))
    area = box_area(d_boxes)
    touched = n_hit > 0
    frac[touched & (area > 0)] = inter[touched & (area > 0)] / area[touched & (area > 0)]
    frac[touched & (area == 0)] = 1.0
    return frac
