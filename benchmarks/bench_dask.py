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

With ``--client-peak N [N ...]``: the client's peak memory of a run by partitions
with ``--json``, before and after a change, in the same run. The country of
``benchmarks/bench_country.py`` (GeoParquet dataset folders, tiles of 100 000
buildings) is scored with IoU by ``geoeval.score(..., engine="dask", n_jobs=2,
json=...)`` (a 2-worker ``LocalCluster`` started by the client, its scheduler in the
client process), each run a fresh process whose ``geoeval`` (and its workers') is
the code of git revision ``--before`` (default ``main``, exported to a temporary
folder) or of this checkout; also this checkout without ``--json``. Printed per
size: wall time, the client's peak RSS (its ``VmHWM``, GB) and the report's size,
and the ratio before / after.

    python benchmarks/bench_dask.py --client-peak 1000000 [--before main] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
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
    ap.add_argument("--client-peak", type=int, nargs="+", metavar="N",
                    help="the client's peak memory with --json at N buildings, before and "
                         "after (module docstring)")
    ap.add_argument("--before", default="main", help="git revision of 'before'")
    ap.add_argument("--keep", type=Path, help="keep the generated layers in this folder")
    args = ap.parse_args()
    if args.client_peak:
        client_peak(args.client_peak, args.before, args.keep)
        return
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


#: A client process: ``geoeval.score`` on a 2-worker LocalCluster, with ``--json`` (its
#: third argument, ``-`` for none); its wall time, peak RSS and F1 as JSON. The peak is
#: the process's own ``VmHWM``: ``getrusage``'s ``ru_maxrss`` keeps the peak of the
#: parent it was forked from (this script, which held a generated tile).
CLIENT = r'''
import json, re, sys, time
import geoeval
def peak_gb():
    status = open("/proc/self/status").read()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1e6
if __name__ == "__main__":
    t = time.perf_counter()
    out = {} if sys.argv[3] == "-" else {"json": sys.argv[3]}
    res = geoeval.score(sys.argv[1], sys.argv[2], matchers=["iou"], engine="dask", n_jobs=2,
                        **out)
    print(json.dumps({"wall": time.perf_counter() - t, "geoeval": geoeval.__file__,
                      "client_gb": peak_gb(),
                      "f1": res.results["iou"].f1,
                      "partitions": res.partitions["partitions"]}))
'''


def client_peak(sizes: list[int], before: str, keep: Path | None) -> None:
    """The client's peak RSS with ``--json`` before (git revision ``before``) and after
    (this checkout), and after without ``--json`` (module docstring)."""
    from bench_country import generate

    here = Path(__file__).resolve().parents[1]
    folder = keep or Path(tempfile.mkdtemp(prefix="geoeval-client-"))
    folder.mkdir(parents=True, exist_ok=True)
    old = Path(tempfile.mkdtemp(prefix="geoeval-before-"))
    subprocess.run(f"git -C {here} archive {before} | tar -x -C {old}", shell=True,
                   check=True)
    runs = (("before", old, True), ("after", here, True), ("after, no --json", here, False))
    print(f"{'buildings':>10} {'run':<17} {'wall s':>7} {'client GB':>9} {'report MB':>9}"
          f" {'F1':>10}")
    for n in sizes:
        ref, sub, _ = generate(folder, n)
        got = {}
        for name, tree, with_json in runs:
            report = folder / f"report_{name.replace(' ', '').replace(',', '_')}_{n}.json"
            report.unlink(missing_ok=True)
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run([sys.executable, "-c", CLIENT, str(ref), str(sub),
                                   str(report) if with_json else "-"], cwd=tree, env=env,
                                  capture_output=True, text=True, check=True)
            d = json.loads(done.stdout.strip().splitlines()[-1])
            assert Path(d["geoeval"]).is_relative_to(tree), d["geoeval"]
            mb = report.stat().st_size / 1e6 if with_json else float("nan")
            got[name] = d
            print(f"{n:>10} {name:<17} {d['wall']:7.1f} {d['client_gb']:9.3f} {mb:9.2f}"
                  f" {d['f1']:10.6f}", flush=True)
        assert got["before"]["f1"] == got["after"]["f1"] == got["after, no --json"]["f1"]
        print(f"{n:>10} client peak with --json, before / after: "
              f"{got['before']['client_gb'] / got['after']['client_gb']:.2f}x", flush=True)
    subprocess.run(["rm", "-rf", str(old)], check=True)


if __name__ == "__main__":
    main()
