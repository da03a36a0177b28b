"""Draw docs/img/matchers.png: one toy scene matched by every matcher.

    python docs/make_matcher_figure.py

The scene holds each situation of Özdemir et al. (2010), Fig. 2: a good
detection, an over-detection (one building split in two), an under-detection
(two buildings in one outline), a poor detection (IoU below one half), a miss
and a false alarm. Each panel colours the instances one matcher finds.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import shapely  # noqa: E402
from shapely import box  # noqa: E402

import geoeval  # noqa: E402
from geoeval.objects import ObjectSet  # noqa: E402
from geoeval.scoring import score_objects  # noqa: E402

REF = [box(0, 0, 10, 10),                      # 1 detected well
       box(14, 0, 24, 10),                     # 2 split in two by the detector
       box(28, 0, 34, 10), box(35, 0, 41, 10),  # 3, 4 merged by the detector
       box(46, 0, 56, 10),                     # 5 poorly detected
       box(66, 0, 76, 10)]                     # 6 missed
SUB = [box(0.5, 0.5, 10.5, 10),                # a good
       box(14, 0, 18.8, 10), box(19.2, 0, 24, 10),  # b, c halves of 2
       box(28, 0.5, 41, 10),                   # d covers 3 and 4
       box(51, 3, 61, 13),                     # e poor
       box(80, 2, 86, 8)]                      # f false alarm
COLOURS = {"one-to-one": "#1b9e77", "one-to-many": "#d95f02", "many-to-one": "#7570b3"}


def main(out: Path = Path(__file__).parent / "img" / "matchers.png") -> None:
    ref, sub = ObjectSet.from_geometries(REF), ObjectSet.from_geometries(SUB)
    res = score_objects(ref, sub, resolution=0.25)
    fig, axes = plt.subplots(len(res.results), 1, figsize=(9, 1.45 * len(res.results) + 0.6),
                             sharex=True)
    for ax, (name, r) in zip(axes, res.results.items(), strict=True):
        for inst in r.matching:
            geoms = [REF[i] for i in inst.reference] + [SUB[j] for j in inst.submission]
            for part in shapely.get_parts(shapely.union_all(geoms)):
                ax.fill(*part.exterior.xy, color=COLOURS.get(inst.kind, "grey"), alpha=0.35,
                        lw=0)
        for g in REF:
            ax.plot(*g.exterior.xy, color="black", lw=1.6)
        for g in SUB:
            ax.plot(*g.exterior.xy, color="#e7298a", lw=1.2, ls="--")
        missed, fa = r.matching.missed.size, r.matching.false_alarms.size
        ax.set_title(f"{name}: {r.matching.n_instances} instances, {missed} missed, "
                     f"{fa} false alarm(s); F1 {r.f1:.2f}, accuracy {r.accuracy:.2f}",
                     fontsize=9, loc="left")
        ax.set_aspect("equal")
        ax.set_ylim(-2, 15)
        ax.set_yticks([])
    axes[-1].set_xlabel("reference: black outlines; submission: dashed pink; shaded: instances "
                        "(green one-to-one, orange one-to-many, purple many-to-one)", fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out} (geoeval {geoeval.__version__})")


if __name__ == "__main__":
    main()
