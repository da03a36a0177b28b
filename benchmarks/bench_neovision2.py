"""Neovision2 speed: geoeval (vectorised) vs a per-frame, per-class loop.

A synthetic evaluation corpus the size of Neovision2's (§2.1: 125 sequences of
15–20 s; here 125 × 400 frames, ~8 objects and ~12 detections per frame, 5
classes). Prints the CSV reading time, the evaluation time (main NMOTDA + 10
ROC thresholds + detection only, per domain), and the time of a plain loop
over frames × classes with ``scipy.optimize.linear_sum_assignment`` for the
main NMOTDA counts only, checking both give the same TP / FP per class.

    $ python benchmarks/neovision2.py [n_sequences] [frames_per_sequence]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from geoeval.challenges.neovision2 import evaluate_neovision2
from geoeval.io.neovision2 import read_neovision2

CLASSES = ["Car", "Truck", "Bus", "Person", "Cyclist"]
HEADER = ("Frame,BoundingBox_X1,BoundingBox_Y1,BoundingBox_X2,BoundingBox_Y2,BoundingBox_X3,"
          "BoundingBox_Y3,BoundingBox_X4,BoundingBox_Y4,ObjectType,Occlusion,Ambiguous,"
          "Confidence,SiteInfo,Version")


def _write(path: Path, frame, boxes, labels, conf) -> None:
    x1, y1, x2, y2 = boxes.T
    conf_s = np.char.mod("%.3f", conf) if conf is not None else np.full(frame.size, "")
    cols = [frame.astype(str), *(np.char.mod("%.1f", v) for v in (x1, y1, x2, y1, x2, y2, x1, y2)),
            labels, np.full(frame.size, "FALSE"), np.full(frame.size, "FALSE"), conf_s,
            np.full(frame.size, ""), np.full(frame.size, "1.0")]
    lines = [",".join(r) for r in zip(*cols, strict=True)]
    path.write_text(HEADER + "\n" + "\n".join(lines) + "\n")


def make(root: Path, n_seq: int, n_frames: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for s in range(n_seq):
        dom = "Tower" if s % 2 else "Heli"
        n_obj = rng.poisson(8, n_frames)
        f = np.repeat(np.arange(n_frames), n_obj)
        xy = rng.uniform(0, 1800, (f.size, 2))
        wh = rng.uniform(20, 120, (f.size, 2))
        g = np.c_[xy, xy + wh]
        lab = rng.choice(CLASSES, f.size)
        keep = rng.random(f.size) < 0.8
        jitter = rng.normal(0, 6, (f.size, 4))
        d = g[keep] + jitter[keep]
        d[:, 2:] = np.maximum(d[:, 2:], d[:, :2] + 1)
        dl = np.where(rng.random(keep.sum()) < 0.9, lab[keep], rng.choice(CLASSES, keep.sum()))
        n_fp = rng.poisson(4, n_frames)
        ff = np.repeat(np.arange(n_frames), n_fp)
        fxy = rng.uniform(0, 1800, (ff.size, 2))
        fb = np.c_[fxy, fxy + rng.uniform(20, 120, (ff.size, 2))]
        df = np.r_[f[keep], ff]
        db = np.r_[d, fb]
        dlab = np.r_[dl, rng.choice(CLASSES, ff.size)]
        conf = rng.uniform(0, 1, df.size)
        for side, args in (("gt", (f, g, lab, None)), ("det", (df, db, dlab, conf))):
            p = root / side / dom / f"{s:03d}.csv"
            p.parent.mkdir(parents=True, exist_ok=True)
            _write(p, *args)


def loop_baseline(gt, det) -> dict[str, tuple[int, int]]:
    """TP and FP per class by a Python loop over (sequence, frame, class)."""
    from scipy.optimize import linear_sum_assignment

    from geoeval.overlap import box_iou

    index = {k: i for i, k in enumerate(gt.sequences)}
    dseq = np.array([index[k] for k in det.sequences])[det.sequence]
    out = {}
    for c in CLASSES:
        gm = gt.label == c
        dm = det.label == c
        gkey = gt.sequence[gm] * 100000 + gt.frame[gm]
        dkey = dseq[dm] * 100000 + det.frame[dm]
        gb, db = gt.boxes[gm], det.boxes[dm]
        tp = 0
        groups_g = {k: np.flatnonzero(gkey == k) for k in np.unique(gkey)}
        order = np.argsort(dkey, kind="stable")
        keys, starts = np.unique(dkey[order], return_index=True)
        bounds = np.r_[starts, order.size]
        for k, a, b in zip(keys, bounds[:-1], bounds[1:], strict=True):
            gi = groups_g.get(k)
            if gi is None:
                continue
            ok = box_iou(gb[gi], db[order[a:b]]) >= 0.2
            if not ok.any():
                continue
            r, cc = linear_sum_assignment(np.where(ok, 1.0, 0.0), maximize=True)
            tp += int(ok[r, cc].sum())
        out[c] = (tp, int(dm.sum()) - tp)
    return out


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Neovision2 evaluation vs a per-frame loop.")
    ap.add_argument("--sequences", type=int, default=125)
    ap.add_argument("--frames", type=int, default=400)
    args = ap.parse_args()
    n_seq, n_frames = args.sequences, args.frames
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make(root, n_seq, n_frames)
        t0 = time.perf_counter()
        gt = read_neovision2(root / "gt")
        det = read_neovision2(root / "det", dont_care=False)
        t1 = time.perf_counter()
        print(f"{n_seq} sequences x {n_frames} frames: {len(gt)} ground truth, "
              f"{len(det)} detections")
        print(f"read CSV: {t1 - t0:.2f} s")
        t0 = time.perf_counter()
        r = evaluate_neovision2(gt, det)
        t1 = time.perf_counter()
        print(f"geoeval evaluate_neovision2 (NMOTDA + 10 ROC thresholds + detection only, "
              f"2 domains): {t1 - t0:.2f} s")
        t0 = time.perf_counter()
        base = loop_baseline(gt, det)
        t1 = time.perf_counter()
        print(f"per-frame loop baseline (main NMOTDA counts only): {t1 - t0:.2f} s")
        same = all((r.classes[c].true_positives, r.classes[c].false_positives) == base[c]
                   for c in CLASSES)
        print("same TP/FP per class:", same)
        for c in CLASSES:
            s = r.classes[c]
            print(f"  {c:8s} NMOTDA {s.nmotda:.4f}  TP {s.true_positives}  FP "
                  f"{s.false_positives}  baseline TP/FP {base[c]}")


if __name__ == "__main__":
    main()
