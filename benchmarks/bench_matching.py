"""Matcher stages and the JSON report on a 200 k-object one-to-one scene.

Compares, in one run:

* the assignment solve alone (``max_weight_matching`` on the overlap edges),
* each matcher stage (``match(overlap, name)``: solve + building the Matching),
* the ``results.<matcher>`` JSON report (``MatcherResult.to_dict`` + dump)
  against writing the same content as plain arrays with the standard library
  (``json.dumps(..., indent=2)`` of every array's ``tolist()``: member ids and
  pointers of both sides, overlap, kind, score, missed and false alarm ids).

Targets (issue "columnar matches"): matcher stage within 2x the solve; the
JSON report no slower than the stdlib dump of the arrays.

    python benchmarks/bench_matching.py [--n 200000] [--repeat 3]

Run it with ``PYTHONPATH=<other checkout>`` to time another version of geoeval
on the same scene.
"""

from __future__ import annotations

import argparse
import inspect
import json
import time

import numpy as np

import geoeval
from geoeval.matching import match
from geoeval.matching.assignment import max_weight_matching
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap

try:  # the JSON writer and the measure helper, wherever this version keeps them
    from geoeval.report.json import dumps  # older layout
except ImportError:
    from geoeval.outputs import dumps
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
        t_json, text = best(lambda res=res: _report(res, ov), args.repeat)
        arrays = _arrays(m, ov)
        t_std, _ = best(lambda arrays=arrays: json.dumps(arrays, indent=2), args.repeat)
        print(f"{name + ' matcher stage':34s} {t_match:7.3f} s  {t_match / t_solve:5.2f}x the solve"
              f"   ({len(arrays['overlap']):,} instances)")
        print(f"{name + ' JSON report':34s} {t_json:7.3f} s  {t_json / t_std:5.2f}x stdlib dump "
              f"of the arrays ({t_std:.3f} s); {len(text) / 1e6:.0f} MB")


def _report(res, ov) -> str:
    """The ``results.<matcher>`` JSON text, the way this version writes it."""
    if "rows" in inspect.signature(res.to_dict).parameters:  # arrays straight to text
        return dumps(res.to_dict(ov.reference, ov.submission, rows=True))
    return dumps(res.to_dict(ov.reference, ov.submission))


def _arrays(m, ov) -> dict[str, list]:
    """Every array the report's matching part holds, as lists: member ids of
    both sides with their pointers, overlap, kind, score, missed and false
    alarm ids (any version: from the arrays, or rebuilt from Instance objects)."""
    rid, sid = ov.reference.ids, ov.submission.ids
    a = getattr(m, "arrays", None)
    if a is None:  # older versions: one Instance object per match
        inst = m.instances
        ref_len = np.array([len(i.reference) for i in inst])
        sub_len = np.array([len(i.submission) for i in inst])
        ref_idx = np.array([r for i in inst for r in i.reference])
        sub_idx = np.array([s for i in inst for s in i.submission])
        overlap = np.array([i.overlap for i in inst])
        kind = [i.kind for i in inst]
        score = np.array([np.nan if i.score is None else i.score for i in inst])
        ref_ptr = np.concatenate([[0], np.cumsum(ref_len)])
        sub_ptr = np.concatenate([[0], np.cumsum(sub_len)])
    else:
        ref_ptr, ref_idx, sub_ptr, sub_idx = a.ref_ptr, a.ref_idx, a.sub_ptr, a.sub_idx
        overlap, kind, score = a.overlap, m.kinds.tolist(), a.score
    keep = ~np.isnan(score)
    return {"reference_ptr": ref_ptr.tolist(), "reference_ids": rid[ref_idx].tolist(),
            "submission_ptr": sub_ptr.tolist(), "submission_ids": sid[sub_idx].tolist(),
            "overlap": overlap.tolist(), "kind": kind,
            "score": [x if k else None for x, k in zip(score.tolist(), keep.tolist(), strict=True)],
            "missed_ids": rid[m.missed].tolist(),
            "false_alarm_ids": sid[m.false_alarms].tolist()}


if __name__ == "__main__":
    main()
