"""Progress: the Mallows stage reports instance counts with the time left; the CLI
prints plain lines on a non-terminal (after a delay, throttled) and nothing with -q."""

from __future__ import annotations

from shapely import box

from geoeval.cli.progress import Progress
from geoeval.objects import ObjectSet
from geoeval.scoring import score_objects


def test_mallows_reports_counts_up_to_the_total(monkeypatch):
    from geoeval import progress

    ticks = iter(range(10**6))  # a clock a second ahead at each look: a time left to show
    monkeypatch.setattr(progress.time, "monotonic", lambda: float(next(ticks)))
    ref = ObjectSet.from_geometries([box(10 * k, 0, 10 * k + 6, 6) for k in range(12)])
    sub = ObjectSet.from_geometries([box(10 * k + 1, 0, 10 * k + 7, 6) for k in range(12)])
    steps: list[str] = []
    score_objects(ref, sub, matchers=["mom"], resolution=0.5, n_jobs=1, progress=steps.append)
    counts = [s for s in steps if "instances" in s]
    assert counts[-1].startswith("Mallows score (mom): 12/12 instances")
    assert any("s left" in s for s in counts[:-1])
    # no guess before WARM_UP items are done: the first ones carry start-up costs
    early = [s for s in counts
             if int(s.split(": ")[1].split("/")[0].replace(",", "")) <= progress.WARM_UP]
    assert early and not any("s left" in s for s in early)
    assert steps[0] == "overlap" and "matching (mom)" in steps


def test_time_left_from_measured_throughput():
    """The estimate is the rate measured after the warm-up: a slow first item
    (start-up) does not inflate it."""
    import time

    from geoeval.scoring import scene

    texts: list[str] = []
    report = scene._counter(texts.append, "work", "items")
    clock = [0.0]
    real = time.monotonic
    try:
        time.monotonic = lambda: clock[0]  # type: ignore[assignment]
        for done, t in ((1, 5.0), (2, 5.1), (3, 5.2), (13, 6.2), (23, 7.2)):
            clock[0] = t
            report(done, 103, done / 103)
    finally:
        time.monotonic = real  # type: ignore[assignment]
    assert not any("left" in t for t in texts[:3])  # the warm-up: no guess
    assert texts[3] == "work: 13/103 items, about 9 s left"
    # 20 items in 2 s after the warm-up: 80 left take 8 s (from the start: 80 x 7.2/23 = 25 s)
    assert texts[-1] == "work: 23/103 items, about 8 s left"


def test_a_long_step_prints_a_line_at_least_every_heartbeat(capsys):
    import time

    with Progress(quiet=False, delay=0.2, every=3600.0, heartbeat=0.4) as progress:
        progress("scoring: s1 (1/9)")  # before the delay: printed once the delay is over
        time.sleep(1.3)
    err = capsys.readouterr().err.splitlines()
    # the step reported before the delay (it replaced "reading"), then the heartbeats
    assert err[0] == "geoeval: scoring: s1 (1/9)"
    assert len(err) >= 2 and all("scoring: s1 (1/9) (still running" in e for e in err[1:])


def test_plain_lines_on_a_non_terminal(capsys):
    with Progress(quiet=False, delay=0.0, every=3600.0) as progress:
        progress("overlap")
        progress("Mallows score (mom): 1/9 instances")
        progress("Mallows score (mom): 2/9 instances")  # same step within `every`: dropped
        progress("ranking")
    err = capsys.readouterr().err.splitlines()
    assert err == ["geoeval: reading", "geoeval: overlap",
                   "geoeval: Mallows score (mom): 1/9 instances", "geoeval: ranking"]
    with Progress(quiet=True, delay=0.0) as progress:
        progress("overlap")
    with Progress(quiet=False, delay=3600.0) as progress:  # a quick run prints nothing
        progress("overlap")
    assert capsys.readouterr().err == ""


def test_overlap_reports_its_parts(monkeypatch):
    """The overlap stage reports the parts of its spatial queries and geometry
    operations as they finish; the result is the one computed without reporting."""
    import numpy as np

    from geoeval import parallel
    from geoeval.overlap import compute_overlap

    monkeypatch.setattr(parallel, "MIN_CHUNK", 10)
    monkeypatch.setattr(parallel, "REPORT_CHUNK", 25)
    x = np.arange(200.0) * 3
    ref = ObjectSet.from_geometries(box(x, 0, x + 2, 2))
    sub = ObjectSet.from_geometries(box(x + 0.5, 0.5, x + 2.5, 2.5))
    seen: list[str] = []
    res = score_objects(ref, sub, matchers=["iou"], progress=seen.append)
    parts = [s for s in seen if s.startswith("overlap: ")]
    assert "overlap: spatial index queries 8/8 parts" in parts
    assert "overlap: geometry operations 8/8 parts" in parts
    plain = compute_overlap(ref, sub)
    np.testing.assert_array_equal(res.overlap.values, plain.values)
    assert res.overlap.rows.tolist() == plain.rows.tolist()


