"""The QGIS Processing plugin (qgis_plugin/geoeval_processing) — issue 28.

Fast tests (geoeval's environment, no QGIS): the ZIP builds with valid
metadata; every parameter's CLI flag and default is the command's own; the
JSON progress lines, the overall progress, the one-line errors and a real
``geoeval`` run through the plugin's runner.

Slow tests (real QGIS 3.22 from Debian, as CI installs it): the plugin is
installed from the built ZIP into a temporary QGIS profile, enabled with
``qgis_process plugins enable`` and pointed at this environment's ``geoeval``
through its provider setting; ``qgis_process run geoeval:score`` /
``geoeval:rank`` on the sample give the numbers of ``geoeval score --json`` /
``geoeval rank --json``, outputs load as valid, styled layers, a bad parameter
is one line and a non-zero exit; PyQGIS (``tests/qgis_plugin_check.py`` under
``/usr/bin/python3``) scores memory layers with a selection and cancels a run,
which leaves no output.
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import geoeval

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
PLUGIN = ROOT / "qgis_plugin" / "geoeval_processing"
SYSTEM_PYTHON = "/usr/bin/python3"
# Debian's /usr/bin/qgis_process wrapper adds /etc/default/qgis's QGIS_OPTS
# (--noversioncheck), which qgis_process 3.22 rejects; run the binary it wraps.
QGIS_PROCESS = shutil.which("qgis_process.bin", path="/usr/bin") or "/usr/bin/qgis_process"
GEOEVAL = Path(sys.executable).parent / "geoeval"


def _load(name: str):
    """A plain-Python module of the plugin, imported without QGIS."""
    spec = importlib.util.spec_from_file_location(f"geoeval_processing_{name}",
                                                  PLUGIN / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


cli = _load("cli")


def _build(out: Path) -> Path:
    proc = subprocess.run([sys.executable, str(ROOT / "qgis_plugin" / "build.py"), "--out",
                           str(out)], capture_output=True, text=True, check=True)
    return Path(proc.stdout.strip())


# --- fast ---------------------------------------------------------------------------


def test_zip_builds_with_valid_metadata(tmp_path):
    path = _build(tmp_path)
    assert path.name == f"geoeval_processing-{geoeval.__version__}.zip"
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        meta_text = zf.read("geoeval_processing/metadata.txt").decode("utf-8")
    assert all(n.startswith("geoeval_processing/") for n in names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    for needed in ("__init__.py", "metadata.txt", "icon.svg", "provider.py", "algorithms.py",
                   "cli.py", "layers.py", "plugin.py"):
        assert f"geoeval_processing/{needed}" in names
    meta = configparser.ConfigParser(interpolation=None)
    meta.read_string(meta_text)
    general = meta["general"]
    for key in ("name", "qgisMinimumVersion", "description", "about", "version", "author",
                "icon"):
        assert general.get(key), key
    assert general["qgisMinimumVersion"] == "3.22"
    assert general["hasProcessingProvider"] == "yes"
    assert general["version"] == geoeval.__version__
    assert f"geoeval_processing/{general['icon']}" in names


def _click_params(command: str) -> dict[str, object]:
    from typer.main import get_command

    from geoeval.cli.main import app

    group = get_command(app)
    params = {}
    for p in group.commands[command].params:
        for opt in (*p.opts, *getattr(p, "secondary_opts", [])):
            params[opt] = p
    return params


@pytest.mark.parametrize("command, options", [("score", cli.SCORE_OPTIONS),
                                              ("rank", cli.RANK_OPTIONS)])
def test_every_parameter_is_a_cli_option_with_its_default(command, options):
    params = _click_params(command)
    names = [o.name for o in options]
    assert len(names) == len(set(names))
    for o in options:
        flags = o.choices if o.kind == "switch" else (o.flag,)
        for flag in flags:
            assert flag in params, (command, flag)
        p = params[flags[0]]
        if o.kind == "enums":  # --matcher: default all matchers
            from geoeval.matching import MATCHERS

            assert p.default is None and tuple(o.default) == MATCHERS == tuple(o.choices)
        elif o.kind == "switch":
            assert p.default is None and o.default is None
        else:
            assert p.default == o.default, (command, o.flag, p.default, o.default)
        choices = getattr(getattr(p, "type", None), "choices", None)
        if o.kind in ("enum", "enums") and choices is not None:
            assert set(o.choices) <= set(choices), (command, o.flag)


def test_rank_offers_no_option_of_a_table_only():
    """The algorithm ranks scenes: an option of ``rank --table`` only (``--tie-break``:
    scenes break ties by accuracy) would be refused by the command."""
    from geoeval.cli.rank import TABLE_OPTIONS

    params = _click_params("rank")
    assert not [o.flag for o in cli.RANK_OPTIONS if params[o.flag].name in TABLE_OPTIONS]


def test_cli_args_pass_only_what_differs_from_the_cli_default():
    values = {"MATCHERS": ["bgm", "iou"], "HOOVER_THRESHOLD": 0.6, "IOU_THRESHOLD": 0.7,
              "MALLOWS": True, "BREAKDOWN": False, "MEASURES": ["pq", "polis"],
              "APPROXIMATE": "--exact", "ID_FIELD": "id", "SEED": 0, "JOBS": None}
    assert cli.cli_args(cli.SCORE_OPTIONS, values) == [
        "--matcher", "bgm", "--matcher", "iou", "--iou-threshold", "0.7", "--mallows",
        "--exact", "--id-field", "id", "--measures", "pq,polis"]
    assert cli.cli_args(cli.SCORE_OPTIONS, {"MATCHERS": list(cli.MATCHERS)}) == []
    assert cli.cli_args(cli.RANK_OPTIONS, {"MATCHER": "bgm", "METHOD": "auto"}) == [
        "--matcher", "bgm"]


def test_progress_jsonl_lines(monkeypatch, capsys):
    from geoeval.cli.progress import Progress

    monkeypatch.setenv("GEOEVAL_PROGRESS", "jsonl")
    with Progress(quiet=True, delay=3600.0) as progress:  # quiet and quick: still reported
        progress("Mallows score (mom): 1,234/5,000 instances, about 3 s left")
        progress("ranking")
    lines = [json.loads(x) for x in capsys.readouterr().err.splitlines()]
    assert lines == [
        {"progress": "reading", "step": "reading", "done": None, "total": None},
        {"progress": "Mallows score (mom): 1,234/5,000 instances, about 3 s left",
         "step": "Mallows score (mom)", "done": 1234, "total": 5000},
        {"progress": "ranking", "step": "ranking", "done": None, "total": None}]


def test_stages_fill_in_order_and_never_go_back():
    stages = cli.score_stages(["bgm", "mom"])
    assert stages.plan == ["reading", "overlap", "matching (bgm)", "matching (mom)",
                           "Mallows score (mom)", "writing the GeoPackage"]
    unit = 100 / (5 + cli.MALLOWS_WEIGHT)  # five steps of weight 1, Mallows heavier
    assert stages.update("overlap", None, None) == pytest.approx(unit)
    assert stages.update("Mallows score (mom)", 50, 200) == pytest.approx(
        unit * (4 + cli.MALLOWS_WEIGHT / 4))
    assert stages.update("reading", None, None) == pytest.approx(
        unit * (4 + cli.MALLOWS_WEIGHT / 4))  # never back
    assert stages.update("scoring each class", None, None) == stages.percent  # not planned
    assert stages.update("writing the GeoPackage", 1, 1) == pytest.approx(100)
    everyone = cli.score_stages(["bgm", "iou"], mallows=True).plan
    assert "Mallows score (bgm)" in everyone and "Mallows score (iou)" in everyone
    assert cli.Stages([]).update("reading", None, None) == 0.0


def test_error_line_is_the_cli_line_with_names_not_temporary_paths():
    messages = ["warning: something", "geoeval: error: /tmp/x/reference.gpkg: no such file"]
    assert cli.error_line(messages, 2, {"/tmp/x/reference.gpkg": "my buildings"}, {}) == (
        "geoeval: error: my buildings: no such file")
    line = ("geoeval score: error: Invalid value for '--hoover-threshold': must be in "
            "(0.5, 1], got 0.4 (see 'geoeval score --help')")
    assert cli.error_line([line], 2, {}, cli.flag_parameters(cli.SCORE_OPTIONS)) == (
        "geoeval score: error: Invalid value for '--hoover-threshold': must be in (0.5, 1], "
        "got 0.4 (parameter HOOVER_THRESHOLD)")
    assert cli.error_line([], -9, {}, {}) == "geoeval stopped with exit code -9"


def test_find_command(tmp_path, monkeypatch):
    script = tmp_path / "bin" / "geoeval"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho geoeval 9.9\n")
    script.chmod(0o755)
    monkeypatch.delenv("GEOEVAL_COMMAND", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert cli.find_command(None) is None
    assert cli.find_command(str(script)) == str(script)
    assert cli.find_command(str(script.parent)) == str(script)  # a folder holding it
    assert cli.find_command(str(tmp_path / "nothing")) is None
    monkeypatch.setenv("GEOEVAL_COMMAND", str(script))
    assert cli.find_command(None) == str(script)
    assert cli.version(str(script)) == "9.9"
    assert cli.version(str(GEOEVAL)) == geoeval.__version__
    with pytest.raises(cli.GeoevalError, match="--version failed"):
        cli.version("/bin/false")


class Feedback:
    """What the runner calls on a QgsProcessingFeedback, recorded."""

    def __init__(self, cancel_on: str | None = None) -> None:
        self.calls: list[tuple[str, object]] = []
        self.cancel_on = cancel_on
        self.cancelled = False

    def __getattr__(self, name):
        return lambda value: self.calls.append((name, value))

    def setProgressText(self, text):  # noqa: N802
        self.calls.append(("setProgressText", text))
        if self.cancel_on and text.startswith(self.cancel_on):
            self.cancelled = True

    def isCanceled(self):  # noqa: N802
        return self.cancelled

    def of(self, name):
        return [v for n, v in self.calls if n == name]


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory):
    """Two 40×40 label rasters: four squares, the submission shifted by one pixel."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    folder = tmp_path_factory.mktemp("tiny")
    ref = np.zeros((40, 40), np.int32)
    for k, (r, c) in enumerate([(2, 2), (2, 22), (22, 2), (22, 22)], start=1):
        ref[r:r + 12, c:c + 12] = k
    sub = np.roll(ref, 1, axis=1)
    paths = []
    for name, data in (("ref.tif", ref), ("sub.tif", sub)):
        path = folder / name
        with rasterio.open(path, "w", driver="GTiff", width=40, height=40, count=1,
                           dtype="int32", crs="EPSG:32651",
                           transform=from_origin(500000, 1500000, 1, 1)) as dst:
            dst.write(data, 1)
        paths.append(str(path))
    return paths


