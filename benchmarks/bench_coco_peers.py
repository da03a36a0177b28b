"""COCO box evaluation end to end from files: geoeval against its peers, side by side.

The seeded synthetic val2017-sized set of ``bench_coco.py`` (5,000 images, about
37,000 ground-truth boxes with crowd regions, about 500,000 detections) is
written as two JSON files; each evaluator then runs in a fresh process, as a
user runs it: read both files, evaluate, accumulate, summarise. Wall time and
peak RSS of each process are printed with the ratio to geoeval, and the twelve
numbers of every evaluator are checked against pycocotools' (bit for bit).

Peers (benchmark-only, not geoeval dependencies; skipped when missing):
pycocotools (``pip install pycocotools``), faster-coco-eval
(``pip install faster-coco-eval``), hotcoco (``pip install hotcoco``, Rust).

Run: ``python benchmarks/bench_coco_peers.py [--images 5000] [--seed 0] [--repeat 1]
[--skip pycocotools]`` (wall and CPU time, user + system of all threads: the fairer
figure on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_coco import synthetic  # noqa: E402

# each runner prints json [stats...] on its last stdout line; IOU is the iouType
_PYCOCO = """
import contextlib, io, json, sys
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
with contextlib.redirect_stdout(io.StringIO()):
    g = COCO(sys.argv[1]); d = g.loadRes(sys.argv[2])
    e = COCOeval(g, d, "IOU"); e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats]))
"""
_FASTER = """
import contextlib, io, json, sys
from faster_coco_eval import COCO, COCOeval_faster
with contextlib.redirect_stdout(io.StringIO()):
    g = COCO(sys.argv[1]); d = g.loadRes(sys.argv[2])
    e = COCOeval_faster(g, d, "IOU"); e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats]))
"""
_HOTCOCO = """
import contextlib, io, json, sys
import hotcoco
with contextlib.redirect_stdout(io.StringIO()):
    g = hotcoco.COCO(sys.argv[1]); d = g.loadRes(sys.argv[2])
    e = hotcoco.COCOeval(g, d, "IOU"); e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats]))
"""
_GEOEVAL = """
import json, sys
import geoeval
r = geoeval.evaluate_coco(sys.argv[1], sys.argv[2], iou_type="IOU")
print(json.dumps([float(x) for x in r.stats_array]))
"""
# Boundary AP's reference: the authors' evaluator as they run it (OpenCV, the boundaries
# on every core) from a checkout of boundary-iou-api (CHECKOUT); numpy 2 has no
# np.float, which its accumulate uses
_BOUNDARY_IOU_API = """
import contextlib, io, json, sys
import numpy as np
sys.path.insert(0, CHECKOUT)
np.float = float
from boundary_iou.coco_instance_api.coco import COCO
from boundary_iou.coco_instance_api.cocoeval import COCOeval
with contextlib.redirect_stdout(io.StringIO()):
    g = COCO(sys.argv[1], get_boundary=True, dilation_ratio=0.02); d = g.loadRes(sys.argv[2])
    e = COCOeval(g, d, "boundary", dilation_ratio=0.02)
    e.evaluate(); e.accumulate(); e.summarize()
