"""A CrowdAI submission with no result (``[]``) is scored as COCO scores it: AP and AR
0 where the reference has objects, the polygon metrics undefined (averages over no
tile with predictions, no predicted polygon, no pair), no traceback."""

from __future__ import annotations

import json

import numpy as np

import geoeval
from geoeval.challenges.coco import evaluate_coco
from geoeval.cli.main import main as cli_main
from geoeval.io.masks import Masks

GT = "sample_data/boxes/crowdai/annotation.json"


def test_an_empty_submission_gives_cocos_numbers_and_no_polygon_metric():
    r = geoeval.evaluate_crowdai(GT, [])
    d = r.to_dict()
    assert d["n_submission"] == 0 and d["n_reference"] > 0
    assert d["stats"] == evaluate_coco(GT, [], iou_type="segm").to_dict()["stats"]
    assert d["boundary_stats"] == evaluate_coco(GT, [], iou_type="boundary").to_dict()["stats"]
    assert d["stats"]["AP"] == 0 and d["recall_at_iou"] == {"AR50": 0.0, "AR75": 0.0}
    assert d["polygon_metrics"] == dict.fromkeys(("iou", "ciou", "n_ratio", "mta", "polis"))


def test_the_cli_scores_an_empty_results_file(tmp_path, capsys):
    empty, out = tmp_path / "results.json", tmp_path / "report.json"
    empty.write_text("[]")
    assert cli_main(["boxes", "crowdai", GT, str(empty), "--json", str(out)]) in (0, None)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "AP boundary" in captured.out
    assert json.loads(out.read_text())["stats"]["AP"] == 0


def test_masks_without_runs_have_no_linear_run_and_empty_counts():
    none = Masks(ptr=np.zeros(1, np.int64), x=np.zeros(0, np.int64), y0=np.zeros(0, np.int64),
                 y1=np.zeros(0, np.int64), height=np.zeros(0, np.int64),
                 width=np.zeros(0, np.int64))
    assert [a.size for a in none.linear_runs()] == [0, 0, 0]
    blank = Masks(ptr=np.zeros(3, np.int64), x=np.zeros(0, np.int64), y0=np.zeros(0, np.int64),
                  y1=np.zeros(0, np.int64), height=np.array([4, 5]), width=np.array([3, 2]))
    assert [a.size for a in blank.linear_runs()] == [0, 0, 0]
    counts, per_object = blank.counts()
    assert counts.tolist() == [12, 10] and per_object.tolist() == [1, 1]  # rleEncode's
