"""One rule per option, checked at the edge; the options every command shares
(-h, -V, --json, --quiet, --strict); help readable at 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from geoeval import validate
from geoeval.cli.groups import Group, add_command, ruled, with_groups
from geoeval.cli.main import command, main
from geoeval.cli.options import REPORTING
from geoeval.cli.printers import Reporting

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
COMMANDS = [["score"], ["rank"], ["audit"], ["boxes", "voc"], ["boxes", "coco"],
            ["boxes", "robin"], ["boxes", "robin-categories"], ["boxes", "neovision2"]]


def leaves():
    for path in COMMANDS:
        cmd = command
        for name in path:
            cmd = cmd.commands[name]
        yield path, cmd


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_shares_json_quiet_and_h(path):
    cmd = next(c for p, c in leaves() if p == path)
    opts = {o for p in cmd.params for o in getattr(p, "opts", ())}
    assert {"--json", "--quiet", "-q"} <= opts, path
    if path != ["audit"]:  # the audit reads nothing that can warn
        assert "--strict" in opts, path
    assert "-h" in cmd.context_settings.get("help_option_names", ()), path


def test_h_and_big_v_everywhere(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["-V"]) == 0
    assert capsys.readouterr().out.startswith("geoeval ")
    for path in (*COMMANDS, ["boxes"], []):
        assert main([*path, "-h"]) == 0, path
        text = capsys.readouterr().out
        assert "Usage:" in text
        assert "…" not in text, path
        assert max(len(line) for line in text.splitlines()) <= 80, path


def test_usage_names_the_arguments(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    main(["score", "-h"])
    assert "score [OPTIONS] REFERENCE SUBMISSION" in capsys.readouterr().out
    main(["rank", "-h"])
    assert "[REFERENCE SUBMISSION...]" in capsys.readouterr().out


def test_second_names_parse_but_stay_out_of_the_help(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    main(["boxes", "voc", "-h"])
    text = capsys.readouterr().out
    assert "--ref-format" in text and "--gt-format" not in text and "--gt-*" in text
    sample = ROOT / "sample_data" / "boxes" / "yolo"
    assert main(["boxes", "voc", str(sample / "gt"), str(sample / "det"), "--gt-format", "yolo",
                 "--det-format", "yolo", "--image-size", "640,480", "--class-names",
                 str(sample / "classes.txt"), "-q"]) == 0


def test_rank_takes_m_as_score_does():
    rank = command.commands["rank"]
    assert "-m" in next(p for p in rank.params if p.name == "matcher").opts


@pytest.mark.parametrize("argv, flag", [
    (["--iou-threshold", "0"], "--iou-threshold"),
    (["--hoover-threshold", "0.5"], "--hoover-threshold"),
    (["--min-overlap", "1.5"], "--min-overlap"),
])
def test_a_bad_value_is_refused_before_any_input_is_read(argv, flag, capsys):
    # the inputs do not exist: the option's rule answers first
    assert main(["score", "missing_ref.tif", "missing_sub.tif", *argv]) == 2
    err = capsys.readouterr().err
    assert flag in err and "missing_ref" not in err


def test_the_cli_and_the_api_apply_one_rule():
    import geoeval.scoring as scoring
    from geoeval.matching import registry

    for name, bad in (("iou_threshold", 0.0), ("hoover_threshold", 0.5), ("min_overlap", -0.1)):
        with pytest.raises(validate.BadValue) as api:
            scoring.check_options(**{name: bad})
        assert registry.parameter(name).range in str(api.value)
    assert registry.parameter("iou_threshold").range == "in (0, 1]" == validate.IOU.text
    assert registry.parameter("hoover_threshold").range == "in (0.5, 1]"


def test_the_documented_ranges_are_the_rules():
    from geoeval.matching import registry

    table = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    for p in registry.parameters():  # every matcher parameter, by its registry rule
        row = next(line for line in table.splitlines() if f"(`{p.keyword}`)" in line)
        assert p.range in row, row


def test_strict_makes_a_warning_an_error(tmp_path, capsys):
    import geopandas as gpd
    from shapely.geometry import box

    ref = tmp_path / "ref.gpkg"
    gpd.GeoDataFrame({"id": [1, 2]}, geometry=[box(0, 0, 10, 10), box(20, 0, 30, 10)],
                     crs="EPSG:32631").to_file(ref)
    sub = tmp_path / "sub.gpkg"  # one feature without a geometry: a warning
    gpd.GeoDataFrame({"id": [1, 2]}, geometry=[box(0, 0, 10, 9), None],
                     crs="EPSG:32631").to_file(sub)
    out = tmp_path / "out.json"
    assert main(["score", str(ref), str(sub), "-m", "bgm", "-q", "--json", str(out)]) == 0
    assert "warning:" in capsys.readouterr().err and out.exists()
    out.unlink()
    assert main(["score", str(ref), str(sub), "-m", "bgm", "-q", "--strict",
                 "--json", str(out)]) == 2
    assert "--strict" in capsys.readouterr().err
    assert not out.exists()  # nothing written


# --- options declared once, shared as one parameter (cli.options.Group) -------------


def test_a_group_stands_for_its_options_in_place():
    import typer
    from typer.testing import CliRunner

    seen = {}

    def build(alpha: int = 1, beta: str = "b") -> tuple[int, str]:
        return alpha * 10, beta.upper()

    pair = Group(build)
    checked = Group(lambda **kw: kw, [ruled(float, "confidence", "A coverage.", 0.5)])

    def cmd(first: int = 0, pair: tuple = pair, iou: dict = checked, last: int = 9,
            out: Reporting = REPORTING) -> None:
        seen.update(first=first, pair=pair, iou=iou, last=last, out=out)

    app = typer.Typer()
    add_command(app, "cmd", cmd, None)
    add_command(app, "other", lambda: None, None)  # two commands: `cmd` is a subcommand
    runner = CliRunner()
    res = runner.invoke(app, ["cmd", "--alpha", "3", "--beta", "x", "--last", "2",
                              "--confidence", "0.25", "--json", "r.json", "-q"])
    assert res.exit_code == 0, res.output
    assert seen == {"first": 0, "pair": (30, "X"), "iou": {"confidence": 0.25}, "last": 2,
                    "out": Reporting(Path("r.json"), True, False)}
    # the options stand where the group parameter stands, in the help too
    text = runner.invoke(app, ["cmd", "--help"], terminal_width=200).output
    order = [text.index(o) for o in ("--first", "--alpha", "--beta", "--confidence",
                                     "--last", "--json", "--quiet", "--strict")]
    assert order == sorted(order)
    # the rule of validate.RULES applies, named by the option
    res = runner.invoke(app, ["cmd", "--confidence", "1.5"])
    assert res.exit_code == 2 and "--confidence" in res.output
    # called from Python, the command takes the options (defaults as on the command line)
    with_groups(cmd)(5, beta="y")
    assert seen == {"first": 5, "pair": (10, "Y"), "iou": {"confidence": 0.5}, "last": 9,
                    "out": Reporting()}


def test_a_group_cannot_declare_an_option_twice():
    def cmd(alpha: int = 0, pair: tuple = Group(lambda alpha=1: alpha)) -> None:
        pass

    with pytest.raises(TypeError, match="declared twice: alpha"):
        with_groups(cmd)


def test_reporting_finish_strict_writes_nothing(tmp_path, capsys):
    from types import SimpleNamespace

    from geoeval.errors import InputError

    result = SimpleNamespace(warnings=("odd box",), to_dict=lambda: {"a": 1})
    shown = []
    with pytest.raises(InputError, match="--strict: 1 warning"):
        Reporting(tmp_path / "r.json", strict=True).finish(result, shown.append)
    assert not (tmp_path / "r.json").exists() and shown == []
    Reporting(tmp_path / "r.json", quiet=True).finish(result, shown.append)
    assert (tmp_path / "r.json").read_text().strip().startswith("{")
    assert shown == [] and "warning: odd box" in capsys.readouterr().err  # no table built
    Reporting().finish(result, lambda r: ["table"])
    assert "table" in capsys.readouterr().out


def test_rank_and_score_share_the_bootstrap_defaults():
    """``rank`` takes score's bootstrap group: the two API signatures agree on it."""
    from geoeval.cli.options import DEFAULTS
    from geoeval.cli.rank import RANK_DEFAULTS

    for name in ("bootstrap", "confidence", "block_size"):
        assert RANK_DEFAULTS[name] == DEFAULTS[name], name


