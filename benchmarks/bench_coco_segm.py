"""COCO mask AP (``iouType="segm"``) end to end from files: geoeval against its peers.

A seeded synthetic CrowdAI-val-sized set (the CrowdAI Mapping Challenge's validation
split has about 60,000 tiles of 300 × 300 px; here the same number of tiles, each with a
Poisson number of buildings of mean 8, polygons as the challenge's files hold them;
results: each building found with probability 0.9 as a jittered polygon with a box
and a score, some twice, one false alarm per tile) is written as two JSON files by
``sample_data/make_coco_segm.py``; each evaluator then runs in a fresh process as a user
runs it (read both files, evaluate, accumulate, summarise). Wall time and peak RSS of
each process are printed with their ratio to geoeval's, and the twelve numbers of
every evaluator are checked against pycocotools' (or, where pycocotools is skipped, the
others' against geoeval's).

With ``--iou-type boundary`` (Boundary AP, dilation ratio 0.02) the reference is
boundary-iou-api's COCO evaluator, run as its authors run it (OpenCV, the boundaries
on every core; from the mirror of its repository, as the tests' oracle), beside
faster-coco-eval's Boundary AP; hotcoco has none.

Peers (benchmark-only, not geoeval dependencies; skipped when missing): pycocotools
(``pip install pycocotools``), faster-coco-eval (``pip install faster-coco-eval``, C++),
hotcoco (``pip install hotcoco``, Rust), OpenCV for boundary-iou-api.

Run: ``python benchmarks/bench_coco_segm.py [--tiles 60000 6000] [--iou-type segm|boundary]
[--skip pycocotools@60000] [--repeat 1] [--cache DIR]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sample_data"))

from bench_coco_peers import compare, runners  # noqa: E402
from make_coco_segm import crowdai_like  # noqa: E402


def files(n_tiles: int, seed: int, cache: Path) -> tuple[Path, Path, dict]:
    """The two JSON files of ``n_tiles`` tiles (written once per cache folder)."""
    g, d = cache / f"crowdai_{n_tiles}_{seed}_gt.json", cache / f"crowdai_{n_tiles}_{seed}_dt.json"
    if not (g.exists() and d.exists()):
        gt, dets = crowdai_like(n_tiles, seed=seed)
        g.write_text(json.dumps(gt))
        d.write_text(json.dumps(dets))
    gt = json.loads(g.read_text())
    return g, d, {"tiles": len(gt["images"]), "gt": len(gt["annotations"]),
                  "dt": len(json.loads(d.read_text()))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", type=int, nargs="+", default=[6000, 60000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="runs per evaluator (best is kept)")
    ap.add_argument("--skip", nargs="*", default=[],
                    help="evaluator@tiles pairs not to run (e.g. pycocotools@60000)")
    ap.add_argument("--cache", type=Path, default=None, help="keep the JSON files here")
    ap.add_argument("--iou-type", choices=["segm", "boundary"], default="segm")
    args = ap.parse_args()
    peers = runners(args.iou_type)
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or Path(tmp)
        cache.mkdir(parents=True, exist_ok=True)
        for n in args.tiles:
            g, d, size = files(n, args.seed, cache)
            print(f"\n{size['tiles']} tiles of 300 x 300 px, {size['gt']} buildings, "
                  f"{size['dt']} results ({(g.stat().st_size + d.stat().st_size) / 1e6:.0f} MB "
                  "of JSON)")
            skip = tuple(name for name in peers if f"{name}@{n}" in args.skip)
            compare(peers, g, d, args.repeat, skip)


if __name__ == "__main__":
    main()
