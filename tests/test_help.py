"""Help that fits a screen or two at 80 columns, and examples that paste
(issue 35, item 3; geoeval.cli.help).

Bounds, through a pipe at 80 columns: ``-h`` of every command and group at most
:data:`H_LINES` lines (two 30-line screens), ``--help-all`` at most
:data:`ALL_LINES`; no line wider than 80, none ending in a space. Every option
can be found from ``-h`` (in full, or by name under *More options*), and
``--help-all`` shows each one in full. Every example, pasted as printed (its
`` \\`` continuation lines joined by the shell), is the command of the docs: the
ones on the bundled sample run in tests/test_docs_commands.py, the others are
parsed here by click as the shell would hand them over.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

import pytest

from geoeval.cli import help as cli_help
from geoeval.cli.main import command, main

H_LINES = 60
ALL_LINES = 170

PATHS = [path for path, _ in cli_help.leaves(command)]
COMMANDS = [(path, cmd) for path, cmd in cli_help.leaves(command)
            if not hasattr(cmd, "commands")]


def printed(path, flag, capsys, monkeypatch, most: int | None = None) -> str:
    """``geoeval PATH FLAG`` at 80 columns, not a tty; at most ``most`` lines, none
    wider than 80 or ending in a space."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main([*path, flag]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    if most is not None:
        assert len(lines) <= most, f"{len(lines)} lines"
    assert max(len(line) for line in lines) <= 80
    assert [line for line in lines if line != line.rstrip()] == []
    assert cli_help._HYPHEN not in text
    return text


def option_names(cmd) -> list[str]:
    """Each option's first long name (``-h``/``--help-all`` aside)."""
    return [next(o for o in p.opts if o.startswith("--")) for p in cmd.params
            if getattr(p, "param_type_name", "") == "option" and not p.hidden]


def mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "geoeval")
def test_h_fits_two_screens_and_names_every_option(path, capsys, monkeypatch):
    text = printed(path, "-h", capsys, monkeypatch, most=H_LINES)
    cmd = dict(cli_help.leaves(command))[path]
    for name in option_names(cmd):
        assert mentions(text, name), name
    if "More options" in text or "more: geoeval" in text:
        assert mentions(text, "--help-all")


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_help_all_shows_every_option_in_full(path, capsys, monkeypatch):
    text = printed(path, "--help-all", capsys, monkeypatch, most=ALL_LINES)
    lines = text.splitlines()
    assert "More options" not in text and "more: geoeval" not in text
    cmd = dict(cli_help.leaves(command))[path]
    starts = {line.split()[0].rstrip(",") for line in lines if line.startswith("  -")}
    starts |= {w.rstrip(",") for line in lines if line.startswith("  -")
               for w in line.split()[:2]}
    for name in option_names(cmd):
        assert name in starts, name  # an option of its own line, with its help
    # the help text is the printed one (the usage aside: it names pytest here)
    printed_rest = text.rstrip("\n").split("\n\n", 1)[1]
    assert printed_rest == cli_help.help_text(command, path, full=True).split("\n\n", 1)[1]


def test_groups_give_each_command_its_whole_description(capsys, monkeypatch):
    """click cuts a command's description at the column's end (``...``); not here."""
    text = printed(["boxes"], "-h", capsys, monkeypatch)
    assert "..." not in text.split("Commands:")[1]
    assert "as the official evaluators" in " ".join(text.split())


def test_a_hyphenated_word_is_never_broken(capsys, monkeypatch):
    # click wrapped 'docs/html-report.md' as 'docs/html-' / 'report.md'
    text = printed(["score"], "--help-all", capsys, monkeypatch)
    assert "docs/html-report.md" in text and not re.search(r"\w-\n", text)


def examples(text: str) -> list[str]:
    """The commands of the *Examples* section as a shell reads them pasted."""
    section = text.split("\nExamples:\n", 1)[1] if "\nExamples:\n" in text else ""
    return list(cli_help.joined(section.splitlines()))


def parse(example: str):
    """``example`` parsed by click as the shell hands it over (options checked
    by their callbacks, nothing run)."""
    words = shlex.split(example)
    assert words[0] == "geoeval"
    cmd, k = command, 1
    while hasattr(cmd, "commands"):
        cmd, k = cmd.commands[words[k]], k + 1
    return cmd.make_context(" ".join(words[:k]), words[k:])


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_every_example_pastes_as_the_documented_command(path, capsys, monkeypatch):
    full = printed(path, "--help-all", capsys, monkeypatch)
    short = printed(path, "-h", capsys, monkeypatch)
    cmd = dict(cli_help.leaves(command))[path]
    documented = [" ".join(c.split("#")[0].split()) for c in cli_help._examples(cmd)]
    assert examples(full) == documented
    assert examples(short) == documented[:cli_help.EXAMPLES]
    lines = full.split("\nExamples:\n", 1)[1].splitlines() if documented else []
    for line in lines:  # a line ends in ' \' when the command goes on
        assert len(line) <= 80 and (line.startswith("  geoeval ") or line.startswith("      ")
                                    or line.startswith("  ("))
    for example in documented:
        ctx = parse(example)
        assert ctx.command is not None


def test_examples_are_laid_out_between_words():
    command_line = ("geoeval score sample_data/reference.tif "
                    "sample_data/submissions/s4_fragmented.tif -m hoover --breakdown "
                    "--breakdown-figure err.png")
    for width in (50, 60, 78, 200):  # 46: the longest word and its indent
        lines = cli_help.example_lines(command_line, width)
        assert all(len(line) <= width for line in lines), width
        assert list(cli_help.joined(lines)) == [command_line]
        assert all(line.endswith(" \\") for line in lines[:-1])
        # an option stays with its value where it fits
        assert any("--breakdown-figure err.png" in line for line in lines)
        assert any("-m hoover" in line for line in lines)
    # quotes as written: a quoted pattern is one word
    assert cli_help.example_lines("geoeval score 'tiles/*.gpkg' d.gpkg", 20) == [
        "geoeval score \\", "    'tiles/*.gpkg' \\", "    d.gpkg"]


def test_the_console_script_prints_the_same_through_a_pipe():
    exe = shutil.which("geoeval")
    assert exe, "the geoeval console script is not installed"
    run = subprocess.run([exe, "score", "-h"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "80"}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip("\n") == cli_help.help_text(command, ["score"])
    assert len(run.stdout.splitlines()) <= H_LINES


@pytest.mark.parametrize("path", [p for p, c in cli_help.leaves(command) if hasattr(c, "commands")],
                         ids=lambda p: " ".join(p) or "geoeval")
def test_groups_take_help_all_too(path, capsys, monkeypatch):
    """The README: every command takes ``--help-all`` (``geoeval`` and ``geoeval boxes``
    refused it); a group's shows all its examples."""
    full = printed(path, "--help-all", capsys, monkeypatch, most=ALL_LINES)
    short = printed(path, "-h", capsys, monkeypatch, most=H_LINES)
    assert mentions(short, "--help-all") and "Commands:" in full
    assert examples(full)[:cli_help.EXAMPLES] == examples(short)


def test_boxes_help_has_an_example_of_every_builtin_protocol(capsys, monkeypatch):
    from geoeval.challenges import registry

    full = printed(["boxes"], "--help-all", capsys, monkeypatch)
    shown = {shlex.split(e)[2] for e in examples(full)}
    assert set(registry.BUILTIN) <= shown
    for example in examples(full):
        assert parse(example).command is not None and "sample_data/" in example
