"""Time the full metric audit of Hemery et al. (2010): 16 ground truths, 118,080 results per metric.

Usage::

    python benchmarks/bench_audit.py [--quick] [--markdown PATH] [--json PATH]

Prints the wall time of the full run and, as a baseline measured in the same
run, the time of the same metrics called image by image (the public functions
on one (reference, result) pair at a time) on a sample, extrapolated to the
full run's 118,080 × 2 evaluations.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def baseline(n: int = 200) -> float:
    """Seconds per (result, both directions) when every metric is called per image."""
    from geoeval.audit.alterations import make_grid, render, window
    from geoeval.audit.shapes import ground_truth
    from geoeval.measures.localization import METRICS, mask_box, mask_contour

    gt = ground_truth("gt9_car")
    grid = make_grid("translation")
    win = window(gt, grid)
    ref = render(gt, "translation", np.zeros((1, 2)), win)[0]
    rng = np.random.default_rng(0)
    masks = render(gt, "translation", grid.params[rng.choice(len(grid.params), n)], win)
    rc, rb = mask_contour(ref), mask_box(ref)
    t = time.perf_counter()
    for m in masks:
        inputs = {"mask": (ref, m), "contour": (rc, mask_contour(m)), "box": (rb, mask_box(m))}
        for met in METRICS.values():
            if met.slow:
                continue
            a, b = inputs[met.representation]
            met.function(a, b, **met.params)
            met.function(b, a, **met.params)
    return (time.perf_counter() - t) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    from geoeval.audit import audit

    per_image = baseline()
    t = time.perf_counter()
    result = audit(quick=args.quick, progress=lambda s: print(f"  {s}", flush=True))
    wall = time.perf_counter() - t
    print(f"audit: {len(result.metrics)} metrics, {len(result.shapes)} ground truths, "
          f"{result.n_results:,} altered results per metric, {wall:.1f} s")
    print(f"baseline (per-image calls): {per_image * 1e3:.2f} ms per result -> "
          f"{per_image * result.n_results:.0f} s for the same results "
          f"(without the triangle sample)")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(result.to_markdown())
    if args.json:
        import json

        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result.to_dict(), f, indent=1)


if __name__ == "__main__":
    main()
