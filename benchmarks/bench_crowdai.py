"""The CrowdAI building-polygon table: geoeval against the five reference scripts, side by side.

A seeded CrowdAI-style data set (``sample_data/crowdai_tiles.py``: 300 × 300 px
tiles with about 8 buildings each, predictions that are noisy copies plus false
alarms; every tile has a building and a prediction, so that every script runs
to the end) is written as two JSON files. Then, each in a fresh process reading
the files, as a user runs them one after another:

1. pycocotools ``COCOeval(iouType="segm")`` (mask AP/AR);
2. boundary-iou-api ``COCOeval(iouType="boundary")`` (Boundary AP; needs OpenCV);
3. PolyWorld's ``coco_IoU_cIoU.py`` (IoU, C-IoU);
4. HiSup's copy of frame-field learning's ``ContourEval`` (MTA), in a pool of 20
   processes as HiSup's ``tools/evaluation.py`` runs it;
5. HiSup's ``PolisEval`` (PoLiS);

and ``geoeval.evaluate_crowdai`` once, from the same files (wall and CPU time: on a
shared machine the CPU time is the steadier figure). The scripts come from
their repositories at the commits of ``tests/crowdai_oracles.py`` (bare mirrors
under ``/work/.mirror``, or ``GEOEVAL_ORACLE_MIRRORS``). Prints each time, the
sum and the ratio, and checks that every number agrees.

Run: ``python benchmarks/bench_crowdai.py [--tiles 6000] [--seed 0]``
(pycocotools, OpenCV: benchmark-only, not geoeval dependencies).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import bench_coco_peers  # noqa: E402

from sample_data.crowdai_tiles import tiles  # noqa: E402

_HEAD = (f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); "
         "from tests import crowdai_oracles as O\n")
# pycocotools and boundary-iou-api as users run them
_PEERS = bench_coco_peers.runners("boundary")
STEPS = {
    "pycocotools segm": bench_coco_peers.runners("segm")["pycocotools"][0],
    "boundary-iou-api": _PEERS["boundary-iou-api"][0],
    "PolyWorld IoU, C-IoU": "print(json.dumps(O.polyworld_iou_ciou(sys.argv[1], sys.argv[2])))",
    "HiSup/FFL MTA (pool of 20)":
        "print(json.dumps(float(O.hisup_mta(sys.argv[1], sys.argv[2], processes=20).mean())))",
    "HiSup PoLiS": "print(json.dumps(O.hisup_polis(sys.argv[1], sys.argv[2])))",
}
_GEOEVAL = """
import json, sys
import geoeval
print(json.dumps(geoeval.evaluate_crowdai(sys.argv[1], sys.argv[2]).to_dict()))
"""


def run(code: str, gt: Path, dt: Path) -> tuple[float, float, object]:
    """Wall time and CPU time (user + system, its own processes included) of a fresh
    process running ``code`` on the two files, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(gt), str(dt)], capture_output=True,
                          text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return wall, cpu, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    gt, dt = tiles(args.tiles, seed=args.seed, per_image=8, p_empty=0.0, p_unpredicted=0.0,
                   min_per_image=1, min_predictions=1)
    print(f"{args.tiles} tiles, {len(gt['annotations'])} buildings, {len(dt)} predictions")
    with tempfile.TemporaryDirectory() as tmp:
        g, d = Path(tmp) / "annotation.json", Path(tmp) / "results.json"
        g.write_text(json.dumps(gt))
        d.write_text(json.dumps(dt))
        geo_wall, geo_cpu, geo = run(_GEOEVAL, g, d)
        print(f"{'':32s} {'wall':>8s}   {'CPU':>8s}")
        print(f"{'geoeval evaluate_crowdai':32s} {geo_wall:8.2f} s {geo_cpu:8.2f} s")
        if not _PEERS["boundary-iou-api"][1]:
            raise SystemExit("boundary-iou-api needs OpenCV and its mirror")
        wall_sum, cpu_sum, ref = 0.0, 0.0, {}
        for name, code in STEPS.items():
            wall, cpu, ref[name] = run(_HEAD + code, g, d)
            wall_sum, cpu_sum = wall_sum + wall, cpu_sum + cpu
            print(f"{name:32s} {wall:8.2f} s {cpu:8.2f} s")
    print(f"{'the five scripts':32s} {wall_sum:8.2f} s {cpu_sum:8.2f} s")
    print(f"ratio: wall {wall_sum / geo_wall:.1f}x, CPU {cpu_sum / geo_cpu:.1f}x "
          f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    check(geo, ref)


def check(geo: dict, ref: dict) -> None:
    """Every number of the report against its script's."""
    import numpy as np

    names = ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm",
             "ARl")

    def stats(d: dict) -> list[float]:
        return [-1.0 if d[k] is None else d[k] for k in names]

    np.testing.assert_allclose(stats(geo["stats"]), ref["pycocotools segm"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(stats(geo["boundary_stats"]), ref["boundary-iou-api"], rtol=0,
                               atol=1e-12)
    pm = geo["polygon_metrics"]
    np.testing.assert_allclose([pm["iou"], pm["ciou"]], ref["PolyWorld IoU, C-IoU"], rtol=1e-13)
    assert pm["mta"] == ref["HiSup/FFL MTA (pool of 20)"], (pm["mta"], ref)
    assert pm["polis"] == ref["HiSup PoLiS"], (pm["polis"], ref)
    print("every number agrees (AP, Boundary AP to 1e-12, IoU and C-IoU to 1e-13 relative, "
          "MTA and PoLiS bit for bit)")


if __name__ == "__main__":
    main()
