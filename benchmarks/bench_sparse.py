"""A huge, mostly empty label raster: against a raster, a vector layer, and on Dask.

A sparse GeoTIFF (``SPARSE_OK``, tiled, deflate, BigTIFF, ``uint32``) of ``n × n``
pixels (default 10⁶ × 10⁶, 1024 × 1024 tiles) holds ``--objects`` squares of
20 × 20 pixels at random places; only the tiles they touch are written (about
12 MB on disk, the tile index). The submission is the same squares shifted by 2
pixels, once as a raster on the same grid and once as a GeoPackage of polygons.

Each run a fresh process, in this order, ``--rounds`` times in turns:

* ``raster``: ``geoeval score ref.tif sub.tif -m bgm`` (the baseline: the scan reads
  only the written tiles, ``docs/scale.md``);
* ``vector``: ``geoeval score ref.tif sub.gpkg -m bgm`` (the raster is vectorised
  window by window: before, every window of the grid was read and traced);
* ``dask``: ``geoeval score ref.tif sub.tif -m bgm --engine dask`` (a LocalCluster of
  two workers; the mosaic path makes tasks only for the blocks holding written
  tiles: before, 15 129 blocks);
* ``dask-tiny``: the same on two 64 × 64 rasters: what starting and stopping the
  cluster costs on this machine.

Times and the ratios ``vector / raster``, ``dask / raster`` and ``(dask - dask-tiny) /
raster`` of the same round are printed; F1 and the missed count must agree.

    python benchmarks/bench_sparse.py [--size 1000000] [--tile 1024] [--objects 300]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_country import run  # noqa: E402

SIDE = 20
SHIFT = 2


def generate(folder: Path, n: int, tile: int, k: int, seed: int = 1) -> None:
    """ref.tif, sub.tif and sub.gpkg in ``folder`` (see the module)."""
    import geopandas as gpd
    import rasterio
    import shapely
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    transform = from_origin(500000, n * 0.1, 0.1, 0.1)
    pos = np.random.default_rng(seed).integers(0, n - 64, (k, 2))
    profile = dict(driver="GTiff", width=n, height=n, count=1, dtype="uint32",
                   crs="EPSG:32631", transform=transform, tiled=True, blockxsize=tile,
                   blockysize=tile, compress="deflate", sparse_ok=True, bigtiff="YES")
    polygons = []
    for name, shift in (("ref.tif", 0), ("sub.tif", SHIFT)):
        with rasterio.open(folder / name, "w", **profile) as dst:
            for i, (r, c) in enumerate(pos):
                dst.write(np.full((SIDE, SIDE), i + 1, np.uint32), 1,
                          window=Window(int(c) + shift, int(r), SIDE, SIDE))
                if shift:
                    x0, y0 = transform @ (int(c) + shift, int(r))
                    x1, y1 = transform @ (int(c) + shift + SIDE, int(r) + SIDE)
                    polygons.append(shapely.box(x0, y1, x1, y0))
    gpd.GeoDataFrame({"n": np.arange(k)}, geometry=polygons,
                     crs="EPSG:32631").to_file(folder / "sub.gpkg")
    tiny = dict(profile, width=64, height=64, bigtiff="NO")
    for name in ("tiny_ref.tif", "tiny_sub.tif"):
        with rasterio.open(folder / name, "w", **tiny) as dst:
            dst.write(np.full((SIDE, SIDE), 1, np.uint32), 1, window=Window(8, 8, SIDE, SIDE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--tile", type=int, default=1024)
    parser.add_argument("--objects", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="generate into (and reuse) this folder")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench_sparse_"))
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "tiny_sub.tif").exists():
        generate(folder, args.size, args.tile, args.objects)
    size = sum((folder / f).stat().st_size for f in ("ref.tif", "sub.tif"))
    print(f"{args.size:,}² pixels, tiles {args.tile}², {args.objects} objects a side, "
          f"{size / 1e6:.1f} MB for both rasters", flush=True)
    geoeval = str(Path(sys.executable).with_name("geoeval"))
    runs = {"raster": ["ref.tif", "sub.tif"], "vector": ["ref.tif", "sub.gpkg"],
            "dask": ["ref.tif", "sub.tif", "--engine", "dask"],
            "dask-tiny": ["tiny_ref.tif", "tiny_sub.tif", "--engine", "dask"]}
    for k in range(args.rounds):
        times, found = {}, {}
        for name, (ref, sub, *rest) in runs.items():
            out = folder / f"{name}.json"
            wall, gb, _ = run([geoeval, "score", str(folder / ref), str(folder / sub), *rest,
                               "-m", "bgm", "-q", "--json", str(out)])
            r = json.loads(out.read_text())["results"]["bgm"]
            times[name] = wall
            if name != "dask-tiny":
                found[name] = (r["f1"], r["missed"], r["false_alarms"])
            print(f"  round {k + 1} {name:9s} {wall:7.2f} s  {gb:.2f} GB  F1 {r['f1']}",
                  flush=True)
        assert len(set(found.values())) == 1, found
        t = times
        print(f"  round {k + 1}: vector / raster {t['vector'] / t['raster']:.2f}, "
              f"dask / raster {t['dask'] / t['raster']:.2f}, (dask - dask-tiny) / raster "
              f"{(t['dask'] - t['dask-tiny']) / t['raster']:.2f}", flush=True)


if __name__ == "__main__":
    main()
