"""Raster scale: ``geoeval score`` on two labelled GeoTIFFs against the windowed floor, same run.

A synthetic pair of tiled (256 x 256), deflate-compressed ``uint32`` label
rasters of ``n x n`` pixels: the reference is a grid of square objects 29 px
wide (one pixel of background between neighbours, 10 % of the cells empty),
the submission the same objects shrunk by 3 px and shifted by (2, -1) px,
every fifth split in two, every seventh merged with its right neighbour, 5 %
missed, so matching has splits, merges, misses and false alarms in small
components. About ``(n / 30)**2`` objects a side
(~800 k at 27 k²). Then, each as a fresh process:

* the floor: read both rasters once, window by window (rows of blocks, two
  threads), and count the (reference, submission) label pairs with numpy
  (run lengths along rows, ``np.unique`` per window, merged);
* ``geoeval score ref.tif sub.tif --matcher bgm --json out.json``.

Times, the ratio to the floor and the peak memory (max RSS of the process)
are printed.

    python benchmarks/bench_raster.py --sizes 3000 13000 [--keep DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CELL = 30

FLOOR = r'''
import sys, numpy as np, rasterio
from concurrent.futures import ThreadPoolExecutor
a_path, b_path = sys.argv[1], sys.argv[2]
with rasterio.open(a_path) as ds:
    h, w = ds.shape
    bh = ds.block_shapes[0][0]
step = bh * max(1, (1 << 22) // (bh * w))
local = __import__("threading").local()
def part(r0):
    if not hasattr(local, "ds"):
        local.ds = (rasterio.open(a_path), rasterio.open(b_path))
    win = rasterio.windows.Window(0, r0, w, min(step, h - r0))
    a = local.ds[0].read(1, window=win).ravel(); b = local.ds[1].read(1, window=win).ravel()
    both = (a != 0) & (b != 0)
    a, b = a[both], b[both]
    if a.size == 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    s = np.flatnonzero(np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])])
    key = (a[s].astype(np.uint64) << np.uint64(32)) | b[s].astype(np.uint64)
    k, inv = np.unique(key, return_inverse=True)
    return k, np.bincount(inv, weights=np.diff(np.r_[s, a.size])).astype(np.int64)
with rasterio.Env(GDAL_CACHEMAX=64), ThreadPoolExecutor(2) as pool:  # blocks read once
    parts = list(pool.map(part, range(0, h, step)))
keys = np.concatenate([k for k, _ in parts]); counts = np.concatenate([c for _, c in parts])
k, inv = np.unique(keys, return_inverse=True)
print(k.size, int(np.bincount(inv, weights=counts).sum()))
'''


def make_pair(n: int, folder: Path, seed: int = 0) -> tuple[Path, Path, int]:
    """Write ref.tif and sub.tif (n x n) by windows; return the paths and the object count."""
    import rasterio
    from rasterio.transform import from_origin

    rng = np.random.default_rng(seed)
    cells = -(-n // CELL) + 1
    keep_ref = rng.random((cells, cells)) >= 0.10
    keep_sub = rng.random((cells, cells)) >= 0.05
    paths = folder / "ref.tif", folder / "sub.tif"
    profile = dict(driver="GTiff", width=n, height=n, count=1, dtype="uint32",
                   crs="EPSG:32631", transform=from_origin(500000, 5000000, 0.5, 0.5),
                   tiled=True, blockxsize=256, blockysize=256, compress="deflate",
                   nodata=None)
    cols = np.arange(n)
    with rasterio.open(paths[0], "w", **profile) as r, rasterio.open(paths[1], "w", **profile) as s:
        for r0 in range(0, n, 1024):
            rows = np.arange(r0, min(r0 + 1024, n))
            cc = cols[None, :]
            rr = rows[:, None]
            ci, cj = rr // CELL, cc // CELL
            ref_lab = (ci * cells + cj + 1).astype(np.uint32)
            ref_lab[(rr % CELL == 0) | (cc % CELL == 0) | ~keep_ref[ci, cj]] = 0
            # submission: each cell shrunk by 3 px and shifted by (2, -1), so it stays in its
            # cell; every fifth split in two halves, every seventh merged with its right
            # neighbour (the gap between them filled), 5 % missed
            ur, uc = (rr - 2) % CELL, (cc + 1) % CELL
            si, sj = (rr - 2) // CELL, (cc + 1) // CELL
            cid = si * cells + sj
            merged = (cid % 7 == 0)
            inside = (ur >= 3) & (ur < CELL - 3) & (uc >= 3) & ((uc < CELL - 3) | merged)
            left = ((cid - 1) % 7 == 0) & (ur >= 3) & (ur < CELL - 3) & (uc < 3)
            sub_lab = np.where(left, cid - 1, cid).astype(np.uint32) + 1
            sub_lab[~(inside | left) | ~keep_sub[si % cells, sj % cells] | (rr < 2)] = 0
            half = (cid % 5 == 0) & (uc >= CELL // 2) & (sub_lab > 0) & ~merged
            sub_lab[half] += np.uint32(cells * cells)
            for dst, lab in ((r, ref_lab), (s, sub_lab)):
                dst.write(lab, 1, window=rasterio.windows.Window(0, r0, n, rows.size))
    return paths[0], paths[1], int(keep_ref.sum())


def run(cmd: list[str]) -> tuple[float, float, str]:
    """Wall time (s), peak RSS (GiB) and stdout of a fresh process."""
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    rss_kb = int(out.stderr.strip().splitlines()[-1])
    return wall, rss_kb / 2**20, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[3000, 13000])
    ap.add_argument("--keep", type=Path, help="write the rasters here (else a temp folder)")
    args = ap.parse_args()
    geoeval_cli = str(Path(sys.executable).with_name("geoeval"))
    print(f"{'n':>6} {'objects':>8} {'floor s':>8} {'floor GiB':>9} {'geoeval s':>9} "
          f"{'GiB':>5} {'ratio':>6}")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = args.keep or Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            ref, sub, n_obj = make_pair(n, folder)
            f_t, f_m, _ = run([sys.executable, "-c", FLOOR, str(ref), str(sub)])
            g_t, g_m, _ = run([geoeval_cli, "score", str(ref), str(sub), "--matcher", "bgm",
                               "--json", str(folder / "out.json")])
            print(f"{n:>6} {n_obj:>8} {f_t:>8.1f} {f_m:>9.2f} {g_t:>9.1f} {g_m:>5.2f} "
                  f"{g_t / f_t:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
