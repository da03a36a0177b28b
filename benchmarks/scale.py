"""Vector scale: geoeval against the plain geopandas + shapely 2 script, same run.

A synthetic city of building footprints (rectangles and L-shapes on a jittered
grid) and a detector output (shifted and scaled outlines, 5 % missed, 3 % false
alarms, some neighbours merged, some buildings split; optionally 5 % of the
detections repeated 0–2 m away, so that the submission overlaps itself) are
written as GeoPackages. Then, each as a fresh process:

* the plain script a competent user would write: read both layers, one
  ``STRtree.query`` for candidate pairs, vectorised intersection areas, IoU,
  one-to-one at IoU >= 0.5 (greedy by IoU when a side overlaps itself), F1;
* ``geoeval score ref.gpkg sub.gpkg --matcher iou --json out.json`` and
  ``--matcher bgm``.

F1 must agree; times, ratios and peak memory (max RSS of the process) are
printed.

    python benchmarks/scale.py --sizes 10000 100000 [--duplicates] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

#: The plain script's work once both layers are read (``ref``, ``sub``): SpaceNet's
#: F1 at IoU >= 0.5 with geopandas + shapely, as a competent user would write it.
PLAIN_F1 = r'''
rg, sg = ref.geometry.values, sub.geometry.values
i, j = shapely.STRtree(sg).query(rg, predicate="intersects")
inter = shapely.area(shapely.intersection(rg[i], sg[j]))
ra, sa = shapely.area(rg), shapely.area(sg)
iou = inter / (ra[i] + sa[j] - inter)
keep = iou >= 0.5 * (1 - 1e-12)  # SpaceNet IoU >= 0.5; IoU = 0.5 exactly survives rounding
i, j, iou = i[keep], j[keep], iou[keep]
# IoU > 0.5 is one-to-one unless a side overlaps itself: greedy by IoU then
order = np.argsort(-iou, kind="stable")
used_r, used_s, tp = set(), set(), 0
for k in order:
    a, b = int(i[k]), int(j[k])
    if a not in used_r and b not in used_s:
        used_r.add(a); used_s.add(b); tp += 1
p, r = tp / len(sg), tp / len(rg)
print(2 * p * r / (p + r))
'''
PLAIN = r'''
import sys, numpy as np, geopandas as gpd, shapely
ref = gpd.read_file(sys.argv[1]); sub = gpd.read_file(sys.argv[2])''' + PLAIN_F1


def city(n: int, seed: int = 0, duplicates: bool = False):
    """Reference and submission footprints (shapely arrays) in a metric CRS."""
    import shapely

    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(n)))
    gx, gy = np.meshgrid(np.arange(side), np.arange(side))
    cx = gx.ravel()[:n] * 30.0 + rng.uniform(-4, 4, n)
    cy = gy.ravel()[:n] * 30.0 + rng.uniform(-4, 4, n)
    w, h = rng.uniform(8, 18, n), rng.uniform(8, 18, n)
    ref = shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    ell = rng.random(n) < 0.3  # L-shapes: cut a corner
    cut = shapely.box(cx[ell], cy[ell], cx[ell] + w[ell], cy[ell] + h[ell])
    ref[ell] = shapely.difference(ref[ell], cut)
    # detections: shifted and scaled, misses, merges of neighbours, splits; each merge
    # or split replaces the detections it stands for, so only --duplicates makes the
    # submission overlap itself
    dx, dy = rng.normal(0, 0.8, n), rng.normal(0, 0.8, n)
    s = rng.uniform(0.9, 1.1, n)
    det = shapely.box(cx - s * w / 2 + dx, cy - s * h / 2 + dy, cx + s * w / 2 + dx,
                      cy + s * h / 2 + dy)
    free = rng.random(n) > 0.05  # 5 % missed
    merge = np.flatnonzero(rng.random(n - 1) < 0.01)
    merge = merge[(merge + 1) % side != 0]  # neighbours in one row, not across a row's end
    merge = merge[np.r_[True, np.diff(merge) > 1]] if merge.size else merge  # disjoint pairs
    merged = shapely.box(cx[merge] - w[merge] / 2, cy[merge] - h[merge] / 2,
                         cx[merge + 1] + w[merge + 1] / 2, cy[merge + 1] + h[merge + 1] / 2)
    free[merge] = free[merge + 1] = False
    split = np.flatnonzero((rng.random(n) < 0.01) & free)
    halves = np.concatenate([
        shapely.box(cx[split] - w[split] / 2, cy[split] - h[split] / 2, cx[split],
                    cy[split] + h[split] / 2),
        shapely.box(cx[split], cy[split] - h[split] / 2, cx[split] + w[split] / 2,
                    cy[split] + h[split] / 2)])
    free[split] = False
    fa = rng.random(n) < 0.03
    false_alarms = shapely.box(cx[fa] + 12, cy[fa] + 12, cx[fa] + 15, cy[fa] + 15)
    det = np.concatenate([det[free], merged, halves, false_alarms])
    if duplicates:
        dup = det[rng.random(det.size) < 0.05]
        det = np.concatenate([det, shapely.transform(
            dup, lambda xy: xy + rng.uniform(0, 2, size=2))])
    return ref, det


def write(path: Path, geoms) -> None:
    import geopandas as gpd

    gpd.GeoDataFrame({"id": np.arange(len(geoms))}, geometry=geoms,
                     crs="EPSG:32651").to_file(path, layer="b", engine="pyogrio")


_MEASURE = (
    "import json, resource, subprocess, sys, time; t = time.perf_counter(); "
    "out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout; "
    "wall = time.perf_counter() - t; "
    "print(json.dumps([wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, out]))"
)


def run(cmd: list[str]) -> tuple[float, float, str]:
    """Wall time, peak RSS (GB, of that process alone) and stdout of one fresh process."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], check=True,
                          capture_output=True, text=True)
    wall, kib, out = json.loads(done.stdout)
    return wall, kib / 1e6, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--duplicates", action="store_true",
                    help="repeat 5 %% of the detections 0-2 m away (self-overlap)")
    ap.add_argument("--keep", type=Path, help="keep the layers in this folder")
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="geoeval-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{'n':>9} {'plain s':>8} {'iou s':>8} {'ratio':>6} {'bgm s':>8} {'ratio':>6}"
          f" {'peak GB':>8}  F1 plain / iou / bgm")
    for n in args.sizes:
        ref, det = city(n, duplicates=args.duplicates)
        a, b = folder / f"ref_{n}.gpkg", folder / f"sub_{n}{'_dup' if args.duplicates else ''}.gpkg"
        write(a, ref)
        write(b, det)
        t_plain, _, out = run([sys.executable, "-c", PLAIN, str(a), str(b)])
        f1_plain = float(out)
        res = {}
        for m in ("iou", "bgm"):
            js = folder / f"out_{m}_{n}.json"
            t, peak, _ = run([sys.executable, "-m", "geoeval.cli", "score", str(a), str(b),
                              "--matcher", m, "--json", str(js), "-q"])
            res[m] = (t, peak, json.loads(js.read_text())["results"][m]["f1"])
        print(f"{n:>9} {t_plain:8.2f} {res['iou'][0]:8.2f} {res['iou'][0] / t_plain:6.2f}"
              f" {res['bgm'][0]:8.2f} {res['bgm'][0] / t_plain:6.2f}"
              f" {max(res['iou'][1], res['bgm'][1]):8.2f}  {f1_plain:.6f} / "
              f"{res['iou'][2]:.6f} / {res['bgm'][2]:.6f}")


if __name__ == "__main__":
    main()
