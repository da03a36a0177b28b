"""Corpus: usage errors of every command, through the installed console script.

A usage error (unknown command or option, missing argument, bad choice, a number
that is not a number or outside its range) is one line on stderr naming the
option, exit code 2, never a traceback (issue: typer 0.29 vendors click as
``typer._click``, whose exceptions are not ``click.ClickException``).
"""

from __future__ import annotations

import re

import pytest

from tests.corpus.conftest import assert_error, run_cli

COMMANDS = ["score", "rank", "audit", "boxes voc", "boxes coco", "boxes robin",
            "boxes robin-categories", "boxes neovision2"]


def test_no_arguments_prints_help_exit_2() -> None:
    run = run_cli(script=True)  # the installed console script itself
    assert run.code == 2 and "Traceback" not in run.stderr
    assert "Usage" in run.stdout and "score" in run.stdout
    assert run.stdout.count("Usage:") == 1  # once (it was printed twice)


def test_boxes_alone_prints_its_help_exit_2() -> None:
    run = run_cli("boxes", script=True)
    assert run.code == 2 and "Traceback" not in run.stderr
    assert "coco" in run.stdout and "neovision2" in run.stdout
    assert run.stdout.count("Usage:") == 1


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_flags_bare(command: str) -> None:
    """Flags carry no ``<bool>`` type label in --help (``--quiet``, ``--help`` …)."""
    run = run_cli(*command.split(), "--help")
    assert run.code == 0 and "--help" in run.stdout
    assert "<bool>" not in run.stdout
    # an Examples section (rio style): every example runs this very command (long ones
    # on the sample's paths wrap onto indented lines) and nothing is wider than 80 columns
    block = run.stdout.split("Examples:")[1].split("╭")[0]
    lines = [e for e in block.splitlines() if e.strip()]
    starts = [e for e in lines if e.strip().startswith("geoeval ")]
    assert starts and all(e.strip().startswith(f"geoeval {command} ") for e in starts)
    assert lines[0] in starts and all(len(e.rstrip()) <= 80 for e in lines)


def test_version() -> None:
    from importlib.metadata import version

    run = run_cli("--version", script=True)
    assert run.code == 0 and run.stdout.strip() == f"geoeval {version('geoeval')}"


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_every_command(command: str) -> None:
    run = run_cli(*command.split(), "--help")
    assert run.code == 0 and "Traceback" not in run.stderr and "Usage" in run.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_unknown_option(command: str) -> None:
    assert_error(run_cli(*command.split(), "--no-such-option"), "--no-such-option",
                 f"geoeval {command}")


@pytest.mark.parametrize("command", [c for c in COMMANDS if c not in ("rank", "audit")])
def test_missing_argument(command: str) -> None:
    assert_error(run_cli(*command.split()), "Missing argument")


@pytest.mark.parametrize("typo", ["scor", "rnak", "box", "evaluate"])
def test_unknown_command(typo: str) -> None:
    assert_error(run_cli(typo, "a", "b"), f"No such command '{typo}'")


def test_unknown_box_protocol() -> None:
    assert_error(run_cli("boxes", "pascal", "a", "b"), "No such command 'pascal'")


