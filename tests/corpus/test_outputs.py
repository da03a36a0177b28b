"""Corpus: every output option pointed at bad targets and at the inputs.

An output that would overwrite an input, land in a missing or unwritable folder,
or is a folder where a file is expected (and the reverse) is refused before any
work, in one line naming the path and the option, exit 2; inputs stay
byte-identical; a run that fails leaves no output at all and old outputs as they
were; a run that succeeds says what it wrote.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.corpus.conftest import assert_error, assert_ok, run_cli, tree_hashes


def _raster(path: Path, labels: np.ndarray) -> Path:
    import rasterio
    from rasterio.transform import from_origin

    with rasterio.open(path, "w", driver="GTiff", width=labels.shape[1],
                       height=labels.shape[0], count=1, dtype=labels.dtype.name,
                       crs="EPSG:32631", transform=from_origin(500000, 100, 1, 1)) as dst:
        dst.write(labels, 1)
    return path


def _scene() -> tuple[np.ndarray, np.ndarray]:
    """Reference: object 1 (3x3 = 9 px) and 2 (2x3 = 6 px); submission: 7 (6 px, inside 1)
    and 9 (4 px, inside 2). By hand: BGM matches both pairs, P = R = F1 = 1, accuracy
    (Özdemir et al. 2010, eq. 1) = (6 + 4) / (9 + 6) = 2/3."""
    ref = np.zeros((8, 8), np.uint16)
    ref[1:4, 1:4] = 1
    ref[5:7, 5:8] = 2
    sub = np.zeros((8, 8), np.uint16)
    sub[1:4, 2:4] = 7
    sub[5:7, 5:7] = 9
    return ref, sub


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("scene")
    ref, sub = _scene()
    return _raster(d / "ref.tif", ref), _raster(d / "sub.tif", sub)


def _score(scene: tuple[Path, Path], *args: object):
    ref, sub = scene
    return run_cli("score", ref, sub, "-m", "bgm", "-q", *args, inputs=[ref.parent])


# ---------------------------------------------------------------- score: refused targets
FILE_OPTIONS = [("--json", ".json"), ("--gpkg", ".gpkg"), ("--figure", ".png")]


@pytest.mark.parametrize("which", ["reference", "submission"])
def test_json_output_is_an_input(scene, which: str) -> None:
    target = scene[0] if which == "reference" else scene[1]
    assert_error(_score(scene, "--json", target), str(target), "--json", "is an input")


@pytest.mark.parametrize("option", ["--gpkg", "--figure"])
def test_other_file_output_is_an_input(scene, option: str) -> None:
    # a .tif is refused by the suffix rule first: still refused, input untouched
    assert_error(_score(scene, option, scene[1]), str(scene[1]), option)


@pytest.mark.parametrize(("option", "suffix"), FILE_OPTIONS)
def test_file_output_in_missing_folder(scene, tmp_path: Path, option: str, suffix: str) -> None:
    target = tmp_path / "no" / "such" / f"out{suffix}"
    assert_error(_score(scene, option, target), option, "does not exist", absent=[target])


@pytest.mark.parametrize(("option", "suffix"), FILE_OPTIONS)
def test_file_output_is_a_folder(scene, tmp_path: Path, option: str, suffix: str) -> None:
    target = tmp_path / f"dir{suffix}"
    target.mkdir()
    assert_error(_score(scene, option, target), option, "is a folder")
    assert target.is_dir() and not any(target.iterdir())


@pytest.mark.parametrize(("option", "suffix"), FILE_OPTIONS)
def test_file_output_under_a_file(scene, tmp_path: Path, option: str, suffix: str) -> None:
    parent = tmp_path / "plain.txt"
    parent.write_text("x")
    assert_error(_score(scene, option, parent / f"out{suffix}"), option, "not a folder")
    assert parent.read_text() == "x"


@pytest.mark.parametrize(("option", "suffix"), FILE_OPTIONS)
def test_file_output_unwritable_folder(scene, option: str, suffix: str) -> None:
    # /proc refuses new files even to root (permission bits would not stop root)
    assert_error(_score(scene, option, f"/proc/out{suffix}"), option, "cannot write")


@pytest.mark.parametrize(("option", "bad"), [("--gpkg", "out.json"), ("--gpkg", "out"),
                                             ("--figure", "out.jpg"), ("--figure", "out.pdf")])
def test_file_output_suffix(scene, tmp_path: Path, option: str, bad: str) -> None:
    assert_error(_score(scene, option, tmp_path / bad), option, "must end in",
                 absent=[tmp_path / bad])


def test_two_options_one_path(scene, tmp_path: Path) -> None:
    target = tmp_path / "same.png"
    run = _score(scene, "--json", target, "--figure", target)
    assert_error(run, "--json", "--figure", absent=[target])


def test_csv_dir_is_a_file(scene, tmp_path: Path) -> None:
    target = tmp_path / "tables"
    target.write_text("keep")
    assert_error(_score(scene, "--csv-dir", target), "--csv-dir", "is a file")
    assert target.read_text() == "keep"


def test_csv_dir_is_an_input(scene) -> None:
    assert_error(_score(scene, "--csv-dir", scene[0]), "--csv-dir", "is an input")


def test_csv_dir_under_a_file(scene, tmp_path: Path) -> None:
    parent = tmp_path / "plain.txt"
    parent.write_text("x")
    assert_error(_score(scene, "--csv-dir", parent / "tables"), "--csv-dir", "not a folder")


def test_csv_dir_unwritable(scene) -> None:
    assert_error(_score(scene, "--csv-dir", "/proc/geoeval_tables"), "--csv-dir",
                 "cannot write")


def test_scene_dir_needs_folders(scene, tmp_path: Path) -> None:
    assert_error(_score(scene, "--scene-dir", tmp_path / "s"), "--scene-dir",
                 absent=[tmp_path / "s"])


def test_gpkg_matcher_not_run(scene, tmp_path: Path) -> None:
    # refused (bgm ran, hoover did not): the other outputs of the run are not written
    out = tmp_path / "r.json"
    run = _score(scene, "--gpkg", tmp_path / "r.gpkg", "--gpkg-matcher", "hoover",
                 "--json", out)
    assert_error(run, "hoover", absent=[out, tmp_path / "r.gpkg"])


# -------------------------------------------------------------- shapefile sidecars, GPKG
def test_sidecar_of_a_shapefile_input_is_protected(tmp_path: Path) -> None:
    import geopandas as gpd
    from shapely.geometry import box

    frame = gpd.GeoDataFrame({"id": [1, 2]}, geometry=[box(0, 0, 2, 2), box(5, 5, 7, 7)],
                             crs="EPSG:32631")
    frame.to_file(tmp_path / "ref.shp")
    frame.to_file(tmp_path / "sub.gpkg")
    for target, option in ((tmp_path / "ref.dbf", "--json"), (tmp_path / "ref.prj", "--json"),
                           (tmp_path / "sub.gpkg", "--gpkg")):
        run = run_cli("score", tmp_path / "ref.shp", tmp_path / "sub.gpkg", "-m", "bgm",
                      option, target, inputs=[tmp_path])
        assert_error(run, str(target), "is an input")


# ------------------------------------------------------------ all or nothing, and success
def test_success_writes_every_output_and_says_so(scene, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    ref, sub = scene
    run = run_cli("score", ref, sub, "-m", "bgm", "--json", out / "r.json", "--csv-dir",
                  out / "tables", "--gpkg", out / "r.gpkg", inputs=[ref.parent])
    assert_ok(run)
    report = json.loads((out / "r.json").read_text())
    bgm = report["results"]["bgm"]
    assert (bgm["precision"], bgm["recall"], bgm["f1"]) == (1.0, 1.0, 1.0)
    assert bgm["accuracy"] == pytest.approx(10 / 15, abs=1e-12)
    assert sorted(p.name for p in (out / "tables").iterdir()) == [
        "instances.csv", "reference.csv", "submission.csv", "summary.csv"]
    assert (out / "r.gpkg").stat().st_size > 0
    assert "wrote" in run.stderr and "r.json" in run.stderr and "tables" in run.stderr
    assert not [p for p in out.rglob(".*")], "temporary files left"


def test_quiet_success_says_nothing(scene, tmp_path: Path) -> None:
    run = _score(scene, "--json", tmp_path / "r.json")
    assert_ok(run)
    assert run.stderr == "" and (tmp_path / "r.json").exists()


def test_existing_outputs_replaced_on_success(scene, tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old")
    assert_ok(_score(scene, "--json", target))
    assert json.loads(target.read_text())["results"]["bgm"]["matched_reference"] == 2


def _scene_folders(tmp_path: Path, corrupt_second: bool) -> tuple[Path, Path]:
    ref_dir, sub_dir = tmp_path / "ref", tmp_path / "sub"
    ref_dir.mkdir()
    sub_dir.mkdir()
    ref, sub = _scene()
    for name in ("a", "b"):
        _raster(ref_dir / f"{name}.tif", ref)
        _raster(sub_dir / f"{name}.tif", sub)
    if corrupt_second:
        (sub_dir / "b.tif").write_bytes(b"II*\x00" + b"\x00" * 20)  # a TIFF header, no image
    return ref_dir, sub_dir


def test_failed_run_leaves_no_output_and_old_outputs_intact(tmp_path: Path) -> None:
    ref_dir, sub_dir = _scene_folders(tmp_path, corrupt_second=True)
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "scenes.csv").write_text("old table")
    before = tree_hashes([tables])
    scenes, report = tmp_path / "scenes", tmp_path / "pooled.json"
    run = run_cli("score", ref_dir, sub_dir, "-m", "bgm", "--scene-dir", scenes, "--json",
                  report, "--csv-dir", tables, inputs=[ref_dir, sub_dir])
    assert_error(run, "b.tif", absent=[scenes, report])
    assert tree_hashes([tables]) == before


def test_scene_folders_success(tmp_path: Path) -> None:
    ref_dir, sub_dir = _scene_folders(tmp_path, corrupt_second=False)
    scenes, report = tmp_path / "scenes", tmp_path / "pooled.json"
    run = run_cli("score", ref_dir, sub_dir, "-m", "bgm", "-q", "--scene-dir", scenes,
                  "--json", report, inputs=[ref_dir, sub_dir])
    assert_ok(run)
    assert sorted(p.name for p in scenes.iterdir()) == ["a.gpkg", "a.json", "b.gpkg", "b.json"]
    pooled = json.loads(report.read_text())
    assert pooled["pooled"]["bgm"]["matched_reference"] == 4


@pytest.mark.parametrize("option", ["--scene-dir", "--csv-dir"])
def test_output_folder_is_an_input_folder(tmp_path: Path, option: str) -> None:
    ref_dir, sub_dir = _scene_folders(tmp_path, corrupt_second=False)
    run = run_cli("score", ref_dir, sub_dir, "-m", "bgm", option, sub_dir,
                  inputs=[ref_dir, sub_dir])
    assert_error(run, option, "is an input")


# ------------------------------------------------------------------- rank, boxes, audit
@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("rank") / "t.csv"
    p.write_text("name,p,r\na,1,0\nb,0,1\n")
    return p


def test_rank_json_is_the_table(table: Path) -> None:
    assert_error(run_cli("rank", "--table", table, "--json", table, inputs=[table]),
                 "--json", "is an input")


def test_rank_figure_is_the_table(table: Path) -> None:
    assert_error(run_cli("rank", "--table", table, "--figure", table, inputs=[table]),
                 "--figure")


def test_rank_figure_missing_folder(table: Path, tmp_path: Path) -> None:
    target = tmp_path / "nope" / "h.png"
    assert_error(run_cli("rank", "--table", table, "--figure", target, inputs=[table]),
                 "--figure", "does not exist")


def test_rank_submission_as_output(scene) -> None:
    ref, sub = scene
    assert_error(run_cli("rank", ref, sub, "--json", sub, inputs=[ref.parent]), "--json",
                 "is an input")


def test_rank_outputs_written_together(table: Path, tmp_path: Path) -> None:
    run = run_cli("rank", "--table", table, "--json", tmp_path / "r.json", "--figure",
                  tmp_path / "r.png", inputs=[table])
    assert_ok(run)
    assert json.loads((tmp_path / "r.json").read_text())["linear_extensions"] == 2
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


@pytest.fixture(scope="module")
def coco(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("coco")
    gt = {"images": [{"id": 1, "width": 100, "height": 100}],
          "categories": [{"id": 1, "name": "car"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20],
                           "area": 400, "iscrowd": 0}]}
    dt = [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.9}]
    (d / "gt.json").write_text(json.dumps(gt))
    (d / "dt.json").write_text(json.dumps(dt))
    return d / "gt.json", d / "dt.json"


@pytest.mark.parametrize("which", [0, 1])
def test_coco_json_is_an_input(coco, which: int) -> None:
    assert_error(run_cli("boxes", "coco", *coco, "--json", coco[which], inputs=list(coco)),
                 "--json", "is an input")


def test_coco_json_folder(coco, tmp_path: Path) -> None:
    assert_error(run_cli("boxes", "coco", *coco, "--json", tmp_path, inputs=list(coco)),
                 "--json", "is a folder")


def test_coco_success_exact(coco, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    assert_ok(run_cli("boxes", "coco", *coco, "--json", out, "-q", inputs=list(coco)))
    assert json.loads(out.read_text())["stats"]["AP"] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def voc(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("voc")
    (d / "gt").mkdir()
    (d / "det").mkdir()
    (d / "gt" / "img1.txt").write_text("car 10 10 30 30\n")
    (d / "det" / "img1.txt").write_text("car 0.9 10 10 30 30\n")
    return d / "gt", d / "det"


def test_voc_json_inside_input_folder_over_an_input(voc) -> None:
    target = voc[0] / "img1.txt"
    assert_error(run_cli("boxes", "voc", *voc, "--json", target, inputs=list(voc)),
                 "--json", "is an input")


def test_voc_figure_dir_is_the_detection_folder(voc) -> None:
    assert_error(run_cli("boxes", "voc", *voc, "--figure-dir", voc[1], inputs=list(voc)),
                 "--figure-dir", "is an input")


def test_voc_figure_dir_is_a_file(voc, tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    assert_error(run_cli("boxes", "voc", *voc, "--figure-dir", f, inputs=list(voc)),
                 "--figure-dir", "is a file")


def test_robin_json_is_a_detection_file(voc) -> None:
    det = voc[1] / "img1.txt"
    run = run_cli("boxes", "robin", voc[0], voc[1], "--json", det, inputs=list(voc))
    assert_error(run, "--json", "is an input")


def test_neovision2_json_is_the_ground_truth(tmp_path: Path) -> None:
    gt = tmp_path / "gt.csv"
    gt.write_text("Frame,BoundingBox_X1,BoundingBox_Y1,BoundingBox_X2,BoundingBox_Y2,"
                  "BoundingBox_X3,BoundingBox_Y3,BoundingBox_X4,BoundingBox_Y4,ObjectType\n")
    assert_error(run_cli("boxes", "neovision2", gt, gt, "--json", gt, inputs=[gt]), "--json",
                 "is an input")


@pytest.mark.parametrize(("option", "kind"), [("--json", "dir"), ("--markdown", "missing"),
                                              ("--figure-dir", "file")])
def test_audit_outputs(tmp_path: Path, option: str, kind: str) -> None:
    if kind == "dir":
        target = tmp_path
    elif kind == "missing":
        target = tmp_path / "no" / "a.md"
    else:
        target = tmp_path / "f"
        target.write_text("x")
    run = run_cli("audit", "--quick", "-m", "iou", "-a", "translation", option, target)
    assert_error(run, option)


# ------------------------------------------------------------- '-': standard output
# Only the text reports (--json, --markdown, --html) take '-'; one of them at a time.
# Refused before any work as a usage error naming the option; no file named '-'.
@pytest.mark.parametrize("option", ["--gpkg", "--figure", "--breakdown-figure", "--csv-dir",
                                    "--parquet-dir", "--objects"])
def test_standard_output_refused_for_a_binary_or_folder_output(scene, tmp_path: Path,
                                                              option: str) -> None:
    ref, sub = scene
    run = run_cli("score", ref, sub, "-m", "bgm", option, "-", cwd=tmp_path,
                  inputs=[ref.parent])
    assert_error(run, f"'{option}'", "'-' (standard output) takes a text report only",
                 "geoeval score: error:", absent=[tmp_path / "-"])


@pytest.mark.parametrize("args", [("score", "--json", "-", "--html", "-"),
                                  ("rank", "--json", "-", "--html", "-")])
def test_standard_output_given_to_two_outputs(scene, tmp_path: Path, args) -> None:
    ref, sub = scene
    run = run_cli(args[0], ref, sub, *args[1:], cwd=tmp_path, inputs=[ref.parent])
    assert_error(run, "--json and --html both name '-' (standard output)",
                 absent=[tmp_path / "-"])


def test_standard_output_given_twice_by_two_names(scene, tmp_path: Path) -> None:
    ref, sub = scene
    run = run_cli("score", ref, sub, "--json", "-", "--html", "/dev/stdout", cwd=tmp_path,
                  inputs=[ref.parent])
    assert_error(run, "standard output is given to both --json and --html")


def test_standard_output_for_the_audit_and_boxes(voc, tmp_path: Path) -> None:
    run = run_cli("audit", "--quick", "--json", "-", "--markdown", "-", cwd=tmp_path)
    assert_error(run, "--json and --markdown both name '-'")
    run = run_cli("boxes", "voc", *voc, "--figure-dir", "-", cwd=tmp_path, inputs=list(voc))
    assert_error(run, "'--figure-dir'", "standard output", absent=[tmp_path / "-"])
