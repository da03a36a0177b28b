"""DOTA evaluation at the size of DOTA-v1.0 val: geoeval vs DOTA_devkit, in the same run.

A seeded DOTA-like data set (458 images of 800-4000 px, about 28,000 objects of the
15 classes as rotated rectangles, 8 % difficult; 300,000 detections: jittered
copies of the objects, some under another class, and clutter; scores on a 0.001
grid, so with ties) is written as labelTxt and Task1/Task2 files, then evaluated
by geoeval (``geoeval.evaluate_dota`` from the files, in this process; and the whole
``geoeval boxes dota … --quiet`` command in a fresh process) and by DOTA_devkit's
``voc_eval`` for every class, as its ``main()`` does (its scripts run unmodified,
``polyiou`` built from the mirror: ``tests/dota_devkit.py``). The script checks
that every per-class AP and the mAP are equal, and prints the times and ratios:
wall clock, and CPU time (user + system), which a loaded machine disturbs less.

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
sys.path.insert(0, str(HERE.parent))

from tests import dota_devkit as dk  # noqa: E402  (the oracle and the data)

#: The devkit's loop in a fresh interpreter (its imports included, as the command's are).
DEVKIT_PROCESS = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
                  "from tests import dota_devkit as dk; a = sys.argv; "
                  "dk.run_devkit(Path(a[2]), Path(a[3]), task=int(a[4]), work=Path(a[5]))")


def _process(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the child's) of running ``command``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(command, check=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


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
            wall, cpu = time.perf_counter(), time.process_time()
            ours = evaluate_dota(labels, dets, task=task)
            t_api, c_api = time.perf_counter() - wall, time.process_time() - cpu
            t_cli, c_cli = _process([exe, "boxes", "dota", str(labels), str(dets), "--task",
                                     str(task), "--quiet"])
            wall, cpu = time.perf_counter(), time.process_time()
            ref = dk.run_devkit(labels, dets, task=task, work=work)
            t_dev, c_dev = time.perf_counter() - wall, time.process_time() - cpu
            t_devp, c_devp = _process([sys.executable, "-c", DEVKIT_PROCESS,
                                       str(HERE.parent), str(labels), str(dets),
                                       str(task), str(work)])
            same = (all(ours.classes[c].ap == a for c, a in ref.ap.items())
                    and ours.map == dk.expected_map(ref.ap, "voc07"))
            print(f"task {task}: mAP {ours.map:.6f} (devkit {ref.map:.6f}, every AP equal: "
                  f"{same})")
            print(f"  in this process: geoeval.evaluate_dota {t_api:6.2f} s ({c_api:6.2f} s "
                  f"CPU), DOTA_devkit voc_eval x 15 {t_dev:7.2f} s ({c_dev:7.2f} s CPU): "
                  f"{t_dev / t_api:5.1f}x wall, {c_dev / c_api:5.1f}x CPU")
            print(f"  whole processes: geoeval boxes dota {t_cli:6.2f} s ({c_cli:6.2f} s CPU), "
                  f"the devkit's loop {t_devp:7.2f} s ({c_devp:7.2f} s CPU): "
                  f"{t_devp / t_cli:5.1f}x wall, {c_devp / c_cli:5.1f}x CPU")
            if not same:
                raise SystemExit("geoeval and the devkit disagree")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
