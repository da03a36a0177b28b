"""Box readers: every format gives the same boxes, and bad files fail clearly."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geoeval.challenges.voc import evaluate_voc
from geoeval.cli.main import main as cli_main
from geoeval.errors import InputError
from geoeval.io.boxes import BoxSet, align_images, detect_format, read_boxes, read_coco

W, H = 512, 256  # powers of two: relative coordinates round-trip exactly

# (image, class, x1, y1, x2, y2); img3 has ground truth only, img4 detections only
GT = [
    ("img1", "car", 10, 20, 60, 80), ("img1", "car", 100, 20, 150, 90),
    ("img1", "person", 200, 10, 230, 100),
    ("img2", "car", 0, 0, 40, 40), ("img2", "person", 300, 100, 340, 200),
    ("img3", "person", 50, 50, 90, 150),
]
DET = [
    ("img1", "car", 0.9, 12, 22, 60, 80), ("img1", "car", 0.85, 11, 20, 61, 81),  # duplicate
    ("img1", "car", 0.6, 100, 25, 150, 90), ("img1", "person", 0.7, 205, 10, 230, 100),
    ("img2", "car", 0.95, 100, 100, 140, 140), ("img2", "car", 0.5, 0, 0, 38, 40),
    ("img2", "person", 0.4, 300, 100, 338, 200),
    ("img4", "person", 0.8, 10, 10, 50, 50),
]
CLASSES = ["car", "person"]


def write_text(folder: Path, rows, det: bool, fmt: str = "xyrb", relative: bool = False):
    folder.mkdir()
    by_img: dict[str, list[str]] = {}
    for r in rows:
        img, cls = r[0], r[1]
        x1, y1, x2, y2 = r[-4:]
        c, d = (x2, y2) if fmt == "xyrb" else (x2 - x1, y2 - y1)
        vals = [x1, y1, c, d]
        if relative:  # the 002 relative layout: centre x, centre y, width, height
            vals = [(x1 + x2) / 2 / W, (y1 + y2) / 2 / H, (x2 - x1) / W, (y2 - y1) / H]
        head = [cls, repr(r[2])] if det else [cls]
        by_img.setdefault(img, []).append(" ".join(head + [repr(v) for v in vals]))
    for img, lines in by_img.items():
        (folder / f"{img}.txt").write_text("\n".join(lines) + "\n")


def write_voc(folder: Path, rows, det: bool, empty_images=()):
    folder.mkdir()
    by_img: dict[str, list[str]] = {k: [] for k in empty_images}
    for r in rows:
        x1, y1, x2, y2 = r[-4:]
        score = f"<score>{r[2]!r}</score>" if det else ""
        by_img.setdefault(r[0], []).append(
            f"<object><name>{r[1]}</name><difficult>0</difficult>{score}<bndbox>"
            f"<xmin>{x1}</xmin><ymin>{y1}</ymin><xmax>{x2}</xmax><ymax>{y2}</ymax>"
            "</bndbox></object>")
    for img, objs in by_img.items():
        (folder / f"{img}.xml").write_text(
            f'<?xml version="1.0"?>\n<annotation><filename>{img}.jpg</filename>'
            f"<size><width>{W}</width><height>{H}</height><depth>3</depth></size>\n"
            + "\n".join(objs) + "\n</annotation>\n")


IMAGE_IDS = {"img1": 11, "img2": 12, "img3": 13, "img4": 14}


def write_coco(folder: Path, gt_rows, det_rows):
    folder.mkdir()
    gt = {
        "images": [{"id": i, "file_name": f"{k}.jpg", "width": W, "height": H}
                   for k, i in IMAGE_IDS.items()],
        "categories": [{"id": j + 1, "name": c} for j, c in enumerate(CLASSES)],
        "annotations": [
            {"id": n + 1, "image_id": IMAGE_IDS[r[0]], "category_id": CLASSES.index(r[1]) + 1,
             "bbox": [r[2], r[3], r[4] - r[2], r[5] - r[3]],
             "area": (r[4] - r[2]) * (r[5] - r[3]), "iscrowd": 0}
            for n, r in enumerate(gt_rows)],
    }
    dets = [{"image_id": IMAGE_IDS[r[0]], "category_id": CLASSES.index(r[1]) + 1,
             "bbox": [r[3], r[4], r[5] - r[3], r[6] - r[4]], "score": r[2]} for r in det_rows]
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "dt.json").write_text(json.dumps(dets))
    return folder / "gt.json", folder / "dt.json"


def write_yolo(folder: Path, rows, det: bool):
    folder.mkdir()
    by_img: dict[str, list[str]] = {}
    for r in rows:
        x1, y1, x2, y2 = r[-4:]
        vals = [(x1 + x2) / 2 / W, (y1 + y2) / 2 / H, (x2 - x1) / W, (y2 - y1) / H]
        tail = [repr(r[2])] if det else []
        by_img.setdefault(r[0], []).append(
            " ".join([str(CLASSES.index(r[1]))] + [repr(v) for v in vals] + tail))
    for img, lines in by_img.items():
        (folder / f"{img}.txt").write_text("\n".join(lines) + "\n")
    (folder / "classes.txt").write_text("\n".join(CLASSES) + "\n")


def summary(result):
    return {k: (v.ap, v.ap11, v.tp, v.fp, v.n_reference, tuple(v.precision),
                tuple(v.recall)) for k, v in result.classes.items()}, result.map, result.map11


def test_every_format_gives_the_same_voc_result(tmp_path):
    results = {}
    write_text(tmp_path / "t_gt", GT, False)
    write_text(tmp_path / "t_det", DET, True)
    results["text xyrb"] = evaluate_voc(tmp_path / "t_gt", tmp_path / "t_det")
    write_text(tmp_path / "w_gt", GT, False, "xywh")
    write_text(tmp_path / "w_det", DET, True, "xywh")
    results["text xywh"] = evaluate_voc(tmp_path / "w_gt", tmp_path / "w_det", box_format="xywh")
    write_text(tmp_path / "r_gt", GT, False, relative=True)
    write_text(tmp_path / "r_det", DET, True, relative=True)
    results["text relative"] = evaluate_voc(tmp_path / "r_gt", tmp_path / "r_det",
                                            image_size=(W, H))
    write_voc(tmp_path / "v_gt", GT, False, empty_images=["img4"])  # img4: no object
    write_voc(tmp_path / "v_det", DET, True)
    results["voc xml"] = evaluate_voc(tmp_path / "v_gt", tmp_path / "v_det")
    gt_json, dt_json = write_coco(tmp_path / "coco", GT, DET)
    results["coco json"] = evaluate_voc(gt_json, dt_json)
    write_yolo(tmp_path / "y_gt", GT, False)
    write_yolo(tmp_path / "y_det", DET, True)
    results["yolo"] = evaluate_voc(tmp_path / "y_gt", tmp_path / "y_det", ref_fmt="yolo",
                                   sub_fmt="yolo", image_size=(W, H),
                                   class_names=tmp_path / "y_gt" / "classes.txt")
    # mixed: VOC XML ground truth (sizes from <size>) with YOLO detections
    results["voc + yolo"] = evaluate_voc(tmp_path / "v_gt", tmp_path / "y_det", sub_fmt="yolo",
                                         class_names=CLASSES)
    reference = summary(results["text xyrb"])
    for name, r in results.items():
        assert summary(r) == reference, name
    # and the reference is right: car 5 det (1 dup FP, 1 background FP), person 3 det
    car = results["text xyrb"].classes["car"]
    assert (car.tp, car.fp, car.n_reference) == (3, 2, 3)
    person = results["text xyrb"].classes["person"]
    assert (person.tp, person.fp, person.n_reference) == (2, 1, 3)


def test_reader_contents(tmp_path):
    write_voc(tmp_path / "v", GT, False)
    gt = read_boxes(tmp_path / "v")
    assert gt.fmt == "voc" and gt.side == "reference" and len(gt) == len(GT)
    assert gt.images == ("img1", "img2", "img3")
    assert gt.image_sizes["img2"] == (W, H)
    np.testing.assert_array_equal(gt.boxes[0], [10, 20, 60, 80])
    objs = gt.to_objects()
    assert objs.areas[0] == 50 * 60 and objs.polygons[0].bounds == (10, 20, 60, 80)
    assert objs.image.tolist()[:3] == ["img1"] * 3
    write_text(tmp_path / "d", DET, True)
    det = read_boxes(tmp_path / "d")
    assert det.side == "submission" and det.scores[0] == 0.9 and det.lines[1] == 2
    g2, d2 = align_images(gt, det)
    assert g2.images == d2.images == ("img1", "img2", "img3", "img4")
    assert d2.image_keys[-1] == "img4" and g2.image_keys[-1] == "img3"


def test_empty_files_and_folders(tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "a.txt").write_text("car 0 0 10 10\n")
    (tmp_path / "g" / "b.txt").write_text("\n")
    (tmp_path / "d").mkdir()
    gt = read_boxes(tmp_path / "g", side="reference")
    det = read_boxes(tmp_path / "d", side="submission")
    assert gt.images == ("a", "b") and len(det) == 0 and det.side == "submission"
    r = evaluate_voc(tmp_path / "g", tmp_path / "d")
    assert r.classes["car"].ap == 0.0 and r.map == 0.0


def test_coco_reader(tmp_path):
    gt_json, dt_json = write_coco(tmp_path / "c", GT, DET)
    gt = read_boxes(gt_json)
    assert gt.fmt == "coco" and gt.categories == {"car": 1, "person": 2}
    assert gt.images == ("11", "12", "13", "14") and gt.areas[0] == 50 * 60
    det = read_boxes(dt_json, like=gt)
    assert det.side == "submission" and det.classes[0] == "car" and det.areas[0] == 48 * 58
    alone = read_coco(dt_json)  # without the ground truth: class = category id
    assert alone.classes[0] == "1"


XML_BOMB = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
<annotation><object><name>&lol2;</name></object></annotation>
"""
XML_EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE a [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<annotation><filename>&xxe;</filename></annotation>
"""


@pytest.mark.parametrize("content, fmt, side, message", [
    ("car 0.9 0 0 10 10\ncar 0.8 0 0 10 10\ncar 0.7 1 1\n", "text", "submission",
     r"^dets/img1\.txt:3: expected 6 fields \(detection\), got 4$"),
    ("car 0 0 10 10\nperson 1 1 x 5\n", "text", "reference",
     r"^dets/img1\.txt:2: right is not a number: 'x'$"),
    ("car 10 0 5 10\n", "text", "reference", r"^dets/img1\.txt:1: right < left"),
    ("car 0 0 nan 10\n", "text", "reference", r"dets/img1\.txt:1: right is not finite"),
    ("0 0.5 0.5 0.1 0.1\n", "yolo", "reference", r"dets/img1\.txt:1: relative coordinates need"),
    ("a 0.5 0.5 0.1 0.1\n", "yolo", "reference",
     r"dets/img1\.txt:1: YOLO class index is not an int"),
    (XML_BOMB, "voc", None, r"dets/img1\.xml:2: DOCTYPE and ENTITY declarations are not"),
    (XML_EXTERNAL, "voc", None, r"dets/img1\.xml:2: DOCTYPE and ENTITY"),
    ("<annotation>\n<object><name>a</name>\n</annotation>\n", "voc", None,
     r"dets/img1\.xml:3: not well-formed XML"),
    ("<annotation>\n<object><name>a</name></object>\n</annotation>\n", "voc", None,
     r"dets/img1\.xml:2: <object> without <bndbox>"),
    ("<annotation><object><name>a</name><bndbox>\n<xmin>0</xmin><ymin>0</ymin>\n"
     "<xmax>zz</xmax><ymax>1</ymax></bndbox></object></annotation>", "voc", None,
     r"dets/img1\.xml:3: <xmax> is not a number: 'zz'"),
    ("<annotation><object><name>a</name>\n<difficult>2</difficult><bndbox><xmin>0</xmin>"
     "<ymin>0</ymin><xmax>1</xmax><ymax>1</ymax></bndbox></object></annotation>",
     "voc", None, r"dets/img1\.xml:2: <difficult> must be 0 or 1, got '2'"),
    ("<annotation><object><name>a</name><bndbox><xmin>0</xmin>"
     "<ymin>0</ymin><xmax>1</xmax><ymax>1</ymax></bndbox></object></annotation>",
     "voc", "submission", r"dets: detection XML: every <object> needs a <score>"),
])
def test_malformed_files_name_file_and_line(tmp_path, content, fmt, side, message):
    folder = tmp_path / "dets"
    folder.mkdir()
    suffix = ".xml" if fmt == "voc" else ".txt"
    (folder / f"img1{suffix}").write_text(content)
    with pytest.raises(InputError, match=message):
        read_boxes(folder, fmt=fmt, side=side)


@pytest.mark.parametrize("content, side, message", [
    ('{"images": [], \n "annotations": [,]}', None, r"gt\.json:2: invalid JSON"),
    ('[{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},\n'
     ' {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}]', None,
     r"results\[1\]: missing 'score'"),
    ('[{"image_id": 1, "category_id": 1, "bbox": [0, 0, -1, 1], "score": 0.5}]', None,
     r"results\[0\]: negative bbox width"),
    ('{"images": [{"id": 1}], "categories": [{"id": 1}], "annotations": '
     '[{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1]}]}', None,
     r"annotations\[0\]: bbox must be \[x, y, width, height\]"),
    ('{"images": [{"id": 1}], "categories": [], "annotations": '
     '[{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]},'
     ' {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}]}', None,
     r"annotations\[1\]: duplicate annotation id 1"),
    ('{"info": {}}', None, r"not COCO JSON"),
])
def test_malformed_coco(tmp_path, content, side, message):
    p = tmp_path / ("gt.json" if content.startswith("{") else "dt.json")
    p.write_text(content)
    with pytest.raises(InputError, match=message):
        read_boxes(p, side=side)


def test_coco_results_on_unknown_image(tmp_path):
    gt_json, _ = write_coco(tmp_path / "c", GT, DET)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"image_id": 99, "category_id": 1, "bbox": [0, 0, 1, 1],
                                "score": 0.5}]))
    with pytest.raises(InputError, match="image id 99"):
        read_boxes(bad, like=read_boxes(gt_json))


def test_yolo_class_names_and_sizes(tmp_path):
    write_yolo(tmp_path / "y", GT, False)
    with pytest.raises(InputError, match="class index 1 but only 1 class names"):
        read_boxes(tmp_path / "y", fmt="yolo", image_size=(W, H), class_names=["car"])
    by_image = {k: (W, H) for k in ("img1", "img2", "img3")}
    y = read_boxes(tmp_path / "y", fmt="yolo", image_size=by_image)
    assert set(y.classes.tolist()) == {"0", "1"} and y.class_ids.max() == 1
    np.testing.assert_array_equal(y.boxes[0], [10, 20, 60, 80])


def test_yolo_border_rounding_is_not_outside(tmp_path):
    # 0.9 +- 0.2000002 / 2 reaches x = 1.0000001: a rounding of six decimals, inside;
    # 0.9 +- 0.21 / 2 reaches x = 1.005: outside, kept with a warning
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "a.txt").write_text("0 0.9 0.5 0.2000002 0.1\n")
    assert read_boxes(tmp_path / "y", fmt="yolo", image_size=(W, H)).warnings == ()
    (tmp_path / "y" / "a.txt").write_text("0 0.9 0.5 0.21 0.1\n")
    (warning,) = read_boxes(tmp_path / "y", fmt="yolo", image_size=(W, H)).warnings
    assert "1 box(es) reach outside their image" in warning


def test_sample_formats_agree():
    # the bundled sample holds one set in several formats: text and YOLO give the same
    # AP to the last digit; VOC XML marks its smallest objects difficult, which the
    # devkit ignores, so its AP is its own but its detections count the same
    root = Path(__file__).resolve().parents[1] / "sample_data" / "boxes"
    text = evaluate_voc(root / "voc" / "gt", root / "voc" / "det")
    yolo = evaluate_voc(root / "yolo" / "gt", root / "yolo" / "det", ref_fmt="yolo",
                        sub_fmt="yolo", image_size=(640, 480),
                        class_names=(root / "yolo" / "classes.txt").read_text().split())
    assert yolo.to_dict()["classes"] == text.to_dict()["classes"]
    xml = evaluate_voc(root / "voc_xml" / "gt", root / "voc" / "det")
    n_difficult = sum(s.count("<difficult>1<") for s in
                      (p.read_text() for p in (root / "voc_xml" / "gt").glob("*.xml")))
    assert n_difficult > 0
    gt_text = sum(c["n_reference"] for c in text.to_dict()["classes"].values())
    gt_xml = sum(c["n_reference"] for c in xml.to_dict()["classes"].values())
    assert gt_text - gt_xml == n_difficult


def test_detect_format_and_bad_arguments(tmp_path):
    (tmp_path / "mix").mkdir()
    (tmp_path / "mix" / "a.txt").write_text("")
    (tmp_path / "mix" / "a.xml").write_text("<annotation/>")
    with pytest.raises(InputError, match="both .xml and .txt"):
        detect_format(tmp_path / "mix")
    with pytest.raises(InputError, match="no such file"):
        read_boxes(tmp_path / "nope")
    with pytest.raises(InputError, match="unknown box format"):
        read_boxes(tmp_path / "mix", fmt="pascal")
    with pytest.raises(InputError, match="image size"):
        read_boxes(tmp_path / "mix" / "a.txt", image_size=(0, 5))
    (tmp_path / "x.csv").write_text("")
    with pytest.raises(InputError, match="cannot tell the box format"):
        detect_format(tmp_path / "x.csv")
    assert detect_format(tmp_path / "mix" / "a.xml") == "voc"


def test_cli_voc_and_malformed_exit_code(tmp_path, capsys):
    write_text(tmp_path / "gt", GT, False)
    write_text(tmp_path / "det", DET, True)
    out = tmp_path / "voc.json"
    assert cli_main(["boxes", "voc", str(tmp_path / "gt"), str(tmp_path / "det"),
                     "--json", str(out), "--quiet"]) == 0
    report = json.loads(out.read_text())
    assert set(report["classes"]["car"]) >= {"ap", "ap11", "tp", "fp", "n_reference",
                                             "precision", "recall"}
    assert report["classes"]["car"]["tp"] == 3 and report["map"] == pytest.approx(
        evaluate_voc(tmp_path / "gt", tmp_path / "det").map)
    (tmp_path / "det" / "img2.txt").write_text("car 0.9 1 2 3 4\ncar 0.9 1 2\n")
    capsys.readouterr()
    assert cli_main(["boxes", "voc", str(tmp_path / "gt"), str(tmp_path / "det")]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "geoeval: error: det/img2.txt:2: expected 6 fields (detection), got 4"]
    assert cli_main(["boxes", "voc", str(tmp_path / "gt"), str(tmp_path / "det"),
                     "--image-size", "abc"]) == 2
    assert "'--image-size': must be W,H" in capsys.readouterr().err


def test_boxset_subset_and_reindex():
    b = BoxSet(boxes=np.array([[0., 0, 1, 1], [1., 1, 2, 2]]), image_index=np.array([0, 1]),
               classes=np.array(["a", "b"]), images=("x", "y"))
    s = b.subset(np.array([1]))
    assert s.classes.tolist() == ["b"] and s.images == ("x", "y") and s.ids.tolist() == [2]
    r = b.reindex_images(("w", "x", "y"))
    assert r.image_index.tolist() == [1, 2] and r.image_keys.tolist() == ["x", "y"]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(0, 30), rel_tol=st.sampled_from([0.0, 0.01]))
def test_outside_warnings_count_as_the_per_box_rule(data, n, rel_tol):
    # a box is outside when it reaches past its image's known size (by more than
    # rel_tol of it); images of unknown size (absent, or NaN) are not checked
    from geoeval.io._boxset import outside_warnings

    images = ("a", "b", "c")
    size_of = st.sampled_from([None, (10.0, 8.0), (4.0, math.nan), (math.nan, 5.0)])
    sizes = {k: s for k in images if (s := data.draw(size_of)) is not None}
    coord = st.sampled_from([-1.0, -0.05, 0.0, 3.0, 4.02, 8.0, 8.05, 10.0, 11.0])
    boxes = np.array([data.draw(coord) for _ in range(4 * n)]).reshape(n, 4)
    img = np.array([data.draw(st.integers(0, 2)) for _ in range(n)], dtype=np.int64)
    want = 0
    for (x1, y1, x2, y2), i in zip(boxes.tolist(), img.tolist(), strict=True):
        w, h = sizes.get(images[i], (math.nan, math.nan))
        tw, th = rel_tol * w, rel_tol * h
        want += (x1 < -tw) or (y1 < -th) or (x2 > w + tw) or (y2 > h + th)
    out = outside_warnings(boxes, img, images, sizes, "f", "x", rel_tol)
    got = next((int(m.split(": ")[1].split(" ")[0]) for m in out if "outside" in m), 0)
    assert got == want
