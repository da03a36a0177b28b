"""A label-mosaic pair on a Dask cluster by blocks: client and worker memory, time.

The mosaic is generated window by window (2048 × 2048 pixels; never held whole),
written as tiled (256 × 256), ZSTD-compressed GeoTIFFs (``uint32`` labels, BigTIFF):
one object per cell of 32 × 32 pixels on a grid offset by 16 pixels from the
file's tiles (so objects straddle every block edge), a rectangle of 8–24 pixels a
side at a position drawn per cell; the submission's object is shifted by up to 3
pixels and resized by up to 2, missed in 10 % of the cells, split in two in 10 %,
and 10 % of the cells hold a 4 × 4 false alarm. Every draw is a hash of the cell's
number, so any window is generated on its own. 10 000 × 10 000 pixels hold about
97 600 objects a side; 100 000 × 100 000, about 9.8 M.

Then, each in fresh processes:

* ``dask``: a cluster started the ordinary way (``dask scheduler`` and
  ``dask worker --nworkers 2 --nthreads 1 --memory-limit 6GB``; see
  ``bench_country.py``), a client process running ``geoeval.score(...,
  engine="dask", scheduler=...)``: wall time, the client's peak RSS, each
  worker's peak RSS, the scheduler's, and whether a worker was restarted;
* ``local`` (up to ``--skip-local-above`` pixels a side): ``geoeval.score(...)``
  in one process (2 threads), its time and peak RSS; F1 and accuracy must agree.

    python benchmarks/bench_mosaic.py --sizes 10000 [--matchers iou bgm] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_country import run, run_on_cluster  # noqa: E402

CELL = 32
OFFSET = 16
TILE = 256
WINDOW = 2048
SPLIT = 1 << 24  # second half of a split object: id + SPLIT; a false alarm: id + 2 SPLIT

LOCAL = r'''
import json, sys, geoeval
res = geoeval.score(sys.argv[1], sys.argv[2], matchers=sys.argv[3].split(","), n_jobs=2)
print(json.dumps({n: [r.f1, r.accuracy, int(r.matching.missed.size),
                      int(r.matching.false_alarms.size)] for n, r in res.results.items()}))
'''

DASK = r'''
import json, resource, sys, time
import distributed, geoeval
if __name__ == "__main__":
    t = time.perf_counter()
    client = distributed.Client(scheduler_file=sys.argv[4], set_as_default=False)
    before = sorted(client.scheduler_info()["workers"])
    stages = {}  # the first time each stage is reported, seconds from the start

    def progress(text):
        stage = text.split("(", 1)[1].split(" ")[0] if "(" in text else text
        stages.setdefault(stage, round(time.perf_counter() - t, 1))

    res = geoeval.score(sys.argv[1], sys.argv[2], matchers=sys.argv[3].split(","),
                        engine="dask", scheduler=client.scheduler.address,
                        progress=progress)
    wall = time.perf_counter() - t
    peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = client.run(peak)
    after = sorted(client.scheduler_info()["workers"])
    out = {"wall": wall, "client_gb": peak() / 1e6,
           "workers_gb": [v / 1e6 for v in workers.values()],
           "scheduler_gb": client.run_on_scheduler(peak) / 1e6,
           "restarted": before != after, "objects": [res.reference["objects"],
                                                     res.submission["objects"]],
           "results": {n: [r.f1, r.accuracy, r.missed, r.false_alarms]
                       for n, r in res.results.items()},
           "blocks": res.partitions, "stages": stages,
           "load": open("/proc/loadavg").read().split()[:3]}
    client.close()
    print(json.dumps(out))
'''


def _hash(k: np.ndarray, salt: int) -> np.ndarray:
    """A 64-bit mix (splitmix64's finaliser) of the cell numbers ``k`` and ``salt``."""
    u = np.uint64
    x = k.astype(u) * u(0x9E3779B97F4A7C15)
    x += u((salt * 0xBF58476D1CE4E5B9) % (1 << 64))
    x ^= x >> u(30)
    x *= u(0xBF58476D1CE4E5B9)
    x ^= x >> u(27)
    x *= u(0x94D049BB133111EB)
    x ^= x >> u(31)
    return x


def window_labels(n: int, r0: int, r1: int, c0: int, c1: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The reference's and the submission's labels of one window of the ``n × n`` mosaic:
    the cells meeting it drawn whole (a cell's rectangle is the product of a row mask and a
    column mask), then cut to the window."""
    cells = (n - OFFSET) // CELL  # whole cells a side
    i0, i1 = (r0 - OFFSET) // CELL, (r1 - 1 - OFFSET) // CELL + 1
    j0, j1 = (c0 - OFFSET) // CELL, (c1 - 1 - OFFSET) // CELL + 1
    gi, gj = np.arange(i0, i1), np.arange(j0, j1)
    valid = ((gi >= 0) & (gi < cells))[:, None] & ((gj >= 0) & (gj < cells))[None, :]
    k = (np.clip(gi, 0, None)[:, None] * cells + np.clip(gj, 0, None)[None, :]).astype(np.int64)
    u = [(_hash(k, s) % np.uint64(1 << 20)).astype(np.int64)[..., None] for s in range(10)]
    h, w = 8 + u[0] % 17, 8 + u[1] % 17
    top, left = u[2] % (CELL - h + 1), u[3] % (CELL - w + 1)
    kind = u[4] % 10
    sh = np.clip(h + u[7] % 5 - 2, 4, CELL)
    sw = np.clip(w + u[8] % 5 - 2, 4, CELL)
    stop = np.clip(top + u[5] % 7 - 3, 0, CELL - sh)
    sleft = np.clip(left + u[6] % 7 - 3, 0, CELL - sw)
    fa = u[9] % 10 == 0
    t = np.arange(CELL)  # position in the cell, rows or columns
    label = np.where(valid, k + 1, 0).astype(np.uint32)[..., None]

    def paint(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        """(ni, nj, CELL, CELL): ``values`` (per cell and column) on the rows ``rows``."""
        return rows.astype(np.uint32)[:, :, :, None] * values[:, :, None, :]

    ref = paint((t >= top) & (t < top + h), label * ((t >= left) & (t < left + w)))
    right = np.where((kind == 1) & (t >= sleft + sw // 2), np.uint32(SPLIT), np.uint32(0))
    sub = paint((t >= stop) & (t < stop + sh) & (kind != 0),
                (label + right) * ((t >= sleft) & (t < sleft + sw)) * (label > 0))
    corner = paint(fa & (t >= CELL - 4), (label + np.uint32(2 * SPLIT)) * (t >= CELL - 4)
                   * (label > 0))
    np.copyto(sub, corner, where=sub == 0)

    def cut(cell_labels: np.ndarray) -> np.ndarray:
        whole = cell_labels.transpose(0, 2, 1, 3).reshape((i1 - i0) * CELL, (j1 - j0) * CELL)
        y, x = r0 - (OFFSET + i0 * CELL), c0 - (OFFSET + j0 * CELL)
        return np.ascontiguousarray(whole[y:y + r1 - r0, x:x + c1 - c0], dtype=np.uint32)

    return cut(ref), cut(sub)


def generate(folder: Path, n: int, compress: str = "zstd") -> tuple[Path, Path, float]:
    """Both sides of the ``n × n`` mosaic, written window by window."""
    import rasterio
    from rasterio.transform import from_origin

    paths = folder / f"ref_{n}.tif", folder / f"sub_{n}.tif"
    done = folder / f"done_{n}"
    if done.exists():
        return *paths, 0.0
    t = time.perf_counter()
    profile = dict(driver="GTiff", width=n, height=n, count=1, dtype="uint32",
                   crs="EPSG:32631", transform=from_origin(500000, 4000000, 0.5, 0.5),
                   tiled=True, blockxsize=TILE, blockysize=TILE, compress=compress, zstd_level=1,
                   BIGTIFF="YES", nodata=None)
    with rasterio.open(paths[0], "w", **profile) as ref, \
            rasterio.open(paths[1], "w", **profile) as sub:
        for r in range(0, n, WINDOW):
            for c in range(0, n, WINDOW):
                r1, c1 = min(r + WINDOW, n), min(c + WINDOW, n)
                a, b = window_labels(n, r, r1, c, c1)
                win = rasterio.windows.Window(c, r, c1 - c, r1 - r)
                ref.write(a, 1, window=win)
                sub.write(b, 1, window=win)
    done.write_text("")
    return *paths, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    ap.add_argument("--matchers", default="iou,bgm")
    ap.add_argument("--skip-local-above", type=int, default=20_000)
    ap.add_argument("--memory-limit", default="6GB")
    ap.add_argument("--keep", type=Path, help="keep the mosaics in this folder")
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="geoeval-mosaic-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.sizes:
        ref, sub, gen = generate(folder, n)
        mb = [p.stat().st_size / 1e6 for p in (ref, sub)]
        print(f"{n:,} x {n:,}: generated in {gen:.0f} s, {mb[0]:.0f} + {mb[1]:.0f} MB",
              flush=True)
        local = None
        if n <= args.skip_local_above:
            t, gb, out = run([sys.executable, "-c", LOCAL, str(ref), str(sub), args.matchers])
            local = (t, gb, json.loads(out.splitlines()[-1]) if out else None)
            print(f"  local: {t:.1f} s, {gb:.2f} GB, {local[2]}", flush=True)
        t, gb, out = run_on_cluster(folder, args.memory_limit,
                                    [sys.executable, "-c", DASK, str(ref), str(sub),
                                     args.matchers])
        d = json.loads(out.splitlines()[-1]) if out else {}
        print(f"  dask: {t:.1f} s, client {d.get('client_gb', float('nan')):.2f} GB, "
              f"workers {d.get('workers_gb')}, scheduler {d.get('scheduler_gb')}, "
              f"restarted {d.get('restarted')}, objects {d.get('objects')}, "
              f"{d.get('blocks')}, stages {d.get('stages')}, load {d.get('load')}, "
              f"{d.get('results')}", flush=True)
        if local and local[2] and d:
            for name, (f1, acc, missed, fa) in local[2].items():
                got = d["results"][name]
                assert got[0] == f1 and got[2:] == [missed, fa], (name, got, local[2][name])
                assert abs(got[1] - acc) <= 1e-12 * abs(acc), (name, got[1], acc)
        rows.append({"n": n, "generate_s": gen, "mb": mb, "dask_s": t, "dask": d,
                     "local": local})
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("GDAL_CACHEMAX", "256")
    main()