def test_the_terminal_prints_names_as_they_are_and_cuts_long_lines(capsys, monkeypatch):
    """Text is not rich markup (``s[x].gpkg`` was printed ``s.gpkg``, ``t[red]u`` as a
    red ``tu``), in warnings, notes and tables, whole or a block per row; a warning quoting
    megabytes of a file is one line of a readable length."""
    from rich.table import Table

    from geoeval.cli.printers import note, show, warn
    from geoeval.errors import MESSAGE_CHARS

    monkeypatch.setenv("COLUMNS", "100")
    warn(["s[x].gpkg: 1 of 4 feature(s) skipped", "det: class " + "x" * 100_000])
    note(["t[red]u[/red]: read in the client"])
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "warning: s[x].gpkg: 1 of 4 feature(s) skipped"
    assert err[1].startswith("warning: det: class xxx") and "characters" in err[1]
    assert len(err[1]) <= len("warning: ") + MESSAGE_CHARS
    assert err[2] == "note: t[red]u[/red]: read in the client" and len(err) == 3
    table = Table(title="s[x].gpkg  vs  ref.gpkg")
    table.add_column("name")
    table.add_column("f1", justify="right")
    table.add_row("t[red]u", "1.0000")
    show([table])
    from geoeval.cli.printers import terminal
    from geoeval.report.layout import records

    terminal().print(records(table))  # one block per row (a narrow terminal)
    out = capsys.readouterr().out.splitlines()
    assert "s[x].gpkg  vs  ref.gpkg" in out[0] and "│ t[red]u │ 1.0000 │" in out, out
    assert [line.split() for line in out[-2:]] == [["t[red]u"], ["f1", "1.0000"]], out
