"""Every `$ geoeval …` command of the README and docs/ that uses the bundled sample
runs as written (outputs land in a scratch folder, next to a link to sample_data/).
The box sample is regenerated exactly.

The commands run as the console script runs them, in this process (the error corpus's
harness, :func:`tests.corpus.conftest.run_cli`): a new Python per command was most of
their CPU (about 0.5 s of imports each, to a few hundredths for a box command's work).
CI runs them once more through the installed script (``GEOEVAL_TEST_CLI=script``)."""

from __future__ import annotations

import filecmp
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus.conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]


def documented_commands() -> list[tuple[str, str, bool]]:
    """Every ``$ geoeval …`` line of the README and docs/: ``(where, command,
    marked)``; it runs when it uses the bundled sample, else it must sit in a
    block whose first line is a ``# template`` comment (``marked``)."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = doc.read_text(encoding="utf-8").splitlines()
        k, block_first = 0, ""
        while k < len(lines):
            line = lines[k].strip()
            k += 1
            if line.startswith("```"):
                block_first = lines[k].strip() if k < len(lines) else ""
                continue
            if not line.startswith("$ geoeval "):
                continue
            while line.endswith("\\") and k < len(lines):  # continuation lines
                line = line[:-1].rstrip() + " " + lines[k].strip()
                k += 1
            command = re.sub(r"\s+#.*$", "", line[2:])
            marked = block_first.lower().startswith("# template")
            found.append((f"{doc.name}: {command}", command, marked))
    return found + help_examples()


def help_examples() -> list[tuple[str, str, bool]]:
    """The *Examples* of every command's ``--help-all`` at 80 columns, as a shell reads
    them pasted (`` \\`` continuation lines joined): those on the sample run here,
    the others (templates) are parsed by tests/test_help.py."""
    from geoeval.cli.help import help_text, joined, leaves
    from geoeval.cli.main import command

    found = []
    for path, _ in leaves(command):
        text = help_text(command, path, full=True)
        section = text.split("\nExamples:\n", 1)[1] if "\nExamples:\n" in text else ""
        for example in joined(section.splitlines()):
            found.append((f"{' '.join(path)} --help-all: {example}", example,
                          "sample_data/" not in example))
    return found


ALL = documented_commands()
COMMANDS = [(i, c) for i, c, _ in ALL if "sample_data/" in c]


def slow(command: str) -> bool:
    """Commands that take seconds even on an idle machine, run by CI's slow pass:
    MOM on the 3,000-building sample (its Mallows score is the long step: every
    ``score`` without a matcher choice or with ``mom``, and ``rank`` without one),
    a map, GeoPackage or HTML page of the whole sample, or a bootstrap."""
    words = shlex.split(command)
    chosen = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-m", "--matcher")]
    mom = words[1] in ("score", "rank") and (not chosen or "mom" in chosen or "all" in chosen)
    heavy = {"--figure", "--gpkg", "--breakdown-figure"} & set(words) and words[1] in (
        "score", "rank")
    page = {"--html", "--bootstrap"} & set(words) and words[1] in ("score", "rank")
    return bool(mom or heavy or page)


def test_every_documented_command_is_run_or_marked_as_a_template():
    unmarked = [i for i, c, marked in ALL if not marked and "sample_data/" not in c]
    assert not unmarked, ("put these on the bundled sample, or start their block with a "
                          f"'# template' comment: {unmarked}")


def test_the_docs_use_the_sample():
    from geoeval.challenges import registry

    names = " ".join(c for _, c in COMMANDS)
    for command in ("score", "rank", *(f"boxes {name}" for name in registry.BUILTIN)):
        assert f"geoeval {command} " in names, command


# Slow, every one: CI runs them in its slow step and again through the installed
# console script (.ci/run); the README's command stays within its two minutes.
@pytest.mark.slow
@pytest.mark.parametrize("command", [
    pytest.param(c, marks=pytest.mark.slow) if slow(c) else c for _, c in COMMANDS],
    ids=[i for i, _ in COMMANDS])
def test_documented_command_runs(command, tmp_path):
    """As the console script runs it, piped, at 80 columns: exit 0, no traceback, no
    number cut (no ``…``, no line wider than 80), no trailing space."""
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    args = shlex.split(command)
    run = run_cli(*args[1:], cwd=tmp_path, columns=80, timeout=600)
    assert run.code == 0, f"{command}\n{run.stderr}"
    assert "Traceback" not in run.stderr
    assert "…" not in run.stdout, run.stdout
    assert max((len(line) for line in run.stdout.splitlines()), default=0) <= 80
    assert [line for line in run.stdout.splitlines() if line != line.rstrip()] == []


def test_box_sample_is_regenerated_exactly(tmp_path):
    out = tmp_path / "boxes"
    subprocess.run([sys.executable, str(ROOT / "sample_data" / "make_boxes.py"), "--out",
                    str(out)], check=True, capture_output=True)
    committed = ROOT / "sample_data" / "boxes"
    files = sorted(p.relative_to(committed) for p in committed.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert all(filecmp.cmp(committed / f, out / f, shallow=False) for f in files)
