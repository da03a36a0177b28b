"""A synthetic country on a Dask cluster: the partitioned engine against the local one.

The country is generated tile by tile (the city of ``benchmarks/scale.py``,
100 000 buildings a tile, tiles side by side), each tile written as one file of
a GeoParquet dataset folder per side, so generation never holds the whole layer.
Then, each in fresh processes, for ``--matcher iou`` and ``bgm``:

* ``dask``: a cluster started the ordinary way (``dask scheduler`` and
  ``dask worker --nworkers 2 --nthreads 1 --memory-limit 6GB``), a client
  process running ``geoeval.score(..., engine="dask", scheduler=...,
  objects_dir=...)``: its wall time, the client's peak RSS, each worker's peak
  RSS (``getrusage`` on the workers), the scheduler's, and whether a worker was
  restarted;
* ``local``: ``geoeval.score(...)`` in one process (and its objects dataset);
* ``plain``: the geopandas + shapely script of ``benchmarks/scale.py`` (read both
  layers, STRtree, intersections, IoU >= 0.5, greedy one-to-one, F1).

F1 must agree between the three (iou) and between the engines (bgm, mom), and the
engines' accuracies to 1e-12 relative (``--matchers mom``: the Mallows score).

    python benchmarks/bench_country.py --sizes 1000000 [--skip-local-above N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from scale import PLAIN_F1, city  # noqa: E402

TILE = 100_000

PLAIN = r'''
import sys, numpy as np, geopandas as gpd, shapely
ref = gpd.read_parquet(sys.argv[1]); sub = gpd.read_parquet(sys.argv[2])''' + PLAIN_F1

LOCAL = r'''
import json, sys, geoeval
res = geoeval.score(sys.argv[1], sys.argv[2], matchers=[sys.argv[3]], n_jobs=2,
                    objects_dir=sys.argv[4])
print(json.dumps(res.results[sys.argv[3]].summary()["matched_reference"]))
print(json.dumps(res.results[sys.argv[3]].accuracy))
print(res.results[sys.argv[3]].f1)
'''

DASK = r'''
import json, resource, sys, time
import distributed, geoeval
if __name__ == "__main__":
    t = time.perf_counter()
    client = distributed.Client(scheduler_file=sys.argv[5], set_as_default=False)
    before = sorted(client.scheduler_info()["workers"])
    res = geoeval.score(sys.argv[1], sys.argv[2], matchers=[sys.argv[3]], engine="dask",
                        scheduler=client.scheduler.address, objects_dir=sys.argv[4])
    wall = time.perf_counter() - t
    peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = client.run(peak)
    after = sorted(client.scheduler_info()["workers"])
    out = {"wall": wall, "client_gb": peak() / 1e6,
           "workers_gb": [v / 1e6 for v in workers.values()],
           "scheduler_gb": client.run_on_scheduler(peak) / 1e6,
           "restarted": before != after, "f1": res.results[sys.argv[3]].f1,
           "accuracy": res.results[sys.argv[3]].accuracy, "partitions": res.partitions}
    client.close()
    print(json.dumps(out))
'''

_MEASURE = (
    "import json, resource, subprocess, sys, time; t = time.perf_counter(); "
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "wall = time.perf_counter() - t; "
    "print(json.dumps([wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
    "done.stdout, done.returncode, done.stderr[-2000:]]))"
)


def run(cmd: list[str]) -> tuple[float, float, str]:
    """Wall time, peak RSS (GB) and stdout of one fresh process (``None`` times if it
    failed, e.g. out of memory)."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], check=True,
                          capture_output=True, text=True)
    wall, kib, out, rc, err = json.loads(done.stdout)
    if rc != 0:
        print(f"  failed (exit {rc}): {err.strip().splitlines()[-1] if err.strip() else ''}",
              flush=True)
        return float("nan"), kib / 1e6, ""
    return wall, kib / 1e6, out


def _readable(f: Path) -> bool:
    import pyarrow.parquet as pq

    try:
        return f.is_file() and pq.ParquetFile(f).metadata.num_rows > 0
    except Exception:
        return False


