"""The HTML contest report (docs/html-report.md): one self-contained page whose
leaderboard carries the JSON report's numbers.

The page is parsed with the standard library's ``html.parser``; the numbers in
the leaderboard's ``data-value`` attributes must equal the JSON report's, and
the displayed text their rounding. The browser test (console errors, figures
drawn, screenshots) is in ``test_html_browser.py`` (slow).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from affine import Affine

import geoeval
from geoeval.encoding import dumps
from geoeval.errors import OutputError

TRANSFORM = Affine(1.0, 0.0, 500000.0, 0.0, -1.0, 4000000.0)
CRS = "EPSG:32631"


def _scene() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A 60 × 60 reference of nine 10 × 10 buildings and four submissions, each with
    its own errors: one misses two buildings, one splits one in two, one merges two
    and adds a false alarm, one shrinks every building (poorer outlines)."""
    ref = np.zeros((60, 60), np.int32)
    k = 1
    for r in (5, 25, 45):
        for c in (5, 25, 45):
            ref[r:r + 10, c:c + 10] = k
            k += 1
    misses = ref.copy()
    misses[np.isin(misses, [2, 9])] = 0
    split = ref.copy()
    split[5:15, 10:15] = 20  # building 1's right half is another object
    merged = ref.copy()
    merged[25:35, 15:25] = 5  # 5 grows left over the gap into 4 ...
    merged[merged == 4] = 5  # ... and takes it in
    merged[52:58, 0:4] = 30  # a false alarm in a corner
    shrunk = np.zeros_like(ref)
    for lab in range(1, 10):
        rows, cols = np.nonzero(ref == lab)
        shrunk[rows.min() + 1:rows.max(), cols.min() + 1:cols.max()] = lab
    return ref, {"misses": misses, "split": split, "merged": merged, "shrunk": shrunk}