# (command, option, value): every numeric or choice option, bad values.
BAD_VALUES = [
    ("score", "--iou-threshold", v) for v in ("nan", "inf", "-0.1", "1.5", "abc", "")
] + [
    ("score", "--hoover-threshold", v) for v in ("0.5", "0.3", "1.01", "nan", "-inf")
] + [
    ("score", "--min-overlap", v) for v in ("-1", "2", "nan")
] + [
    ("score", "--resolution", v) for v in ("0", "-1", "nan", "inf", "x")
] + [
    ("score", "--band", v) for v in ("0", "-1", "1.5")
] + [
    ("score", "--matcher", "xx"), ("score", "--matcher", "ALL"),
    ("score", "--gpkg-matcher", "all"), ("score", "--gpkg-matcher", "nope"),
    ("score", "--background", "zero"),
    ("rank", "--hoover-threshold", "0.3"), ("rank", "--iou-threshold", "nan"),
    ("rank", "--max-states", "0"), ("rank", "--samples", "0"), ("rank", "--burn-in", "-1"),
    ("rank", "--seed", "-1"), ("rank", "--max-rounds", "-1"),
    ("rank", "--max-states", "many"),
    ("boxes voc", "--iou-threshold", "nan"), ("boxes voc", "--iou-threshold", "0"),
    ("boxes voc", "--iou-threshold", "1.5"),
    ("boxes robin", "--eps1", "nan"), ("boxes robin", "--eps2", "-0.1"),
    ("boxes robin", "--eps3", "1"), ("boxes robin", "--difficult-alpha", "0"),
    ("boxes robin", "--difficult-alpha", "1.5"),
    ("boxes robin", "--image-size", "640,-1"), ("boxes robin", "--image-size", "640"),
    ("boxes voc", "--image-size", "0,480"), ("boxes voc", "--ref-image-size", "axb"),
    ("boxes voc", "--det-image-size", "640,inf"),
    ("boxes robin-categories", "--eps1", "inf"), ("boxes robin-categories", "--eps3", "7"),
    ("boxes neovision2", "--iou-threshold", "-1"), ("boxes neovision2", "--iou-threshold", "nan"),
    ("boxes neovision2", "--roc-max-fppf", "0"), ("boxes neovision2", "--roc-max-fppf", "-inf"),
]


@pytest.mark.parametrize(("command", "option", "value"), BAD_VALUES,
                         ids=[f"{c}{o}={v}" for c, o, v in BAD_VALUES])
def test_bad_option_value(command: str, option: str, value: str, tmp_path) -> None:
    # the arguments need not exist: a bad option is refused before anything is read
    ref, sub = tmp_path / "r.tif", tmp_path / "s.tif"
    run = run_cli(*command.split(), str(ref), str(sub), option, value)
    assert_error(run, option)
    assert re.search(r"Invalid value", run.stderr)