def test_runner_reports_progress_and_writes_the_report(tiny_pair, tmp_path):
    feedback = Feedback()
    out = tmp_path / "r.json"
    cli.run(str(GEOEVAL), ["score", *tiny_pair, "-m", "bgm", "--json", str(out), "--quiet"],
            feedback, cli.score_stages(["bgm"]))
    texts = feedback.of("setProgressText")
    assert texts[:2] == ["reading", "overlap"] and "matching (bgm)" in texts
    values = feedback.of("setProgress")
    assert values == sorted(values) and values[-1] == 100.0
    assert feedback.of("pushCommandInfo")[0].startswith(str(GEOEVAL))
    report = json.loads(out.read_text())
    assert report["results"]["bgm"]["matched_reference"] == 4


def test_runner_raises_the_cli_message_in_one_line(tiny_pair):
    with pytest.raises(cli.GeoevalError) as err:
        cli.run(str(GEOEVAL), ["score", *tiny_pair, "--hoover-threshold", "0.4"], Feedback(),
                cli.Stages([]), flags=cli.flag_parameters(cli.SCORE_OPTIONS))
    assert str(err.value) == ("geoeval score: error: Invalid value for '--hoover-threshold': "
                              "must be in (0.5, 1], got 0.4 (parameter HOOVER_THRESHOLD)")


