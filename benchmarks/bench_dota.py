"""DOTA evaluation at the size of DOTA-v1.0 val: geoeval vs DOTA_devkit, in the same run.

A seeded DOTA-like data set (458 images of 800-4000 px, about 28,000 objects of the
15 classes as rotated rectangles, 8 % difficult; 300,000 detections: jittered
copies of the objects, some under another class, and clutter; scores on a 0.001
grid, so with ties) is written as labelTxt and Task1/Task2 files, then evaluated
by geoeval (``geoeval.evaluate_dota`` from the files, in this process; and the whole
``geoeval boxes dota … --quiet`` command in a fresh process) and by DOTA_devkit's
``voc_eval`` for every class, as its ``main()`` does (its scripts run unmodified,
``polyiou`` built from the mirror: ``tests/dota_devkit.py``). The script checks
that every per-class AP and the mAP are equal, and prints the times and ratios.

Run: ``python benchmarks/bench_dota.py [--images 458] [--objects 61]
[--detections 300000] [--seed 0]`` (swig and g++ needed for the devkit's polyiou).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import dota_devkit as dk  # noqa: E402  (tests/dota_devkit.py: the oracle and the data)

#: The devkit's loop in a fresh interpreter (its imports included, as the command's are).
DEVKIT_PROCESS = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
                  "import dota_devkit as dk; a = sys.argv; "
                  "dk.run_devkit(Path(a[2]), Path(a[3]), task=int(a[4]), work=Path(a[5]))")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=458)
    ap.add_argument("--objects", type=float, default=61.0, help="mean objects an image")
    ap.add_argument("--detections", type=int, default=300_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import pyarrow.csv  # noqa: F401  (imported before the clock, as the devkit's numpy)

    from geoeval.challenges.dota import evaluate_dota

    dk.script(1, "1.0"), dk.script(2, "1.0")  # the devkit's modules imported (and built)
    work = Path(tempfile.mkdtemp(prefix="bench_dota."))
    try:
        data = dk.synthetic(args.images, args.objects, args.detections, seed=args.seed)
        labels, dets = dk.write(data, work / "set")
        print(f"{len(data.images)} images, {data.gt_image.size} objects "
              f"({int(data.gt_difficult.sum())} difficult), {data.det_image.size} detections")
        exe = shutil.which("geoeval") or "geoeval"
        for task in (1, 2):
            t0 = time.perf_counter()
            ours = evaluate_dota(labels, dets, task=task)
            t_api = time.perf_counter() - t0
            t0 = time.perf_counter()
            subprocess.run([exe, "boxes", "dota", str(labels), str(dets), "--task", str(task),
                            "--quiet"], check=True)
            t_cli = time.perf_counter() - t0
            ref = dk.run_devkit(labels, dets, task=task, work=work)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", DEVKIT_PROCESS, str(HERE.parent / "tests"),
                            str(labels), str(dets), str(task), str(work)], check=True)
            t_devkit_process = time.perf_counter() - t0
            same = (all(ours.classes[c].ap == a for c, a in ref.ap.items())
                    and ours.map == dk.expected_map(ref.ap, "voc07"))
            print(f"task {task}: mAP {ours.map:.6f} (devkit {ref.map:.6f}, every AP equal: "
                  f"{same})")
            print(f"  in this process: geoeval.evaluate_dota {t_api:6.2f} s, DOTA_devkit "
                  f"voc_eval x 15 {ref.seconds:7.2f} s: {ref.seconds / t_api:5.1f}x")
            print(f"  whole processes: geoeval boxes dota {t_cli:6.2f} s, the devkit's loop "
                  f"{t_devkit_process:7.2f} s: {t_devkit_process / t_cli:5.1f}x")
            if not same:
                raise SystemExit("geoeval and the devkit disagree")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
