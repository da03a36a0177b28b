"""Draw the figures of docs/strata.md and docs/confidence.md from the sample data.

    python docs/make_strata_figures.py

docs/img/strata_size_f1.png: F1 (IoU matcher) per object-size stratum for four
sample submissions, with 95 % spatial block bootstrap intervals (1000 replicates).
docs/img/confidence_blocks.png: each submission's F1 interval for three block
sizes: larger blocks keep more of the spatial correlation, wider intervals.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import geoeval  # noqa: E402
from geoeval.scoring.scene import read_reference  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_data"
OUT = ROOT / "docs" / "img"
SUBS = ["s1_near_perfect.tif", "s2_misses.tif", "s6_eroded.tif", "s7_dilated.gpkg"]
BINS = [25.0, 50.0, 100.0]


def errorbar(ax, x, value, interval, **kw):
    lo, hi = interval if interval is not None else (np.nan, np.nan)
    ax.errorbar([x], [value], yerr=[[value - lo], [hi - value]], fmt="o", capsize=3, **kw)


def main() -> None:
    ref = read_reference(DATA / "reference.tif")
    results = {s: geoeval.score(ref, DATA / "submissions" / s, matchers=["iou"], size_bins=BINS,
                                bootstrap=1000, seed=0) for s in SUBS}

    fig, ax = plt.subplots(figsize=(7.5, 4))
    names = list(next(iter(results.values())).strata.kinds["size"].strata)
    width = 0.8 / len(SUBS)
    for k, (sub, res) in enumerate(results.items()):
        for b, name in enumerate(names):
            s = res.strata.kinds["size"].strata[name]
            f1 = s.results["iou"].f1
            if f1 is None:
                continue
            errorbar(ax, b - 0.4 + width * (k + 0.5), f1, s.bootstrap.intervals["iou"]["f1"],
                     color=f"C{k}", label=Path(sub).stem if b == 0 else None)
    ax.set_xticks(range(len(names)), [f"{n} m²" for n in names])
    ax.set_xlabel("object area (size stratum; an area on an edge goes to the upper bin)")
    ax.set_ylabel("F1 (IoU matcher, t = 0.5)")
    ax.set_ylim(0, 1.05)
    ax.set_title("F1 by object size, 95 % spatial block bootstrap intervals", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "strata_size_f1.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.5, 4))
    sizes = [25.0, 100.0, 250.0]
    for k, sub in enumerate(SUBS):
        for q, size in enumerate(sizes):
            res = geoeval.score(ref, DATA / "submissions" / sub, matchers=["iou"],
                                bootstrap=1000, seed=0, block_size=size)
            errorbar(ax, k + (q - 1) * 0.22, res.results["iou"].f1,
                     res.bootstrap.intervals["iou"]["f1"], color=f"C{q}",
                     label=f"blocks of {size:g} m" if k == 0 else None)
    ax.set_xticks(range(len(SUBS)), [Path(s).stem for s in SUBS], fontsize=8)
    ax.set_ylabel("F1 (IoU matcher, t = 0.5)")
    ax.set_title("F1 with 95 % intervals: larger blocks keep more spatial correlation",
                 fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "confidence_blocks.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
