"""Every `$ geoeval …` command of the README and docs/ that uses the bundled sample
runs as written, through the installed console script (outputs land in a scratch
folder, next to a link to sample_data/). The box sample is regenerated exactly."""

from __future__ import annotations

import filecmp
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def documented_commands() -> list[tuple[str, str]]:
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = doc.read_text(encoding="utf-8").splitlines()
        k = 0
        while k < len(lines):
            line = lines[k].strip()
            k += 1
            if not line.startswith("$ geoeval "):
                continue
            while line.endswith("\\") and k < len(lines):  # continuation lines
                line = line[:-1].rstrip() + " " + lines[k].strip()
                k += 1
            command = re.sub(r"\s+#.*$", "", line[2:])
            if "sample_data/" in command:
                found.append((f"{doc.name}: {command}", command))
    return found


COMMANDS = documented_commands()


def test_the_docs_use_the_sample():
    names = " ".join(c for _, c in COMMANDS)
    for command in ("score", "boxes voc", "boxes coco", "boxes robin", "boxes robin-categories",
                    "boxes neovision2"):
        assert f"geoeval {command} " in names, command


@pytest.mark.parametrize("command", [c for _, c in COMMANDS], ids=[i for i, _ in COMMANDS])
def test_documented_command_runs(command, tmp_path):
    exe = shutil.which("geoeval")
    assert exe, "the geoeval console script is not installed"
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    args = shlex.split(command)
    run = subprocess.run([exe, *args[1:]], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, f"{command}\n{run.stderr}"
    assert "Traceback" not in run.stderr


def test_box_sample_is_regenerated_exactly(tmp_path):
    out = tmp_path / "boxes"
    subprocess.run([sys.executable, str(ROOT / "sample_data" / "make_boxes.py"), "--out",
                    str(out)], check=True, capture_output=True)
    committed = ROOT / "sample_data" / "boxes"
    files = sorted(p.relative_to(committed) for p in committed.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert all(filecmp.cmp(committed / f, out / f, shallow=False) for f in files)
