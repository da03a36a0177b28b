"""The HTML contest report in a real browser (Debian's ``chromium``, headless).

The bundled sample's nine submissions are ranked by the console script with
``--html`` and ``--json``; the page is opened at desktop and phone widths, with
and without JavaScript, through the DevTools protocol (``tests/chromium.py``):
no console error, every figure drawn and not empty, the leaderboard's numbers
those of the JSON report, sortable columns that sort, and a print to A4.
Slow (it scores the sample nine times): CI runs it with ``pytest -m slow``.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from chromium import Browser, find_chromium

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ("s1_near_perfect.tif", "s2_misses.tif", "s3_false_alarms.gpkg",
               "s4_fragmented.tif", "s5_merged.shp", "s6_eroded.tif", "s7_dilated.gpkg",
               "s8_shifted.tif", "s9_blobby.shp")

#: Each figure as the browser lays it out: size, drawn elements, embedded image bytes.
FIGURES = """JSON.stringify(Array.from(document.querySelectorAll('figure svg')).map(s => {
  const r = s.getBoundingClientRect();
  const images = Array.from(s.querySelectorAll('image'));
  return {title: (s.querySelector('title') || {}).textContent || '',
          width: r.width, height: r.height,
          shapes: s.querySelectorAll('path, text, image, use, rect').length,
          image_bytes: images.map(i => (i.getAttribute('xlink:href') || '').length),
          visible: getComputedStyle(s).display !== 'none'};
}))"""
#: The leaderboard as the reader sees it, in page order.
BOARD = """JSON.stringify(Array.from(document.querySelectorAll('#board tbody tr')).map(tr =>
  Object.fromEntries(Array.from(tr.querySelectorAll('[data-key]')).map(c =>
    [c.dataset.key, [c.dataset.value, c.textContent.trim()]]))))"""


@pytest.fixture(scope="module")
def contest(tmp_path_factory):
    if find_chromium() is None:
        pytest.skip("no chromium on PATH (CI installs Debian's chromium)")
    exe = shutil.which("geoeval")
    assert exe, "the geoeval console script is not installed"
    out = tmp_path_factory.mktemp("browser")
    sample = ROOT / "sample_data"
    run = subprocess.run(
        [exe, "rank", str(sample / "reference.tif"),
         *[str(sample / "submissions" / s) for s in SUBMISSIONS],
         "--matcher", "bgm", "--bootstrap", "50", "--size-bins", "coco",
         "--zones", str(sample / "zones.gpkg"), "--zone-field", "NAME",
         "--html", str(out / "contest.html"), "--json", str(out / "contest.json"), "--quiet"],
        capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    report = json.loads((out / "contest.json").read_text(encoding="utf-8"))
    with Browser() as browser:
        yield browser, (out / "contest.html").as_uri(), report, out


@pytest.mark.parametrize("width,mobile", [(1280, False), (390, True)], ids=["desktop", "phone"])
def test_page_renders_without_errors_and_every_figure_is_drawn(contest, width, mobile):
    browser, url, report, out = contest
    page = browser.open(url, width=width, height=900, mobile=mobile)
    assert page.console == []
    figures = json.loads(page.evaluate(FIGURES))
    # the Hasse diagram, the rank frequencies, and per entry a status map
    assert len(figures) == 2 + len(SUBMISSIONS)
    for fig in figures:
        assert fig["visible"] and fig["title"], fig
        assert fig["width"] > 150 and fig["height"] > 100, fig
        assert fig["shapes"] > 20, fig
    maps = [f for f in figures if f["title"].startswith("Status map")]
    assert len(maps) == len(SUBMISSIONS)
    # each map holds its rasterised layers: two images (whole scene, zoom), not empty
    assert all(len(f["image_bytes"]) == 2 and min(f["image_bytes"]) > 1000 for f in maps)
    # nothing is wider than the screen except inside a scrolling region
    overflow = page.evaluate(
        "Array.from(document.querySelectorAll('main > section > *:not(.scroll)'))"
        ".filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).length")
    assert overflow == 0
    page.screenshot(out / f"contest-{width}.png", height=2400)


def test_leaderboard_numbers_equal_the_json_report(contest):
    browser, url, report, _ = contest
    page = browser.open(url)
    rows = json.loads(page.evaluate(BOARD))
    assert [r["name"][0] for r in rows] == report["ranking"]
    boot = report["bootstrap"]
    for r in rows:
        name = r["name"][0]
        assert r["rank"] == [str(report["final_rank"][name])] * 2
        for col in report["indicators"]:
            value = report["submissions"][name][col]
            assert float(r[col][0]) == value
            assert r[col][1].split()[0] == f"{value:.4f}"
        lo, hi = report["rank_intervals"][name]
        assert r["interval"] == [f"{lo} {hi}", f"{lo}–{hi}"]
        assert "expected" not in r  # converged: the expected rank decided nothing
        freq = report["rank_frequencies"][name]
        assert float(r["first_share"][0]) == pytest.approx(freq[0] / sum(freq), rel=1e-15)
        assert float(r["undominated"][0]) == boot["undominated"][name]
        assert r["boot_interval"][0] == " ".join(map(str, boot["rank_interval"][name]))


#: The text of the questions and answers in brief that the first screen shows whole.
FIRST_SCREEN = """JSON.stringify(Array.from(document.querySelectorAll('#brief dt, #brief dd'))
  .filter(e => e.getBoundingClientRect().bottom <= window.innerHeight)
  .map(e => e.textContent))"""


def test_the_first_screen_answers_the_three_questions(contest):
    """A reader who never heard of Hasse diagrams reads the first screen (1280 × 900)
    and learns why the first is above the second, how sure the order is and who
    could have won, with the numbers of the JSON report."""
    from test_ranking_answers import assert_answers

    browser, url, report, _ = contest
    page = browser.open(url, width=1280, height=900)
    seen = json.loads(page.evaluate(FIRST_SCREEN))
    assert len(seen) == 6, seen  # three questions, three answers, all in view
    assert_answers(" ".join(seen), report)
    # the leaderboard's headers break only where the page says (<br>), never inside
    # a name: each is as many lines tall as it has parts
    heads = json.loads(page.evaluate("""JSON.stringify(Array.from(
      document.querySelectorAll('#board thead th')).map(th => {
        const walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
        const tops = new Set();
        for (let t = walk.nextNode(); t; t = walk.nextNode()) {
          if (!t.textContent.trim()) { continue; }
          const r = document.createRange(); r.selectNodeContents(t);
          Array.from(r.getClientRects()).forEach(x => tops.add(Math.round(x.top)));
        }
        return [th.innerText, tops.size, th.querySelectorAll('br').length + 1];
      }))"""))
    assert heads and all(lines == parts for _, lines, parts in heads), heads


def test_works_without_javascript_and_sorts_with_it(contest):
    browser, url, report, _ = contest
    static = browser.open(url, scripts=False)
    assert static.console == []
    assert len(json.loads(static.evaluate(FIGURES))) == 2 + len(SUBMISSIONS)
    # with scripts, a header is a button; sorting by recall orders the rows by it
    page = browser.open(url)
    page.evaluate("Array.from(document.querySelectorAll('#board thead th button'))"
                  ".find(b => b.textContent.trim() === 'recall').click()")
    rows = json.loads(page.evaluate(BOARD))
    recalls = [float(r["recall"][0]) for r in rows]
    assert recalls == sorted(recalls)
    assert page.console == []


def test_prints_on_a4(contest):
    browser, url, _, out = contest
    page = browser.open(url)
    pdf = browser.send("Page.printToPDF", {"preferCSSPageSize": True, "printBackground": False},
                       session=page.session)
    data = base64.b64decode(pdf["data"])
    assert data.startswith(b"%PDF")
    # A4 (595 × 842 pt) from the page's own @page rule; each entry starts a page
    sizes = set(re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data))
    assert [(round(float(w)), round(float(h))) for w, h in sizes] == [(595, 842)]
    assert len(re.findall(rb"/Type\s*/Page(?!s)", data)) > len(SUBMISSIONS)
    (out / "contest.pdf").write_bytes(data)
    assert page.console == []
