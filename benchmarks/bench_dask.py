"""The Dask engine against the in-memory engine, stage by stage, on a synthetic city.

The city of ``benchmarks/scale.py`` (building footprints and detections, with
``--duplicates`` the submission overlaps itself) is scored stage by stage in
this process: the overlap (local: :func:`geoeval.overlap.compute_overlap`;
dask: :func:`geoeval.engine.client_overlap.dask_overlap` on a
``LocalCluster(n_workers=2, threads_per_worker=1)``), the matching (in the
client either way) and the Mallows score of the first ``--mallows`` IoU
instances (local process pool of 2 vs the cluster). The overlaps must be
identical; times and ratios are printed.

    python benchmarks/bench_dask.py --size 100000 [--duplicates] [--mallows 3000]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    import distributed
    from scale import city

    from geoeval.engine.client_overlap import dask_overlap
    from geoeval.matching import match
    from geoeval.matching.result import InstanceArrays
    from geoeval.measures.mallows import mallows_scores
    from geoeval.objects import ObjectSet
    from geoeval.overlap import compute_overlap

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--duplicates", action="store_true")
    ap.add_argument("--mallows", type=int, default=3000, help="IoU instances to score")
    args = ap.parse_args()
    ref_g, sub_g = city(args.size, duplicates=args.duplicates)
    ref, sub = ObjectSet.from_geometries(ref_g), ObjectSet.from_geometries(sub_g)
    times: dict[str, dict[str, float]] = {"local": {}, "dask": {}}

    def clock(engine: str, stage: str, func, *a, **k):
        t = time.perf_counter()
        out = func(*a, **k)
        times[engine][stage] = time.perf_counter() - t
        return out

    match(compute_overlap(ref.subset(np.arange(100)), sub.subset(np.arange(100))), "bgm")
    ov_local = clock("local", "overlap", compute_overlap, ref, sub)
    t = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    times["dask"]["cluster start"] = time.perf_counter() - t
    times["local"]["cluster start"] = 0.0
    t = time.perf_counter()  # the workers' first task imports geopandas, shapely...
    dask_overlap(ref.subset(np.arange(100)), sub.subset(np.arange(100)), client)
    times["dask"]["worker warm-up"] = time.perf_counter() - t
    times["local"]["worker warm-up"] = 0.0
    ov_dask = clock("dask", "overlap", dask_overlap, replace(ref), replace(sub), client)
    assert np.array_equal(ov_dask.rows, ov_local.rows)
    assert np.array_equal(ov_dask.cols, ov_local.cols)
    assert ov_dask.values.tobytes() == ov_local.values.tobytes()
    assert ov_dask.union_area == ov_local.union_area
    for engine, ov in (("local", ov_local), ("dask", ov_dask)):
        m = clock(engine, "matching (iou)", match, ov, "iou", threshold=0.5)
        clock(engine, "matching (bgm)", match, ov, "bgm")
    k = min(args.mallows, len(m.arrays))
    inst = InstanceArrays.from_instances(tuple(m.instance(i) for i in range(k)))
    res_l = clock("local", f"Mallows ({k} inst.)", mallows_scores, ref, sub, inst,
                  resolution=0.5, n_jobs=2)
    res_d = clock("dask", f"Mallows ({k} inst.)", mallows_scores, ref, sub, inst,
                  resolution=0.5, n_jobs=2, executor=client.get_executor())
    assert np.array_equal(res_l.scores, res_d.scores, equal_nan=True)
    client.close()
    cluster.close()
    print(f"{args.size} reference buildings, {len(sub)} detections, {ov_local.n_pairs} pairs"
          f"{' (submission overlaps itself)' if args.duplicates else ''}; results identical")
    print(f"{'stage':<24} {'local s':>8} {'dask s':>8} {'dask/local':>10}")
    for stage in times["dask"]:
        lo, da = times["local"][stage], times["dask"][stage]
        ratio = f"{da / lo:10.2f}" if lo > 0 else f"{'-':>10}"
        print(f"{stage:<24} {lo:8.2f} {da:8.2f} {ratio}")


if __name__ == "__main__":
    main()
