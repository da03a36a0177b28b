"""Neovision2 (seeds/001): CSV reader, NMOTDA, don't-care handling, detection only, ROC."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from geoeval.challenges.neovision2 import ROC_THRESHOLDS, _az, _merge, evaluate_neovision2
from geoeval.errors import InputError
from geoeval.io.neovision2 import ROLE_DCF, ROLE_DCO, ROLE_DCR, ROLE_OBJECT, read_neovision2

HEADER = ("Frame,BoundingBox_X1,BoundingBox_Y1,BoundingBox_X2,BoundingBox_Y2,BoundingBox_X3,"
          "BoundingBox_Y3,BoundingBox_X4,BoundingBox_Y4,ObjectType,Occlusion,Ambiguous,"
          "Confidence,SiteInfo,Version")


def row(frame, box, label, conf="", ambiguous="FALSE", occlusion="FALSE"):
    """A Table 4 row for the vertical box (x1, y1, x2, y2), corners clockwise."""
    x1, y1, x2, y2 = box
    return (f"{frame},{x1},{y1},{x2},{y1},{x2},{y2},{x1},{y2},{label},{occlusion},"
            f"{ambiguous},{conf},,1.0")


def write(path, rows, header=True):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(([HEADER] if header else []) + rows) + "\n")
    return path


# --- reader -------------------------------------------------------------------


def test_reader_table4_example(tmp_path):
    f = tmp_path / "001.csv"
    f.write_text(HEADER.replace("Occlusion", "Occlusi on") + "\n"
                 "0,701,489,870,489,870,560,701,560,Car,FALSE,FALSE,1.0,,1.0\n"
                 "4,861,768,1051,768,1051,839,861,839,Car,TRUE,FALSE,1.0,,1.0\n"
                 "4,452,492,621,492,621,563,452,563,Car,FALSE,FALSE,0.5,,1.0\n"
                 "4,452,492,621,492,621,563,452,563,Truck,FALSE,FALSE,0.7,,1.0\n")
    d = read_neovision2(f, dont_care=False)
    assert d.sequences == ("001",) and d.domains == (None,)
    assert d.frame.tolist() == [0, 4, 4, 4]
    assert d.boxes.tolist()[0] == [701, 489, 870, 560]
    assert d.label.tolist() == ["Car", "Car", "Car", "Truck"]
    assert d.occlusion.tolist() == [False, True, False, False]
    assert d.confidence.tolist() == [1.0, 1.0, 0.5, 0.7]
    assert d.line.tolist() == [2, 3, 4, 5]
    assert (d.role == ROLE_OBJECT).all()


def test_reader_oriented_box_becomes_envelope_and_no_header(tmp_path):
    # a diamond: corners (5,0) (10,5) (5,10) (0,5) -> envelope (0,0,10,10)
    f = write(tmp_path / "s.csv", ["3,5,0,10,5,5,10,0,5,Person,FALSE,FALSE,0.4,,1"], header=False)
    d = read_neovision2(f)
    assert d.boxes.tolist() == [[0, 0, 10, 10]]
    assert d.frame.tolist() == [3] and d.confidence.tolist() == [0.4]


def test_reader_dont_care_kinds(tmp_path):
    f = write(tmp_path / "g.csv", [
        row(0, (0, 0, 5, 5), "Car"),
        row(0, (0, 0, 5, 5), "Car", ambiguous="TRUE"),
        row(0, (0, 0, 5, 5), "DontCare"),
        row(0, (0, 0, 5, 5), "DCR"),
        row(1, (0, 0, 5, 5), "Don't Care Frame"),
    ])
    d = read_neovision2(f)
    assert d.role.tolist() == [ROLE_OBJECT, ROLE_DCO, ROLE_DCO, ROLE_DCR, ROLE_DCF]
    assert d.all_classes.tolist() == [False, False, True, True, True]
    assert (read_neovision2(f, dont_care=False).role == ROLE_OBJECT).all()


def test_reader_folder_domains(tmp_path):
    write(tmp_path / "TowerF" / "001.csv", [row(0, (0, 0, 5, 5), "Car")])
    write(tmp_path / "Heli" / "002.csv", [row(0, (0, 0, 5, 5), "Boat"), row(1, (1, 1, 2, 2),
                                                                         "Boat")])
    d = read_neovision2(tmp_path)
    assert d.sequences == ("Heli/002", "TowerF/001")
    assert d.domains == ("Heli", "TowerF")
    assert d.sequence.tolist() == [0, 0, 1]


@pytest.mark.parametrize("line, message", [
    ("0,1,2,3,4,5,6,7,8,Car,FALSE,FALSE,abc,,1", "line 2: Confidence 'abc' is not a finite"),
    ("0,1,2,3,4,5,6,7,Car", "line 2: 9 fields, expected 15"),
    ("0,1,2,3,4,5,6,7,8,Car,maybe,FALSE,0.5,,1", "line 2: Occlusion 'maybe' is not TRUE"),
    ("-1,1,2,3,4,5,6,7,8,Car,FALSE,FALSE,0.5,,1", "line 2: Frame -1 is not a non-negative"),
    ("2.5,1,2,3,4,5,6,7,8,Car,FALSE,FALSE,0.5,,1", "line 2: Frame 2.5 is not"),
    ("0,1,2,3,4,5,6,7,8,Car,FALSE,FALSE,1.5,,1", "line 2: Confidence 1.5 outside [0, 1]"),
    ("0,1,2,3,x,5,6,7,8,Car,FALSE,FALSE,0.5,,1", "line 2: BoundingBox_Y2 'x' is not a finite"),
    ("0,1,2,3,4,5,6,7,8,,FALSE,FALSE,0.5,,1", "line 2: empty ObjectType"),
    ("0,1,2,3,nan,5,6,7,8,Car,FALSE,FALSE,0.5,,1", "line 2: BoundingBox_Y2 'nan' is not a finite"),
])
def test_reader_malformed_names_file_and_line(tmp_path, line, message):
    f = write(tmp_path / "bad.csv", [line])
    with pytest.raises(InputError) as exc:
        read_neovision2(f)
    assert str(exc.value).startswith(str(f) + ": ")
    assert message in str(exc.value)


def test_reader_bad_header_and_missing_inputs(tmp_path):
    f = tmp_path / "h.csv"
    f.write_text("Frame,X1,Y1\n0,1,2\n")
    with pytest.raises(InputError, match=r"h.csv: line 1: header lacks column\(s\)"):
        read_neovision2(f)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .csv file"):
        read_neovision2(tmp_path / "empty")
    with pytest.raises(InputError, match="no such file"):
        read_neovision2(tmp_path / "nothing.csv")


# --- scoring: hand-computed cases ----------------------------------------------


def evaluate(tmp_path, gt_rows, det_rows, **kw):
    g = write(tmp_path / "gt" / "seq.csv", gt_rows)
    d = write(tmp_path / "det" / "seq.csv", det_rows)
    return evaluate_neovision2(g, d, **kw)


def test_hand_case_multilabel_dco_dcr(tmp_path):
    gt = [
        row(0, (0, 0, 10, 10), "Car"),
        row(0, (20, 0, 30, 10), "Car"),
        row(1, (0, 0, 10, 10), "Truck"),
        row(1, (50, 50, 60, 60), "Car", ambiguous="TRUE"),  # don't-care object
        row(1, (100, 100, 200, 200), "DCR"),
    ]
    det = [
        row(0, (0, 0, 10, 10), "Car", 0.9),      # TP
        row(0, (0, 0, 10, 10), "Truck", 0.4),    # same box, second label: FP for Truck
        row(0, (40, 0, 50, 10), "Car", 0.3),     # FP
        row(1, (1, 1, 11, 11), "Truck", 0.8),    # TP (IoU 81/119)
        row(1, (51, 51, 61, 61), "Car", 0.8),    # on the don't-care object: ignored
        row(1, (150, 150, 160, 160), "Car", 0.8),  # wholly in the DCR: dropped
        row(1, (195, 150, 215, 160), "Car", 0.8),  # 25 % in the DCR: dropped
        row(1, (185, 210, 235, 220), "Car", 0.8),  # outside the DCR: FP
    ]
    r = evaluate(tmp_path, gt, det)
    car, truck = r.classes["Car"], r.classes["Truck"]
    assert (car.n_reference, car.true_positives, car.missed, car.false_positives,
            car.ignored) == (2, 1, 1, 2, 1)
    assert car.nmotda == pytest.approx(1 - (1 + 2) / 2)
    assert (truck.n_reference, truck.true_positives, truck.missed,
            truck.false_positives) == (1, 1, 0, 1)
    assert truck.nmotda == pytest.approx(0.0)
    assert r.weighted_mean == pytest.approx((2 * -0.5 + 1 * 0.0) / 3)
    assert r.dont_care["detections_in_regions"] == 2
    assert r.dont_care["objects"] == 1 and r.dont_care["regions"] == 1
    # detection only: the two identical boxes of frame 0 merge; 5 boxes remain
    d = r.detection_only
    assert (d.n_reference, d.n_submission, d.true_positives, d.missed, d.false_positives,
            d.ignored) == (3, 5, 2, 1, 2, 1)
    assert d.nmotda == pytest.approx(1 - 3 / 3)


def test_dcr_twenty_percent_rule_uses_union_of_regions(tmp_path):
    gt = [row(0, (0, 0, 100, 100), "Car"),
          # two overlapping regions over the 10 x 10 detection below: union covers
          # x in [0, 2] = 20 % (kept: the rule is "more than 20 %"), the sum of the
          # two intersections would be 35 %
          row(0, (-5, 200, 1.5, 300), "DCR"),
          row(0, (-5, 200, 2, 300), "DCR"),
          row(1, (-5, 200, 2.1, 300), "DCR")]
    det = [row(0, (0, 200, 10, 210), "Car", 0.5),   # exactly 20 %: kept -> FP
           row(1, (0, 200, 10, 210), "Car", 0.5)]   # 21 %: dropped
    r = evaluate(tmp_path, gt, det)
    assert r.classes["Car"].false_positives == 1
    assert r.dont_care["detections_in_regions"] == 1


def test_dont_care_object_neither_tp_nor_fp_and_real_object_preferred(tmp_path):
    gt = [row(0, (0, 0, 10, 10), "Car"),
          row(0, (0, 0, 10, 12), "Car", ambiguous="TRUE"),
          row(0, (50, 0, 60, 10), "DontCare")]  # class-less: applies to every class
    det = [row(0, (0, 0, 10, 12), "Car", 0.9),   # IoU 1 with the DCO, 0.83 with the car
           row(0, (50, 0, 60, 10), "Bus", 0.9)]  # on the class-less DCO
    r = evaluate(tmp_path, gt, det)
    car = r.classes["Car"]
    # maximising 2·TP + D: the detection goes to the real car, not the DCO
    assert (car.true_positives, car.missed, car.false_positives, car.ignored) == (1, 0, 0, 0)
    bus = r.classes["Bus"]
    assert (bus.n_reference, bus.false_positives, bus.ignored, bus.nmotda) == (0, 0, 1, None)
    assert any("Bus" in w for w in r.warnings)


def test_dco_match_keeps_both_detections_out_of_fp(tmp_path):
    gt = [row(0, (0, 0, 10, 10), "Car"), row(0, (2, 0, 12, 10), "Car", ambiguous="TRUE")]
    det = [row(0, (1, 0, 11, 10), "Car", 0.9),   # overlaps both
           row(0, (0, 0, 10, 10), "Car", 0.9)]   # overlaps both (IoU 1 with the car)
    car = evaluate(tmp_path, gt, det).classes["Car"]
    assert (car.true_positives, car.false_positives, car.ignored, car.nmotda) == (1, 0, 1, 1.0)


def test_hungarian_maximises_number_of_detections(tmp_path):
    # greedy by IoU would pair d1 with g1 (IoU 2/3) and leave g2 and d2 unmatched
    gt = [row(0, (0, 0, 10, 10), "Car"), row(0, (6, 0, 16, 10), "Car")]
    det = [row(0, (2, 0, 12, 10), "Car", 0.9),   # IoU 8/12 with g1, 6/14 with g2
           row(0, (-6, 0, 4, 10), "Car", 0.9)]   # IoU 40/160 = 0.25 with g1 only
    car = evaluate(tmp_path, gt, det).classes["Car"]
    assert (car.true_positives, car.missed, car.false_positives) == (2, 0, 0)


def test_iou_threshold_inclusive(tmp_path):
    # B inside A with |B| = 0.2 |A|: IoU = 20 / 100 = 0.2 exactly -> a match
    gt = [row(0, (0, 0, 10, 10), "Car")]
    r = evaluate(tmp_path, gt, [row(0, (0, 0, 10, 2), "Car", 0.5)])
    assert r.classes["Car"].true_positives == 1
    r = evaluate(tmp_path, gt, [row(0, (0, 0, 10, 1.9), "Car", 0.5)])
    assert r.classes["Car"].true_positives == 0


def test_dont_care_frame_and_frame_count(tmp_path):
    gt = [row(0, (0, 0, 10, 10), "Car"), row(1, (0, 0, 10, 10), "Car"),
          row(1, (0, 0, 1, 1), "DCF"), row(4, (0, 0, 10, 10), "Car")]
    det = [row(1, (50, 50, 60, 60), "Car", 0.9), row(4, (0, 0, 10, 10), "Car", 0.9)]
    r = evaluate(tmp_path, gt, det)
    car = r.classes["Car"]
    # frame 1 ignored entirely: its ground truth and its FP
    assert (car.n_reference, car.true_positives, car.false_positives) == (2, 1, 0)
    assert r.overall.n_frames == 4  # frames 0..4 minus the don't-care frame
    assert r.dont_care["frames"] == 1 and r.dont_care["detections_in_frames"] == 1


def test_costs(tmp_path):
    gt = [row(0, (0, 0, 10, 10), "Car"), row(0, (20, 0, 30, 10), "Car")]
    det = [row(0, (0, 0, 10, 10), "Car", 0.9), row(0, (50, 0, 60, 10), "Car", 0.9)]
    r = evaluate(tmp_path, gt, det, cost_miss=2.0, cost_false_positive=0.5)
    assert r.classes["Car"].nmotda == pytest.approx(1 - (2 * 1 + 0.5 * 1) / 2)


def test_merge_connected_components():
    frame = np.array([0, 0, 0, 0, 0, 1])
    boxes = np.array([
        [0, 0, 10, 10],
        [5, 0, 15, 10],    # IoU 1/3 with the first
        [11, 0, 21, 10],   # IoU 4/16 with the second, 0 with the first: same component
        [100, 0, 110, 10],
        [100, 0, 110, 10],  # identical to the previous one
        [0, 0, 10, 10],    # another frame: never merged
    ], dtype=float)
    conf = np.array([0.1, 0.5, 0.2, 0.3, 0.4, 0.9])
    f, b, c = _merge(frame, boxes, conf, 0.2)
    got = sorted(zip(f.tolist(), map(tuple, b.tolist()), c.tolist(), strict=True))
    assert got == [(0, (0, 0, 21, 10), 0.5), (0, (100, 0, 110, 10), 0.4),
                   (1, (0, 0, 10, 10), 0.9)]
    # IoU exactly 0.2 is not "over 20 %": A = (0,0,10,10), B = (0,0,10,2)
    f, b, _ = _merge(np.array([0, 0]), np.array([[0, 0, 10, 10], [0, 0, 10, 2.0]]),
                     np.ones(2), 0.2)
    assert len(f) == 2


def test_roc_points_and_az(tmp_path):
    gt = [row(0, (0, 0, 10, 10), "Car"), row(1, (0, 0, 10, 10), "Car")]
    det = [row(0, (0, 0, 10, 10), "Car", 0.85),   # TP from threshold 0.85 on (inclusive)
           row(0, (50, 0, 60, 10), "Car", 0.6),   # FP from 0.55 on
           row(1, (0, 0, 10, 10), "Car", 0.3),    # TP from 0.25 on
           row(1, (70, 0, 80, 10), "Car")]        # no confidence: every threshold
    r = evaluate(tmp_path, gt, det)
    roc = r.overall.roc["Car"]
    assert roc.thresholds == ROC_THRESHOLDS
    assert list(roc.true_positives) == [0, 1, 1, 1, 1, 1, 1, 2, 2, 2]
    assert list(roc.false_positives) == [1, 1, 1, 1, 2, 2, 2, 2, 2, 2]
    assert roc.detection_rate[-1] == 1.0
    assert roc.false_positives_per_frame[0] == 0.5
    # points (0,0) (0.5,0) (0.5,.5) (1,.5) (1,1): area on [0, 1] = 0.25 / 1
    assert roc.az == pytest.approx(0.25) and roc.fppf_max == 1.0
    r2 = evaluate(tmp_path, gt, det, roc_max_fppf=2.0)
    assert r2.overall.roc["Car"].az == pytest.approx((0.25 + 1.0) / 2)


def test_az_helper():
    assert _az([0.0, 1.0], [0.5, 1.0], None) == (pytest.approx(0.75), 1.0)
    # clipping to a shorter axis interpolates
    assert _az([0.0, 2.0], [0.0, 1.0], 1.0)[0] == pytest.approx(0.25)
    assert _az([None], [None], None) == (None, None)


def test_domains(tmp_path):
    write(tmp_path / "gt" / "Tower" / "1.csv", [row(0, (0, 0, 10, 10), "Car")])
    write(tmp_path / "gt" / "Heli" / "1.csv", [row(0, (0, 0, 10, 10), "Car"),
                                               row(2, (0, 0, 10, 10), "Boat")])
    write(tmp_path / "det" / "Tower" / "1.csv", [row(0, (0, 0, 10, 10), "Car", 0.9)])
    write(tmp_path / "det" / "Heli" / "1.csv", [row(0, (40, 0, 50, 10), "Car", 0.9)])
    r = evaluate_neovision2(tmp_path / "gt", tmp_path / "det")
    assert set(r.domains) == {"Tower", "Heli"}
    assert r.domains["Tower"].classes["Car"].nmotda == 1.0
    assert r.domains["Heli"].classes["Car"].nmotda == pytest.approx(-1.0)
    assert r.domains["Heli"].classes["Boat"].missed == 1
    assert r.domains["Heli"].n_frames == 3 and r.domains["Tower"].n_frames == 1
    assert r.classes["Car"].nmotda == pytest.approx(1 - 2 / 2)


def test_unknown_detection_sequence_is_an_error(tmp_path):
    write(tmp_path / "gt" / "1.csv", [row(0, (0, 0, 10, 10), "Car")])
    write(tmp_path / "gt" / "2.csv", [row(0, (0, 0, 10, 10), "Car")])
    write(tmp_path / "det" / "3.csv", [row(0, (0, 0, 10, 10), "Car", 0.9)])
    with pytest.raises(InputError, match="3.csv: sequence '3' has no ground-truth file"):
        evaluate_neovision2(tmp_path / "gt", tmp_path / "det")


def _brute_max_matching(adj: np.ndarray) -> int:
    n, m = adj.shape
    best = 0
    for perm in itertools.permutations(range(m), min(n, m)) if n <= m else \
            itertools.permutations(range(n), m):
        if n <= m:
            best = max(best, sum(adj[i, perm[i]] for i in range(n)))
        else:
            best = max(best, sum(adj[perm[j], j] for j in range(m)))
    return best


def test_true_positives_equal_brute_force_maximum(tmp_path):
    from geoeval.overlap import box_iou

    rng = np.random.default_rng(7)
    gt_rows, det_rows, expected = [], [], 0
    for frame in range(40):
        ng, nd = rng.integers(0, 5), rng.integers(0, 5)
        g = rng.uniform(0, 30, (ng, 2))
        d = rng.uniform(0, 30, (nd, 2))
        gb = np.c_[g, g + rng.uniform(5, 15, (ng, 2))].round(1)
        db = np.c_[d, d + rng.uniform(5, 15, (nd, 2))].round(1)
        gt_rows += [row(frame, tuple(b), "Car") for b in gb]
        det_rows += [row(frame, tuple(b), "Car", 0.5) for b in db]
        if ng and nd:
            expected += _brute_max_matching(box_iou(gb, db) >= 0.2)
    car = evaluate(tmp_path, gt_rows, det_rows).classes["Car"]
    assert car.true_positives == expected
    assert car.false_positives == len(det_rows) - expected


# --- CLI --------------------------------------------------------------------------


def test_cli_json_and_exit_codes(tmp_path, capsys):
    from geoeval.cli.main import main

    g = write(tmp_path / "gt.csv", [row(0, (0, 0, 10, 10), "Car"), row(0, (20, 0, 30, 10),
                                                                      "Car")])
    d = write(tmp_path / "det.csv", [row(0, (0, 0, 10, 10), "Car", 0.9)])
    out = tmp_path / "r.json"
    assert main(["boxes", "neovision2", str(g), str(d), "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    assert rep["classes"]["Car"]["nmotda"] == 0.5
    assert rep["classes"]["Car"]["missed"] == 1
    assert rep["classes"]["Car"]["false_positives"] == 0
    assert rep["classes"]["Car"]["n_reference"] == 2
    assert rep["detection_only"]["nmotda"] == 0.5
    assert rep["roc"]["classes"]["Car"]["thresholds"][0] == 0.95
    assert "detection_only" in rep["roc"]
    capsys.readouterr()
    bad = write(tmp_path / "bad.csv", ["0,1,2,3,4,5,6,7,8,Car,FALSE,FALSE,zz,,1"])
    assert main(["boxes", "neovision2", str(g), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad.csv: line 2" in err


def test_overlapping_pairs_dense_and_tree_paths_agree():
    from geoeval.challenges._box_groups import overlapping_pairs

    rng = np.random.default_rng(0)
    ga, gb = rng.integers(0, 50, 400), rng.integers(0, 50, 500)

    def boxes(n):
        xy = rng.uniform(0, 100, (n, 2))
        return np.c_[xy, xy + rng.uniform(0, 30, (n, 2))]

    a, b = boxes(400), boxes(500)
    a[0], b[0], ga[0], gb[0] = [10, 10, 20, 20], [20, 10, 30, 20], 3, 3  # touching: kept
    dense = overlapping_pairs(ga, a, gb, b, chunk_pairs=500)
    tree = overlapping_pairs(ga, a, gb, b, max_group_pairs=0)
    assert np.array_equal(dense[0], tree[0]) and np.array_equal(dense[1], tree[1])
    ok = ((np.maximum(a[:, None, 0], b[None, :, 0]) <= np.minimum(a[:, None, 2], b[None, :, 2]))
          & (np.maximum(a[:, None, 1], b[None, :, 1]) <= np.minimum(a[:, None, 3], b[None, :, 3]))
          & (ga[:, None] == gb[None, :]))
    assert dense[0].size == int(ok.sum()) and ok[dense[0], dense[1]].all()


# --- issue 13: exact don't-care-region rule, ground truth in regions, means -----


def test_exactly_twenty_percent_inside_a_region_is_kept_for_every_shape():
    """001 §3.7: only boxes with *more than* 20 % of their area in a DCR are dropped.

    10 800 detections ``w × h`` each with a region covering exactly their
    first fifth (``x ∈ [0, w/5]``), regions of many sizes. The share is
    worked out by hand as ``(w/5)·h / (w·h) = 1/5``; rebuilding the
    intersection from the IoU (``IoU·(|A|+|B|)/(1+IoU)``) gives
    0.20000000000000004 on about one in seven of them.
    """
    from geoeval.challenges.neovision2_prepare import inside_fraction as _inside_fraction
    from geoeval.overlap import box_area, box_iou_pairs

    dets, regions = [], []
    for w, h, rw, ry in itertools.product(range(5, 101, 5), range(1, 31), (0, 1, 3, 7, 20, 55),
                                          (0, 2, 9)):
        dets.append([0, 0, w, h])
        regions.append([-rw, -ry, w / 5, h + ry])
    d, r = np.array(dets, float), np.array(regions, float)
    k = np.arange(len(d))
    frac = _inside_fraction(k, d, k, r)
    assert np.all(frac == 0.2)
    # the probe has teeth: the reconstruction from the IoU crosses 0.2 on many of them
    iou = box_iou_pairs(d, r, k, k)
    rebuilt = iou * (box_area(d) + box_area(r)) / (1 + iou) / box_area(d)
    assert (rebuilt > 0.2).sum() > len(d) // 10


def test_exact_twenty_percent_end_to_end(tmp_path):
    """001 §3.7: a 5 × 1 detection with its first 1 × 1 in a DCR (20 %) is kept (an FP)."""
    gt = [row(0, (50, 50, 60, 60), "Car"), row(0, (0, 0, 1, 1), "DCR")]
    det = [row(0, (50, 50, 60, 60), "Car", 0.9), row(0, (0, 0, 5, 1), "Car", 0.9)]
    r = evaluate(tmp_path, gt, det)
    car = r.classes["Car"]
    assert (car.true_positives, car.false_positives) == (1, 1)
    assert r.dont_care["detections_in_regions"] == 0


def test_ground_truth_inside_a_region_is_eliminated_both_sides(tmp_path):
    """001 §3.7: DCRs are "eliminated entirely from the mapping and scoring process".

    "Inside" for a ground-truth object is the detections' rule: more than 20 %
    of its area in the union of the frame's regions. An eliminated object is
    treated like a don't-care object (§3.7: "as not existing in both the
    reference and system output"): never missed, its detection neither TP nor FP.

    * frame 0: region covers exactly 20 % of the car: the car stays; its exact
      detection (also 20 % inside) is a TP;
    * frame 1: region covers 30 %: the car and its exact detection both go;
    * frame 2: the same car, the detection shifted right (10 % inside, kept,
      IoU 80/120 with the car): ignored, not a false positive;
    * frame 3: the same car, not detected: not a miss.
    """
    car = (0, 0, 10, 10)
    gt = [row(0, car, "Car"), row(0, (-5, 0, 2, 10), "DCR")]
    for f in (1, 2, 3):
        gt += [row(f, car, "Car"), row(f, (-5, 0, 3, 10), "DCR")]
    det = [row(0, car, "Car", 0.9), row(1, car, "Car", 0.9), row(2, (2, 0, 12, 10), "Car", 0.9)]
    r = evaluate(tmp_path, gt, det)
    c = r.classes["Car"]
    assert (c.n_reference, c.true_positives, c.missed, c.false_positives, c.ignored) == (
        1, 1, 0, 0, 1)
    assert c.nmotda == 1.0
    assert r.dont_care["objects_in_regions"] == 3
    assert r.dont_care["detections_in_regions"] == 1
    d = r.detection_only
    assert (d.n_reference, d.true_positives, d.missed, d.false_positives) == (1, 1, 0, 0)


def test_mean_median_and_weighted_mean_over_sequences_and_classes(tmp_path):
    """001 §3.4: "Candidate methods include the mean, median and weighted mean".

    Four sequences of domain ``A``, all in frame 0, boxes far apart:

    ====  =========================  =========================  ================
    seq   Car (GT, TP, FP)           NMOTDA Car                 detection only
    ====  =========================  =========================  ================
    1     2, 1, 0 (+ Truck 1, 1, 0)  1 − 1/2 = 0.5              1 − 1/3 = 2/3
    2     1, 1, 2                    1 − 2/1 = −1               −1
    3     4, 4, 0                    1                          1
    4     0, 0, 1                    undefined                  undefined
    ====  =========================  =========================  ================

    Car pooled (= GT-weighted mean over sequences): 1 − (1 + 2 + 0 + 1)/7 = 3/7;
    plain mean over the 3 defined sequences (0.5 − 1 + 1)/3 = 1/6, median 0.5.
    Detection only pooled 1 − 4/8 = 0.5, mean (2/3 − 1 + 1)/3 = 2/9, median 2/3.
    Over classes (Car 3/7 on 7, Truck 1 on 1): weighted (3 + 1)/8 = 0.5, mean
    and median (3/7 + 1)/2 = 5/7.
    """
    def boxes(n, y):
        return [(20 * k, y, 20 * k + 10, y + 10) for k in range(n)]

    seqs = {
        "1": ([row(0, b, "Car") for b in boxes(2, 0)] + [row(0, (0, 100, 10, 110), "Truck")],
              [row(0, boxes(1, 0)[0], "Car", 0.9), row(0, (0, 100, 10, 110), "Truck", 0.9)]),
        "2": ([row(0, boxes(1, 0)[0], "Car")],
              [row(0, b, "Car", 0.9) for b in boxes(1, 0) + boxes(2, 300)]),
        "3": ([row(0, b, "Car") for b in boxes(4, 0)], [row(0, b, "Car", 0.9)
                                                        for b in boxes(4, 0)]),
        "4": ([row(0, (0, 0, 1, 1), "DCR")], [row(0, (500, 500, 510, 510), "Car", 0.9)]),
    }
    for name, (g, d) in seqs.items():
        write(tmp_path / "gt" / "A" / f"{name}.csv", g)
        write(tmp_path / "det" / "A" / f"{name}.csv", d)
    r = evaluate_neovision2(tmp_path / "gt", tmp_path / "det")
    car = r.classes["Car"]
    assert car.nmotda == pytest.approx(3 / 7)
    assert (car.n_sequences, car.sequence_mean, car.sequence_median) == (
        3, pytest.approx(1 / 6), pytest.approx(0.5))
    d = r.detection_only
    assert d.nmotda == pytest.approx(0.5)
    assert (d.n_sequences, d.sequence_mean, d.sequence_median) == (
        3, pytest.approx(2 / 9), pytest.approx(2 / 3))
    assert r.weighted_mean == pytest.approx(0.5)
    assert r.overall.mean == pytest.approx(5 / 7)
    assert r.overall.median == pytest.approx(5 / 7)
    # the domain holds every sequence: same values
    assert r.domains["A"].classes["Car"].sequence_mean == pytest.approx(1 / 6)
    # per-sequence table, with the second method: N·NMOTDA summed = pooled
    seq = r.to_dict()["sequences"]
    assert seq["A/2"]["classes"]["Car"] == pytest.approx(-1.0)
    assert seq["A/4"]["classes"]["Car"] is None and seq["A/4"]["detection_only"] is None
    n = {"A/1": 2, "A/2": 1, "A/3": 4}
    assert sum(n[k] * seq[k]["classes"]["Car"] for k in n) - 1 == pytest.approx(7 * 3 / 7)
    out = json.loads(json.dumps(r.to_dict()))
    assert out["median"] == pytest.approx(5 / 7) and out["mean"] == pytest.approx(5 / 7)
    assert out["classes"]["Car"]["sequence_median"] == pytest.approx(0.5)


def test_cli_prints_and_writes_means_over_sequences_and_classes(tmp_path, capsys):
    """001 §3.4: the CLI reports mean and median beside the weighted mean (JSON and table).

    One sequence, Car 2 GT 1 TP (0.5), Truck 1 GT 1 TP (1.0): weighted (1 + 1)/3 = 2/3,
    mean and median 0.75; over the single sequence mean = median = the pooled value.
    """
    from geoeval.cli.main import main

    g = write(tmp_path / "gt.csv", [row(0, (0, 0, 10, 10), "Car"), row(0, (20, 0, 30, 10), "Car"),
                                    row(0, (50, 0, 60, 10), "Truck")])
    d = write(tmp_path / "det.csv", [row(0, (0, 0, 10, 10), "Car", 0.9),
                                     row(0, (50, 0, 60, 10), "Truck", 0.9)])
    out = tmp_path / "r.json"
    assert main(["boxes", "neovision2", str(g), str(d), "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    assert rep["weighted_mean"] == pytest.approx(2 / 3)
    assert rep["mean"] == 0.75 and rep["median"] == 0.75
    assert rep["classes"]["Car"]["sequence_mean"] == 0.5
    assert rep["classes"]["Car"]["sequence_median"] == 0.5
    assert rep["sequences"]["gt"]["classes"] == {"Car": 0.5, "Truck": 1.0}
    text = capsys.readouterr().out
    assert "weighted mean 0.6667   mean 0.7500   median 0.7500" in text