def generate(folder: Path, n: int, first: int = 0, step: int = 1) -> tuple[Path, Path, float]:
    """The country of ``n`` buildings: one tile (file) at a time per side (tiles
    ``first``, ``first + step``, … only, for generating in several processes)."""
    import geopandas as gpd
    import shapely

    ref_dir, sub_dir = folder / f"ref_{n}", folder / f"sub_{n}"
    if (ref_dir / "_done").exists():
        return ref_dir, sub_dir, 0.0
    t = time.perf_counter()
    ref_dir.mkdir(parents=True, exist_ok=True)
    sub_dir.mkdir(parents=True, exist_ok=True)
    tiles = int(np.ceil(n / TILE))
    cols = int(np.ceil(np.sqrt(tiles)))
    width = int(np.ceil(np.sqrt(TILE))) * 30.0 + 30.0
    for k in range(first, tiles, step):
        names = [d / f"tile-{k:05d}.parquet" for d in (ref_dir, sub_dir)]
        if all(_readable(f) for f in names):
            continue  # written by an earlier or a parallel run
        m = min(TILE, n - k * TILE)
        ref, det = city(m, seed=k)
        dx, dy = (k % cols) * width + 500_000.0, (k // cols) * width + 4_000_000.0
        for geoms, out in ((ref, ref_dir), (det, sub_dir)):
            moved = shapely.transform(geoms, lambda xy, dx=dx, dy=dy: xy + (dx, dy))
            gpd.GeoDataFrame(geometry=moved, crs="EPSG:32651").to_parquet(
                out / f"tile-{k:05d}.parquet", row_group_size=50_000, index=False)
    if first == 0 and step == 1:
        (ref_dir / "_done").write_text("")
    return ref_dir, sub_dir, time.perf_counter() - t


def du(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def start_cluster(folder: Path, memory: str) -> tuple[list[subprocess.Popen], Path]:
    """``dask scheduler`` and ``dask worker`` started by hand (as a user would)."""
    sched_file = folder / "scheduler.json"
    sched_file.unlink(missing_ok=True)
    env = {**os.environ, "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}
    bindir = Path(sys.executable).parent
    procs = [subprocess.Popen([str(bindir / "dask"), "scheduler", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(sched_file)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    for _ in range(100):
        if sched_file.exists():
            break
        time.sleep(0.2)
    procs.append(subprocess.Popen(
        [str(bindir / "dask"), "worker", "--scheduler-file", str(sched_file), "--nworkers", "2",
         "--nthreads", "1", "--memory-limit", memory, "--no-dashboard"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    import distributed

    with distributed.Client(scheduler_file=str(sched_file), set_as_default=False) as c:
        c.wait_for_workers(2, timeout=120)
    return procs, sched_file


def run_on_cluster(folder: Path, memory: str, cmd: list[str]) -> tuple[float, float, str]:
    """:func:`run` ``cmd`` with the scheduler file of a cluster started for it (and
    stopped after it) appended to its arguments."""
    procs, sched = start_cluster(folder, memory)
    try:
        return run([*cmd, str(sched)])
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            p.wait(timeout=60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--matchers", nargs="+", default=["iou", "bgm"])
    ap.add_argument("--skip-local-above", type=int, default=2_000_000,
                    help="do not run the local engine and plain script above this size "
                         "(they hold both layers in one process)")
    ap.add_argument("--memory-limit", default="6GB")
    ap.add_argument("--keep", type=Path, help="keep the layers in this folder")
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="geoeval-country-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.sizes:
        ref_dir, sub_dir, gen = generate(folder, n)
        print(f"{n:,} buildings a side: generated in {gen:.0f} s, {du(ref_dir):.0f} + "
              f"{du(sub_dir):.0f} MB on disk", flush=True)
        plain = None
        if n <= args.skip_local_above:
            t, gb, out = run([sys.executable, "-c", PLAIN, str(ref_dir), str(sub_dir)])
            plain = (t, gb, float(out) if out else None)
            print(f"  plain script: {t:.1f} s, {gb:.2f} GB, F1 {plain[2]}", flush=True)
        for m in args.matchers:
            local = None
            if n <= args.skip_local_above:
                objects = folder / f"objects_local_{n}_{m}"
                subprocess.run(["rm", "-rf", str(objects)], check=True)
                t, gb, out = run([sys.executable, "-c", LOCAL, str(ref_dir), str(sub_dir), m,
                                  str(objects)])
                local = (t, gb, float(out.splitlines()[-1]) if out else None,
                         json.loads(out.splitlines()[-2]) if out else None)
                print(f"  local {m}: {t:.1f} s, {gb:.2f} GB, F1 {local[2]}", flush=True)
            objects = folder / f"objects_dask_{n}_{m}"
            subprocess.run(["rm", "-rf", str(objects)], check=True)
            t, gb, out = run_on_cluster(folder, args.memory_limit,
                                        [sys.executable, "-c", DASK, str(ref_dir),
                                         str(sub_dir), m, str(objects)])
            d = json.loads(out.splitlines()[-1]) if out else {}
            print(f"  dask {m}: {t:.1f} s, client {d.get('client_gb', float('nan')):.2f} GB, "
                  f"workers {d.get('workers_gb')}, scheduler {d.get('scheduler_gb')}, "
                  f"restarted {d.get('restarted')}, F1 {d.get('f1')}, {d.get('partitions')}",
                  flush=True)
            if local and local[2] is not None and d:
                assert abs(d["f1"] - local[2]) < 1e-12, (d["f1"], local[2])
                if local[3] is not None:  # the accuracy (MOM: the Mallows score), summed
                    assert abs(d["accuracy"] - local[3]) <= 1e-12 * abs(local[3]), \
                        (d["accuracy"], local[3])
            if m == "iou" and plain and plain[2] is not None and d:
                assert abs(d["f1"] - plain[2]) < 1e-9, (d["f1"], plain[2])
            rows.append({"n": n, "matcher": m, "dask_s": t, "dask": d, "local": local,
                         "plain": plain})
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