class _Page(HTMLParser):
    """The parts of the page the tests read: leaderboard cells, svgs, links."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.board: list[dict[str, tuple[str | None, str]]] = []
        self.in_board = False
        self.cell: tuple[str, str | None] | None = None
        self.text = ""
        self.svgs: list[dict[str, str]] = []
        self.svg_titles = 0
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.headers: list[dict[str, str | None]] = []
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if a.get("id"):
            self.ids.append(str(a["id"]))
        if tag == "table" and a.get("id") == "board":
            self.in_board = True
        if self.in_board and tag == "tr" and "tbody" in self.stack:
            self.board.append({})
        if self.in_board and tag in ("td", "th") and "tbody" in self.stack and a.get("data-key"):
            self.cell = (str(a["data-key"]), a.get("data-value"))
            self.text = ""
        if tag == "th":
            self.headers.append(a)
        if tag == "svg":
            self.svgs.append({k: v or "" for k, v in a.items()})
        if tag == "title" and "svg" in self.stack:
            self.svg_titles += 1
        if tag not in ("meta", "br", "img", "input", "link", "path", "rect", "use", "image",
                       "stop", "circle", "line", "polygon", "polyline", "ellipse"):
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if a.get("id"):
            self.ids.append(str(a["id"]))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass
        if tag == "table":
            self.in_board = False
        if tag in ("td", "th") and self.cell is not None:
            key, value = self.cell
            self.board[-1][key] = (value, " ".join(self.text.split()))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.text += data


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


@pytest.fixture(scope="module")
def contest(tmp_path_factory):
    ref, subs = _scene()
    out = tmp_path_factory.mktemp("html") / "contest.html"
    result = geoeval.rank((ref, TRANSFORM, CRS), [(s, TRANSFORM, CRS) for s in subs.values()],
                          names=list(subs), matchers="hoover", html=out, size_bins=[90],
                          bootstrap=20)
    return result, out, _parse(out.read_text(encoding="utf-8"))


def test_leaderboard_numbers_are_the_json_reports(contest):
    result, _, page = contest
    report = json.loads(dumps(result.to_dict()))  # the JSON report, as written
    assert [row["name"][0] for row in page.board] == report["ranking"]
    for row in page.board:
        name = row["name"][0]
        assert int(row["rank"][0]) == report["final_rank"][name]
        assert row["rank"][1] == str(report["final_rank"][name])
        for col in report["indicators"]:
            value, text = row[col]
            assert float(value) == report["submissions"][name][col]
            assert text.split()[0] == f"{report['submissions'][name][col]:.4f}"
        lo, hi = report["rank_intervals"][name]
        assert row["interval"] == (f"{lo} {hi}", f"{lo}–{hi}")
        # the expected rank only where it decided the order (the CRF stopped short)
        assert ("expected" in row) == (not report["converged"])
        freq = report["rank_frequencies"][name]
        assert float(row["first_share"][0]) == pytest.approx(freq[0] / sum(freq), rel=1e-15)
        assert row["first_share"][1].endswith("%")
        boot = report["bootstrap"]
        assert float(row["undominated"][0]) == boot["undominated"][name]
        lo, hi = boot["rank_interval"][name]
        assert row["boot_interval"] == (f"{lo} {hi}", f"{lo}–{hi}")


def test_best_value_of_each_indicator_is_marked(contest):
    result, _, page = contest
    for col in result.indicators:
        best = max(result.values[n][col] for n in result.names)
        marked = [row["name"][0] for row in page.board if "(best)" in row[col][1]]
        assert marked == [n for n in result.ranking if result.values[n][col] == best]


def test_page_is_self_contained_and_accessible(contest):
    result, path, page = contest
    text = path.read_text(encoding="utf-8")
    # nothing fetched: no external script, style, image or font
    for tag, attrs in page.tags:
        for key in ("src", "href"):
            value = attrs.get(key) or ""
            assert not value.startswith(("http:", "https:", "//")), (tag, value)
        assert tag not in ("link", "iframe", "img"), tag
    assert "@import" not in text and "url(http" not in text
    # one Hasse diagram, one heat map, and per entry a status map, each titled
    assert len(page.svgs) == 2 + len(result.names)
    assert all(s.get("role") == "img" and s.get("aria-labelledby") for s in page.svgs)
    assert page.svg_titles >= len(page.svgs)
    assert len(page.ids) == len(set(page.ids)), "ids must be unique on the page"
    # every header cell says what it heads
    assert all(h.get("scope") in ("col", "row") for h in page.headers)
    # headings in order, the page in English
    assert '<html lang="en">' in text
    for heading in ("Leaderboard", "How the order was found", "Method", "Command and version"):
        assert f">{heading}</h2>" in text
    assert "Özdemir" in text and "Patil" in text and "Bolya" in text
    assert f"geoeval {geoeval.__version__}" in text
    assert "geoeval.rank(" in text  # the Python call that made it


def test_incomparable_pairs_in_words(contest):
    result, _, _ = contest
    from geoeval.report.html import incomparable_pairs

    lines = incomparable_pairs(result)
    better = result.poset.better
    index = {n: i for i, n in enumerate(result.names)}
    pairs = [(a, b) for k, a in enumerate(result.ranking) for b in result.ranking[k + 1:]
             if not better[index[a], index[b]] and not better[index[b], index[a]]]
    assert len(lines) == len(pairs)
    for line, (a, b) in zip(lines, pairs, strict=True):
        assert line.startswith(f"{a} and {b} are ")


def test_incomparable_pairs_hand_worked():
    from geoeval.report.html import incomparable_pairs

    r = geoeval.rank_indicators({"A": {"precision": 0.9, "recall": 0.5},
                                 "B": {"precision": 0.6, "recall": 0.8},
                                 "C": {"precision": 0.5, "recall": 0.4},
                                 "D": {"precision": 0.5, "recall": 0.4}}, tie_break=None)
    lines = incomparable_pairs(r)
    assert lines == [
        "A and B are incomparable: A is better on precision (0.9000 against 0.6000), "
        "B on recall (0.8000 against 0.5000).",
        "C and D are tied: the same precision and recall."]


def test_entry_sections_show_breakdown_strata_and_map(contest):
    result, path, _ = contest
    text = path.read_text(encoding="utf-8")
    for name in result.names:
        assert f'id="entry-{name}"' in text
    assert text.count("What fixing each type of error would gain") == len(result.names)
    assert text.count('class="bar') >= len(result.names)  # the gains drawn as bars
    assert text.count("By object size and by zone") == len(result.names)
    assert "worst area" in text


def test_score_html_one_submission(tmp_path):
    ref, subs = _scene()
    out = tmp_path / "report.html"
    res = geoeval.score((ref, TRANSFORM, CRS), (subs["merged"], TRANSFORM, CRS),
                        matchers=["hoover", "iou"], html=out, html_command="geoeval score a b")
    page = _parse(out.read_text(encoding="utf-8"))
    assert page.board == []  # no leaderboard for one submission
    assert len(page.svgs) == 1
    text = out.read_text(encoding="utf-8")
    assert "geoeval score a b" in text and "Leaderboard" not in text
    assert res.breakdown is not None
    assert f"{res.results['iou'].f1:.4f}" in text


def test_html_output_checked_before_the_work(tmp_path):
    ref, subs = _scene()
    reference = tmp_path / "ref.html"
    reference.write_text("not a raster")
    with pytest.raises(OutputError, match="is an input"):
        geoeval.rank(reference, [tmp_path / "sub.tif"], html=reference)
    with pytest.raises(OutputError, match="must end in .html or .htm"):
        geoeval.score((ref, TRANSFORM, CRS), (subs["split"], TRANSFORM, CRS),
                      html=tmp_path / "report.pdf")
    with pytest.raises(OutputError, match="does not exist"):
        geoeval.score((ref, TRANSFORM, CRS), (subs["split"], TRANSFORM, CRS),
                      html=tmp_path / "no" / "report.html")
    assert not list(Path(tmp_path).glob("*.pdf"))


def test_templates_are_package_data():
    """``pip install .`` (not editable) ships every template: pyproject's
    package-data globs cover each file of the templates folder."""
    import fnmatch

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["geoeval.report.html"]
    folder = root / "geoeval" / "report" / "html"
    files = [p.relative_to(folder).as_posix() for p in (folder / "templates").iterdir()]
    assert files
    assert all(any(fnmatch.fnmatch(f, g) for g in globs) for f in files), files
    deps = " ".join(config["project"]["dependencies"]).lower()
    assert "jinja2" in deps


def test_worst_area_is_the_cell_with_the_errors():
    """Nine buildings on a 60 × 60 scene cut in 6 × 6 cells of 10 pixels: the
    misses of buildings 2 and 9 and nothing else; the worst cell holds one of them
    (two errors tie at one each: the first cell in row order, building 9's, which
    lies at the bottom right: rows 45-55 are the lowest y)."""
    from geoeval.report.html.figures import worst_area

    ref, subs = _scene()
    res = geoeval.score((ref, TRANSFORM, CRS), (subs["misses"], TRANSFORM, CRS),
                        matchers=["iou"])
    (x0, y0, x1, y1), errors, objects = worst_area(res, "iou")
    assert errors == 1 and objects == 1
    assert (x1 - x0, y1 - y0) == (10.0, 10.0)
    centres = {2: (500030.0, 4000000.0 - 10.0), 9: (500050.0, 4000000.0 - 50.0)}
    inside = [k for k, (cx, cy) in centres.items() if x0 <= cx < x1 and y0 <= cy < y1]
    assert inside == [9]
    perfect = geoeval.score((ref, TRANSFORM, CRS), (ref, TRANSFORM, CRS), matchers=["iou"])
    assert worst_area(perfect, "iou") is None


def test_large_scene_map_is_an_image_of_the_statuses():
    """Above OUTLINE_LIMIT objects the whole scene is drawn one pixel per object:
    the pixel under a missed building's centre has the missed fill, a matched
    one's the matched fill, a false alarm's the false-alarm colour."""
    from matplotlib.colors import to_rgb
    from matplotlib.figure import Figure

    from geoeval.report.html.figures import plot_status_image
    from geoeval.report.objects import object_tables
    from geoeval.report.qgis_styles import STATUS_COLOURS, hex_colour

    ref, subs = _scene()
    res = geoeval.score((ref, TRANSFORM, CRS), (subs["merged"], TRANSFORM, CRS),
                        matchers=["iou"])
    ax = Figure().subplots()
    plot_status_image(res, ax, object_tables(res, "iou", instances=False), pixels=60)
    image = ax.get_images()[0].get_array()
    assert image.shape == (60, 60, 3)

    def fill(status: str, alpha: float) -> np.ndarray:
        return 1.0 - alpha * (1.0 - np.asarray(to_rgb(hex_colour(STATUS_COLOURS[status]))))

    # one pixel a metre; row 0 of the image is the lowest y (3,999,940): a bounding box's
    # centre (x, y) falls in column x - 500,000 and row y - 3,999,940
    assert np.allclose(image[50, 10], fill("matched", 0.6))  # building 1 at (500010, 3999990)
    # building 5 at (500030, 3999970) is merged with 4: IoU cannot match a merge, a miss
    assert np.allclose(image[30, 30], fill("missed", 0.6))
    # the false alarm: columns 0-4, rows 52-58 of the raster, centre (500002, 3999945)
    assert np.allclose(image[5, 2], fill("false_alarm", 1.0))
    assert np.allclose(image[0, 59], 1.0)  # empty ground stays white


def test_zoomed_status_map_draws_only_what_it_shows():
    from matplotlib.figure import Figure

    from geoeval.report.status_figure import plot_status_map

    ref, subs = _scene()
    res = geoeval.score((ref, TRANSFORM, CRS), (subs["misses"], TRANSFORM, CRS),
                        matchers=["iou"])
    whole, zoom = Figure().subplots(1, 2)
    plot_status_map(res, whole, "iou")
    # around building 3 (matched: rows 5-15, columns 45-55) and nothing else
    plot_status_map(res, zoom, "iou", bounds=(500043.0, 3999983.0, 500057.0, 3999997.0))
    texts = [t.get_text() for t in zoom.get_legend().get_texts()]
    assert "reference missed (0)" in texts and "reference matched one-to-one (1)" in texts
    texts = [t.get_text() for t in whole.get_legend().get_texts()]
    assert "reference missed (2)" in texts and "reference matched one-to-one (7)" in texts
    assert zoom.get_xlim() == (500043.0 - 0.14, 500057.0 + 0.14)