def test_rank_method_is_checked(tmp_path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("name,p,r\na,1,0\nb,0,1\n")
    assert_error(run_cli("rank", "--table", table, "--method", "fast", inputs=[table]),
                 "method must be auto, exact or mcmc")


def test_rank_exact_beyond_cap_is_a_capacity_error(tmp_path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("name,x,y\ns1,1,2\ns2,2,1\ns3,3,3\ns4,0,4\n")
    run = run_cli("rank", "--table", table, "--method", "exact", "--max-states", "2",
                  inputs=[table])
    assert_error(run, "--max-states", "--method mcmc")


def test_rank_exact_within_cap_counts_by_hand(tmp_path) -> None:
    # s3 dominates s1 and s2 (incomparable); s4 is incomparable to all:
    # linear extensions = 4 positions for s4 x 2 orders of {s1, s2} below s3 = 8
    table = tmp_path / "t.csv"
    table.write_text("name,x,y\ns1,1,2\ns2,2,1\ns3,3,3\ns4,0,4\n")
    out = tmp_path / "rank.json"
    run = run_cli("rank", "--table", table, "--method", "exact", "--json", out, inputs=[table])
    assert run.code == 0, str(run)
    import json

    assert json.loads(out.read_text())["linear_extensions"] == 8


# (given options, what the message names): options `rank --table` cannot use (they score
# the scenes) and options scenes cannot use are refused in one line, before any reading
# (the table need not exist; the scenes neither).
RANK_IGNORED = [
    (("--table", "t.csv", "--bootstrap", "10"), ["--bootstrap", "--table"]),
    (("--table", "t.csv", "-m", "bgm", "--jobs", "2", "--band", "2", "--iou-threshold",
      "0.6", "--confidence", "0.9", "--block-size", "5", "--resolution", "1"),
     ["--matcher", "--jobs", "--band", "--iou-threshold", "--confidence", "--block-size",
      "--resolution"]),
    (("--table", "t.csv", "--size-bins", "coco"), ["--size-bins", "--table"]),
    (("--table", "t.csv", "--layer", "a", "--sub-crs", "EPSG:4326"), ["--layer", "--sub-crs"]),
    (("r.tif", "s.tif", "--tie-break", "precision"), ["--tie-break", "--table only"]),
    (("r.tif", "s.tif", "--indicators", "p", "--lower-is-better", "r"),
     ["--indicators and --lower-is-better apply", "--table only"]),
]


@pytest.mark.parametrize(("args", "named"), RANK_IGNORED,
                         ids=[" ".join(a) for a, _ in RANK_IGNORED])
def test_rank_refuses_options_it_would_ignore(args, named, tmp_path) -> None:
    assert_error(run_cli("rank", *args, cwd=tmp_path), *named, max_lines=1)


def test_rank_table_takes_the_options_of_the_order(tmp_path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("name,p,r\na,1,0\nb,0,1\n")
    out = tmp_path / "rank.json"
    run = run_cli("rank", "--table", table, "--seed", "3", "--tie-break", "p", "--method",
                  "mcmc", "--samples", "50", "--json", out, inputs=[table])
    assert run.code == 0, str(run)


# (command, option, value, the plain reason): a choice or a number typer checks itself
# (with pydantic, since typer 0.29) is said in plain words, never pydantic's
# "Value error, …" or "Input should be a valid integer, …".
TYPER_CHECKED = [
    ("score", "--engine", "dasq", "'dasq' is not one of local, dask"),
    ("score", "--boundary-iou-band", "x", "'x' is not one of distance, raster"),
    ("boxes dota", "--task", "3", "'3' is not one of 1, 2"),
    ("boxes coco", "--iou-type", "box", "'box' is not one of bbox, segm, boundary"),
    ("boxes voc", "--ref-coords", "q", "'q' is not one of abs, rel"),
    ("score", "--jobs", "x", "must be a whole number, got 'x'"),
    ("score", "--band", "1.5", "must be a whole number, got '1.5'"),
    ("rank", "--max-states", "many", "must be a whole number, got 'many'"),
    ("score", "--iou-threshold", "abc", "must be a number, got 'abc'"),
]


@pytest.mark.parametrize(("command", "option", "value", "reason"), TYPER_CHECKED,
                         ids=[f"{c}{o}={v}" for c, o, v, _ in TYPER_CHECKED])
def test_typer_checked_values_are_said_plainly(command, option, value, reason,
                                               tmp_path) -> None:
    run = run_cli(*command.split(), tmp_path / "r", tmp_path / "s", option, value)
    assert_error(run, f"Invalid value for '{option}'", reason, max_lines=1)
    assert "Value error" not in run.stderr and "Input should" not in run.stderr


@pytest.mark.parametrize(("command", "given", "named"), [
    ("score", (), "REFERENCE"), ("score", ("r",), "SUBMISSION"),
    ("boxes coco", (), "REFERENCE"), ("boxes dota", ("r",), "SUBMISSION"),
    ("boxes crowdai", (), "REFERENCE"), ("boxes voc", ("r",), "SUBMISSION"),
    ("boxes neovision2", (), "REFERENCE"), ("boxes robin", ("r",), "SUBMISSIONS..."),
])
def test_a_missing_argument_is_named_as_the_usage_line_names_it(command, given,
                                                                 named) -> None:
    run = run_cli(*command.split(), *given)
    assert_error(run, f"Missing argument '{named}'", max_lines=1)
    usage = run_cli(*command.split(), "--help").stdout.splitlines()[0]
    assert named in usage.split()


def test_a_submission_given_twice_is_named_once_as_given(tmp_path) -> None:
    ref, sub = tmp_path / "ref.tif", tmp_path / "sub.tif"  # refused before any reading
    run = run_cli("rank", ref.resolve(), sub.resolve(), sub.resolve())
    assert_error(run, f"the same submission is given twice: {sub.resolve()}", max_lines=1)
    assert "//" not in run.stderr and "[" not in run.stderr


def test_submissions_differing_only_in_suffix_are_two_entries() -> None:
    from geoeval.ranking.api import submission_names

    assert submission_names(["/d/s5.shp", "/d/s5.gpkg"]) == ["s5.shp", "s5.gpkg"]
    assert submission_names(["/x/s.tif", "/s.tif"]) == ["x/s", "/s"]