def test_rank_rows_are_the_rank_table():
    rank = {"matcher": "bgm", "indicators": ["precision", "recall"], "lower_is_better": [],
            "submissions": {"a": {"precision": 0.9, "recall": 0.5},
                            "b": {"precision": 0.8, "recall": 0.4}},
            "ranking": ["a", "b"], "rank_intervals": {"a": [1, 1], "b": [2, 2]},
            "deciding_round": 0, "expected_ranks": {"a": 1.0, "b": 2.0},
            "rank_frequencies": {"a": [1, 0], "b": [0, 1]}}
    rows = cli.rank_rows(rank)
    assert rows[1] == {"rank": 2, "name": "b", "precision": 0.8, "recall": 0.4,
                       "interval_low": 2, "interval_high": 2, "expected_rank": 2.0,
                       "first_in_orderings": 0.0}
    assert rows[0]["first_in_orderings"] == 1.0
    assert [r["rank"] for r in rows] == [1, 2]


# --- slow: cancel through the runner, then real QGIS ----------------------------------


@pytest.mark.slow
def test_runner_cancel_ends_geoeval_and_writes_nothing(tmp_path):
    import time

    out = tmp_path / "out"
    out.mkdir()
    feedback = Feedback(cancel_on="matching")
    start = time.monotonic()
    with pytest.raises(cli.Cancelled):
        cli.run(str(GEOEVAL), ["score", str(SAMPLE / "reference.gpkg"),
                               str(SAMPLE / "submissions" / "s9_blobby.shp"),
                               "--json", str(out / "a.json"), "--gpkg", str(out / "a.gpkg")],
                feedback, cli.Stages([]))
    assert time.monotonic() - start < 25  # the whole run takes longer than that
    assert list(out.iterdir()) == []


