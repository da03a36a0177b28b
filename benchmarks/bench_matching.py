"""Matcher stages and the JSON report on a 200 k-object one-to-one scene.

Compares, in one run:

* the assignment solve alone (``max_weight_matching`` on the overlap edges),
* each matcher stage (``match(overlap, name)``: solve + building the Matching),
* the ``results.<matcher>`` JSON report (``MatcherResult.to_dict`` + dump)
  against writing the matching's arrays with the standard library
  (``json.dumps`` of ``tolist()``, same indent).

Targets (issue "columnar matches"): matcher stage within 2x the solve; the
JSON report no slower than the stdlib dump of the arrays.

    python benchmarks/bench_matching.py [--n 200000] [--repeat 3]

Run it with ``PYTHONPATH=<other checkout>`` to time another version of geoeval
on the same scene.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import geoeval
from geoeval.matching import match
from geoeval.matching.assignment import max_weight_matching
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap

try:  # the JSON writer and the measure helper, wherever this version keeps them
    from geoeval.outputs import dumps
except ImportError:  # older layout
    from geoeval.report.json import dumps
try:
    from geoeval.scoring import measure
except ImportError:
    from geoeval.scoring import _measure as measure


def scene(n: int, seed: int = 0) -> Overlap:
    """``n`` references, ``n`` submissions: each pair overlaps 60-95 % of the
    reference, and one pair in five also touches its neighbour's partner (a
    few square units), so components have two or more objects a side."""
    rng = np.random.default_rng(seed)
    ref_area = rng.uniform(50, 150, n)
    sub_area = ref_area * rng.uniform(0.8, 1.2, n)
    main = np.minimum(ref_area, sub_area) * rng.uniform(0.6, 0.95, n)
    extra = np.flatnonzero(rng.random(n - 1) < 0.2)
    rows = np.concatenate([np.arange(n), extra])
    cols = np.concatenate([np.arange(n), extra + 1])
    values = np.concatenate([main, rng.uniform(2, 5, extra.size)])
    order = np.lexsort((cols, rows))
    geom = np.empty(n, dtype=object)

    def objects(areas: np.ndarray, offset: int) -> ObjectSet:
        return ObjectSet(ids=np.arange(n, dtype=np.int64) + offset, areas=areas,
                         geometry=geom, crs=None, path="<bench>", kind="memory")

    union = float(ref_area.sum() + sub_area.sum() - values.sum())
    return Overlap(objects(ref_area, 1), objects(sub_area, 10_000_000), rows[order],
                   cols[order], values[order], union, "synthetic")


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ov = scene(args.n)
    nr, no = ov.n_reference, ov.n_submission
    print(f"geoeval {geoeval.__file__}")
    print(f"scene: {nr:,} references, {no:,} submissions, {ov.n_pairs:,} overlapping pairs")
    t_solve, _ = best(lambda: max_weight_matching(ov.rows, ov.cols, ov.values, nr, no),
                      args.repeat)
    print(f"{'assignment solve alone':34s} {t_solve:7.3f} s")
    for name, kw in (("bgm", {}), ("hoover", {"threshold": 0.6}), ("iou", {"threshold": 0.5})):
        t_match, m = best(lambda name=name, kw=kw: match(ov, name, **kw), args.repeat)
        res = measure(name, m, ov)
        t_json, text = best(lambda res=res: dumps(res.to_dict(ov.reference, ov.submission)),
                            args.repeat)
        ref_of, sub_of = _pairs(m)
        arrays = {"reference_ids": ov.reference.ids[ref_of].tolist(),
                  "submission_ids": ov.submission.ids[sub_of].tolist(),
                  "overlap": ov.values[np.searchsorted(ov.rows, ref_of)].tolist()}
        t_std, _ = best(lambda arrays=arrays: json.dumps(arrays, indent=2), args.repeat)
        print(f"{name + ' matcher stage':34s} {t_match:7.3f} s  {t_match / t_solve:5.2f}x the solve"
              f"   ({len(ref_of):,} instances)")
        print(f"{name + ' JSON report':34s} {t_json:7.3f} s  {t_json / t_std:5.2f}x stdlib dump "
              f"of the arrays ({t_std:.3f} s); {len(text) / 1e6:.0f} MB")


def _pairs(m) -> tuple[np.ndarray, np.ndarray]:
    """Reference and submission row of each (one-to-one) instance, any version."""
    arrays = getattr(m, "arrays", None)
    if arrays is not None:
        return arrays.ref_idx, arrays.sub_idx
    inst = m.instances
    return (np.array([i.reference[0] for i in inst]), np.array([i.submission[0] for i in inst]))


if __name__ == "__main__":
    main()
