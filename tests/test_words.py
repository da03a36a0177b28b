"""Small things a reader notices in the terminal: words agree with their numbers,
the tables a score prints say nothing they cannot back (no column of dashes, no hint
to ask for what is already shown), and piped output has no trailing spaces."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest
from affine import Affine
from rich.console import Console

import geoeval
from geoeval.report.explain import explain

ROOT = Path(__file__).resolve().parents[1]


def _result(found: dict[str, int], split: int = 0, merge: int = 0) -> NS:
    """A score of 10 references and 12 detections, each matcher finding ``found[m]``
    (the summaries :func:`explain` reads: counts and instances by kind)."""
    def m(name: str, n: int) -> NS:
        many = name in ("hoover", "mom")
        kinds = {"one-to-one": n - (split + merge if many else 0),
                 "one-to-many": split if many else 0, "many-to-one": merge if many else 0}
        return NS(matched_reference=n, false_alarms=2, instances_by_kind=kinds)
    return NS(reference=NS(objects=10), submission=NS(objects=12), parameters={},
              results={name: m(name, n) for name, n in found.items()})


def test_one_merge_one_split_one_fewer_agree_with_their_number():
    text = " ".join(explain(_result({"bgm": 8, "iou": 7, "mom": 8}, split=1, merge=1)))
    assert "1 reference object was detected in several pieces: mom credits the pieces; " \
           "bgm and iou keep one piece and count the others as false alarms." in text
    assert "1 detection covers several reference objects: mom credits them" in text
    assert "it finds 1 fewer reference object than bgm" in text
    text = " ".join(explain(_result({"bgm": 8, "iou": 6, "hoover": 6, "mom": 8},
                                    split=2, merge=3)))
    assert "2 reference objects were detected in several pieces" in text
    assert "bgm and iou keep one piece each" in text
    assert "3 detections each cover several reference objects" in text
    assert "it finds 2 fewer reference objects than bgm" in text
    assert "it finds 2 fewer reference objects than mom" in text


def test_score_html_prints_no_column_of_dashes_and_no_hint_for_what_it_showed():
    """--html computes the error breakdown for the page, so the terminal shows it: BGM's
    accuracy has none (an area ratio), so its columns are left out with the reason,
    and the hints do not suggest --breakdown, which would print the same again."""
    from geoeval.cli.score import _print

    transform = Affine(1.0, 0.0, 500000.0, 0.0, -1.0, 4000000.0)
    ref = np.zeros((30, 30), np.int32)
    ref[2:12, 2:12], ref[15:25, 15:25] = 1, 2
    sub = ref.copy()
    sub[15:25, 15:25] = 0
    res = geoeval.score((ref, transform, "EPSG:32631"), (sub, transform, "EPSG:32631"),
                        matchers=["bgm"], breakdown=True)
    out = io.StringIO()
    _print(res, figure=False, breakdown=False, console=Console(file=out, width=80))
    text = out.getvalue()
    table = text[text.index("bgm: what fixing each error type would gain"):]
    assert "acc. gain" not in table and "│             – │" not in table
    assert "has no breakdown" in " ".join(table.split())
    assert "--breakdown" not in text  # it is on the screen already
    assert "--figure map.png" in text


@pytest.mark.skipif(shutil.which("geoeval") is None, reason="console script not installed")
def test_piped_quickstart_has_no_trailing_spaces(tmp_path):
    """The README's Quickstart command (one matcher, to keep it quick) through a pipe:
    no line ends in a space (the centred title and the wrapped sentences used to)."""
    run = subprocess.run(
        [shutil.which("geoeval"), "score", str(ROOT / "sample_data" / "reference.tif"),
         str(ROOT / "sample_data" / "submissions" / "s4_fragmented.tif"), "-m", "bgm"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "80"})
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) > 10
    assert [line for line in lines if line != line.rstrip()] == []