def _qgis_missing() -> str | None:
    if not Path(SYSTEM_PYTHON).exists() or not Path(QGIS_PROCESS).exists():
        return f"{SYSTEM_PYTHON} or {QGIS_PROCESS} missing; apt-get install qgis python3-qgis"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import qgis.core"], capture_output=True,
                           text=True, env=_env(Path("/tmp")), timeout=120)
    if probe.returncode != 0:
        return "python3-qgis is not installed (apt-get install qgis python3-qgis)"
    return None


def _env(home: Path, **extra: str) -> dict[str, str]:
    """QGIS's environment: none of this virtual environment's Python variables or PATH
    (QGIS's embedded Python would pick up the venv's interpreter and fail)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "GEOEVAL_"))}
    # GDAL as QGIS users have it (PAM on): the plugin itself must leave no .aux.xml
    # beside the sample's rasters (inputs_untouched)
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(home), XDG_RUNTIME_DIR=str(home),
               PATH="/usr/bin:/bin", **extra)
    return env


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder``: size and modification time (ns)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(autouse=True)
def inputs_untouched(request):
    """After every QGIS test, the sample's folder (every test's inputs) holds the same
    files, unchanged: no ``.aux.xml`` (QGIS computes statistics when it loads a raster
    layer, and GDAL keeps them beside the file) nor any other new file."""
    if request.node.get_closest_marker("slow") is None:
        yield
        return
    before = _files(SAMPLE)
    yield
    after = _files(SAMPLE)
    for name in set(after) - set(before):  # one failure only: the next test starts clean
        (SAMPLE / name).unlink()
    assert after == before, "a QGIS run wrote beside its inputs"


@pytest.fixture(scope="module")
def qgis(tmp_path_factory):
    """A temporary QGIS profile with the plugin installed from the ZIP and enabled,
    its provider setting pointing at this environment's geoeval (its folder)."""
    reason = _qgis_missing()
    if reason:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("qgis_home")
    os.chmod(home, 0o700)
    config = home / "config"
    plugins = config / "profiles" / "default" / "python" / "plugins"
    plugins.mkdir(parents=True)
    with zipfile.ZipFile(_build(home / "dist")) as zf:  # as Install from ZIP does
        zf.extractall(plugins)
    env = _env(home, QGIS_CUSTOM_CONFIG_PATH=str(config))
    enable = subprocess.run([QGIS_PROCESS, "plugins", "enable", "geoeval_processing"],
                            capture_output=True, text=True, env=env, timeout=300, cwd=home)
    assert enable.returncode == 0, enable.stdout + enable.stderr
    ini = config / "profiles" / "default" / "QGIS" / "QGIS3.ini"
    with ini.open("a", encoding="utf-8") as fh:
        fh.write(f"\n[Processing]\nConfiguration\\GEOEVAL_COMMAND={GEOEVAL.parent}\n")
    return home, env


