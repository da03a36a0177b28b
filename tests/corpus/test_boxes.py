"""Error corpus, box files: every hostile or unusual box input through the installed
``geoeval boxes …`` console script, plus hypothesis fuzzing of the box readers.

A refused case exits 2 with a one-line message naming the file (and line, for text and
XML) and leaves every input byte-identical; an accepted unusual case gives the exact
numbers worked out by hand and, where the reader changed or kept something doubtful, a
warning that says how many boxes and why.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geoeval.errors import InputError
from geoeval.io.boxes import read_boxes, read_coco

from .conftest import assert_error, assert_ok, run_cli

# --- writers ---------------------------------------------------------------------------------


def folder(root: Path, name: str, files: dict[str, str | bytes]) -> Path:
    d = root / name
    d.mkdir()
    for fname, content in files.items():
        data = content if isinstance(content, bytes) else content.encode()
        (d / fname).write_bytes(data)
    return d


def xml(objects: str, size: str = "<size><width>100</width><height>50</height></size>",
        head: str = '<?xml version="1.0"?>\n') -> str:
    return f"{head}<annotation>\n{size}\n{objects}\n</annotation>\n"


def obj(name: str = "car", box: tuple = (0, 0, 10, 10), score: str | None = None,
        difficult: str = "0") -> str:
    sc = "" if score is None else f"<score>{score}</score>"
    x1, y1, x2, y2 = box
    return (f"<object><name>{name}</name><difficult>{difficult}</difficult>{sc}<bndbox>"
            f"<xmin>{x1}</xmin><ymin>{y1}</ymin><xmax>{x2}</xmax><ymax>{y2}</ymax>"
            "</bndbox></object>")


def coco_gt(annotations: list | None = None, images: list | None = None,
            categories: list | None = None) -> dict:
    return {
        "images": images if images is not None else [{"id": 1, "width": 100, "height": 50}],
        "categories": categories if categories is not None else [{"id": 1, "name": "car"}],
        "annotations": annotations if annotations is not None else [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
             "iscrowd": 0}],
    }


def coco_det(bbox: list | None = None, **over) -> list:
    d = {"image_id": 1, "category_id": 1, "bbox": bbox or [0, 0, 10, 10], "score": 0.9}
    d.update(over)
    return [d]


def jfile(root: Path, name: str, data) -> Path:
    p = root / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


GT_TXT = {"a.txt": "car 0 0 10 10\n"}
DET_TXT = {"a.txt": "car 0.9 0 0 10 10\n"}


# --- refused cases ---------------------------------------------------------------------------
# each builder: tmp_path -> (argv after "geoeval", inputs, names that the message must contain)

Case = Callable[[Path], tuple[list, list, list]]


def text_case(gt: dict | None, det: dict | None, names: list, *opts: str) -> Case:
    def build(tmp: Path):
        g = folder(tmp, "gt", GT_TXT if gt is None else gt)
        d = folder(tmp, "det", DET_TXT if det is None else det)
        return ["boxes", "voc", g, d, *opts], [g, d], names
    return build


def xml_case(gt_xml: dict | None, det_xml: dict | None, names: list, *opts: str) -> Case:
    def build(tmp: Path):
        g = folder(tmp, "gt", gt_xml or {"a.xml": xml(obj())})
        d = folder(tmp, "det", det_xml or {"a.xml": xml(obj(score="0.9"))})
        return ["boxes", "voc", g, d, *opts], [g, d], names
    return build


def coco_case(gt, det, names: list, command: str = "coco") -> Case:
    def build(tmp: Path):
        g = jfile(tmp, "gt.json", coco_gt() if gt is None else gt)
        d = jfile(tmp, "dt.json", coco_det() if det is None else det)
        return ["boxes", command, g, d], [g, d], names
    return build


SQUARE = [[0, 0, 10, 0, 10, 10, 0, 10]]


def segm_case(gt_seg, det: dict | None, names: list, images: list | None = None,
              iou_type: str = "segm") -> Case:
    """``boxes coco --iou-type segm``: a ground truth of one annotation whose segmentation is
    ``gt_seg``, one result ``det`` (default: the same square, with a box)."""
    gt = coco_gt([{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10],
                   "area": 100, "iscrowd": 0, "segmentation": gt_seg}], images=images)
    det = det if det is not None else {"image_id": 1, "category_id": 1, "score": 0.9,
                                       "bbox": [0, 0, 10, 10], "segmentation": SQUARE}

    def build(tmp: Path):
        g = jfile(tmp, "gt.json", gt)
        d = jfile(tmp, "dt.json", [det])
        return ["boxes", "coco", g, d, "--iou-type", iou_type], [g, d], names
    return build


def yolo_case(gt: dict, det: dict, names: list, *opts: str) -> Case:
    def build(tmp: Path):
        g = folder(tmp, "gt", gt)
        d = folder(tmp, "det", det)
        return (["boxes", "voc", g, d, "--ref-format", "yolo", "--sub-format", "yolo", *opts],
                [g, d], names)
    return build


BILLION_LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
                  ' <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\n'
                  ' <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">\n]>\n'
                  '<annotation><object><name>&lol3;</name></object></annotation>\n')
XXE = ('<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
       '<annotation><object><name>&xxe;</name></object></annotation>\n')
PARAM_ENTITY = ('<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY % p SYSTEM '
                '"http://127.0.0.1:9/x.dtd"> %p;]>\n<annotation/>\n')
EXTERNAL_DTD = ('<?xml version="1.0"?>\n<!DOCTYPE annotation SYSTEM "http://127.0.0.1:9/a.dtd">'
                '\n<annotation/>\n')

REFUSED: dict[str, Case] = {
    # 002 text files
    "text det 4 fields": text_case(None, {"a.txt": "car 0.9 0 0 10 10\ncar 1 2 3\n"},
                                   ["a.txt:2", "expected 6 fields"]),
    "text det 5 fields": text_case(None, {"a.txt": "car 0 0 10 10\n"},
                                   ["a.txt:1", "expected 6 fields"]),
    "text gt class only": text_case({"a.txt": "car\n"}, None, ["a.txt:1", "expected 5"]),
    "text gt word coordinate": text_case({"a.txt": "car 0 0 x 10\n"}, None,
                                         ["a.txt:1", "'x'"]),
    "text gt nan": text_case({"a.txt": "car 0 0 nan 10\n"}, None, ["a.txt:1", "not finite"]),
    "text gt inf": text_case({"a.txt": "car -inf 0 10 10\n"}, None, ["a.txt:1", "finite"]),
    "text gt 1e400": text_case({"a.txt": "car 0 0 1e400 10\n"}, None, ["a.txt:1", "finite"]),
    "text det confidence word": text_case(None, {"a.txt": "car high 0 0 10 10\n"},
                                          ["a.txt:1", "confidence"]),
    "text right < left": text_case({"a.txt": "car 0 0 10 10\ncar 20 0 10 10\n"}, None,
                                   ["a.txt:2", "right < left"]),
    "text bottom < top": text_case({"a.txt": "car 0 30 10 10\n"}, None, ["a.txt:1"]),
    "text xywh negative width": text_case({"a.txt": "car 0 0 -5 10\n"}, None,
                                          ["a.txt:1", "negative width"], "--box-format", "xywh"),
    "text det xywh negative height": text_case(
        None, {"a.txt": "car 0.9 0 0 5 -1\n"}, ["a.txt:1", "negative"],
        "--sub-box-format", "xywh"),
    "text xywh overflow": text_case({"a.txt": "car 1e308 0 1e308 10\n"}, None,
                                    ["a.txt:1", "not finite"], "--box-format", "xywh"),
    "text gt latin-1 bytes": text_case({"a.txt": "v\xe9lo 0 0 10 10\n".encode("latin-1")},
                                       None, ["a.txt", "not UTF-8", "0xe9"]),
    "text det binary": text_case(None, {"a.txt": b"\x89PNG\r\n\x1a\n\x00\xff"},
                                 ["a.txt", "not UTF-8"]),
    "text utf-16": text_case({"a.txt": "car 0 0 10 10\n".encode("utf-16")}, None,
                             ["a.txt", "not UTF-8"]),
    "text empty gt folder": text_case({}, None, ["gt", "no .txt"]),
    "text gt folder of xml and txt": text_case(
        {"a.txt": "car 0 0 1 1\n", "b.xml": "<annotation/>"}, None, ["gt", "both"]),
    "text same stem twice": text_case({"a.txt": "car 0 0 1 1\n", "a.TXT": "car 0 0 1 1\n"},
                                      None, ["gt", "twice"]),
    # relative coordinates (002 -gtcoords/-detcoords rel)
    "rel gt above 1": text_case({"a.txt": "car 0 0 10 10\n"}, None,
                                ["a.txt:1", "outside [0, 1]"], "--image-size", "100,100"),
    "rel det negative": text_case(None, {"a.txt": "car 0.9 -0.1 0.5 0.2 0.2\n"},
                                  ["a.txt:1", "outside [0, 1]"], "--sub-coords", "rel",
                                  "--image-size", "100,100"),
    "rel without image size": text_case(None, {"a.txt": "car 0.9 0.5 0.5 0.2 0.2\n"},
                                        ["a.txt:1", "image size"], "--sub-coords", "rel"),
    "image size zero": text_case(None, None, ["--image-size"], "--image-size", "0,5"),
    "image size words": text_case(None, None, ["--image-size"], "--image-size", "wide"),
    "image size three numbers": text_case(None, None, ["--image-size"], "--image-size",
                                          "1,2,3"),
    "gt image size nan": text_case(None, None, ["--ref-image-size"], "--ref-image-size",
                                   "nan,4", "--ref-coords", "rel"),
    "det image size negative": text_case(None, None, ["--sub-image-size"],
                                         "--sub-image-size", "-3,4"),
    "iou threshold nan": text_case(None, None, ["--iou-threshold"], "--iou-threshold", "nan"),
    "iou threshold zero": text_case(None, None, ["--iou-threshold"], "--iou-threshold", "0"),
    "iou threshold above 1": text_case(None, None, ["--iou-threshold"], "--iou-threshold",
                                       "1.5"),
    "iou threshold negative": text_case(None, None, ["--iou-threshold"], "--iou-threshold",
                                        "-0.2"),
    "bad coords enum": text_case(None, None, ["--ref-coords"], "--ref-coords", "relative"),
    "bad box format enum": text_case(None, None, ["--sub-box-format"], "--sub-box-format",
                                     "xyxy"),
    # YOLO
    "yolo cx above 1": yolo_case({"a.txt": "0 1.2 0.5 0.1 0.1\n"},
                                 {"a.txt": "0 0.5 0.5 0.1 0.1 0.9\n"},
                                 ["a.txt:1", "outside [0, 1]"], "--image-size", "100,100"),
    "yolo negative cy": yolo_case({"a.txt": "0 0.5 0.5 0.1 0.1\n"},
                                  {"a.txt": "0 0.5 -0.01 0.1 0.1 0.9\n"},
                                  ["det/a.txt:1", "outside [0, 1]"], "--image-size", "100,100"),
    "yolo pixel coordinates": yolo_case({"a.txt": "0 50 25 10 10\n"},
                                        {"a.txt": "0 0.5 0.5 0.1 0.1 0.9\n"},
                                        ["gt/a.txt:1", "outside [0, 1]"],
                                        "--image-size", "100,100"),
    "yolo negative width": yolo_case({"a.txt": "0 0.5 0.5 -0.1 0.1\n"},
                                     {"a.txt": "0 0.5 0.5 0.1 0.1 0.9\n"},
                                     ["gt/a.txt:1", "negative"], "--image-size", "100,100"),
    "yolo class word": yolo_case({"a.txt": "car 0.5 0.5 0.1 0.1\n"},
                                 {"a.txt": "0 0.5 0.5 0.1 0.1 0.9\n"},
                                 ["gt/a.txt:1", "not an integer"], "--image-size", "100,100"),
    "yolo negative class": yolo_case({"a.txt": "-1 0.5 0.5 0.1 0.1\n"},
                                     {"a.txt": "0 0.5 0.5 0.1 0.1 0.9\n"},
                                     ["gt/a.txt:1", "negative"], "--image-size", "100,100"),
    "yolo without size": yolo_case({"a.txt": "0 0.5 0.5 0.1 0.1\n"},
                                   {"a.txt": "0 0.5 0.5 0.1 0.1 0.9\n"},
                                   ["gt/a.txt:1", "image size"]),
    # PASCAL VOC XML
    "xml billion laughs": xml_case({"a.xml": BILLION_LAUGHS}, None, ["a.xml:2", "DOCTYPE"]),
    "xml external entity": xml_case(None, {"a.xml": XXE}, ["a.xml:2", "DOCTYPE"]),
    "xml parameter entity": xml_case({"a.xml": PARAM_ENTITY}, None, ["a.xml:2", "DOCTYPE"]),
    "xml external dtd": xml_case({"a.xml": EXTERNAL_DTD}, None, ["a.xml:2", "DOCTYPE"]),
    "xml unclosed tag": xml_case({"a.xml": xml(obj()).replace("</annotation>", "")}, None,
                                 ["a.xml", "not well-formed"]),
    "xml empty file": xml_case({"a.xml": ""}, None, ["a.xml", "not well-formed"]),
    "xml latin-1 bytes": xml_case({"a.xml": xml(obj("v\xe9lo")).encode("latin-1")}, None,
                                  ["a.xml:4", "not well-formed"]),
    "xml unknown encoding": xml_case(
        {"a.xml": xml(obj(), head='<?xml version="1.0" encoding="klingon"?>\n')}, None,
        ["a.xml", "unknown encoding"]),
    "xml undefined entity": xml_case({"a.xml": xml(obj("&car;"))}, None,
                                     ["a.xml:4", "undefined entity"]),
    "xml wrong root": xml_case({"a.xml": "<root><object/></root>"}, None,
                               ["a.xml:1", "<annotation>"]),
    "xml object without name": xml_case({"a.xml": xml("<object><bndbox/></object>")}, None,
                                        ["a.xml:4", "<name>"]),
    "xml object without bndbox": xml_case({"a.xml": xml("<object><name>car</name></object>")},
                                          None, ["a.xml:4", "<bndbox>"]),
    "xml missing ymax": xml_case({"a.xml": xml(obj()).replace("<ymax>10</ymax>", "")}, None,
                                 ["a.xml:4", "<ymax>"]),
    "xml xmax < xmin": xml_case({"a.xml": xml(obj(box=(10, 0, 5, 10)))}, None,
                                ["a.xml:4", "xmax < xmin"]),
    "xml coordinate word": xml_case({"a.xml": xml(obj(box=("ten", 0, 5, 10)))}, None,
                                    ["a.xml:4", "<xmin>"]),
    "xml difficult 2": xml_case({"a.xml": xml(obj(difficult="2"))}, None,
                                ["a.xml:4", "<difficult>"]),
    "xml score word": xml_case(None, {"a.xml": xml(obj(score="high"))}, ["a.xml:4", "<score>"]),
    "xml detection without score": xml_case(
        None, {"a.xml": xml(obj(score="0.9") + "\n" + obj())}, ["det", "<score>"]),
    # COCO JSON (the coco command and the VOC protocol on COCO files share the reader)
    "coco bbox strings": coco_case(None, coco_det(["0", "0", "10", "10"]),
                                   ["dt.json", "results[0]", "numbers"]),
    "coco gt bbox strings": coco_case(coco_gt([{"id": 1, "image_id": 1, "category_id": 1,
                                                "bbox": ["0", 0, 10, 10]}]), None,
                                      ["gt.json", "annotations[0]", "numbers"]),
    "coco bbox three numbers": coco_case(None, coco_det([0, 0, 10]), ["dt.json", "results[0]"]),
    "coco bbox negative width": coco_case(None, coco_det([0, 0, -10, 10]),
                                          ["dt.json", "negative"]),
    "coco bbox booleans": coco_case(None, coco_det([True, 0, 10, 10]), ["dt.json", "numbers"]),
    "coco bbox NaN": coco_case(None, '[{"image_id": 1, "category_id": 1, "bbox": [NaN, 0, 1, '
                               '1], "score": 0.5}]', ["dt.json", "finite"]),
    "coco deeply nested": coco_case("[" * 100000 + "]" * 100000, None,
                                    ["gt.json", "nested too deeply"]),
    "coco trailing comma": coco_case('{"images": [],\n"annotations": [],}', None,
                                     ["gt.json:2", "invalid JSON"]),
    "coco empty file": coco_case("", None, ["gt.json:1", "invalid JSON"]),
    "coco huge integer": coco_case("[" + "9" * 5000 + "]", None, ["gt.json", "JSON"]),
    "coco gt is a list": coco_case(coco_det(), None, ["gt.json"]),
    "coco results are an object": coco_case(None, {"results": []}, ["dt.json", "not COCO"]),
    "coco score string": coco_case(None, coco_det(score="0.9"), ["dt.json", "score"]),
    "coco score missing": coco_case(None, [{"image_id": 1, "category_id": 1,
                                            "bbox": [0, 0, 1, 1]}], ["dt.json", "'score'"]),
    "coco result on unknown image": coco_case(None, coco_det(image_id=7),
                                              ["dt.json", "image id 7"]),
    "coco category id string": coco_case(None, coco_det(category_id="1"),
                                         ["dt.json", "category_id"]),
    "coco image id float": coco_case(coco_gt(images=[{"id": 1.5}]), None,
                                     ["gt.json", "images[0]", "image id"]),
    "coco gt category id list": coco_case(
        coco_gt([{"id": 1, "image_id": 1, "category_id": [1], "bbox": [0, 0, 1, 1]}]), None,
        ["gt.json", "annotations[0]", "category_id"]),
    "coco duplicate annotation id": coco_case(
        coco_gt([{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}] * 2), None,
        ["gt.json", "annotations[1]", "duplicate"]),
    "coco iscrowd word": coco_case(
        coco_gt([{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1],
                  "iscrowd": "yes"}]), None, ["gt.json", "iscrowd"]),
    "coco negative area": coco_case(
        coco_gt([{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1],
                  "area": -4}]), None, ["gt.json", "area"]),
    "coco gt without annotations": coco_case({"images": [{"id": 1}]}, None,
                                             ["gt.json", "annotations"]),
    "coco via voc bbox strings": coco_case(None, coco_det(["0", "0", "10", "10"]),
                                           ["dt.json", "numbers"], command="voc"),
    "coco via voc deeply nested": coco_case(None, "[" * 50000, ["dt.json"], command="voc"),
    # COCO masks (--iou-type segm / boundary): the segmentation field
    "coco segm odd coordinates": segm_case(SQUARE, {
        "image_id": 1, "category_id": 1, "score": 0.9, "bbox": [0, 0, 10, 10],
        "segmentation": [[0, 0, 10, 0, 10]]}, ["dt.json", "results[0]", "odd number"]),
    "coco segm rle size": segm_case({"size": [40, 100], "counts": [5000]}, None,
                                    ["gt.json", "annotations[0]", "does not match the image"]),
    "coco segm counts sum": segm_case({"size": [50, 100], "counts": [10, 20]}, None,
                                      ["gt.json", "annotations[0]", "sum to 30"]),
    "coco segm rle text": segm_case(SQUARE, {
        "image_id": 1, "category_id": 1, "score": 0.9,
        "segmentation": {"size": [50, 100], "counts": "a b"}},
        ["dt.json", "results[0]", "outside '0'..'o'"], iou_type="boundary"),
    "coco segm image size": segm_case(SQUARE, None, ["gt.json", "annotations[0]", "height"],
                                      images=[{"id": 1}]),
    "coco segm no segmentation": segm_case(SQUARE, {"image_id": 1, "category_id": 1,
                                                    "score": 0.9},
                                           ["dt.json", "results[0]", "segmentation"]),
}


def test_refused_corpus_is_large_enough():
    assert len(REFUSED) >= 60


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(tmp_path, name):
    args, inputs, names = REFUSED[name](tmp_path)
    out = tmp_path / "out.json"
    run = run_cli(*args, "--json", out, inputs=inputs)
    assert_error(run, *names, absent=[out])


def test_latin1_json_is_refused(tmp_path):
    # bytes that are not UTF-8 (the case above writes text; this one writes the raw byte)
    g = tmp_path / "gt.json"
    g.write_bytes('{"images": [{"id": 1, "file_name": "v\xe9lo"}]}'.encode("latin-1"))
    d = jfile(tmp_path, "dt.json", coco_det())
    run = run_cli("boxes", "coco", g, d, inputs=[g, d])
    assert_error(run, "gt.json", "UTF-8")


# --- other box commands ------------------------------------------------------------------------


def test_robin_bad_text_line(tmp_path):
    g = folder(tmp_path, "gt", {"a.txt": "car 0 0 10 10\ncar 0 0 zz 3\n"})
    d = folder(tmp_path, "det", DET_TXT)
    run = run_cli("boxes", "robin", g, d, inputs=[g, d])
    assert_error(run, "a.txt:2", "'zz'")


def test_robin_xml_bomb(tmp_path):
    g = folder(tmp_path, "gt", {"a.xml": BILLION_LAUGHS})
    d = folder(tmp_path, "det", {"a.xml": xml(obj(score="0.9"))})
    run = run_cli("boxes", "robin", g, d, inputs=[g, d])
    assert_error(run, "a.xml:2", "DOCTYPE")


NEO_HEAD = ("Frame,BoundingBox_X1,BoundingBox_Y1,BoundingBox_X2,BoundingBox_Y2,BoundingBox_X3,"
            "BoundingBox_Y3,BoundingBox_X4,BoundingBox_Y4,ObjectType,Occlusion,Ambiguous,"
            "Confidence,SiteInfo,Version\n")


@pytest.mark.parametrize("name,gt_bytes,names", [
    ("latin-1", (NEO_HEAD + "0,0,0,10,0,10,10,0,10,V\xe9lo,0,0,1,,\n").encode("latin-1"),
     ["seq.csv"]),
    ("word coordinate", (NEO_HEAD + "0,0,0,ten,0,10,10,0,10,Car,0,0,1,,\n").encode(),
     ["seq.csv"]),
    ("binary", b"\x00\x01\x02\xff\xfe", ["seq.csv"]),
])
def test_neovision2_refused(tmp_path, name, gt_bytes, names):
    g = tmp_path / "gt"
    g.mkdir()
    (g / "seq.csv").write_bytes(gt_bytes)
    d = tmp_path / "det"
    d.mkdir()
    (d / "seq.csv").write_text(NEO_HEAD + "0,0,0,10,0,10,10,0,10,Car,0,0,0.9,,\n")
    run = run_cli("boxes", "neovision2", g, d, inputs=[g, d])
    assert_error(run, *names)


# --- accepted unusual inputs: exact numbers --------------------------------------------------


def voc_json(tmp: Path, *args, inputs) -> tuple[dict, str]:
    out = tmp / "out.json"
    run = run_cli("boxes", "voc", *args, "--json", out, "-q", inputs=inputs)
    assert_ok(run)
    return json.loads(out.read_text()), run.stderr


def test_empty_detection_file_scores_zero(tmp_path):
    g = folder(tmp_path, "gt", GT_TXT)
    d = folder(tmp_path, "det", {"a.txt": ""})
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] == 0.0 and r["classes"]["car"]["n_reference"] == 1
    assert r["classes"]["car"]["tp"] == 0 and err == ""


def test_empty_detection_folder_scores_zero(tmp_path):
    g = folder(tmp_path, "gt", GT_TXT)
    d = folder(tmp_path, "det", {})
    r, _ = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] == 0.0 and r["n_images"] == 1


def test_empty_ground_truth_file_gives_null_and_a_warning(tmp_path):
    g = folder(tmp_path, "gt", {"a.txt": "\n\n"})
    d = folder(tmp_path, "det", DET_TXT)
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] is None and r["classes"]["car"]["ap"] is None
    assert "1 detection(s) of 1 class(es) absent from the ground truth (car)" in err


def test_unknown_detection_class_is_left_out_of_map_with_a_warning(tmp_path):
    g = folder(tmp_path, "gt", GT_TXT)
    d = folder(tmp_path, "det", {"a.txt": "car 0.9 0 0 10 10\nbus 0.8 0 0 10 10\n"
                                          "bus 0.7 20 0 30 10\n"})
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    # car: one TP -> AP 1; bus: no ground truth -> null, not in the mean
    assert r["map"] == 1.0 and r["classes"]["bus"]["ap"] is None
    assert r["classes"]["bus"]["fp"] == 2
    assert "2 detection(s) of 1 class(es) absent from the ground truth (bus)" in err


def test_voc_box_outside_the_image_is_kept_with_a_warning(tmp_path):
    # <size> 100 x 50; the box reaches x = 120: the devkit keeps it, so do we
    g = folder(tmp_path, "gt", {"a.xml": xml(obj(box=(90, 0, 120, 10)))})
    d = folder(tmp_path, "det", {"a.xml": xml(obj(box=(90, 0, 120, 10), score="0.5"))})
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] == 1.0
    assert "1 box(es) reach outside their image" in err and "gt" in err
    assert "not clipped" in err


def test_voc_negative_coordinate_is_kept_with_a_warning(tmp_path):
    # gt (-10, 0, 10, 10), det (0, 0, 10, 10): IoU 100 / 200 = 0.5 -> TP at 0.5
    g = folder(tmp_path, "gt", {"a.xml": xml(obj(box=(-10, 0, 10, 10)))})
    d = folder(tmp_path, "det", {"a.xml": xml(obj(score="0.5"))})
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] == 1.0 and err.count("reach outside") == 1
    r, _ = voc_json(tmp_path, g, d, "--iou-threshold", "0.51", inputs=[g, d])
    assert r["map"] == 0.0


def test_coco_box_outside_the_image_is_kept_with_a_warning(tmp_path):
    gt = coco_gt([{"id": 1, "image_id": 1, "category_id": 1, "bbox": [95, 45, 10, 10]}])
    g = jfile(tmp_path, "gt.json", gt)
    d = jfile(tmp_path, "dt.json", coco_det([95, 45, 10, 10]))
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] == 1.0
    assert "gt.json: 1 box(es) reach outside" in err and "dt.json: 1 box(es)" in err


def test_zero_size_box_matches_only_under_plus_one(tmp_path):
    # a zero-width box: area 0, IoU 0 with itself; under the devkit's +1 convention it is a
    # 1 x 5 pixel box and matches itself exactly
    g = folder(tmp_path, "gt", {"a.txt": "car 5 5 5 9\n"})
    d = folder(tmp_path, "det", {"a.txt": "car 0.9 5 5 5 9\n"})
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] == 0.0 and "zero width or height" in err
    r, _ = voc_json(tmp_path, g, d, "--voc-plus-one", inputs=[g, d])
    assert r["map"] == 1.0


def test_mixed_absolute_gt_and_relative_detections(tmp_path):
    # gt absolute xyrb (20, 10, 60, 30) in a 200 x 100 image; the detection in relative
    # centre form: cx = 40/200 = 0.2, cy = 20/100 = 0.2, w = 0.2, h = 0.2 -> the same box
    g = folder(tmp_path, "gt", {"a.txt": "car 20 10 60 30\n"})
    d = folder(tmp_path, "det", {"a.txt": "car 0.9 0.2 0.2 0.2 0.2\n"})
    r, err = voc_json(tmp_path, g, d, "--sub-coords", "rel", "--image-size", "200,100",
                      inputs=[g, d])
    assert r["map"] == 1.0 and err == ""
    # per-side size and format: gt in xywh
    g2 = folder(tmp_path, "gt2", {"a.txt": "car 20 10 40 20\n"})
    r, _ = voc_json(tmp_path, g2, d, "--ref-box-format", "xywh", "--sub-coords", "rel",
                    "--sub-image-size", "200,100", inputs=[g2, d])
    assert r["map"] == 1.0


def test_old_gt_det_option_spellings_still_work(tmp_path):
    # --gt-*/--det-* (Padilla et al.'s -gtformat/-detcoords habits) are second names of
    # --ref-*/--sub-*: the same JSON; without them the run differs (map 0, not 1)
    g = folder(tmp_path, "gt", {"a.txt": "car 20 10 40 20\n"})  # xywh
    d = folder(tmp_path, "det", {"a.txt": "car 0.9 0.2 0.2 0.2 0.2\n"})  # relative
    new, _ = voc_json(tmp_path, g, d, "--ref-format", "text", "--sub-format", "text",
                      "--ref-box-format", "xywh", "--sub-box-format", "xyrb",
                      "--ref-coords", "abs", "--sub-coords", "rel",
                      "--ref-image-size", "200,100", "--sub-image-size", "200,100",
                      inputs=[g, d])
    old, _ = voc_json(tmp_path, g, d, "--gt-format", "text", "--det-format", "text",
                      "--gt-box-format", "xywh", "--det-box-format", "xyrb",
                      "--gt-coords", "abs", "--det-coords", "rel",
                      "--gt-image-size", "200,100", "--det-image-size", "200,100",
                      inputs=[g, d])
    plain, _ = voc_json(tmp_path, g, d, inputs=[g, d])
    assert new == old and new["map"] == 1.0 and plain["map"] == 0.0


def test_relative_read_as_absolute_warns(tmp_path):
    # the mix-up the issue reports: without --sub-coords rel the detection is a sub-pixel box
    g = folder(tmp_path, "gt", {"a.txt": "car 20 10 60 30\n"})
    d = folder(tmp_path, "det", {"a.txt": "car 0.9 0.2 0.2 0.4 0.4\n"})
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] == 0.0 and "every coordinate is within [0, 1]" in err


def test_relative_box_at_the_border_is_clipped_as_padilla_does(tmp_path):
    # cx 0.9, w 0.2 in a 100-wide image: x1 = round(80) = 80, x2 = 100 -> clipped to 99;
    # the gt (80, 0, 99, 10): IoU 1 once clipped
    g = folder(tmp_path, "gt", {"a.txt": "car 80 0 99 10\n"})
    d = folder(tmp_path, "det", {"a.txt": "car 0.9 0.9 0.05 0.2 0.1\n"})
    r, err = voc_json(tmp_path, g, d, "--sub-coords", "rel", "--image-size", "100,100",
                      inputs=[g, d])
    assert r["map"] == 1.0
    assert "1 relative box(es)" in err and "clipped" in err


def test_yolo_box_edge_outside_is_kept_with_a_warning(tmp_path):
    # cx 0.95, w 0.2 at W = 100: x from 85 to 105 (beyond the image): kept, warned
    g = folder(tmp_path, "gt", {"a.txt": "0 0.95 0.5 0.2 0.2\n"})
    d = folder(tmp_path, "det", {"a.txt": "0 0.95 0.5 0.2 0.2 0.8\n"})
    r, err = voc_json(tmp_path, g, d, "--ref-format", "yolo", "--sub-format", "yolo",
                      "--image-size", "100,100", inputs=[g, d])
    assert r["map"] == 1.0 and err.count("reach outside") == 2


@pytest.mark.parametrize("content", [
    "\ufeffcar 0 0 10 10\r\n",            # UTF-8 BOM and CRLF
    "car\t0\t0\t10\t10\n\n   \n",        # tabs, blank lines
    "car 0 0 10 10",                      # no final newline
    "car 0.0e0 0 1e1 10.000\n",           # exponent forms
])
def test_unusual_but_valid_text(tmp_path, content):
    g = folder(tmp_path, "gt", {"a.txt": content})
    d = folder(tmp_path, "det", DET_TXT)
    r, err = voc_json(tmp_path, g, d, inputs=[g, d])
    assert r["map"] == 1.0 and err == ""


def test_xml_predefined_entities_and_unicode_names(tmp_path):
    g = folder(tmp_path, "gt", {"a.xml": xml(obj("v&#233;lo&amp;co"))})
    d = folder(tmp_path, "det", {"a.txt": "vélo&co 0.9 0 0 10 10\n"})
    r, _ = voc_json(tmp_path, g, d, inputs=[g, d])
    assert list(r["classes"]) == ["vélo&co"] and r["map"] == 1.0


# --- hypothesis fuzzing of the readers (Python API: parse, or an InputError whose message
# names the input, nothing else) ------------------------------------------------------------

FUZZ = settings(max_examples=60, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

TOKENS = st.sampled_from(["car", "0", "1", "0.5", "-1", "10", "1e400", "nan", "inf", "x",
                          "0.9", "1e308", "-0", "9" * 30, "é", "\t", "", "2.5e-3", "0x1p3"])
LINE = st.lists(TOKENS, min_size=0, max_size=8).map(" ".join)
TEXT = st.lists(LINE, max_size=6).map("\n".join)


def _try(fn, source, *args, names, **kw):
    """``fn(source, ...)``; an :class:`InputError` must start by naming ``names`` (the
    file or folder read, ``<memory>`` for a document in memory), as the CLI prints it."""
    try:
        fn(source, *args, **kw)
    except InputError as exc:
        assert str(exc).split(":")[0].endswith(names), f"{exc!s} does not start with {names}"


def _write(data: bytes, suffix: str) -> tuple[tempfile.TemporaryDirectory, Path]:
    tmp = tempfile.TemporaryDirectory()
    d = Path(tmp.name) / "boxes"
    d.mkdir()
    (d / f"a{suffix}").write_bytes(data)
    return tmp, d


@FUZZ
@given(text=TEXT, raw=st.binary(max_size=20),
       side=st.sampled_from([None, "reference", "submission"]),
       layout=st.sampled_from(["xyrb", "xywh"]), rel=st.booleans())
def test_fuzz_002_text(text, raw, side, layout, rel):
    tmp, d = _write(text.encode() + raw, ".txt")
    with tmp:
        _try(read_boxes, d, fmt="text", side=side, box_format=layout,
             image_size=(64, 48) if rel else None, names="a.txt")


@FUZZ
@given(text=TEXT, side=st.sampled_from([None, "reference", "submission"]),
       names=st.sampled_from([None, ["a"], ["a", "b", "c"]]))
def test_fuzz_yolo(text, side, names):
    tmp, d = _write(text.encode(), ".txt")
    with tmp:
        _try(read_boxes, d, fmt="yolo", side=side, image_size=(64, 48), class_names=names,
             names="a.txt")


XML_PIECES = st.sampled_from([
    "<annotation>", "</annotation>", "<object>", "</object>", "<name>car</name>", "<bndbox>",
    "</bndbox>", "<xmin>1</xmin>", "<ymin>2</ymin>", "<xmax>5</xmax>", "<ymax>x</ymax>",
    "<xmax>0</xmax>", "<ymax>9</ymax>", "<score>0.5</score>", "<difficult>1</difficult>",
    "<size><width>10</width><height>a</height></size>", "&amp;", "&lol;", "<!DOCTYPE a>",
    "<!ENTITY e 'x'>", "<?xml version='1.0'?>", "<![CDATA[<]]>", "<!-- c -->", "\xe9", "<",
    ">", "\n", "<?xml version='1.0' encoding='nope'?>", "<size>", "</size>",
])


@FUZZ
@given(pieces=st.lists(XML_PIECES, max_size=25), raw=st.binary(max_size=8),
       side=st.sampled_from([None, "reference", "submission"]))
def test_fuzz_voc_xml(pieces, raw, side):
    tmp, d = _write("".join(pieces).encode() + raw, ".xml")
    with tmp:
        _try(read_boxes, d, fmt="voc", side=side, names="a.xml")


JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**70),
                      st.floats(allow_nan=True), st.sampled_from(["1", "car", ""]))
JSON = st.recursive(JSON_LEAF, lambda kids: st.one_of(
    st.lists(kids, max_size=5),
    st.dictionaries(st.sampled_from(["id", "image_id", "category_id", "bbox", "score", "area",
                                     "iscrowd", "images", "annotations", "categories", "name",
                                     "width", "height"]), kids, max_size=6)), max_leaves=30)


@FUZZ
@given(doc=st.one_of(st.lists(JSON, max_size=4), st.dictionaries(st.sampled_from(
    ["images", "annotations", "categories"]), JSON, max_size=3)),
       side=st.sampled_from([None, "reference", "submission"]))
def test_fuzz_coco_objects(doc, side):
    _try(read_coco, doc, side=side, names="<memory>")


def _coco_mutants() -> st.SearchStrategy:
    ann = st.fixed_dictionaries({
        "id": st.one_of(st.integers(1, 3), JSON_LEAF), "image_id": st.one_of(st.just(1),
                                                                              JSON_LEAF),
        "category_id": st.one_of(st.just(1), JSON_LEAF),
        "bbox": st.one_of(st.lists(st.one_of(st.floats(-10, 200), JSON_LEAF), max_size=5),
                          JSON_LEAF),
        "area": JSON_LEAF, "iscrowd": JSON_LEAF})
    return st.fixed_dictionaries({
        "images": st.lists(st.fixed_dictionaries({"id": st.one_of(st.just(1), JSON_LEAF),
                                                  "width": JSON_LEAF, "height": JSON_LEAF}),
                           max_size=2),
        "categories": st.lists(st.fixed_dictionaries({"id": st.one_of(st.just(1), JSON_LEAF),
                                                      "name": JSON_LEAF}), max_size=2),
        "annotations": st.lists(ann, max_size=3)})


@FUZZ
@given(gt=_coco_mutants(), results=st.lists(st.fixed_dictionaries({
    "image_id": st.one_of(st.just(1), JSON_LEAF), "category_id": st.one_of(st.just(1),
                                                                           JSON_LEAF),
    "bbox": st.one_of(st.lists(st.floats(-1, 50), min_size=4, max_size=4), JSON_LEAF),
    "score": JSON_LEAF}), max_size=3))
def test_fuzz_coco_shaped(gt, results):
    try:
        g = read_coco(gt, side="reference")
    except InputError:
        g = None
    _try(read_coco, results, side="submission", like=g, names="<memory>")


@FUZZ
@given(text=st.text(max_size=60), raw=st.binary(max_size=30))
def test_fuzz_coco_files(text, raw):
    tmp, d = _write(text.encode() + raw, ".json")
    with tmp:
        _try(read_boxes, d / "a.json", fmt="coco", names="a.json")


def test_coco_command_warns_about_boxes_outside_the_image(tmp_path):
    gt = coco_gt([{"id": 1, "image_id": 1, "category_id": 1, "bbox": [95, 45, 10, 10]}])
    g = jfile(tmp_path, "gt.json", gt)
    d = jfile(tmp_path, "dt.json", coco_det([95, 45, 10, 10]))
    out = tmp_path / "out.json"
    run = run_cli("boxes", "coco", g, d, "--json", out, "-q", inputs=[g, d])
    assert_ok(run)
    r = json.loads(out.read_text())
    assert r["stats"]["AP50"] == pytest.approx(1.0)
    assert len(r["warnings"]) == 2 and run.stderr.count("reach outside") == 2


def test_padilla_sample_mixed_pair_through_the_cli(tmp_path):
    # image 1 of Padilla et al.'s sample: ground truth absolute xywh, detections relative
    # (200 x 200). Detection .70 (119 111 40 67) vs gt (129 123 41 62): intersection
    # 30 x 55 = 1650, union 2680 + 2542 - 1650 = 3572, IoU 0.4619 -> TP at 0.3; the two others
    # miss. Ranked: .88 FP, .80 FP, .70 TP -> P = 0, 0, 1/3; R = 0, 0, 1/2 -> AP = 1/6
    g = folder(tmp_path, "gt", {"00001.txt": "person 25 16 38 56\nperson 129 123 41 62\n"})
    d = folder(tmp_path, "det", {"00001.txt": "person .88 0.1025 0.455 0.155 0.24\n"
                                              "person .70 0.695 0.7225 0.2 0.335\n"
                                              "person .80 0.7425 0.2125 0.245 0.335\n"})
    r, err = voc_json(tmp_path, g, d, "--ref-box-format", "xywh", "--sub-coords", "rel",
                      "--image-size", "200,200", "--iou-threshold", "0.3", inputs=[g, d])
    assert r["map"] == pytest.approx(1 / 6) and err == ""
    assert r["classes"]["person"]["tp"] == 1


def test_robin_commands_pass_the_readers_warnings_on(tmp_path):
    # the same box outside its 100 x 50 image on both sides: kept (G = 1, one TP), and
    # both readers' warnings reach the JSON and stderr of robin and robin-categories
    g = folder(tmp_path, "gt", {"a.xml": xml(obj(box=(90, 0, 120, 10)))})
    d = folder(tmp_path, "det", {"a.xml": xml(obj(box=(90, 0, 120, 10), score="0.5"))})
    for command in ("robin", "robin-categories"):
        out = tmp_path / f"{command}.json"
        run = run_cli("boxes", command, g, d, "--json", out, inputs=[g, d])
        assert_ok(run)
        r = json.loads(out.read_text())
        assert sum("reach outside" in w for w in r["warnings"]) == 2
        assert run.stderr.count("reach outside") == 2
    assert json.loads((tmp_path / "robin.json").read_text())["runs"][0]["tp"] == 1


def test_coco_results_of_unknown_categories_are_left_out_with_a_warning(tmp_path):
    # one perfect result of category 1 and two of category 7 (not in the ground truth):
    # COCOeval ignores the latter, so AP stays 1; the warning counts them
    g = jfile(tmp_path, "gt.json", coco_gt())
    d = jfile(tmp_path, "dt.json", coco_det() + coco_det(category_id=7)
              + coco_det([20, 20, 5, 5], category_id=7, score=0.5))
    out = tmp_path / "out.json"
    run = run_cli("boxes", "coco", g, d, "--json", out, "-q", inputs=[g, d])
    assert_ok(run)
    r = json.loads(out.read_text())
    assert r["stats"]["AP"] == pytest.approx(1.0)
    assert "2 result(s) of category id(s) absent from the ground truth (7)" in run.stderr


# --- swapped arguments, a file for a folder and a folder for a file --------------------------

BOXES = Path(__file__).resolve().parents[2] / "sample_data" / "boxes"
SWAPPED = [
    ("coco", BOXES / "coco/results.json", BOXES / "coco/instances.json"),
    ("crowdai", BOXES / "crowdai/results.json", BOXES / "crowdai/annotation.json"),
    ("dota", BOXES / "dota/det", BOXES / "dota/labelTxt"),
    ("voc", BOXES / "voc/det", BOXES / "voc/gt"),
    ("robin", BOXES / "robin/run1", BOXES / "robin/gt"),
    ("neovision2", BOXES / "neovision2/results", BOXES / "neovision2/truth"),
]


@pytest.mark.parametrize(("protocol", "first", "second"), SWAPPED,
                         ids=[s[0] for s in SWAPPED])
def test_swapped_arguments_are_named_as_such(protocol, first, second) -> None:
    run = run_cli("boxes", protocol, first, second, inputs=[first, second])
    assert_error(run, "the arguments look swapped", "expected order: REFERENCE", max_lines=2)
    assert str(first.name) in run.stderr


def test_a_dota_label_folder_as_submission_is_named(tmp_path) -> None:
    labels = BOXES / "dota/labelTxt"
    assert_error(run_cli("boxes", "dota", labels, labels, inputs=[labels]),
                 "no Task1_<class>.txt file", "labelTxt", "expected order: REFERENCE")


def test_a_dota_results_file_names_its_folder() -> None:
    one = BOXES / "dota/det/Task1_plane.txt"
    run = run_cli("boxes", "dota", BOXES / "dota/labelTxt", one, inputs=[one])
    assert_error(run, str(one), f"give the folder holding it, {one.parent}")


@pytest.mark.parametrize("protocol", ["coco", "crowdai"])
def test_a_json_folder_names_its_json_files(protocol) -> None:
    d = BOXES / protocol
    gt = sorted(d.glob("*.json"))[0]
    assert_error(run_cli("boxes", protocol, d, gt, inputs=[d]), str(d),
                 "a folder, where a JSON file is expected", gt.name)
    assert_error(run_cli("boxes", protocol, gt, d, inputs=[d]), str(d),
                 "a folder, where a JSON file is expected", gt.name)


@pytest.mark.parametrize("side", ["reference", "submission"])
def test_a_neovision2_file_against_a_folder_names_the_matching_file(side) -> None:
    truth, results = BOXES / "neovision2/truth", BOXES / "neovision2/results"
    if side == "reference":
        args, want = (truth / "TowerA/001.csv", results), results / "TowerA/001.csv"
    else:
        args, want = (truth, results / "TowerA/001.csv"), truth / "TowerA/001.csv"
    assert_error(run_cli("boxes", "neovision2", *args, inputs=[truth, results]),
                 f"{side.upper()} is one", str(want))


def test_neovision2_ground_truth_with_confidence_one_is_not_called_swapped(tmp_path) -> None:
    """A ground truth with Confidence 1 on every row and results without scores are
    scored (no swap is claimed)."""
    head = ("Frame,BoundingBox_X1,BoundingBox_Y1,BoundingBox_X2,BoundingBox_Y2,BoundingBox_X3,"
            "BoundingBox_Y3,BoundingBox_X4,BoundingBox_Y4,ObjectType,Occlusion,Ambiguous,"
            "Confidence,SiteInfo,Version\n")
    row = "0,10,10,50,10,50,40,10,40,Car,FALSE,FALSE,{},,1.0\n"
    gt, det = tmp_path / "gt.csv", tmp_path / "det.csv"
    gt.write_text(head + row.format("1"))
    det.write_text(head + row.format(""))
    assert_ok(run_cli("boxes", "neovision2", gt, det, inputs=[gt, det]))
