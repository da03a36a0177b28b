"""Benchmark of the Mallows shape score (issue 3, item 6).

Compares, on the sample scene, for the same MOM instances:

(a) ``geoeval.measures.mallows.mallows_scores`` (μ − ν differenced problem,
    process pool), and
(b) a bare single-process loop computing the same masses (per-object distance
    transforms) and calling POT's exact EMD (``ot.emd2``) on the full,
    undifferenced problem of every instance,

and times the whole ``geoeval score --matcher mom`` CLI (its report says whether
it already includes the Mallows score). With ``--approx`` it measures the error
of block pooling on a test set instead.

Usage::

    python benchmarks/bench_mallows.py [--submission PATH] [--jobs N]
    python benchmarks/bench_mallows.py --approx
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def synthetic_scene(seed: int = 0):
    """A fallback scene when sample_data/ is missing: 600 rectangles, noisy copies."""
    from geoeval.io.raster import objects_from_labels

    rng = np.random.default_rng(seed)
    size = 1200
    ref = np.zeros((size, size), dtype=np.int32)
    sub = np.zeros((size, size), dtype=np.int32)
    k = 0
    for r in range(10, size - 50, 48):
        for c in range(10, size - 50, 48):
            h, w = rng.integers(8, 40, size=2)
            k += 1
            ref[r : r + h, c : c + w] = k
            dr, dc = rng.integers(-3, 4, size=2)
            sub[max(r + dr, 0) : r + dr + h, max(c + dc, 0) : c + dc + w] = k
    return objects_from_labels(ref), objects_from_labels(sub), "synthetic 1200x1200"


def load(submission: str | None):
    ref_path = SAMPLE / "reference.tif"
    sub_path = Path(submission) if submission else SAMPLE / "submissions" / "s1_near_perfect.tif"
    if not ref_path.exists() or not sub_path.exists():
        ref, sub, name = synthetic_scene()
        return ref, sub, name, None, None
    from geoeval.io import read_pair

    ref, sub, _ = read_pair(str(ref_path), str(sub_path))
    return ref, sub, f"{ref_path.name} vs {sub_path.name}", ref_path, sub_path


def instances_of(ref, sub):
    """MOM instances (the lead's matcher), else one-to-one overlapping pairs."""
    from geoeval.overlap import compute_overlap

    ov = compute_overlap(ref, sub)
    try:
        from geoeval.matching import match

        m = match(ov, "mom")
        return list(m.instances), "MOM matcher"
    except Exception as exc:  # noqa: BLE001 - fall back while MOM is unfinished
        from geoeval.matching.result import Instance

        print(f"MOM matcher unavailable ({exc!r}); using overlapping one-to-one pairs")
        return [
            Instance((int(r),), (int(c),), float(v), "one-to-one")
            for r, c, v in zip(ov.rows, ov.cols, ov.values, strict=True)
        ], "overlapping pairs"


def bare_loop(ref, sub, instances) -> np.ndarray:
    """Same masses, POT's exact EMD on the full (undifferenced) problem, one process."""
    import ot
    from scipy.ndimage import distance_transform_edt
    from scipy.spatial.distance import cdist

    from geoeval.measures.rasterize import choose_grid, mask_source

    grid = choose_grid(ref, sub)
    t = grid.transform
    rs, ss = mask_source(ref, grid), mask_source(sub, grid)

    def side(src, idx):
        pts, mass = [], []
        for k in idx:
            r0, c0, m = src.window(k)
            dt = distance_transform_edt(np.pad(m, 1), sampling=grid.sampling)
            rr, cc = np.nonzero(m)
            mass.append(dt[rr + 1, cc + 1])
            rows, cols = rr + r0 + 0.5, cc + c0 + 0.5
            pts.append(
                np.column_stack([t.a * cols + t.b * rows + t.c, t.d * cols + t.e * rows + t.f])
            )
        w = np.concatenate(mass)
        return np.concatenate(pts), w / w.sum()

    out = np.empty(len(instances))
    for i, inst in enumerate(instances):
        pu, p = side(rs, inst.reference)
        pv, q = side(ss, inst.submission)
        cost = cdist(pu, pv)
        emd, log = ot.emd2(p, q, cost, numItermax=10**8, log=True)
        assert log["result_code"] == 1, log["warning"]
        out[i] = 1.0 - emd / cost.max()
    return out


def time_cli(ref_path, sub_path) -> None:
    exe = Path(sys.executable).with_name("geoeval")
    if ref_path is None or not exe.exists():
        print("CLI: not timed (no sample data or no geoeval executable)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [
            str(exe),
            "score",
            str(ref_path),
            str(sub_path),
            "--matcher",
            "mom",
            "-q",
            "--json",
            str(out),
        ]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            print(f"CLI failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
            return
        report = json.loads(out.read_text())
        mom = report.get("results", {}).get("mom", {})
        has = any("mallows" in i for i in mom.get("instances", []))
        print(
            f"CLI `geoeval score --matcher mom`: {dt:.2f} s "
            f"(Mallows in report: {'yes' if has else 'NO - not wired in yet'}; "
            f"accuracy={mom.get('accuracy')})"
        )


def cpu() -> float:
    """CPU seconds of this process and its finished children (the worker pool)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main_speed(args) -> None:
    from geoeval.measures.mallows import mallows_scores

    ref, sub, name, ref_path, sub_path = load(args.submission)
    instances, how = instances_of(ref, sub)
    sizes = np.array([ref.areas[list(i.reference)].sum() for i in instances])
    print(
        f"scene: {name}; {len(instances)} instances ({how}); reference objects "
        f"{len(ref)}, submitted {len(sub)}; cpu_count={os.cpu_count()}"
    )
    if sizes.size:
        pix = sizes / ref.grid.pixel_area if ref.grid is not None else sizes
        print(f"reference pixels per instance: median {np.median(pix):.0f}, max {pix.max():.0f}")

    mallows_scores(ref, sub, instances[:2], n_jobs=1)  # warm imports (POT, scipy)
    t0, c0 = time.perf_counter(), cpu()
    res = mallows_scores(ref, sub, instances, n_jobs=args.jobs)
    t_ours, c_ours = time.perf_counter() - t0, cpu() - c0
    t0, c0 = time.perf_counter(), cpu()
    mallows_scores(ref, sub, instances, n_jobs=1)
    t_ours1, c_ours1 = time.perf_counter() - t0, cpu() - c0
    t0, c0 = time.perf_counter(), cpu()
    bare = bare_loop(ref, sub, instances)
    t_bare, c_bare = time.perf_counter() - t0, cpu() - c0
    diff = np.nanmax(np.abs(res.scores - bare)) if bare.size else 0.0
    print(
        f"(a) mallows_scores, n_jobs={res.n_jobs}: {t_ours:.2f} s wall, {c_ours:.2f} s CPU "
        f"(scene {res.scene:.6f}; solvers {res.to_dict()['solver']}; "
        f"approximated {int(res.approximated.sum())})"
    )
    print(f"    mallows_scores, n_jobs=1: {t_ours1:.2f} s wall, {c_ours1:.2f} s CPU")
    print(
        f"(b) bare loop (same masses, ot.emd2 undifferenced, 1 process): {t_bare:.2f} s wall, "
        f"{c_bare:.2f} s CPU (scene {np.nanmean(bare):.6f})"
    )
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"ratio bare / ours: {t_bare / t_ours:.2f}x (1 process: {t_bare / t_ours1:.2f}x); "
        f"max |score difference| = {diff:.2e}"
    )
    if ref_path is not None:
        from geoeval.scoring import score_objects

        t0 = time.perf_counter()
        sr = score_objects(ref, sub, matchers=["mom"])
        insts = list(sr.results["mom"].matching.instances)
        mallows_scores(ref, sub, insts, n_jobs=args.jobs)
        print(
            f"pipeline via the API (overlap + MOM + mallows_scores, files already read): "
            f"{time.perf_counter() - t0:.2f} s"
        )
    time_cli(ref_path, sub_path)


def approx_test_set(seed: int = 5):
    """Instances of 4 000 - 9 000 pixels per object: shifted, eroded, merged, split."""
    from geoeval.io.raster import objects_from_labels
    from geoeval.matching.result import Instance

    rng = np.random.default_rng(seed)
    cases = []
    for j in range(8):
        a = np.zeros((200, 200), dtype=np.int32)
        b = np.zeros((200, 200), dtype=np.int32)
        h, w = rng.integers(60, 95, size=2)
        r, c = 40, 40
        a[r : r + h, c : c + w] = 1
        if j % 4 == 1:  # L shape
            a[r : r + h // 2, c + w // 2 : c + w] = 0
        dr, dc = rng.integers(-8, 9, size=2)
        b[r + dr : r + dr + h, c + dc : c + dc + w] = 1
        if j % 4 == 2:  # split detection
            b[r + dr + h // 2 : r + dr + h, c + dc : c + dc + w] = 2
        if j % 4 == 3:  # eroded and noisy
            b[r + dr : r + dr + 6, :] = 0
            b[rng.random(b.shape) < 0.02] = 0
        ref, sub = objects_from_labels(a), objects_from_labels(b)
        subs = tuple(range(len(sub)))
        cases.append((ref, sub, [Instance((0,), subs, 0.0, "test")]))
    return cases


def main_approx(args) -> None:
    """Error of pooling (approximate=True) against the exact score."""
    from geoeval.measures import mallows

    errors, bounds, blocks = [], [], []
    t_exact = t_pool = 0.0
    for ref, sub, insts in approx_test_set():
        t0 = time.perf_counter()
        ex = mallows.mallows_scores(ref, sub, insts, approximate=False, n_jobs=1)
        t_exact += time.perf_counter() - t0
        t0 = time.perf_counter()
        ap = mallows.mallows_scores(ref, sub, insts, approximate=True, n_jobs=1)
        t_pool += time.perf_counter() - t0
        errors.append(abs(ap.scores[0] - ex.scores[0]))
        bounds.append(ap.error_bound[0])
        blocks.append(int(ap.block[0]))
    print(
        f"synthetic large instances (n={len(errors)}), POOL_TARGET={mallows.POOL_TARGET}: "
        f"blocks {blocks}; max |error| {max(errors):.2e}, mean {np.mean(errors):.2e}; "
        f"max bound {max(bounds):.2e}; exact {t_exact:.1f} s, pooled {t_pool:.1f} s"
    )
    # scale model on the sample scene: a small target forces k = 2..4 as on big objects
    ref, sub, name, _, _ = load(args.submission)
    instances, _ = instances_of(ref, sub)
    big = [
        i
        for i in instances
        if ref.areas[list(i.reference)].sum() / (ref.grid.pixel_area if ref.grid is not None else 1)
        >= 400
    ]
    ex = mallows.mallows_scores(ref, sub, big, approximate=False)
    for target in (200, 100):
        mallows.POOL_TARGET = target
        ap = mallows.mallows_scores(ref, sub, big, approximate=True)
        sel = ap.approximated
        err = np.abs(ap.scores - ex.scores)[sel]
        print(
            f"{name}, {len(big)} instances >= 400 px, POOL_TARGET={target}: "
            f"{int(sel.sum())} pooled, blocks {np.unique(ap.block[sel]).tolist()}, "
            f"max |error| {err.max():.2e}, mean {err.mean():.2e}, "
            f"all within bound: {bool(np.all(err <= ap.error_bound[sel] + 1e-12))}"
        )


if __name__ == "__main__":
    warnings.simplefilter("ignore", UserWarning)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submission", help="submission file (default: s1_near_perfect.tif)")
    parser.add_argument("--jobs", type=int, default=None, help="processes for mallows_scores")
    parser.add_argument("--approx", action="store_true", help="measure the pooling error")
    ns = parser.parse_args()
    main_approx(ns) if ns.approx else main_speed(ns)