def _qgis_process(qgis, *args: str, timeout: float = 600,
                  cwd: Path | None = None) -> subprocess.CompletedProcess:
    home, env = qgis
    return subprocess.run([QGIS_PROCESS, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=cwd or home)


def _check(qgis, mode: str, out: Path, *args: str) -> dict:
    home, env = qgis
    out.mkdir(parents=True, exist_ok=True)
    env = dict(env, GEOEVAL_COMMAND=str(GEOEVAL))
    proc = subprocess.run([SYSTEM_PYTHON, str(ROOT / "tests" / "qgis_plugin_check.py"), mode,
                           str(out), *args], capture_output=True, text=True, env=env,
                          timeout=600, cwd=home)
    path = out / "findings.json"
    assert path.exists(), f"no findings: {proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    found = json.loads(path.read_text())
    assert "error" not in found, found["error"]
    return found


def _cli_json(tmp: Path, command: str, *args: str) -> dict:
    out = tmp / f"cli_{command}.json"
    subprocess.run([str(GEOEVAL), command, *args, "--json", str(out), "--quiet"], check=True,
                   capture_output=True, text=True, timeout=600)
    return json.loads(out.read_text())


STATUS = {"reference": ("status", {"matched", "missed"}),
          "submission": ("status", {"matched", "false_alarm"}),
          "instances": ("kind", {"one-to-one", "one-to-many", "many-to-one"})}


def _assert_styled(layers: dict, report: dict, matcher: str) -> None:
    r = report["results"][matcher]
    for name, (attribute, values) in STATUS.items():
        info = layers[name]
        assert info["valid"] and info["renderer"] == "categorizedSymbol", info
        assert info["attribute"] == attribute and set(info["categories"]) == values
    cats = layers["reference"]["categories"]
    assert cats["missed"]["label"] == f"missed ({r['missed']})"
    assert cats["missed"]["colour"] == "#e31a1c" and cats["matched"]["colour"] == "#33a02c"
    assert layers["reference"]["features"] == report["reference"]["objects"]
    assert layers["submission"]["features"] == report["submission"]["objects"]
    assert layers["summary"]["valid"] and layers["summary"]["spatial"] is False


@pytest.mark.slow
def test_qgis_process_lists_the_algorithms(qgis):
    listing = _qgis_process(qgis, "list")
    assert "geoeval:score\tScore detections against a reference" in listing.stdout
    assert "geoeval:rank\tRank submissions" in listing.stdout
    helptext = _qgis_process(qgis, "help", "geoeval:score").stdout
    for name in ("REFERENCE:", "SUBMISSION:", "JSON:", "MATCHERS:", "HOOVER_THRESHOLD:"):
        assert name in helptext


@pytest.mark.slow
def test_qgis_process_score_files_equals_the_cli(qgis, tmp_path):
    ref, sub = SAMPLE / "reference.gpkg", SAMPLE / "submissions" / "s9_blobby.shp"
    out = tmp_path / "out"
    proc = _qgis_process(
        qgis, "run", "geoeval:score", "--", f"REFERENCE={ref}", f"SUBMISSION={sub}",
        "MATCHERS=bgm", "MATCHERS=hoover", "MATCHERS=iou", "ID_FIELD=id",
        "CLASS_FIELD=class", "IOU_THRESHOLD=0.4", f"JSON={out}/s9.json",
        f"GPKG={out}/s9.gpkg", f"HTML={out}/s9.html")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    got = json.loads((out / "s9.json").read_text())
    want = _cli_json(tmp_path, "score", str(ref), str(sub), "-m", "bgm", "-m", "hoover",
                     "-m", "iou", "--id-field", "id", "--class-field", "class",
                     "--iou-threshold", "0.4")
    for key in ("results", "per_class", "parameters", "overlap", "warnings"):
        assert got[key] == want[key], key
    found = _check(qgis, "layers", tmp_path / "layers", str(out / "s9.gpkg"))
    _assert_styled(found["layers"], got, "bgm")  # no mom: the first matcher run
    page = (out / "s9.html").read_text(encoding="utf-8")  # geoeval's own --html page
    assert f"{got['results']['hoover']['f1']:.4f}" in page and "s9_blobby" in page


@pytest.mark.slow
def test_qgis_process_per_side_id_fields(qgis, tmp_path):
    """REF_ID_FIELD / SUB_ID_FIELD are --ref-id-field / --sub-id-field: each layer's ids
    from its own field, as the CLI gives them; a field the submission lacks is one
    line naming the side and the option."""
    import geopandas as gpd

    ref = SAMPLE / "reference.gpkg"
    sub = tmp_path / "dets.gpkg"
    frame = gpd.read_file(SAMPLE / "submissions" / "s3_false_alarms.gpkg")
    frame.rename(columns={"id": "det_id"}).assign(det_id=frame["id"] + 100_000).to_file(sub)
    out = tmp_path / "out"
    proc = _qgis_process(
        qgis, "run", "geoeval:score", "--", f"REFERENCE={ref}", f"SUBMISSION={sub}",
        "MATCHERS=bgm", "REF_ID_FIELD=id", "SUB_ID_FIELD=det_id", f"JSON={out}/d.json",
        f"GPKG={out}/d.gpkg")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = json.loads((out / "d.json").read_text())
    want = _cli_json(tmp_path, "score", str(ref), str(sub), "-m", "bgm", "--ref-id-field",
                     "id", "--sub-id-field", "det_id")
    assert got["results"] == want["results"]
    first = got["results"]["bgm"]["instances"][0]
    assert first["submission"][0] >= 100_000 and first["reference"][0] < 100_000
    proc = _qgis_process(
        qgis, "run", "geoeval:score", "--", f"REFERENCE={ref}", f"SUBMISSION={sub}",
        "MATCHERS=bgm", "ID_FIELD=det_id", f"JSON={out}/bad.json", f"GPKG={out}/bad.gpkg")
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in text
    assert any("--id-field 'det_id' is not a field of the reference (fields: id, class); "
               "--ref-id-field / --sub-id-field name one side's field" in line
               for line in text.splitlines()), text[-2000:]
    assert not (out / "bad.json").exists()


@pytest.mark.slow
def test_qgis_process_bad_parameter_is_one_line_and_fails(qgis, tmp_path):
    ref, sub = SAMPLE / "reference.tif", SAMPLE / "submissions" / "s1_near_perfect.tif"
    proc = _qgis_process(qgis, "run", "geoeval:score", "--", f"REFERENCE={ref}",
                         f"SUBMISSION={sub}", "HOOVER_THRESHOLD=0.4",
                         f"JSON={tmp_path}/bad.json", f"GPKG={tmp_path}/bad.gpkg")
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0
    line = ("geoeval score: error: Invalid value for '--hoover-threshold': must be in "
            "(0.5, 1], got 0.4 (parameter HOOVER_THRESHOLD)")
    assert line in text.splitlines()
    assert "Traceback" not in text
    assert not list(tmp_path.glob("bad.*"))


@pytest.mark.slow
def test_without_geoeval_a_run_says_what_to_install(qgis, tmp_path):
    """A profile whose provider setting is empty, geoeval not on PATH: the algorithms
    are listed, and running one fails with one line saying what to install and set."""
    home, env = qgis
    config = tmp_path / "config"
    shutil.copytree(Path(env["QGIS_CUSTOM_CONFIG_PATH"]), config)
    ini = config / "profiles" / "default" / "QGIS" / "QGIS3.ini"
    ini.write_text("\n".join(line for line in ini.read_text().splitlines()
                             if "GEOEVAL_COMMAND" not in line) + "\n")
    bare = dict(env, QGIS_CUSTOM_CONFIG_PATH=str(config))
    proc = subprocess.run([QGIS_PROCESS, "run", "geoeval:score", "--",
                           f"REFERENCE={SAMPLE / 'reference.tif'}",
                           f"SUBMISSION={SAMPLE / 'submissions' / 's1_near_perfect.tif'}",
                           f"JSON={tmp_path}/x.json"], capture_output=True, text=True,
                          env=bare, timeout=300, cwd=home)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in text
    assert any(line.startswith("geoeval command not found: install geoeval")
               and "geoeval command" in line for line in text.splitlines()), text[-2000:]
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
def test_qgis_process_rank_equals_the_cli(qgis, tmp_path):
    """Relative raster and vector paths, as docs/qgis.md writes them (run from the
    repository's folder): the submissions are linked under their names in the run's
    folder, which must not make a relative path relative to that folder."""
    ref = Path("sample_data") / "reference.tif"
    subs = [Path("sample_data") / "submissions" / n for n in
            ("s1_near_perfect.tif", "s2_misses.tif", "s7_dilated.gpkg")]
    out = tmp_path / "out"
    out.mkdir()  # QGIS writes a table into an existing folder
    proc = _qgis_process(qgis, "run", "geoeval:rank", "--", f"REFERENCE={ref}",
                         *[f"SUBMISSIONS={s}" for s in subs], "MATCHER=bgm",
                         f"JSON={out}/rank.json", f"OUTPUT={out}/rank.csv",
                         f"HTML={out}/rank.html", cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = json.loads((out / "rank.json").read_text())
    want = _cli_json(tmp_path, "rank", str(ROOT / ref), *(str(ROOT / s) for s in subs),
                     "--matcher", "bgm")
    assert got == want
    import csv

    with (out / "rank.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["name"] for r in rows] == want["ranking"]
    assert [int(r["rank"]) for r in rows] == [1, 2, 3]
    for r in rows:
        for ind in want["indicators"]:
            assert float(r[ind]) == pytest.approx(want["submissions"][r["name"]][ind])
        freq = want["rank_frequencies"][r["name"]]
        assert float(r["first_in_orderings"]) == pytest.approx(freq[0] / sum(freq))
    page = (out / "rank.html").read_text(encoding="utf-8")
    assert "<svg" in page and all(name in page for name in want["ranking"])  # Hasse diagram


@pytest.mark.slow
def test_memory_layers_with_a_selection_score_as_the_cli(qgis, tmp_path):
    import geopandas as gpd

    ref_path = SAMPLE / "reference.gpkg"
    sub_path = SAMPLE / "submissions" / "s7_dilated.gpkg"
    x0, y0 = 570050, 1449850  # about a sixteenth of the scene
    found = _check(qgis, "memory", tmp_path / "memory", f"{ref_path}|layername=buildings",
                   str(sub_path), str(x0), str(y0))
    assert found["algorithm"] == "geoeval:score"
    assert found["providers"] == {"reference": "memory", "submission": "memory"}
    # the same selection by the same rule, written as files, scored by the CLI
    files = []
    for key, path in (("reference", ref_path), ("submission", sub_path)):
        frame = gpd.read_file(path)
        c = frame.geometry.centroid
        subset = frame[(c.x < x0) & (c.y < y0)]
        assert len(subset) == found["selected"][key] < found["totals"][key]
        files.append(tmp_path / f"{key}.gpkg")
        subset.to_file(files[-1], driver="GPKG")
    want = _cli_json(tmp_path, "score", *map(str, files))
    got = json.loads((tmp_path / "memory" / "memory.json").read_text())
    assert list(got["results"]) == ["bgm", "hoover", "mom", "iou"]  # the CLI's default
    for m, r in want["results"].items():
        for key in ("matched_reference", "matched_submission", "missed", "false_alarms",
                    "precision", "recall", "f1", "accuracy", "mallows", "instances_by_kind"):
            assert got["results"][m][key] == pytest.approx(r[key]), (m, key)
    # progress: steps as the CLI names them, a bar that only moves forward to 100
    ours = found["progress"][:found["progress"].index(100.0) + 1]
    assert ours == sorted(ours) and len(ours) > 10
    texts = found["progress_texts"]
    assert texts[:2] == ["reading", "overlap"] and "Mallows score (mom)" in texts
    # the four layers loaded into the project as the dialog loads them, styled
    assert found["loaded_ok"]
    layers = {v["source"].split("layername=")[1]: v for v in found["project_layers"].values()}
    assert set(layers) == {"reference", "submission", "instances", "summary"}
    _assert_styled(layers, got, "mom")
    assert all(found["help"][p] for p in ("MATCHERS", "HOOVER_THRESHOLD", "ID_FIELD"))


@pytest.mark.slow
def test_cancel_stops_geoeval_and_leaves_no_output(qgis, tmp_path):
    found = _check(qgis, "cancel", tmp_path / "cancel", str(SAMPLE / "reference.gpkg"),
                   str(SAMPLE / "submissions" / "s9_blobby.shp"))
    assert found["raised"] is not None  # processing.run reports the failed run
    assert found["stopped_after"] is not None and found["stopped_after"] < 10
    assert found["left"] == []
    assert found["geoeval_processes"] == []