print(json.dumps([float(x) for x in e.stats]))
"""
_MEASURE = (
    "import json, resource, subprocess, sys, time; t = time.perf_counter(); "
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "wall = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(json.dumps([done.returncode, wall, u.ru_maxrss, u.ru_utime + u.ru_stime, "
    "done.stdout, done.stderr]))"
)


def runners(iou_type: str = "bbox") -> dict[str, tuple[str, str]]:
    """Each evaluator's runner code for ``iou_type`` (``bbox``, ``segm`` or ``boundary``)
    and the module it needs (empty: not available). For ``boundary`` the reference is
    boundary-iou-api (a checkout of its mirror; OpenCV) in pycocotools' place, and
    hotcoco, which has no Boundary AP, is left out."""
    peers = {"geoeval": (_GEOEVAL, "geoeval"), "pycocotools": (_PYCOCO, "pycocotools"),
             "faster-coco-eval": (_FASTER, "faster_coco_eval"), "hotcoco": (_HOTCOCO, "hotcoco")}
    if iou_type == "boundary":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.coco_segm_data import boundary_iou_api

        checkout = boundary_iou_api()
        api = (_BOUNDARY_IOU_API.replace("CHECKOUT", repr(str(checkout))),
               "cv2" if checkout else "")
        peers = {"geoeval": peers["geoeval"], "boundary-iou-api": api,
                 "faster-coco-eval": peers["faster-coco-eval"]}
    return {name: (code.replace('"IOU"', repr(iou_type).replace("'", '"')), module)
            for name, (code, module) in peers.items()}


RUNNERS = runners("bbox")


def available(module: str) -> bool:
    return bool(module) and subprocess.run([sys.executable, "-c", f"import {module}"],
                          capture_output=True).returncode == 0


def run(code: str, gt: Path, dt: Path, cpu: bool = False
        ) -> tuple[float, float, list[float]] | tuple[float, float, list[float], float]:
    """Wall time (s), peak RSS (MB) and the twelve numbers of one fresh process (and,
    with ``cpu``, its CPU time: user + system, all threads; the fairer figure on a
    busy machine)."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-c", code,
                          str(gt), str(dt)], check=True, capture_output=True, text=True)
    rc, wall, kib, seconds, stdout, stderr = json.loads(out.stdout)
    if rc != 0:
        raise SystemExit(f"runner failed:\n{stderr}")
    stats = json.loads(stdout.strip().splitlines()[-1])
    return (wall, kib / 1024, stats, seconds) if cpu else (wall, kib / 1024, stats)


def compare(runners: dict[str, tuple[str, str]], gt: Path, dt: Path, repeat: int = 1,
            skip: tuple[str, ...] = ()) -> dict[str, tuple[float, float, list[float], float]]:
    """Each available evaluator run ``repeat`` times, the repeats interleaved (one of each
    in turn, so that the machine's load falls on all alike): best wall time, peak RSS,
    the twelve numbers and best CPU time of each. Prints the table of ratios to geoeval
    and exits 1 if any evaluator's numbers differ from the reference's (pycocotools, or
    boundary-iou-api for Boundary AP; geoeval's when the reference is skipped)."""
    names = [n for n, (_, module) in runners.items() if n not in skip and available(module)]
    for n in runners:
        if n not in names:
            print(f"{n}: skipped")
    runs: dict[str, list] = {n: [] for n in names}
    for _ in range(repeat):
        for n in names:
            runs[n].append(run(runners[n][0], gt, dt, cpu=True))
    rows = {n: (min(r[0] for r in rs), rs[0][1], rs[0][2], min(r[3] for r in rs))
            for n, rs in runs.items()}
    oracle = next((n for n in ("pycocotools", "boundary-iou-api") if n in rows), "geoeval")
    ref, base = rows[oracle][2], rows["geoeval"]
    print(f"{'evaluator':18s} {'wall s':>8s} {'/ geoeval':>10s} {'CPU s':>8s} {'/ geoeval':>10s} "
          f"{'peak MB':>8s} {'/ geoeval':>10s}  12 numbers = {oracle}")
    for n, (wall, mb, stats, cpu) in rows.items():
        print(f"{n:18s} {wall:8.2f} {wall / base[0]:10.2f} {cpu:8.2f} {cpu / base[3]:10.2f} "
              f"{mb:8.0f} {mb / base[1]:10.2f}  {stats == ref}")
    if any(row[2] != ref for row in rows.values()):
        raise SystemExit(1)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per evaluator, interleaved (the best is kept)")
    ap.add_argument("--skip", nargs="*", default=[], help="evaluators not to run")
    args = ap.parse_args()
    gt, dets = synthetic(n_images=args.images, seed=args.seed)
    print(f"data set: {len(gt['images'])} images, {len(gt['annotations'])} ground-truth boxes, "
          f"{len(dets)} detections")
    with tempfile.TemporaryDirectory() as tmp:
        g, d = Path(tmp) / "gt.json", Path(tmp) / "dt.json"
        g.write_text(json.dumps(gt))
        d.write_text(json.dumps(dets))
        compare(RUNNERS, g, d, args.repeat, tuple(args.skip))


if __name__ == "__main__":
    main()
