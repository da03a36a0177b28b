"""DOTA (geoeval.challenges.dota, io/_box_dota): equal to DOTA_devkit, hand-worked cases,
the files' errors, the command line.

The oracle is DOTA_devkit's own evaluation code, run unmodified
(``tests/dota_devkit.py``: extracted from the mirror, ``polyiou`` built with swig);
every per-class AP and the mAP must be *equal* to it (``==``), on the bundled
sample, on the devkit's own example annotations, on random and adversarial data
sets (fast tests small, sweeps ``slow``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import dota_devkit as dk
import numpy as np
import pytest

import geoeval
from geoeval.challenges.dota import CLASSES, DEVKIT_LEVELS, evaluate_dota
from geoeval.cli.main import main
from geoeval.errors import InputError
from geoeval.io.boxes import BoxSet, Outlines, read_dota_labels, read_dota_results

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "boxes" / "dota"


@pytest.fixture(scope="module")
def devkit():
    try:
        return dk.devkit_dir()
    except dk.DevkitUnavailable as exc:
        pytest.skip(str(exc))


def same_as_devkit(labels: Path, dets: Path, tmp: Path, *, task: int, version: str = "1.0",
                   metric: str = "voc07") -> geoeval.DotaResult:
    """geoeval's result, after checking every class's AP and the mAP against the devkit."""
    ours = evaluate_dota(labels, dets, task=task, version=version, metric=metric)
    ref = dk.run_devkit(labels, dets, task=task, version=version, classes=CLASSES[version],
                        use_07_metric=metric == "voc07", work=tmp)
    for c in ref.crashed:  # no detection: the devkit stops; no reference object either:
        if metric == "area" and ours.classes[c].n_reference == 0:  # every-point AP undefined
            ref.ap[c] = math.nan
    for c, ap in ref.ap.items():
        got = ours.classes[c].ap
        if math.isnan(ap):  # area: no reference object -> the devkit's NaN, geoeval's null
            assert got is None, c
        else:
            assert got == ap, (c, got, ap)
    assert ours.map == dk.expected_map(ref.ap, metric)
    return ours


@pytest.mark.parametrize("task, metric", [(1, "voc07"), (2, "area")])
def test_bundled_sample_equals_the_devkit(devkit, tmp_path, task, metric):
    res = same_as_devkit(SAMPLE / "labelTxt", SAMPLE / "det", tmp_path, task=task,
                         metric=metric)
    assert 0.5 < res.map < 0.9 and res.warnings == ()


SLOW = pytest.mark.slow
EXAMPLE_CASES = [(2, "1.0", "voc07"), (1, "1.5", "voc07"),
                 *(pytest.param(t, v, m, marks=SLOW) for t in (1, 2) for v in ("1.0", "1.5", "2.0")
                   for m in ("voc07", "area") if (t, v, m) not in ((2, "1.0", "voc07"),
                                                                 (1, "1.5", "voc07")))]


@pytest.mark.parametrize("task, version, metric", EXAMPLE_CASES)
def test_the_devkit_example_annotations(devkit, tmp_path, task, version, metric):
    """Real DOTA labels (the devkit's example/labelTxt), detections made from them."""
    labels = dk.example_labels(tmp_path / "labelTxt")
    gt = read_dota_labels(labels)
    assert len(gt) == 984 and gt.difficult.sum() > 0
    data = dk.jittered(gt.images, gt.image_index, gt.outlines.quads().reshape(-1, 8),
                       gt.classes, seed=task)
    dets = dk.write_detections(data, tmp_path / "det")
    res = same_as_devkit(labels, dets, tmp_path, task=task, version=version, metric=metric)
    assert res.classes["ship"].n_reference > 400 and 0.2 < res.map < 0.9
    if version == "1.0":  # with 1.5 every object counts
        assert res.classes["ship"].n_difficult > 0 and res.classes["ship"].ignored > 0


@pytest.mark.parametrize("seed, adversarial", [(0, False), (1, True), (2, True)])
def test_random_and_adversarial_sets_equal_the_devkit(devkit, tmp_path, seed, adversarial):
    data = dk.synthetic(12, 15, 1500, seed=seed, adversarial=adversarial)
    labels, dets = dk.write(data, tmp_path / "set")
    res = [same_as_devkit(labels, dets, tmp_path, task=task) for task in (1, 2)]
    assert all(r.classes["plane"].tp > 0 for r in res)
    if adversarial:  # the adversarial cases are there
        assert any("detection(s) with crossing sides" in w for w in res[0].warnings)
        assert any("detection(s) of zero area" in w for w in res[0].warnings)
        # a class absent from the reference (AP 0, in the mean) and one without detections
        assert res[0].classes[dk.CLASSES_10[-1]].n_reference == 0
        assert res[0].classes[dk.CLASSES_10[1]].n_submission == 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_sweep_equals_the_devkit(devkit, tmp_path, seed):
    version = ("1.0", "1.5", "2.0")[seed % 3]
    classes = CLASSES[version]
    data = dk.synthetic(30, 25, 8000, classes=classes, seed=100 + seed,
                        adversarial=seed % 2 == 1)
    labels, dets = dk.write(data, tmp_path / "set")
    for task in (1, 2):
        for metric in ("voc07", "area"):
            same_as_devkit(labels, dets, tmp_path, task=task, version=version, metric=metric)


# --- hand-worked cases ---------------------------------------------------------------


def quads(*rows: list[float]) -> Outlines:
    return Outlines.from_quads(np.array(rows, dtype=float).reshape(-1, 8))


def square(x: float, y: float, w: float, h: float) -> list[float]:
    return [x, y, x + w, y, x + w, y + h, x, y + h]


def sets(gt: list, det: list, scores: list, *, difficult: list | None = None,
         gt_class: str = "plane", det_class: str = "plane") -> tuple[BoxSet, BoxSet]:
    ref = BoxSet(None, np.zeros(len(gt), int), np.full(len(gt), gt_class), ("P1",),
                 difficult=None if difficult is None else np.array(difficult, bool),
                 outlines=quads(*gt))
    sub = BoxSet(None, np.zeros(len(det), int), np.full(len(det), det_class), ("P1",),
                 scores=np.array(scores, float), outlines=quads(*det))
    return ref, sub


def test_iou_exactly_one_half_is_not_a_match():
    """Task 1: a 10 x 10 reference and a 20 x 10 detection over it: IoU 100/200 = 0.5,
    not above 0.5 (the devkit's ``ovmax > ovthresh``): a false positive."""
    ref, sub = sets([square(0, 0, 10, 10)], [square(0, 0, 20, 10), square(0, 0, 19, 10)],
                    [0.9, 0.8])
    r = evaluate_dota(ref, sub).classes["plane"]
    assert r.tp == 1 and r.fp == 1  # 100/190 > 0.5: the second one matches
    assert r.precision.tolist() == [0.0, 0.5] and r.recall.tolist() == [0.0, 1.0]


def test_task2_pixel_areas_and_truncated_reference():
    """Task 2: boxes with the devkit's +1 pixel areas, the reference's corners truncated
    (int(float(v))): reference 0.7..9.9 is 0..9 (10 x 10 pixels); a detection 0..19 x
    0..9 has IoU 100/200 (no match), 0..18 has 100/190 (a match)."""
    ref = BoxSet(None, np.array([0]), np.array(["ship"]), ("P1",),
                 outlines=quads([0.7, 0.2, 9.9, 0.2, 9.9, 9.5, 0.7, 9.5]))
    sub = BoxSet(np.array([[0.0, 0, 19, 9], [0, 0, 18, 9]]), np.array([0, 0]),
                 np.array(["ship", "ship"]), ("P1",), scores=np.array([0.9, 0.8]))
    r = evaluate_dota(ref, sub, task=2).classes["ship"]
    assert (r.tp, r.fp) == (1, 1)


def test_eleven_point_levels_of_the_devkit():
    """Ten objects, three found first: recall 0.1, 0.2, 0.3 at precision 1, then nothing.
    The devkit's levels come from np.arange(0, 1.1, 0.1), whose fourth is
    0.30000000000000004: a recall of exactly 0.3 does not reach it, so AP = 3/11 (added
    1/11 at a time), where VOC's exact levels give 4/11."""
    assert DEVKIT_LEVELS[3] == 0.30000000000000004
    gt = [square(20 * i, 0, 10, 10) for i in range(10)]
    ref, sub = sets(gt, gt[:3] + [square(500, 500, 5, 5)], [0.9, 0.8, 0.7, 0.6])
    r = evaluate_dota(ref, sub)
    assert r.classes["plane"].ap == 1 / 11 + 1 / 11 + 1 / 11
    assert r.map == r.classes["plane"].ap / 15  # 14 classes without objects count as 0
    voc = geoeval.evaluate_voc(BoxSet(ref.boxes, ref.image_index, ref.classes, ref.images),
                               BoxSet(sub.boxes, sub.image_index, sub.classes, sub.images,
                                      scores=sub.scores))
    assert voc.classes["plane"].ap11 == pytest.approx(4 / 11)
    area = evaluate_dota(ref, sub, metric="area")
    assert area.classes["plane"].ap == pytest.approx(0.3) and area.map == area.classes[
        "plane"].ap  # every-point: the classes without objects are left out


def test_difficult_objects_and_version_1_5():
    """A detection on a difficult object is neither TP nor FP (v1.0); the v1.5 scripts
    count every object, so it is a TP there and the object counts."""
    ref, sub = sets([square(0, 0, 10, 10), square(50, 0, 10, 10)],
                    [square(0, 0, 10, 10), square(50, 0, 10, 10)], [0.9, 0.8],
                    difficult=[False, True])
    v10 = evaluate_dota(ref, sub).classes["plane"]
    assert (v10.tp, v10.fp, v10.ignored, v10.n_reference, v10.n_difficult) == (1, 0, 1, 1, 1)
    v15 = evaluate_dota(ref, sub, version="1.5").classes["plane"]
    assert (v15.tp, v15.fp, v15.ignored, v15.n_reference) == (2, 0, 0, 2)
    assert len(evaluate_dota(ref, sub, version="2.0").classes) == 18


def test_best_match_over_all_objects_taken_or_not():
    """The second detection's best object is already taken: a false positive, although
    another object overlaps it above 0.5 (VOC's rule, the devkit's jmax)."""
    ref, sub = sets([square(0, 0, 10, 10), square(2, 0, 10, 10)],
                    [square(0, 0, 10, 10), square(1, 0, 10, 10)], [0.9, 0.8])
    r = evaluate_dota(ref, sub).classes["plane"]
    assert (r.tp, r.fp) == (1, 1)


def test_tied_scores_keep_the_devkits_order():
    """Equal confidences: ranked by ``np.argsort(-confidence)`` of the class's lines, as
    the devkit ranks them (the order decides which of two equal detections is the TP)."""
    gt = [square(20 * i, 0, 10, 10) for i in range(30)]
    det = [square(20 * (i % 30), 0, 10, 10 - (i // 30)) for i in range(60)]
    scores = np.round(np.random.default_rng(0).uniform(0.2, 0.3, 60), 2)
    ref, sub = sets(gt, det, scores.tolist())
    r = evaluate_dota(ref, sub)
    order = np.argsort(-scores)
    claimed, expected = set(), np.zeros(60, int)
    for d in order:  # the devkit's loop, written out
        if d % 30 not in claimed:
            claimed.add(d % 30)
            expected[d] = 1
    assert r.outcome.tolist() == expected.tolist()


def test_classes_outside_the_list_and_zero_area_objects():
    ref, sub = sets([square(0, 0, 10, 10), [5, 5, 5, 5, 5, 5, 5, 5]],
                    [square(0, 0, 10, 10)], [0.5], gt_class="tank", det_class="tank")
    r = evaluate_dota(ref, sub)
    assert len(r.reference) == 0 and len(r.submission) == 0
    assert any("outside DOTA-v1.0's list (tank): left out" in w for w in r.warnings)
    assert r.map == 0.0


def test_self_intersecting_detection_as_the_devkit():
    """A bow tie over a square reference: its lobes count with opposite signs
    (polyiou): over the whole square they cancel (IoU 0), over one lobe it is one."""
    ref, sub = sets([square(0, 0, 2, 2)], [[0, 0, 0, 2, 2, 0, 2, 2]], [0.9])
    r = evaluate_dota(ref, sub)
    assert r.classes["plane"].fp == 1
    assert any("crossing sides" in w for w in r.warnings)


def test_centred_pairs_hold_every_pair_above_one_half():
    """Brute force: every same-group pair of boxes with IoU above 1/2 is listed, and
    every listed pair holds each other's centre."""
    from geoeval.challenges._box_groups import centred_pairs
    from geoeval.overlap import box_iou

    rng = np.random.default_rng(5)
    xy = rng.integers(0, 60, (400, 2)).astype(float)
    a = np.c_[xy, xy + rng.integers(1, 25, (400, 2))]
    b = np.r_[a[:150] + rng.integers(-3, 4, (150, 4)).clip(-2, 2), a[150:300]]
    b[:, 2:] = np.maximum(b[:, 2:], b[:, :2] + 1)
    ga, gb = rng.integers(0, 3, 400), rng.integers(0, 3, 300)
    i, j = centred_pairs(ga, a, gb, b)
    iou = box_iou(a, b) * (ga[:, None] == gb[None, :])
    want = set(zip(*np.nonzero(iou > 0.5), strict=True))
    got = set(zip(i.tolist(), j.tolist(), strict=True))
    assert want <= got and len(want) > 50
    ca, cb = (a[:, :2] + a[:, 2:]) / 2, (b[:, :2] + b[:, 2:]) / 2
    assert ((b[j, :2] <= ca[i]) & (ca[i] <= b[j, 2:])).all()
    assert ((a[i, :2] <= cb[j]) & (cb[j] <= a[i, 2:])).all()
    assert np.array_equal(np.lexsort((j, i)), np.arange(i.size))


# --- files ---------------------------------------------------------------------------


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


LABEL = "imagesource:GoogleEarth\ngsd:0.146\n10 10 50 10 50 30 10 30 plane 0\n"


@pytest.mark.parametrize("text, message", [
    ("foo:bar\n", "P1.txt:1: unknown header 'foo:'"),
    ("10 10 50 10 50 30 10 30 plane 0\ngsd:0.1\n", "P1.txt:2: header 'gsd:' after the first"),
    ("gsd:abc\n", "P1.txt:1: gsd is not a number: 'abc'"),
    ("gsd:-1\n", "P1.txt:1: gsd must be positive"),
    ("10 10 50 10 50 30 plane 0\n", "P1.txt:1: expected 9 or 10 fields"),
    ("10 10 50 10 50 30 10 30 plane 0 extra\n", "got 11"),
    ("10 10 50 x 50 30 10 30 plane\n", "P1.txt:1: y2 is not a number: 'x'"),
    ("\n\n10 10 50 10 50 30 10 inf plane\n", "P1.txt:3: y4 is not finite"),
    ("10 10 50 10 50 30 10 30 plane yes\n", "P1.txt:1: difficult must be a whole number"),
])
def test_label_errors_name_file_and_line(tmp_path, text, message):
    write(tmp_path / "gt", {"P1.txt": text})
    with pytest.raises(InputError) as err:
        read_dota_labels(tmp_path / "gt")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_labels_headers_and_empty_images(tmp_path):
    gt = read_dota_labels(write(tmp_path / "gt", {
        "P2.txt": LABEL, "P1.txt": "imagesource:GF\ngsd:null\n",
        "P3.txt": "10 10 50 10 50 30 10 30 ship 2\r\n"}))
    assert gt.images == ("P1", "P2", "P3") and gt.classes.tolist() == ["plane", "ship"]
    assert gt.difficult.tolist() == [False, True] and gt.lines.tolist() == [3, 1]
    with pytest.raises(InputError, match="no .txt labelTxt file"):
        read_dota_labels(write(tmp_path / "empty", {}))


@pytest.mark.parametrize("name, text, message", [
    ("Task1_plane.txt", "P1 0.9 10 10 50 10 50 30 10\n", "Task1_plane.txt:1: expected 10"),
    ("Task1_plane.txt", "P1 0.9 10 10 50 10 50 30 10 30\nP9 0.5 1 1 2 1 2 2 1 2\n",
     "Task1_plane.txt:2: image 'P9' has no ground-truth file"),
    ("Task1_plane.txt", "P1 high 10 10 50 10 50 30 10 30\n",
     "Task1_plane.txt:1: confidence is not a number: 'high'"),
    ("Task1_plane.txt", "P1 0.9 10 10 50 10 50 30 10 nan\n", "Task1_plane.txt:1: y4 is not"),
    ("Task2_plane.txt", "P1 0.9 10 10 50 30\n\nP1 0.8 50 10 10 30\n",
     "Task2_plane.txt:3: xmax < xmin"),
])
def test_result_errors_name_file_and_line(tmp_path, name, text, message):
    write(tmp_path / "gt", {"P1.txt": LABEL})
    write(tmp_path / "det", {name: text})
    with pytest.raises(InputError) as err:
        evaluate_dota(tmp_path / "gt", tmp_path / "det", task=int(name[4]))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_fast_and_line_by_line_readers_agree(tmp_path):
    """pyarrow's reader (one blank between fields) and the line reader (runs of blanks,
    tabs, a trailing blank) read the same numbers, bit for bit."""
    rng = np.random.default_rng(0)
    rows = [f"P{i % 3} {s:.6g} " + " ".join(f"{v:.7g}" for v in rng.uniform(-1e4, 1e4, 8))
            for i, s in enumerate(rng.random(300))]
    write(tmp_path / "a", {"Task1_ship.txt": "\n".join(rows) + "\n"})
    write(tmp_path / "b", {"Task1_ship.txt": "\n".join(r.replace(" ", "  ") + "\t"
                                                        for r in rows) + "\n"})
    images = ("P0", "P1", "P2")
    a = read_dota_results(tmp_path / "a", 1, images)
    b = read_dota_results(tmp_path / "b", 1, images)
    assert np.array_equal(a.outlines.coords, b.outlines.coords)
    assert np.array_equal(a.scores, b.scores) and np.array_equal(a.image_index, b.image_index)
    want = np.array([[float(t) for t in r.split()[2:]] for r in rows])
    assert np.array_equal(a.outlines.coords.reshape(-1, 8), want)


def test_label_files_at_once_and_line_by_line_agree(tmp_path):
    """All label files in one pyarrow call, or line by line (a blank line sends a file
    there): the same objects, bit for bit, the same source lines."""
    data = dk.synthetic(6, 20, 10, seed=3, adversarial=True)  # one-decimal corners
    labels, _ = dk.write(data, tmp_path / "a")
    fast = read_dota_labels(labels)
    slow_dir = tmp_path / "b"
    slow_dir.mkdir()
    for f in labels.iterdir():
        (slow_dir / f.name).write_text(f.read_text() + "\n")
    slow = read_dota_labels(slow_dir)
    assert len(fast) == data.gt_image.size > 0
    assert np.array_equal(fast.outlines.coords, slow.outlines.coords)
    assert np.array_equal(fast.outlines.coords.reshape(-1, 8), data.gt_corners)
    for name in ("classes", "difficult", "image_index", "lines"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.images == slow.images


def test_missing_and_other_task_files(tmp_path):
    write(tmp_path / "gt", {"P1.txt": LABEL})
    det = write(tmp_path / "det", {"Task1_plane.txt": "P1 0.9 10 10 50 10 50 30 10 30\n",
                                   "Task1_tank.txt": "P1 0.9 10 10 50 10 50 30 10 30\n",
                                   "Task1_ship.txt": ""})
    r = evaluate_dota(tmp_path / "gt", det)
    assert r.classes["plane"].ap == 1.0000000000000002 and r.classes["ship"].ap == 0.0
    assert any("no Task1 file for 13 class(es)" in w for w in r.warnings)
    assert any("outside the version's list (tank): not read" in w for w in r.warnings)
    with pytest.raises(InputError, match="no Task2_<class>.txt file, but Task1_plane.txt"):
        evaluate_dota(tmp_path / "gt", det, task=2)
    empty = evaluate_dota(tmp_path / "gt", write(tmp_path / "none", {}))
    assert empty.map == 0.0


# --- the command line ----------------------------------------------------------------


def test_cli_json_report(tmp_path, capsys):
    out = tmp_path / "dota.json"
    code = main(["boxes", "dota", str(SAMPLE / "labelTxt"), str(SAMPLE / "det"), "--task", "2",
                 "--metric", "area", "--json", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    api = geoeval.evaluate_dota(SAMPLE / "labelTxt", SAMPLE / "det", task=2, metric="area")
    assert report["stats"]["mAP"] == api.map
    assert report["per_class"]["plane"]["ap"] == api.classes["plane"].ap
    assert (report["task"], report["version"], report["metric"]) == (2, "1.0", "area")
    assert list(report["per_class"]) == list(CLASSES["1.0"])
    text = capsys.readouterr().out
    assert "DOTA-v1.0 task 2" in text and "SBF" in text


@pytest.mark.parametrize("args, message", [
    (["--task", "3"], "'3' is not one of"),
    (["--version", "1.2"], "'1.2' is not one of"),
    (["--metric", "coco"], "'coco' is not one of"),
])
def test_cli_bad_options(capsys, args, message):
    code = main(["boxes", "dota", str(SAMPLE / "labelTxt"), str(SAMPLE / "det"), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1


def test_cli_bad_file_is_one_line(tmp_path, capsys):
    write(tmp_path / "gt", {"P1.txt": "gsd:0.1\nimagesource:x y\n"})
    code = main(["boxes", "dota", str(tmp_path / "gt"), str(SAMPLE / "det")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "P1.txt:2" in err


def python_blocks(doc: Path) -> list[str]:
    """The ``python`` blocks of a docs page that are not templates."""
    text = doc.read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    return [b for b in blocks if not b.lstrip().startswith("# template")]


@pytest.mark.parametrize("doc", ["dota.md", "boxes.md"])
def test_docs_python_examples_run_and_print_what_they_say(doc, monkeypatch, capsys):
    """docs/dota.md's example and boxes.md's Outlines example run on the sample; each
    ``print(...)  # value`` prints the value its comment gives."""
    monkeypatch.chdir(ROOT)
    blocks = [b for b in python_blocks(ROOT / "docs" / doc)
              if doc == "dota.md" or "Outlines" in b]
    assert blocks
    for block in blocks:
        exec(compile(block, doc, "exec"), {})
        printed = capsys.readouterr().out.splitlines()
        said = [line.split("#", 1)[1].strip() for line in block.splitlines()
                if line.startswith("print(") and "#" in line]
        assert printed == said
