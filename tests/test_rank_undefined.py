"""An indicator undefined for one submission only (no objects, nothing matched) stops
a ranking with a message saying what the caller can do: ``geoeval rank`` on scenes
names the submission and why, never ``--indicators`` (which it refuses); a table of
indicators points to ``--indicators`` (``indicators=`` from Python)."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pytest
from shapely.geometry import box

import geoeval
from geoeval.cli.main import main
from geoeval.errors import InputError
from geoeval.ranking.api import rank_table

CRS = "EPSG:32631"
SQUARES = [box(0, 0, 10, 10), box(20, 0, 30, 10)]


@pytest.fixture()
def layers(tmp_path: Path) -> dict[str, Path]:
    """A reference of two squares, a submission finding both, an empty one, and one
    whose only object matches none."""
    paths = {}
    for name, geoms in (("ref", SQUARES), ("good", SQUARES), ("empty", []),
                        ("between", [box(12, 0, 18, 10)])):
        p = tmp_path / f"{name}.gpkg"
        gpd.GeoDataFrame({"id": list(range(len(geoms)))}, geometry=geoms,
                         crs=CRS).to_file(p)
        paths[name] = p
    return paths


def _rank_cli(capsys, *args) -> tuple[int, str]:
    code = main(["rank", *map(str, args), "-q"])
    return code, " ".join(capsys.readouterr().err.split())


def test_rank_names_the_submission_without_objects(layers, capsys):
    code, err = _rank_cli(capsys, layers["ref"], layers["good"], layers["empty"], "-m", "bgm")
    assert code == 2
    assert ("geoeval: error: submission 'empty' has no objects: its precision is "
            "undefined") in err
    assert "--indicators" not in err and "Traceback" not in err
    with pytest.raises(InputError, match="submission 'empty' has no objects") as caught:
        geoeval.rank(layers["ref"], [layers["good"], layers["empty"]], matchers="bgm")
    assert "indicators" not in str(caught.value)


def test_rank_names_the_submission_that_matched_nothing(layers, capsys):
    code, err = _rank_cli(capsys, layers["ref"], layers["good"], layers["between"],
                          "-m", "iou")
    assert code == 2
    assert ("submission 'between' matched no reference object with iou: its accuracy is "
            "undefined") in err
    assert "--indicators" not in err


def test_a_table_points_to_the_indicators_option_as_the_caller_spells_it(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("name,p,r\na,1,0.5\nb,,1\n")
    code, err = _rank_cli(capsys, "--table", table)
    assert code == 2
    assert "line 3: submission 'b', 'p': undefined" in err
    assert "choose the indicators with --indicators or fix the input" in err
    with pytest.raises(InputError, match="choose the indicators with indicators= or fix"):
        rank_table(table)
