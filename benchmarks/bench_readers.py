"""What the Dask engine's readers cost: the ``--id-field`` check and a layer of tiles.

A city of ``--size`` buildings a side (``benchmarks/scale.py``), cut into tiles by
x, written twice: a GeoParquet dataset folder and GeoPackage tiles, each feature
with a unique ``bid``. On one ``LocalCluster`` (2 workers, 1 thread each), in turns
(``--repeats`` rounds, so that a change in the machine's load hits every variant):

* ``dataset``: the GeoParquet folder, ids the row numbers (the baseline);
* ``dataset --id-field``: the same with ``id_field="bid"`` (the uniqueness check on
  the workers);
* ``parquet tiles``: the same files as a pattern (``ref/*.parquet``);
* ``gpkg tiles --id-field``: the GeoPackage tiles as a pattern, with ``bid``.

Every variant must give the same F1. Prints one row per variant: the median wall
time and its ratio to the baseline.

    python benchmarks/bench_readers.py --size 300000 --tiles 8 --repeats 2
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from scale import city  # noqa: E402


def write(folder: Path, n: int, tiles: int) -> None:
    import geopandas as gpd
    import shapely

    ref, det = city(n, seed=1)
    for name, geoms in (("ref", ref), ("sub", det)):
        x = shapely.get_x(shapely.centroid(geoms))
        order = np.argsort(x, kind="stable")
        for kind in ("parquet", "gpkg"):
            (folder / f"{name}_{kind}").mkdir(parents=True)
        for k, chunk in enumerate(np.array_split(order, tiles)):
            frame = gpd.GeoDataFrame({"bid": chunk + 1}, geometry=geoms[chunk],
                                     crs="EPSG:32651")
            frame.to_parquet(folder / f"{name}_parquet" / f"t{k:03d}.parquet", index=False,
                             row_group_size=50_000)
            frame.to_file(folder / f"{name}_gpkg" / f"t{k:03d}.gpkg")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=300_000)
    ap.add_argument("--tiles", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--matcher", default="iou")
    args = ap.parse_args()
    import distributed

    import geoeval

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        write(folder, args.size, args.tiles)
        print(f"written in {time.perf_counter() - t:.1f} s", flush=True)
        ids = {"reference_options": {"id_field": "bid"},
               "submission_options": {"id_field": "bid"}}
        variants = {
            "dataset": (folder / "ref_parquet", folder / "sub_parquet", {}),
            "dataset --id-field": (folder / "ref_parquet", folder / "sub_parquet", ids),
            "parquet tiles": (str(folder / "ref_parquet" / "*.parquet"),
                              str(folder / "sub_parquet" / "*.parquet"), {}),
            "gpkg tiles --id-field": (str(folder / "ref_gpkg" / "*.gpkg"),
                                      str(folder / "sub_gpkg" / "*.gpkg"), ids),
        }
        times: dict[str, list[float]] = {k: [] for k in variants}
        f1 = {}
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None,
                                      silence_logs=logging.ERROR) as cluster:
            for r in range(args.repeats):
                for name, (ref, sub, opts) in variants.items():
                    t = time.perf_counter()
                    res = geoeval.score(ref, sub, matchers=[args.matcher], engine="dask",
                                        scheduler=cluster.scheduler_address, **opts)
                    times[name].append(time.perf_counter() - t)
                    f1[name] = res.results[args.matcher].f1
                    print(f"round {r}: {name}: {times[name][-1]:.1f} s", flush=True)
        assert len(set(f1.values())) == 1, f1
        base = float(np.median(times["dataset"]))
        print(f"\n{args.size:,} buildings a side, {args.tiles} tiles, {args.matcher}, "
              f"F1 {f1['dataset']:.6f}")
        print("| variant | median time | / dataset |")
        print("| --- | ---: | ---: |")
        for name, ts in times.items():
            med = float(np.median(ts))
            print(f"| {name} | {med:.1f} s | {med / base:.2f} |")


if __name__ == "__main__":
    main()
