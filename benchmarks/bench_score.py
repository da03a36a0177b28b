"""Time ``geoeval score --matcher bgm`` against a bare read-and-count process.

Issue target: the whole CLI run (interpreter start-up included) takes at most
3× a bare Python process that only reads the two rasters and counts label
pairs, on the sample scene and on one four times larger (3336 × 3336 px,
~12,000 buildings, made by ``sample_data/make_sample.py``). Also prints how MOM
solved the overlap components of the nine sample submissions (share that
needed the ILP).

Run: ``python benchmarks/bench_score.py [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"

BARE = r"""
import sys
import numpy as np
import rasterio
with rasterio.open(sys.argv[1]) as a, rasterio.open(sys.argv[2]) as b:
    r = a.read(1).ravel()
    s = b.read(1).ravel()
both = (r != 0) & (s != 0)
key = r[both].astype(np.int64) * (int(s.max()) + 1) + s[both]
pairs, counts = np.unique(key, return_counts=True)
print(pairs.size)
"""


def timed(cmd: list[str], repeat: int) -> float:
    """Median wall time of ``repeat`` runs (after one warm-up run)."""
    subprocess.run(cmd, check=True, capture_output=True)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def geoeval_cmd() -> list[str]:
    exe = shutil.which("geoeval")
    return [exe] if exe else [sys.executable, "-m", "geoeval.cli.main"]


def compare(name: str, ref: Path, sub: Path, repeat: int) -> None:
    bare = timed([sys.executable, "-c", BARE, str(ref), str(sub)], repeat)
    ours = timed(geoeval_cmd() + ["score", str(ref), str(sub), "--matcher", "bgm", "-q"], repeat)
    print(f"{name:<28} bare read+count {bare:6.3f} s   geoeval score --matcher bgm "
          f"{ours:6.3f} s   ratio {ours / bare:4.2f} (target <= 3)")


def large_scene(folder: Path) -> tuple[Path, Path]:
    """Write a 4× scene (3336 × 3336 px) and one raster submission of it."""
    sys.path.insert(0, str(SAMPLE))
    import make_sample  # noqa: E402  (the committed generator)
    import numpy as np
    import rasterio

    labels, transform, crs = make_sample.make_scene(size_px=3336, n_buildings=12000, seed=2009)
    subs = make_sample.make_submissions(labels, seed=2009)
    raster_sub = next(v for k, v in subs.items() if isinstance(v, np.ndarray)
                      and "frag" in k) if any("frag" in k for k in subs) else next(
        v for v in subs.values() if isinstance(v, np.ndarray))
    paths = []
    for name, arr in (("reference.tif", labels), ("submission.tif", raster_sub)):
        p = folder / name
        with rasterio.open(p, "w", driver="GTiff", width=arr.shape[1], height=arr.shape[0],
                           count=1, dtype=arr.dtype, crs=crs, transform=transform,
                           compress="deflate", tiled=True) as dst:
            dst.write(arr, 1)
        paths.append(p)
    return paths[0], paths[1]


def ilp_share() -> None:
    import geoeval

    total = {"taken_whole": 0, "tree_dp": 0, "enumerated": 0, "ilp": 0}
    for sub in sorted((SAMPLE / "submissions").iterdir()):
        if sub.suffix.lower() not in {".tif", ".shp", ".gpkg"}:
            continue
        t0 = time.perf_counter()
        res = geoeval.score(SAMPLE / "reference.tif", sub, matchers=["mom"])
        stats = res.results["mom"].matching.solver_stats
        for k in total:
            total[k] += stats.get(k, 0)
        print(f"  {sub.name:<26} components {res.overlap.n_components:5d}  {stats}  "
              f"{time.perf_counter() - t0:5.2f} s")
    n = sum(total.values())
    print(f"MOM over the nine submissions: {n} components; {total}; "
          f"ILP share {total['ilp'] / max(n, 1):.4%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    raster_subs = sorted((SAMPLE / "submissions").glob("*.tif"))
    sub = next((p for p in raster_subs if "frag" in p.name), raster_subs[0])
    compare(f"sample ({sub.name})", SAMPLE / "reference.tif", sub, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        ref4, sub4 = large_scene(Path(tmp))
        compare("4x scene (3336 x 3336)", ref4, sub4, args.repeat)
    ilp_share()


if __name__ == "__main__":
    main()