def test_reading_a_raster_reports_its_windows(tmp_path, monkeypatch):
    """A labelled raster is read window by window, and the reading step says how many."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    import geoeval
    from geoeval import grid

    monkeypatch.setattr(grid, "WINDOW_PIXELS", 256)  # one 16 x 16 block a window
    labels = np.zeros((64, 64), np.uint16)
    labels[5:20, 5:20], labels[30:60, 40:50] = 1, 2
    path = tmp_path / "r.tif"
    with rasterio.open(path, "w", driver="GTiff", width=64, height=64, count=1,
                       dtype="uint16", crs="EPSG:32651", tiled=True, blockxsize=16,
                       blockysize=16, transform=from_origin(0, 64, 1, 1)) as dst:
        dst.write(labels, 1)
    seen: list[str] = []
    geoeval.score(path, path, matchers=["bgm"], progress=seen.append)
    assert "reading: raster windows 16/16 parts" in seen


def test_mom_reports_the_components_it_solves():
    """Components that need a solver (here a cycle: two references each overlapping two
    submitted objects) are counted on the progress line as they are solved."""
    ref = ObjectSet.from_geometries([box(0, 0, 10, 4), box(0, 6, 10, 10),
                                     box(20, 0, 30, 4), box(20, 6, 30, 10)])
    sub = ObjectSet.from_geometries([box(0, 0, 4, 10), box(6, 0, 10, 10),
                                     box(20, 0, 24, 10), box(26, 0, 30, 10)])
    seen: list[str] = []
    score_objects(ref, sub, matchers=["mom"], progress=seen.append)
    assert "matching (mom): components solved 2/2 parts" in seen


def test_a_count_is_one_bar_on_a_terminal():
    """On a terminal a step with an ``N/M`` count is a rich bar at N of M (the Dask
    engine's one count of the run); a step without a count shows no bar."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with Progress(quiet=False, console=console) as progress:
        assert progress.live
        progress("scoring on the cluster: 3/10, about 4 s left (reading 3/4 pieces)")
        [task] = progress._status.tasks
        assert (task.completed, task.total) == (3, 10)
        progress("scoring on the cluster: 9/12 (matching 5/8 partitions)")
        [task] = progress._status.tasks
        assert (task.completed, task.total) == (9, 12)
        assert task.description.endswith("(matching 5/8 partitions)")
        progress._status.refresh()
        assert "━" in console.file.getvalue()  # the bar is drawn
        progress("writing the JSON report")
        [task] = progress._status.tasks
        assert task.total is None and task.description == "writing the JSON report"


def _ticking(monkeypatch, module) -> None:
    """``module.TimeLeft`` on a clock a second ahead at each look: a time left to show."""
    from geoeval.progress import TimeLeft

    ticks = iter(range(10**6))
    monkeypatch.setattr(module, "TimeLeft", lambda **kw: TimeLeft(
        clock=lambda: float(next(ticks)), **kw))


def test_a_contest_names_each_submission_its_step_and_the_time_left(monkeypatch):
    from pathlib import Path

    from geoeval import rank
    from geoeval.scoring import contest

    _ticking(monkeypatch, contest)
    subs = Path(__file__).resolve().parents[1] / "sample_data" / "submissions"
    steps: list[str] = []
    rank(subs.parent / "reference.tif", [subs / "s1_near_perfect.tif", subs / "s2_misses.tif"],
         matchers="bgm", n_jobs=1, progress=steps.append)
    assert steps[0] == "reading the reference" and steps[-1] == "ranking"
    assert "scoring: s1_near_perfect (1/2) with bgm" in steps  # what runs, which of how many
    assert "scoring: s1_near_perfect (1/2) with bgm — overlap" in steps  # and its step
    second = [s for s in steps if s.startswith("scoring: s2_misses (2/2) with bgm")]
    # once a submission is scored, the contest's time left (the first has none)
    assert second and all(", about " in s and " s left" in s for s in second)
    assert not any("s left" in s for s in steps if s.startswith("scoring: s1_near_perfect"))
    # the QGIS plugin's bar: the step is "scoring", its first count the submission's
    from geoeval.cli.progress import _count

    assert {s.split(":")[0] for s in steps[1:-1]} == {"scoring"}
    assert {_count(s) for s in steps[1:-1]} == {(1, 2), (2, 2)}


def test_the_audit_counts_its_grids_with_the_time_left(monkeypatch):
    from geoeval.audit import audit, protocol

    _ticking(monkeypatch, protocol)
    steps: list[str] = []
    audit(["pas"], ["translation"], quick=True, progress=steps.append)
    n = len(protocol.QUICK_SHAPES)
    assert [s.split(" (")[1].split(")")[0] for s in steps] == [f"{k}/{n}" for k in
                                                              range(1, n + 1)]
    assert steps[0] == f"{protocol.QUICK_SHAPES[0]} translation (1/{n})"  # no guess yet
    assert any(s.endswith(" s left") and ", about " in s for s in steps)
