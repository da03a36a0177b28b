"""Progress: the Mallows stage reports instance counts with the time left; the CLI
prints plain lines on a non-terminal (after a delay, throttled) and nothing with -q."""

from __future__ import annotations

from shapely import box

from geoeval.cli.options import Progress
from geoeval.objects import ObjectSet
from geoeval.scoring import score_objects


def test_mallows_reports_counts_up_to_the_total():
    ref = ObjectSet.from_geometries([box(10 * k, 0, 10 * k + 6, 6) for k in range(12)])
    sub = ObjectSet.from_geometries([box(10 * k + 1, 0, 10 * k + 7, 6) for k in range(12)])
    steps: list[str] = []
    score_objects(ref, sub, matchers=["mom"], resolution=0.5, n_jobs=1, progress=steps.append)
    counts = [s for s in steps if "instances" in s]
    assert counts[-1].startswith("Mallows score (mom): 12/12 instances")
    assert any("s left" in s for s in counts[:-1])
    assert steps[0] == "overlap" and "matching (mom)" in steps


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
