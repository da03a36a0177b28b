"""Terminal tables laid out for the width there is: no number is ever cut
(geoeval.report.layout), at 60, 80 and 120 columns and through a pipe."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from geoeval.report.layout import fit, natural_width, show

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def render(renderables, width: int) -> str:
    out = io.StringIO()
    show(Console(file=out, width=width, color_system=None), renderables)
    return out.getvalue()


def wide_table(n_values: int = 12) -> tuple[Table, list[str]]:
    table = Table(title="a wide table", caption="a caption under it")
    table.add_column("class", style="bold")
    table.add_column("matcher")
    for k in range(n_values):
        table.add_column(f"measure {k}", justify="right")
    numbers = []
    for r in range(5):
        cells = [f"{(r + 1) * 0.123456 + k:.4f}" for k in range(n_values)]
        numbers += cells
        table.add_row(f"class {r}", "bgm", *cells)
    return table, numbers


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_no_number_is_cut_at_any_width(width):
    table, numbers = wide_table()
    text = render([table], width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    shown = NUMBER.findall(text)
    for number in numbers:  # every value printed whole, once
        assert shown.count(number) == 1, number


def test_a_table_that_fits_is_left_whole():
    table, _ = wide_table(2)
    assert natural_width(table) <= 80
    assert fit(table, 80) == [table]


def test_bands_repeat_the_row_labels_and_keep_the_caption():
    table, _ = wide_table()
    text = render([table], 80)
    assert text.count("class 3") >= 2  # the label column in every band
    assert text.count("a wide table") == 1 and text.count("a caption under it") == 1


def test_a_narrow_console_gets_one_block_per_row():
    table, numbers = wide_table()
    table.columns[0]._cells = [f"a very long class name number {r}" for r in range(5)]
    text = render([table], 30)
    assert "…" not in text
    assert all(number in text for number in numbers)


@pytest.fixture(scope="module")
def scored():
    import geoeval

    return geoeval.score(SAMPLE / "reference.gpkg", SAMPLE / "submissions/s3_false_alarms.gpkg",
                         matchers=["bgm", "hoover", "iou"], class_field="class",
                         size_bins="coco")


@pytest.mark.parametrize("width", [60, 80, 120])
def test_score_output_fits(scored, width):
    from geoeval.cli.score import _print

    out = io.StringIO()
    _print(scored, figure=False, breakdown=False,
           console=Console(file=out, width=width, color_system=None))
    text = out.getvalue()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    summary = scored.results["bgm"].summary()
    assert f"{summary['precision']:.4f}" in text
    # the classes once: in the per-class table, not again among the strata
    assert "class building" not in text and text.count("building") >= 2
    assert "Try next:" in text and "(co-occurrence)" not in text and "(rtree)" not in text


@pytest.mark.slow  # CPU budget of the README's command; CI runs it
def test_console_script_piped_at_80_columns_cuts_no_number(tmp_path):
    exe = shutil.which("geoeval")
    assert exe
    run = subprocess.run([exe, "score", str(SAMPLE / "reference.gpkg"),
                          str(SAMPLE / "submissions/s3_false_alarms.gpkg"), "-m", "bgm",
                          "-m", "iou", "--class-field", "class"],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "80"})
    assert run.returncode == 0, run.stderr
    assert "…" not in run.stdout
    assert max(len(line) for line in run.stdout.splitlines()) <= 80
    assert "0.8249" in run.stdout  # bgm's precision, whole


def test_a_caption_wider_than_its_table_is_left_aligned_text_at_the_console_width():
    table = Table(title="narrow", caption="a long footnote " * 12)
    table.add_column("k")
    table.add_column("v", justify="right")
    table.add_row("a", "1.0000")
    text = render([table], 80)
    lines = text.splitlines()
    note = [line for line in lines if "footnote" in line]
    assert len(note) == 3  # 192 characters wrapped at 80 columns, not at the table's 12
    assert all(line.startswith("a long footnote") for line in note)  # not centred
    assert max(len(line) for line in lines) <= 80


def test_a_title_wider_than_its_table_stays_on_one_line():
    title = "s4_fragmented_with_a_long_name.tif  vs  reference.tif"
    table = Table(title=title)
    table.add_column("")
    table.add_column("bgm", justify="right")
    table.add_row("precision", "0.6695")
    text = render([table], 80)
    assert text.splitlines()[0] == title
    table = Table(title="short")  # a title that fits is centred over the table, as before
    table.add_column("a column")
    table.add_row("x")
    assert render([table], 80).splitlines()[0].strip() == "short"


def test_no_line_ends_in_spaces():
    table, _ = wide_table(2)
    table.title = "t"  # centred: rich pads it on both sides
    from rich.text import Text

    text = render([table, Text("a sentence long enough to wrap " * 6)], 60)
    assert text.strip() and not [line for line in text.splitlines() if line != line.rstrip()]
