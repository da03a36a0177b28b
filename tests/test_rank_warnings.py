"""A contest keeps its submissions' warnings: ``geoeval rank`` prints them (each named
after its submission), the ``--json`` report and ``geoeval.rank`` give them, and
``--strict`` (``strict=True``) refuses the run naming the submission, as ``geoeval score``
does for one submission."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import geopandas as gpd
import pytest
from shapely.geometry import box

import geoeval
from geoeval.cli.main import main
from geoeval.errors import GeoevalWarning, StrictError

CRS = "EPSG:32631"
SQUARES = [box(0, 0, 10, 10), box(20, 0, 30, 10), box(40, 0, 50, 10)]
SKIPPED = "1 of 3 feature(s) skipped: 1 without geometry"


@pytest.fixture()
def contest(tmp_path: Path) -> dict[str, Path]:
    """A reference of three squares; ``good`` finds them all, ``warned`` finds two and
    has one feature without geometry (a reader's warning), ``fair`` finds two and has
    no warning."""
    paths = {}
    for name, geoms in (("ref", SQUARES), ("good", SQUARES),
                        ("warned", [SQUARES[0], None, SQUARES[2]]),
                        ("fair", [SQUARES[0], SQUARES[1], box(60, 0, 70, 10)])):
        p = tmp_path / f"{name}.gpkg"
        gpd.GeoDataFrame({"id": [1, 2, 3]}, geometry=geoms, crs=CRS).to_file(p)
        paths[name] = p
    return paths


def _rank(capsys: pytest.CaptureFixture[str], contest: dict[str, Path],
          *extra: str) -> tuple[int, str, str]:
    code = main(["rank", str(contest["ref"]), str(contest["good"]), str(contest["warned"]),
                 "-m", "bgm", *extra])
    out = capsys.readouterr()
    return code, out.out, " ".join(out.err.split())


def test_rank_prints_each_submissions_warnings(contest, capsys):
    code, out, err = _rank(capsys, contest)
    assert code == 0, err
    assert f"warning: warned: {contest['warned']}: {SKIPPED}" in err
    assert "warning: good:" not in err  # only the submission that has them
    assert "warned" in out  # and the ranking is still printed


def test_rank_json_report_has_the_warnings(contest, capsys, tmp_path):
    report = tmp_path / "rank.json"
    code, _, err = _rank(capsys, contest, "--json", str(report))
    assert code == 0, err
    got = json.loads(report.read_text())["warnings"]
    assert got == [f"warned: {contest['warned']}: {SKIPPED}"]


def test_rank_strict_refuses_naming_the_submission(contest, capsys, tmp_path):
    report = tmp_path / "rank.json"
    code, out, err = _rank(capsys, contest, "--strict", "--json", str(report))
    assert code == 2
    assert f"warning: warned: {contest['warned']}: {SKIPPED}" in err  # printed once
    assert err.count(SKIPPED) == 2  # the warning, then the refusal quoting it
    assert "geoeval: error: --strict: 1 warning(s), the first: warned: " in err
    assert "Traceback" not in err and not report.exists()
    code, _, err = _rank(capsys, {**contest, "warned": contest["fair"]}, "--strict")
    assert code == 0, err  # no warning: --strict passes


def test_rank_api_gives_the_warnings_and_strict_names_the_submission(contest):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = geoeval.rank(contest["ref"], [contest["good"], contest["warned"]],
                              matchers="bgm")
    expected = f"warned: {contest['warned']}: {SKIPPED}"
    assert result.warnings == (expected,)
    assert [str(w.message) for w in caught if w.category is GeoevalWarning] == [expected]
    with pytest.raises(StrictError, match=r"^strict=True: 1 warning\(s\), the first: warned: "):
        geoeval.rank(contest["ref"], [contest["good"], contest["warned"]], matchers="bgm",
                     strict=True)


def test_the_references_warnings_are_given_once(contest):
    """Every submission is scored against the reference read once: its warnings are the
    contest's once, not once per submission."""
    result = geoeval.scoring.contest.rank(contest["warned"], [contest["good"], contest["fair"]],
                                          matchers="bgm")
    assert result.warnings == (f"{contest['warned']}: {SKIPPED}",)
    with pytest.raises(StrictError, match=r"^strict=True: 1 warning\(s\), the first: "):
        geoeval.scoring.contest.rank(contest["warned"], [contest["good"]], matchers="bgm",
                                     strict=True)

