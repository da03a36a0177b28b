"""Time and size of the HTML contest report beyond the scoring itself.

Run: ``python benchmarks/bench_html.py [--entries 50] [--buildings 100000] [--sample]``.

Cases
-----
- ``--sample``: the bundled sample's nine submissions (BGM), as
  ``docs/html-report.md`` shows them;
- synthetic (default): a reference of ``--buildings`` rectangular buildings on a
  jittered grid (10 m apart on average, 6–12 m wide, EPSG:32631) and
  ``--entries`` submissions, each with its own seeded errors: misses (1–20 %),
  false alarms (0–10 %), a shift (0–2 m), a scale (0.8–1.1), splits (0–5 %) and
  merges of two neighbours (0–3 %). Written as GeoParquet files first (not
  timed), as a contest's entries are files.

Each case is run twice in one process: the contest ranked without a page
(``geoeval.scoring.rank``: reading, scoring, ranking), then with
``geoeval.rank(..., html=...)``, which also computes each entry's error breakdown
and draws its part of the page as it is scored. The difference is the page's
cost; the time spent drawing each entry (``entry_report``) and rendering the
page is reported on its own, with the file size.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
CRS = "EPSG:32631"


def reference_boxes(n: int, seed: int = 0) -> np.ndarray:
    """``n`` buildings as (xmin, ymin, xmax, ymax) rows on a jittered grid."""
    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(n)))
    k = np.arange(n)
    cx = 500000.0 + 15.0 * (k % side) + rng.uniform(-1.0, 1.0, n)
    cy = 4000000.0 + 15.0 * (k // side) + rng.uniform(-1.0, 1.0, n)
    w = rng.uniform(6.0, 12.0, n)
    h = rng.uniform(6.0, 12.0, n)
    return np.column_stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def submission_boxes(ref: np.ndarray, k: int) -> np.ndarray:
    """Entry ``k``: the reference with seeded errors (module docstring)."""
    rng = np.random.default_rng(1000 + k)
    n = len(ref)
    miss, fa = rng.uniform(0.01, 0.2), rng.uniform(0.0, 0.1)
    split, merge = rng.uniform(0.0, 0.05), rng.uniform(0.0, 0.03)
    shift, scale = rng.uniform(0.0, 2.0, 2), rng.uniform(0.8, 1.1)
    keep = rng.random(n) >= miss
    boxes = ref[keep]
    c = (boxes[:, :2] + boxes[:, 2:]) / 2 + shift
    half = (boxes[:, 2:] - boxes[:, :2]) / 2 * scale
    boxes = np.column_stack([c - half, c + half])
    # merges: a building and the next one become one box covering both
    m = np.flatnonzero(rng.random(len(boxes) - 1) < merge)
    m = m[np.r_[True, np.diff(m) > 1]] if m.size else m  # no chains
    merged = np.column_stack([np.minimum(boxes[m, :2], boxes[m + 1, :2]),
                              np.maximum(boxes[m, 2:], boxes[m + 1, 2:])])
    drop = np.zeros(len(boxes), bool)
    drop[m] = drop[m + 1] = True
    # splits: left and right halves with a 0.5 m gap
    s = np.flatnonzero((rng.random(len(boxes)) < split) & ~drop)
    mid = (boxes[s, 0] + boxes[s, 2]) / 2
    left = np.column_stack([boxes[s, 0], boxes[s, 1], mid - 0.25, boxes[s, 3]])
    right = np.column_stack([mid + 0.25, boxes[s, 1], boxes[s, 2], boxes[s, 3]])
    drop[s] = True
    # false alarms: small boxes in the gaps of the grid
    n_fa = int(fa * n)
    corner = ref[rng.integers(0, n, n_fa)]
    fx, fy = corner[:, 2] + 1.0, corner[:, 3] + 1.0
    alarms = np.column_stack([fx, fy, fx + 2.5, fy + 2.5])
    return np.concatenate([boxes[~drop], merged, left, right, alarms])


def geoseries(boxes: np.ndarray) -> Any:
    import geopandas as gpd
    import shapely

    return gpd.GeoSeries(shapely.box(*boxes.T), crs=CRS)


def write_layers(folder: Path, ref: np.ndarray, n: int) -> tuple[Path, list[Path]]:
    """The reference and ``n`` synthetic entries as GeoParquet files in ``folder``."""
    reference = folder / "reference.parquet"
    geoseries(ref).to_frame("geometry").to_parquet(reference)
    entries = []
    for k in range(n):
        path = folder / f"entry{k:02d}.parquet"
        geoseries(submission_boxes(ref, k)).to_frame("geometry").to_parquet(path)
        entries.append(path)
    return reference, entries


def run(reference: Any, submissions: Sequence[Any], names: list[str] | None,
        matcher: str) -> dict[str, float]:
    import geoeval
    from geoeval.report.html import page as page_module
    from geoeval.scoring import rank as rank_only

    t0, c0 = time.perf_counter(), time.process_time()
    rank_only(reference, submissions, matchers=matcher, names=names)
    t_rank, c_rank = time.perf_counter() - t0, time.process_time() - c0

    spent = {"entries": 0.0, "render": 0.0, "entries_cpu": 0.0, "render_cpu": 0.0}
    entry_report, render_page = page_module.entry_report, page_module.render_page

    def timed(fn: Any, key: str) -> Any:
        def inner(*a: Any, **k: Any) -> Any:
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:  # wall and CPU time (the scoring's threads are idle meanwhile)
                spent[key] += time.perf_counter() - t
                spent[key + "_cpu"] += time.process_time() - c
        return inner

    import geoeval.report.html as html_package

    html_package.entry_report = timed(entry_report, "entries")
    html_package.render_page = timed(render_page, "render")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "contest.html"
            t0, c0 = time.perf_counter(), time.process_time()
            geoeval.rank(reference, submissions, matchers=matcher, names=names, html=out,
                         html_command="benchmarks/bench_html.py")
            t_html, c_html = time.perf_counter() - t0, time.process_time() - c0
            size = out.stat().st_size
    finally:
        html_package.entry_report, html_package.render_page = entry_report, render_page
    return {"rank": t_rank, "rank+html": t_html, "rank_cpu": c_rank, "rank+html_cpu": c_html,
            **spent, "bytes": size}


def report(label: str, n: int, r: dict[str, float]) -> None:
    """Wall and CPU seconds; the page's own work is timed where it happens (drawing
    each entry as it is scored, rendering the page), the rest of the run with
    ``--html`` is the scoring."""
    page, page_cpu = r["entries"] + r["render"], r["entries_cpu"] + r["render_cpu"]
    print(f"{label}: {n} entries                      wall      CPU")
    print(f"  ranked without a page          {r['rank']:8.1f} s {r['rank_cpu']:8.1f} s")
    print(f"  ranked with --html             {r['rank+html']:8.1f} s {r['rank+html_cpu']:8.1f} s")
    print(f"    of which the page's work     {page:8.1f} s {page_cpu:8.1f} s  "
          f"({page_cpu / n:.2f} s CPU an entry)")
    print(f"      drawing the entries        {r['entries']:8.1f} s {r['entries_cpu']:8.1f} s")
    print(f"      rendering the page         {r['render']:8.1f} s {r['render_cpu']:8.1f} s")
    print(f"    scoring and ranking          {r['rank+html'] - page:8.1f} s "
          f"{r['rank+html_cpu'] - page_cpu:8.1f} s")
    print(f"  page size                      {r['bytes'] / 1e6:8.2f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--buildings", type=int, default=100_000)
    parser.add_argument("--matcher", default="bgm")
    parser.add_argument("--sample", action="store_true", help="the bundled sample instead")
    args = parser.parse_args()
    if args.sample:
        subs = sorted(p for p in (SAMPLE / "submissions").iterdir()
                      if p.suffix in (".tif", ".gpkg", ".shp"))
        r = run(SAMPLE / "reference.tif", subs, None, args.matcher)
        report(f"sample ({args.matcher})", len(subs), r)
        return
    ref = reference_boxes(args.buildings)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        reference, entries = write_layers(Path(tmp), ref, args.entries)
        print(f"(wrote the {args.entries} entries in {time.perf_counter() - t0:.0f} s)")
        r = run(reference, entries, None, args.matcher)
    report(f"synthetic, {args.buildings:,} reference buildings ({args.matcher})",
           args.entries, r)


if __name__ == "__main__":
    main()
