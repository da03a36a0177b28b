"""Open a geoeval GeoPackage in real QGIS (Debian's python3-qgis) — issue 7.

QGIS is driven through Debian's own interpreter (``/usr/bin/python3``, where
``apt-get install python3-qgis`` puts it), in a subprocess with
``QT_QPA_PLATFORM=offscreen``; ``tests/qgis_check.py`` writes what QGIS saw as
JSON. Skipped (with the reason) when that interpreter cannot import QGIS.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import geoeval
from geoeval.report.gpkg import write_gpkg
from geoeval.report.qgis_styles import KIND_COLOURS, STATUS_COLOURS, SUBMISSION_MATCHED, hex_colour

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
SYSTEM_PYTHON = "/usr/bin/python3"


def _qgis_missing() -> str | None:
    if not Path(SYSTEM_PYTHON).exists():
        return f"{SYSTEM_PYTHON} does not exist"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import qgis.core"], capture_output=True,
                           text=True, env=_env(Path("/tmp")), timeout=120)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return (f"QGIS is not installed for {SYSTEM_PYTHON} ({last}); "
                "apt-get install python3-qgis (as .ci/run does)")
    return None


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(home), XDG_RUNTIME_DIR=str(home))
    env["PATH"] = "/usr/bin:/bin"
    return env


# real QGIS (a separate Python, about 40 s): CI runs it with pytest -m slow
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def qgis_installed():
    """Skip with the reason when QGIS is missing (probed only when these tests run)."""
    reason = _qgis_missing()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def qgis_findings(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("qgis")
    os.chmod(tmp, 0o700)
    res = geoeval.score(SAMPLE / "reference.gpkg", SAMPLE / "submissions" / "s9_blobby.shp",
                        reference_options={"layer": "buildings"}, id_field="id",
                        class_field="class", matchers=["mom"])
    gpkg = write_gpkg(res, tmp / "s9.gpkg")
    proc = subprocess.run([SYSTEM_PYTHON, str(ROOT / "tests" / "qgis_check.py"), str(gpkg),
                           str(tmp)], capture_output=True, text=True, env=_env(tmp),
                          timeout=300, cwd=tmp)
    findings_path = tmp / "findings.json"
    assert findings_path.exists(), f"no findings: {proc.stdout}\n{proc.stderr}"
    findings = json.loads(findings_path.read_text())
    assert "error" not in findings, findings.get("error")
    return res, tmp, findings


def test_layers_valid_and_styles_applied_on_load(qgis_findings):
    res, _, f = qgis_findings
    layers = f["layers"]
    assert f["gdal_warnings"] == [], f["gdal_warnings"]  # no "partially supported version"
    assert not [m for m in f["messages"] if "version" in m.lower()]
    for name in ("reference", "submission", "instances", "summary"):
        assert layers[name]["valid"], name
    assert layers["reference"]["features"] == len(res.reference) == 3000
    assert layers["submission"]["features"] == len(res.submission)
    assert layers["summary"]["spatial"] is False and layers["summary"]["features"] == 1 + 2
    m = res.results["mom"].matching
    for name, attr in (("reference", "status"), ("submission", "status"),
                       ("instances", "kind")):
        info = layers[name]
        assert info["renderer"] == "categorizedSymbol", info
        assert info["attribute"] == attr
        assert info["crs"] == "EPSG:32651"
    ref_cats = {c["value"]: c for c in layers["reference"]["categories"]}
    assert ref_cats["missed"]["label"] == f"missed ({m.missed.size})"
    assert ref_cats["matched"]["colour"] == hex_colour(STATUS_COLOURS["matched"])
    assert ref_cats["missed"]["colour"] == hex_colour(STATUS_COLOURS["missed"])
    sub_cats = {c["value"]: c for c in layers["submission"]["categories"]}
    assert sub_cats["false_alarm"]["label"] == f"false alarm ({m.false_alarms.size})"
    assert sub_cats["false_alarm"]["outline"] == hex_colour(STATUS_COLOURS["false_alarm"])
    assert sub_cats["matched"]["outline"] == hex_colour(SUBMISSION_MATCHED)
    kinds = {c["value"]: c["colour"] for c in layers["instances"]["categories"]}
    assert kinds == {k: hex_colour(v) for k, v in KIND_COLOURS.items()}


def test_map_renders_to_a_non_empty_png(qgis_findings):
    from matplotlib.image import imread

    _, tmp, f = qgis_findings
    assert f["map_saved"] and f["render_errors"] == []
    img = imread(tmp / "map.png")[..., :3]
    assert img.shape[:2] == (800, 800)
    white = np.all(img > 0.97, axis=-1)
    assert 0.05 < 1 - white.mean() < 0.95  # something drawn, not everything
    # the stored style's colours are on the map: matched green fill and missed red fill
    # (alpha 150/255 over white), false-alarm orange outlines
    def near(rgb, alpha=1.0, tol=0.06):
        c = np.array(rgb) / 255 * alpha + (1 - alpha)
        return np.all(np.abs(img - c) < tol, axis=-1).sum()

    assert near(STATUS_COLOURS["matched"], 150 / 255) > 1000
    assert near(STATUS_COLOURS["missed"], 150 / 255) > 50
    assert near(STATUS_COLOURS["false_alarm"]) > 50
    assert f["layout_saved"] and (tmp / "layout.png").stat().st_size > 10_000
    if os.environ.get("GEOEVAL_UPDATE_SCREENSHOT"):
        (ROOT / "docs" / "img").mkdir(exist_ok=True)
        (ROOT / "docs" / "img" / "qgis_status.png").write_bytes((tmp / "layout.png").read_bytes())


def test_gdal_36_warns_on_a_default_version_file(tmp_path):
    """Control: the warning the test above looks for does appear for a GeoPackage
    written with the venv GDAL's default version (1.4 since GDAL 3.11)."""
    import sqlite3

    import geopandas as gpd
    import pyogrio
    import shapely

    path = tmp_path / "default.gpkg"
    pyogrio.write_dataframe(gpd.GeoDataFrame({"a": [1]}, geometry=[shapely.box(0, 0, 1, 1)],
                                             crs="EPSG:32651"), path)
    version = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    if version <= 10300:
        pytest.skip(f"this GDAL writes GeoPackage {version} by default: nothing to control")
    code = ("from osgeo import gdal\nmsgs = []\n"
            "gdal.PushErrorHandler(lambda level, no, msg: msgs.append(msg))\n"
            f"gdal.OpenEx({str(path)!r})\nprint(msgs)\n")
    out = subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, text=True,
                         env=_env(tmp_path), timeout=120)
    assert "partially supported" in out.stdout
