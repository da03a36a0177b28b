"""``geoeval boxes crowdai`` and ``geoeval.evaluate_crowdai``: one run, one report, the
papers' table; every number against its own evaluation (COCO masks and boundaries by
``evaluate_coco``, the polygon columns by their functions and, slow, by the scripts)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import geoeval
from geoeval.challenges import crowdai_polygons as cp
from geoeval.challenges.coco import STAT_NAMES, evaluate_coco
from geoeval.challenges.crowdai import recall_at_iou
from geoeval.cli.main import main as cli_main
from sample_data.crowdai_tiles import tiles
from tests import crowdai_oracles as oracles

SAMPLE = "sample_data/boxes/crowdai/"
GT, DT = SAMPLE + "annotation.json", SAMPLE + "results.json"


def test_sample_report_holds_every_number():
    r = geoeval.evaluate_crowdai(GT, DT)
    d = r.to_dict()
    assert d["protocol"] == "crowdai" and (d["n_images"], d["n_reference"], d["n_submission"]) \
        == (8, 38, 34)
    segm = evaluate_coco(GT, DT, iou_type="segm")
    boundary = evaluate_coco(GT, DT, iou_type="boundary")
    assert d["stats"] == segm.to_dict()["stats"]
    assert d["boundary_stats"] == boundary.to_dict()["stats"]
    assert set(d["polygon_metrics"]) == {"iou", "ciou", "n_ratio", "mta", "polis"}
    g, s = cp.read_sides(json.load(open(GT)), json.load(open(DT)))
    assert d["polygon_metrics"]["polis"] == cp.polis_hisup(g, s)[0]
    assert d["polygon_metrics"]["mta"] == cp.mta_ffl(g, s)[0]
    assert d["polygon_metrics"]["n_ratio"] == cp.n_ratio(g, s)
    assert all(isinstance(v, float) for v in d["polygon_metrics"].values())
    # tile 2 has buildings and no prediction, tile 7 neither: PolyWorld's loop visits 6
    assert d["polygon_counts"]["iou_images"] == 6


def test_recall_at_iou_is_frame_field_learnings_ar50_ar75():
    r = evaluate_coco(GT, DT, iou_type="segm")
    got = recall_at_iou(r)
    assert got["AR50"] == pytest.approx(float(np.mean(r.recall[0, :, 0, 2])), abs=0)
    assert got["AR75"] == pytest.approx(float(np.mean(r.recall[5, :, 0, 2])), abs=0)
    assert got["AR50"] >= got["AR75"] and got["AR50"] >= r.stats["AR100"]


def test_rle_submission_keeps_ap_and_nulls_polygon_metrics():
    gt, dt = tiles(6, seed=3)
    from pycocotools import mask

    rle = mask.encode(np.asfortranarray(np.ones((300, 300), np.uint8)))
    dt[0]["segmentation"] = {"size": [300, 300], "counts": rle["counts"].decode()}
    r = geoeval.evaluate_crowdai(gt, dt)
    assert r.to_dict()["polygon_metrics"] == dict.fromkeys(("iou", "ciou", "n_ratio", "mta",
                                                            "polis"))
    assert r.stats["AP"] >= 0 and any("RLE" in w for w in r.warnings)


def test_cli_table_and_json(tmp_path, capsys):
    out = tmp_path / "crowdai.json"
    assert cli_main(["boxes", "crowdai", GT, DT, "--json", str(out)]) in (0, None)
    printed = capsys.readouterr().out
    for word in ("AP50", "APS", "AR75", "AP boundary", "C-IoU", "N ratio", "MTA", "PoLiS"):
        assert word in printed
    report = json.loads(out.read_text())
    assert set(STAT_NAMES) == set(report["stats"]) == set(report["boundary_stats"])


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"image_id": 0, "category_id": 100, "score": 1, "bbox": [0, 0, 1, 1], '
                   '"segmentation": [[0, 0, 1, 0, 1]]}]')
    assert cli_main(["boxes", "crowdai", GT, str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "odd number" in err and "Traceback" not in err


@pytest.mark.slow
def test_every_number_equal_to_its_script_on_generated_tiles():
    if oracles.available():
        pytest.skip(oracles.available())
    gt, dt = tiles(40, seed=11, min_per_image=1, p_empty=0.0, p_unpredicted=0.0)
    d = geoeval.evaluate_crowdai(gt, dt).to_dict()
    from tests.coco_segm_data import official

    want = official(gt, dt, "segm").stats
    got = [-1.0 if d["stats"][k] is None else d["stats"][k] for k in STAT_NAMES]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    pm = d["polygon_metrics"]
    assert [pm["iou"], pm["ciou"]] == pytest.approx(oracles.polyworld_iou_ciou(gt, dt),
                                                    rel=1e-14)
    assert pm["polis"] == oracles.hisup_polis(gt, dt)
    assert pm["mta"] == float(oracles.hisup_mta(gt, dt).mean())
    assert pm["n_ratio"] == pytest.approx(oracles.pix2poly(gt, dt)[2], rel=1e-14)


def test_the_docs_python_example_runs(monkeypatch, capsys):
    from tests.docs_examples import run_python_examples

    run_python_examples("crowdai.md", monkeypatch)
    assert "MTA" in capsys.readouterr().out


def test_the_table_note_points_to_the_docs_in_a_sentence(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert cli_main(["boxes", "crowdai", GT, DT]) in (0, None)
    lines = [line.strip() for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert lines[-1] != "docs/crowdai.md."  # a bare path was the note's last line
    note = " ".join(lines[-4:])
    assert "(HiSup). Which script each number equals, and its quirks: docs/crowdai.md." in note
