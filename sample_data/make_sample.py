"""Make geoeval's bundled sample scene and nine synthetic detector submissions.

The scene imitates the building-detection task of the PRRS 2008 contest
(Özdemir et al. 2010, §3 and §5-6): a QuickBird panchromatic tile
of Legaspi City, 1668 × 1668 pixels at 0.6 m, about 3000 reference buildings,
nine submissions given as labelled images. Nothing here comes from the real
data: the city, its buildings and the nine "detectors" are drawn from a fixed
seed so that the files are small, free to ship and reproducible.

Run ``python sample_data/make_sample.py [--out DIR]`` (default: the folder this
file sits in). Two runs give byte-identical rasters and identical vector
content (GeoPackage and Shapefile headers carry a write date). The functions are
importable, e.g. ``make_scene(3336, 12000)`` builds a scene four times larger
with the same code for benchmarks.

Layout of the scene
-------------------
The tile is cut into Voronoi "districts" (one per ~250 m × 250 m) separated by
10 m main roads. Each district has a type (dense informal, residential,
commercial, open land), a street-grid orientation and a grid of streets.
Buildings are drawn per district (size from a log-normal law, shape among
rectangle, L, T, U, courtyard, twin block and irregular star polygon,
orientation = the grid's ± jitter, possibly turned 90°) and placed in order,
rejecting any that crosses a street or road or comes closer than the
district's minimum gap to an earlier one (an R-tree ``dwithin`` query; in dense
districts the gap may be 5 cm, so neighbours touch at the pixel level, and many
candidates are drawn right next to a placed house so that rows and clusters
form). The polygons are burnt with
``rasterio.features.rasterize`` (``all_touched=False``): as no two polygons
overlap, no pixel centre lies in two of them, and every label is exactly the
pixels whose centre is in its polygon.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import rasterio
import shapely
from rasterio.crs import CRS
from rasterio.features import rasterize
from rasterio.transform import Affine
from scipy import ndimage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

PIXEL_SIZE = 0.6
"""Ground sampling distance of the QuickBird panchromatic band (m)."""
EPSG = 32651
"""WGS 84 / UTM zone 51N, the zone of Legaspi City."""
ORIGIN = (569800.0, 1450600.0)
"""Upper-left corner (easting, northing) of the scene, in EPSG:32651."""
SCENE_SIZE = 1668
N_BUILDINGS = 3000
SEED = 2008
DISTRICT_SIDE = 250.0
"""One Voronoi district per DISTRICT_SIDE² m² of scene."""
MAIN_ROAD_WIDTH = 10.0

SHAPES = ("rect", "L", "T", "U", "courtyard", "irregular", "twin")


@dataclass(frozen=True)
class DistrictType:
    """Parameters of one kind of district (areas in m², lengths in m)."""

    name: str
    share: float  # share of the districts that get this type
    density: float  # relative building density (buildings per hectare, roughly)
    area_median: float
    area_sigma: float  # of log(area)
    area_range: tuple[float, float]
    max_aspect: float
    block: tuple[float, float]  # street spacing range; 0 = no streets
    street: float  # street width
    street_keep: float  # share of grid lines that are real streets
    setback: float  # minimum distance from streets and roads
    gap: tuple[float, float]  # minimum distance to earlier buildings
    jitter_deg: float  # sd of orientation around the grid
    shape_p: tuple[float, ...]  # probabilities over SHAPES
    attach: float = 0.0  # share of candidates drawn next to an already placed building
    big_first: bool = False  # in each batch of candidates, try the largest first


DISTRICTS = (
    DistrictType("informal", 0.1875, 110.0, 36.0, 0.42, (18.0, 160.0), 1.9,
                 (30.0, 50.0), 3.0, 0.7, 0.3, (0.05, 0.9), 5.0,
                 (0.80, 0.06, 0.0, 0.0, 0.0, 0.14, 0.0), 0.7),
    DistrictType("residential", 0.4375, 18.0, 110.0, 0.45, (40.0, 600.0), 1.8,
                 (45.0, 80.0), 7.0, 0.9, 1.2, (1.0, 3.0), 3.0,
                 (0.55, 0.24, 0.08, 0.05, 0.02, 0.04, 0.02), 0.2, True),
    DistrictType("commercial", 0.1875, 6.0, 420.0, 0.65, (90.0, 3500.0), 2.4,
                 (80.0, 130.0), 10.0, 1.0, 2.0, (2.0, 5.0), 1.5,
                 (0.45, 0.14, 0.09, 0.09, 0.18, 0.02, 0.03), 0.0, True),
    DistrictType("open", 0.1875, 1.5, 30.0, 0.35, (18.0, 90.0), 1.6,
                 (0.0, 0.0), 0.0, 0.0, 0.5, (2.0, 6.0), 20.0,
                 (0.75, 0.05, 0.0, 0.0, 0.0, 0.20, 0.0)),
)


@dataclass(frozen=True)
class Buildings:
    """Reference buildings of a synthetic scene.

    Attributes
    ----------
    ids : numpy.ndarray
        Raster label of each building (sparse, shuffled, never 1..n).
    polygons : numpy.ndarray
        Shapely polygons in the scene CRS (placement order).
    classes : numpy.ndarray
        ``"building"`` or ``"shed"`` (small informal huts).
    district : numpy.ndarray
        Index into :data:`DISTRICTS` of each building's district type.
    transform : affine.Affine
        Pixel-to-CRS transform of the scene grid.
    size_px : int
        Scene side in pixels.
    """

    ids: np.ndarray
    polygons: np.ndarray
    classes: np.ndarray
    district: np.ndarray
    transform: Affine
    size_px: int


def scene_transform(size_px: int = SCENE_SIZE) -> Affine:
    """Pixel-to-CRS transform of a scene (0.6 m pixels, north up, fixed origin)."""
    del size_px  # the origin is the upper-left corner whatever the size
    return Affine(PIXEL_SIZE, 0.0, ORIGIN[0], 0.0, -PIXEL_SIZE, ORIGIN[1])


def scene_crs() -> CRS:
    """The scene's CRS, EPSG:32651 (WGS 84 / UTM 51N)."""
    return CRS.from_epsg(EPSG)


def label_dtype(max_label: int) -> np.dtype:
    """Smallest unsigned integer dtype holding ``max_label``."""
    for dt in (np.uint8, np.uint16, np.uint32):
        if max_label <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.uint64)


# --------------------------------------------------------------------------- shapes


def _shoelace(coords: np.ndarray) -> np.ndarray:
    """Absolute area of each ring of an (m, k, 2) array of open rings."""
    x, y = coords[..., 0], coords[..., 1]
    return 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1))


def _template(rng: np.random.Generator, kind: str, m: int, aspect: np.ndarray) -> np.ndarray:
    """Open rings (m, k, 2) of one shape kind, centred near 0, unscaled."""
    w = np.sqrt(aspect)
    h = 1.0 / w
    u = lambda lo, hi: rng.uniform(lo, hi, m)  # noqa: E731
    z = np.zeros(m)
    if kind in ("rect", "courtyard", "twin"):
        pts = [(z, z), (w, z), (w, h), (z, h)]
    elif kind == "L":
        ta, tb = u(0.35, 0.65) * w, u(0.35, 0.65) * h
        pts = [(z, z), (w, z), (w, tb), (ta, tb), (ta, h), (z, h)]
    elif kind == "T":
        t, s = u(0.35, 0.55) * h, u(0.3, 0.5) * w
        c = w / 2 + u(-0.12, 0.12) * w
        pts = [(z, h), (w, h), (w, h - t), (c + s / 2, h - t), (c + s / 2, z),
               (c - s / 2, z), (c - s / 2, h - t), (z, h - t)]
    elif kind == "U":
        a, b = u(0.25, 0.35) * w, u(0.3, 0.5) * h
        pts = [(z, z), (w, z), (w, h), (w - a, h), (w - a, b), (a, b), (a, h), (z, h)]
    elif kind == "irregular":
        k = 8
        base = np.arange(k) * 2 * np.pi / k
        ang = base + rng.uniform(-0.3, 0.3, (m, k)) * 2 * np.pi / k
        rad = rng.uniform(0.62, 1.0, (m, k))
        xs, ys = rad * np.cos(ang) * w[:, None], rad * np.sin(ang) * h[:, None]
        return np.stack([xs, ys], axis=-1)
    else:  # pragma: no cover - programming error
        raise ValueError(kind)
    coords = np.stack([np.stack(p, axis=-1) for p in pts], axis=1)
    coords -= np.stack([w / 2, h / 2], axis=-1)[:, None, :]
    mirror = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    coords[..., 0] *= mirror[:, None]
    return coords


def _building_polygons(
    rng: np.random.Generator, dt: DistrictType, cx: np.ndarray, cy: np.ndarray, angle: float
) -> np.ndarray:
    """Draw one building per centre in a district of type ``dt`` (vectorised per shape)."""
    n = cx.size
    area = np.exp(rng.normal(np.log(dt.area_median), dt.area_sigma, n))
    area = np.clip(area, *dt.area_range)
    kind = rng.choice(len(SHAPES), size=n, p=np.asarray(dt.shape_p) / sum(dt.shape_p))
    # Complex shapes need room for their wings: keep them for the larger buildings.
    kind[(kind != 0) & (kind != 5) & (area < 60.0)] = 0
    kind[(kind == 4) & (area < 400.0)] = 0
    kind[(kind == 6) & (area < 120.0)] = 0
    theta = (np.deg2rad(angle) + np.deg2rad(dt.jitter_deg) * rng.standard_normal(n)
             + np.where(rng.random(n) < 0.5, 0.0, np.pi / 2))
    out = np.empty(n, dtype=object)
    for s in np.unique(kind):
        sel = np.flatnonzero(kind == s)
        m = sel.size
        name = SHAPES[s]
        aspect = rng.uniform(1.0, dt.max_aspect if name in ("rect", "irregular") else 1.7, m)
        if name == "twin":  # two blocks side by side along the long axis
            aspect = rng.uniform(1.6, 2.4, m)
        coords = _template(rng, name, m, aspect)
        frac = np.ones(m)
        if name == "courtyard":
            hw, hh = rng.uniform(0.35, 0.55, m), rng.uniform(0.35, 0.55, m)
            frac = 1.0 - hw * hh
        scale = np.sqrt(area[sel] / (_shoelace(coords) * frac))
        coords *= scale[:, None, None]
        c, si = np.cos(theta[sel])[:, None], np.sin(theta[sel])[:, None]
        x = coords[..., 0] * c - coords[..., 1] * si + cx[sel, None]
        y = coords[..., 0] * si + coords[..., 1] * c + cy[sel, None]
        polys = shapely.polygons(np.stack([x, y], axis=-1))
        if name == "courtyard":
            shrink = np.stack([hw, hh], axis=-1)[:, None, :]
            centre = np.stack([cx[sel], cy[sel]], axis=-1)[:, None, :]
            local = (np.stack([x, y], axis=-1) - centre)
            holes = shapely.polygons(local * shrink.mean(axis=-1, keepdims=True) + centre)
            polys = shapely.difference(polys, holes)
        elif name == "twin":  # a 1-2 m passage across the middle: one building, two parts
            gap = rng.uniform(1.0, 2.0, m)[:, None] / 2
            half = np.sqrt(area[sel])[:, None] * 2
            u = np.concatenate([-gap, gap, gap, -gap], axis=1)
            v = np.concatenate([-half, -half, half, half], axis=1)
            sx = u * c - v * si + cx[sel, None]
            sy = u * si + v * c + cy[sel, None]
            polys = shapely.difference(polys, shapely.polygons(np.stack([sx, sy], axis=-1)))
        out[sel] = polys
    return out


# ------------------------------------------------------------------------- placement


def _districts(
    rng: np.random.Generator, size_m: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """Voronoi districts: polygons, type index, grid angle (deg), main-road geometry."""
    x0, y1 = ORIGIN
    x1, y0 = x0 + size_m, y1 - size_m
    n_side = max(2, int(round(size_m / DISTRICT_SIDE)))
    cell = size_m / n_side
    gx, gy = np.meshgrid(np.arange(n_side), np.arange(n_side))
    px = x0 + (gx.ravel() + 0.5 + rng.uniform(-0.35, 0.35, gx.size)) * cell
    py = y0 + (gy.ravel() + 0.5 + rng.uniform(-0.35, 0.35, gy.size)) * cell
    outer = shapely.box(x0 - 60, y0 - 60, x1 + 60, y1 + 60)
    vor = shapely.voronoi_polygons(shapely.multipoints(np.stack([px, py], axis=-1)),
                                   extend_to=outer, ordered=True)
    cells = shapely.intersection(np.asarray(shapely.get_parts(vor)), outer)
    n = cells.size
    shares = np.array([d.share for d in DISTRICTS])
    counts = np.floor(shares * n).astype(int)
    for i in np.argsort(-(shares * n - counts), kind="stable")[: n - counts.sum()]:
        counts[i] += 1
    types = rng.permutation(np.repeat(np.arange(len(DISTRICTS)), counts))
    # Street grids: most near north-up (planned extensions), the rest at any angle.
    angle = np.where(rng.random(n) < 0.6, rng.normal(0, 2, n), rng.uniform(-45, 45, n))
    edges = shapely.intersection(shapely.union_all(shapely.boundary(cells)),
                                 shapely.box(*shapely.bounds(outer) + [1, 1, -1, -1]))
    roads = shapely.buffer(edges, MAIN_ROAD_WIDTH / 2, cap_style="flat")
    return cells, types, angle, roads


def _streets(rng: np.random.Generator, cell: Any, dt: DistrictType, angle: float) -> Any:
    """Street grid of one district, clipped to it (None when the type has none)."""
    if dt.block[1] <= 0:
        return None
    c = shapely.centroid(cell)
    cx, cy = c.x, c.y
    radius = float(np.max(np.hypot(*(shapely.get_coordinates(cell) - [cx, cy]).T))) + 5
    strips = []
    for axis in (0, 1):
        spacing = rng.uniform(*dt.block)
        pos = np.arange(-radius, radius, spacing) + rng.uniform(0, spacing)
        pos = pos[rng.random(pos.size) < dt.street_keep]
        a = np.full(pos.size, radius)
        hw = dt.street / 2
        # rectangles in the grid frame: u in [pos-hw, pos+hw], v in [-r, r]
        u = np.stack([pos - hw, pos + hw, pos + hw, pos - hw], axis=1)
        v = np.stack([-a, -a, a, a], axis=1)
        if axis == 1:
            u, v = v, u
        strips.append(np.stack([u, v], axis=-1))
    coords = np.concatenate(strips)
    if coords.size == 0:
        return None
    t = np.deg2rad(angle)
    x = coords[..., 0] * np.cos(t) - coords[..., 1] * np.sin(t) + cx
    y = coords[..., 0] * np.sin(t) + coords[..., 1] * np.cos(t) + cy
    return shapely.intersection(shapely.union_all(shapely.polygons(np.stack([x, y], -1))), cell)


def _greedy_accept(
    cands: np.ndarray, gaps: np.ndarray, placed: list[np.ndarray], limit: int
) -> np.ndarray:
    """Indices of candidates kept, in order, none within its gap of another or of ``placed``."""
    ok = np.ones(cands.size, dtype=bool)
    if placed:
        existing = np.concatenate(placed)
        hit, _ = shapely.STRtree(existing).query(cands, predicate="dwithin", distance=gaps)
        ok[hit] = False
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return idx
    sub = cands[idx]
    i, j = shapely.STRtree(sub).query(sub, predicate="dwithin", distance=gaps[idx])
    off = i != j
    i, j = np.concatenate([i[off], j[off]]), np.concatenate([j[off], i[off]])
    order = np.argsort(i, kind="stable")
    i, j = i[order], j[order]
    start = np.searchsorted(i, np.arange(sub.size + 1))
    blocked = np.zeros(sub.size, dtype=bool)
    kept = []
    for k in range(sub.size):  # conflicts are sparse; this is a cheap scan
        if blocked[k]:
            continue
        kept.append(k)
        if len(kept) == limit:
            break
        blocked[j[start[k]:start[k + 1]]] = True
    return idx[np.asarray(kept, dtype=np.intp)]


def _fill_district(
    rng: np.random.Generator,
    region: Any,
    buildable: Any,
    dt: DistrictType,
    angle: float,
    placed: list[np.ndarray],
    quota: int,
    rounds: int = 40,
) -> bool:
    """Place up to ``quota`` more buildings in a district; True if the quota was met."""
    xmin, ymin, xmax, ymax = shapely.bounds(region)
    frac = shapely.area(region) / max((xmax - xmin) * (ymax - ymin), 1e-9)
    remaining = quota
    for _ in range(rounds):
        if remaining <= 0:
            return True
        m = int(min(max(4 * remaining, 100), 20000) / max(frac, 0.05))
        x, y = rng.uniform(xmin, xmax, m), rng.uniform(ymin, ymax, m)
        if placed and dt.attach > 0:
            # Grow rows and clusters: put some candidates right next to a placed building,
            # along the grid axes, as in dense settlements where houses share walls.
            done = np.concatenate(placed)
            att = np.flatnonzero(rng.random(m) < dt.attach)
            parent = done[rng.integers(0, done.size, att.size)]
            pc = shapely.centroid(parent)
            d = (np.sqrt(shapely.area(parent)) + np.sqrt(dt.area_median)) / 2
            d = d * rng.uniform(1.0, 1.25, att.size)
            t = np.deg2rad(angle) + rng.integers(0, 4, att.size) * np.pi / 2
            x[att] = shapely.get_x(pc) + d * np.cos(t)
            y[att] = shapely.get_y(pc) + d * np.sin(t)
        inside = shapely.contains_xy(region, x, y)
        x, y = x[inside], y[inside]
        if x.size == 0:
            continue
        cands = _building_polygons(rng, dt, x, y, angle)
        gaps = rng.uniform(*dt.gap, x.size)
        fits = shapely.contains(buildable, cands)
        cands, gaps = cands[fits], gaps[fits]
        if dt.big_first:  # larger buildings claim their lot first (else warehouses never fit)
            order = np.argsort(-shapely.area(cands), kind="stable")
            cands, gaps = cands[order], gaps[order]
        keep = _greedy_accept(cands, gaps, placed, remaining)
        if keep.size:
            placed.append(cands[keep])
            remaining -= keep.size
    return remaining <= 0


def make_buildings(
    size_px: int = SCENE_SIZE, n_buildings: int = N_BUILDINGS, seed: int = SEED
) -> Buildings:
    """Draw the reference buildings of a synthetic scene.

    Parameters
    ----------
    size_px : int
        Scene side in pixels (0.6 m each).
    n_buildings : int
        Number of buildings aimed at; fewer are placed only if every district
        is full (the count is reported by the caller).
    seed : int
        Seed of the ``numpy.random.Generator``.

    Returns
    -------
    Buildings
        Polygons in placement order with their labels, classes and districts.
    """
    if size_px < 16 or n_buildings < 1:
        raise ValueError(f"size_px must be >= 16 and n_buildings >= 1, got {size_px}, "
                         f"{n_buildings}")
    rng = np.random.default_rng(seed)
    size_m = size_px * PIXEL_SIZE
    x0, y1 = ORIGIN
    scene = shapely.box(x0, y1 - size_m, x0 + size_m, y1)
    cells, types, angles, roads = _districts(rng, size_m)
    regions, buildables = [], []
    for k, cell in enumerate(cells):
        dt = DISTRICTS[types[k]]
        region = shapely.intersection(cell, scene)  # where centres may fall
        streets = _streets(rng, cell, dt, angles[k])
        buildable = shapely.difference(cell, shapely.buffer(roads, dt.setback))
        if streets is not None:
            buildable = shapely.difference(buildable, shapely.buffer(streets, dt.setback))
        shapely.prepare(region)
        shapely.prepare(buildable)
        regions.append(region)
        buildables.append(buildable)
    density = np.array([DISTRICTS[t].density for t in types])
    weight = shapely.area(np.asarray(regions)) * density
    placed: list[list[np.ndarray]] = [[] for _ in cells]
    open_ = np.ones(cells.size, dtype=bool)
    for _ in range(5):  # later passes hand the deficit of full districts to the others
        deficit = n_buildings - sum(sum(p.size for p in pl) for pl in placed)
        if deficit <= 0 or not open_.any():
            break
        w = np.where(open_, weight, 0.0)
        quota = np.floor(deficit * w / w.sum()).astype(int)
        quota[np.argsort(-w, kind="stable")[: deficit - quota.sum()]] += 1
        for k in np.flatnonzero(quota > 0):
            dt = DISTRICTS[types[k]]
            if not _fill_district(rng, regions[k], buildables[k], dt, angles[k],
                                  placed[k], int(quota[k])):
                open_[k] = False
        # only built-up districts (informal, residential) take over a deficit
        open_ &= density >= 10
    polys, district = [], []
    for k, pl in enumerate(placed):
        for p in pl:
            polys.append(p)
            district.append(np.full(p.size, types[k]))
    polygons = np.concatenate(polys) if polys else np.empty(0, dtype=object)
    district_arr = np.concatenate(district) if district else np.empty(0, dtype=int)
    n = polygons.size
    # Sparse ids (gaps of 1-4, as left by an editor's deletions), shuffled over the scene.
    ids = rng.permutation(1000 + np.cumsum(rng.integers(1, 5, n)))
    area = shapely.area(polygons)
    shed = (district_arr == 0) & (area < 30.0) & (rng.random(n) < 0.2)
    classes = np.where(shed, "shed", "building")
    return Buildings(ids, polygons, classes, district_arr, scene_transform(size_px), size_px)


def rasterize_buildings(b: Buildings) -> tuple[np.ndarray, np.ndarray]:
    """Burn buildings into a label grid; also return the mask of buildings with pixels."""
    dtype = label_dtype(int(b.ids.max()) if b.ids.size else 0)
    shape = (b.size_px, b.size_px)
    if b.ids.size == 0:
        return np.zeros(shape, dtype=dtype), np.zeros(0, dtype=bool)
    labels = rasterize(zip(b.polygons, b.ids.tolist(), strict=True), out_shape=shape,
                       transform=b.transform, fill=0, all_touched=False, dtype=dtype)
    counts = np.bincount(labels.ravel(), minlength=int(b.ids.max()) + 1)
    return labels, counts[b.ids] > 0


def make_scene(
    size_px: int = SCENE_SIZE, n_buildings: int = N_BUILDINGS, seed: int = SEED
) -> tuple[np.ndarray, Affine, CRS]:
    """Make a labelled reference raster of a synthetic built-up scene.

    Parameters
    ----------
    size_px : int
        Side of the square scene in 0.6 m pixels (1668 = the PRRS 2008 tile,
        3336 = four times its area).
    n_buildings : int
        Number of buildings aimed at (about 3000 per 1668² pixels is the
        density of the contest's reference map, 3064 buildings).
    seed : int
        Seed of the random generator; equal arguments give equal arrays.

    Returns
    -------
    labels : numpy.ndarray
        ``size_px × size_px`` array, smallest unsigned dtype that fits,
        background 0, one sparse label per building.
    transform : affine.Affine
        Pixel-to-CRS transform.
    crs : rasterio.crs.CRS
        EPSG:32651.
    """
    b = make_buildings(size_px, n_buildings, seed)
    labels, _ = rasterize_buildings(b)
    return labels, b.transform, scene_crs()


# ----------------------------------------------------------------- vectorising


def vectorize_labels(labels: np.ndarray, transform: Affine) -> tuple[np.ndarray, np.ndarray]:
    """One (Multi)Polygon per label, traced along pixel edges
    (:func:`geoeval.grid.vectorize_grid`, the reader's own vectorising).

    Returns the sorted distinct labels (background 0 excluded) and their
    geometries; each area is exactly the pixel count times the pixel area.
    """
    from geoeval.grid import LabelGrid, label_areas, vectorize_grid

    ids, _ = label_areas(labels, 0)
    return ids, vectorize_grid(LabelGrid(labels, transform, None, 0), ids)


# ----------------------------------------------------------------- submissions


@dataclass
class _Ref:
    """Per-object statistics of a label grid (objects in sorted label order)."""

    labels: np.ndarray
    ids: np.ndarray
    index: np.ndarray  # per pixel: object index, -1 on background
    area: np.ndarray  # pixels
    cx: np.ndarray  # centroid column
    cy: np.ndarray  # centroid row
    orient: np.ndarray  # principal axis angle (radians, in (col, -row) frame)


def _stats(labels: np.ndarray) -> _Ref:
    ids, inv, area = np.unique(labels, return_inverse=True, return_counts=True)
    inv = inv.reshape(labels.shape)
    has_bg = ids.size > 0 and ids[0] == 0
    if has_bg:
        ids, area, inv = ids[1:], area[1:], inv - 1
    rows, cols = np.indices(labels.shape)
    fg = inv >= 0
    k, r, c = inv[fg], rows[fg].astype(float), cols[fg].astype(float)
    n = ids.size
    cx = np.bincount(k, c, n) / area
    cy = np.bincount(k, r, n) / area
    dx, dy = c - cx[k], -(r - cy[k])
    mu20 = np.bincount(k, dx * dx, n)
    mu02 = np.bincount(k, dy * dy, n)
    mu11 = np.bincount(k, dx * dy, n)
    orient = 0.5 * np.arctan2(2 * mu11, mu20 - mu02)
    return _Ref(labels, ids, inv, area.astype(float), cx, cy, orient)


def _pick(rng: np.random.Generator, area: np.ndarray, frac: float, bias: float) -> np.ndarray:
    """Choose about ``frac`` of the objects; an e-fold smaller one is e**bias times as likely."""
    if area.size == 0 or frac <= 0:
        return np.zeros(area.size, dtype=bool)
    w = (np.median(area) / area) ** bias
    p = np.full(area.size, frac)
    scale = frac / w.mean()
    for _ in range(30):  # fixed point so that the clipped probabilities average ``frac``
        p = np.clip(scale * w, 0.0, 0.97)
        scale *= frac / max(p.mean(), 1e-12)
    return rng.random(area.size) < p


def _neighbour_max(labels: np.ndarray) -> np.ndarray:
    """Largest label among each pixel's four neighbours (0 outside the grid)."""
    p = np.pad(labels, 1)
    return np.maximum.reduce([p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]])


def _boundary(labels: np.ndarray) -> np.ndarray:
    """Object pixels with a 4-neighbour of another label (the grid's outside counts)."""
    p = np.pad(labels, 1)
    c = p[1:-1, 1:-1]
    diff = (p[:-2, 1:-1] != c) | (p[2:, 1:-1] != c) | (p[1:-1, :-2] != c) | (p[1:-1, 2:] != c)
    return diff & (c != 0)


def _wobble(labels: np.ndarray, rng: np.random.Generator, amount: float, sigma: float = 2.5,
            passes: int = 1) -> np.ndarray:
    """Spatially correlated boundary noise: peel or grow patches of the outline by one pixel.

    ``amount`` is about the share of boundary pixels affected on each side per pass.
    """
    out = labels.copy()
    thr = NormalDist().inv_cdf(1 - amount)
    for _ in range(passes):
        field = ndimage.gaussian_filter(rng.standard_normal(out.shape), sigma)
        field /= field.std()
        bnd = _boundary(out)
        nb = _neighbour_max(out)
        grow = (out == 0) & (nb != 0) & (field < -thr)
        peel = bnd & (field > thr)
        out[peel] = 0
        out[grow] = nb[grow]
    return out


def _relabel(labels: np.ndarray, rng: np.random.Generator, scheme: str) -> np.ndarray:
    """Give a submission its own numbering: ``scan`` (1..n in raster order, as a
    connected-component labeller does) or ``shuffle`` (a random permutation of 1..n)."""
    flat = labels.ravel()
    vals, first = np.unique(flat, return_index=True)
    keep = vals != 0
    vals, first = vals[keep], first[keep]
    n = vals.size
    if scheme == "scan":
        new = np.empty(n, dtype=np.int64)
        new[np.argsort(first, kind="stable")] = np.arange(1, n + 1)
    else:
        new = rng.permutation(n) + 1
    dtype = label_dtype(n)
    out = np.zeros(labels.shape, dtype=dtype)
    pos = np.searchsorted(vals, flat)
    nz = flat != 0
    out.ravel()[nz] = new[pos[nz]]
    return out


def _drop_small(labels: np.ndarray, min_px: int) -> np.ndarray:
    ids, counts = np.unique(labels, return_counts=True)
    small = ids[(counts < min_px) & (ids != 0)]
    out = labels.copy()
    out[np.isin(labels, small)] = 0
    return out


def _remove(ref: _Ref, out: np.ndarray, drop: np.ndarray) -> np.ndarray:
    """Blank the objects flagged in ``drop`` (indices into ``ref``)."""
    res = out.copy()
    kill = np.zeros(ref.ids.size + 1, dtype=bool)
    kill[:-1] = drop
    res[kill[ref.index]] = 0  # index -1 -> last entry, False
    return res


def _blobs(
    rng: np.random.Generator, n: int, ref: _Ref, ref_geoms: np.ndarray, transform: Affine,
    road_share: float = 0.4, margin: float = 1.2,
) -> np.ndarray:
    """``n`` false-alarm polygons on open ground: vegetation-like blobs and road-like strips.

    Centres are drawn among background pixels at least 2 m from any building;
    shapes within ``margin`` of a reference building or of each other are
    dropped and redrawn.
    """
    labels = ref.labels
    dist = ndimage.distance_transform_edt(labels == 0) * PIXEL_SIZE
    free = np.flatnonzero(dist.ravel() > 2.0)
    tree = shapely.STRtree(ref_geoms)
    kd = cKDTree(np.stack([ref.cx, ref.cy], axis=-1)) if ref.ids.size else None
    placed: list[np.ndarray] = []
    have = 0
    for _ in range(12):
        if have >= n or free.size == 0:
            break
        m = 3 * (n - have) + 20
        pix = free[rng.integers(0, free.size, m)]
        r, c = np.divmod(pix, labels.shape[1])
        fc, fr = c + rng.random(m), r + rng.random(m)
        x = transform.a * fc + transform.b * fr + transform.c
        y = transform.d * fc + transform.e * fr + transform.f
        road = rng.random(m) < road_share
        geoms = np.empty(m, dtype=object)
        # vegetation / bare soil: smooth star-shaped blobs, 1.5-7 m across
        nv = int((~road).sum())
        k = 10
        ang = np.arange(k) * 2 * np.pi / k + rng.uniform(-0.25, 0.25, (nv, k))
        rad = rng.uniform(1.0, 3.5, nv)[:, None] * rng.uniform(0.55, 1.0, (nv, k))
        bx = x[~road, None] + rad * np.cos(ang)
        by = y[~road, None] + rad * np.sin(ang)
        blob = shapely.buffer(shapely.polygons(np.stack([bx, by], -1)), 0.6, quad_segs=2)
        geoms[~road] = shapely.simplify(blob, 0.15)
        # road-like strips along the local street direction (nearest building's axis)
        nr = int(road.sum())
        if kd is not None:
            _, near = kd.query(np.stack([(c[road] + 0.5), (r[road] + 0.5)], axis=-1))
            theta = ref.orient[near] + np.where(rng.random(nr) < 0.5, 0, np.pi / 2)
        else:
            theta = rng.uniform(0, np.pi, nr)
        theta = theta + np.deg2rad(rng.normal(0, 3, nr))
        length, width = rng.uniform(12, 45, nr), rng.uniform(2.5, 5.0, nr)
        u = np.stack([-length, length, length, -length], 1) / 2
        v = np.stack([-width, -width, width, width], 1) / 2
        sx = u * np.cos(theta)[:, None] - v * np.sin(theta)[:, None] + x[road, None]
        sy = u * np.sin(theta)[:, None] + v * np.cos(theta)[:, None] + y[road, None]
        geoms[road] = shapely.polygons(np.stack([sx, sy], -1))
        near_ref = np.zeros(m, dtype=bool)
        if ref_geoms.size:
            hit, _ = tree.query(geoms, predicate="dwithin", distance=margin)
            near_ref[hit] = True
        cand = geoms[~near_ref]
        keep = _greedy_accept(cand, np.full(cand.size, margin), placed, n - have)
        if keep.size:
            placed.append(cand[keep])
            have += keep.size
    return np.concatenate(placed) if placed else np.empty(0, dtype=object)


def _paint(out: np.ndarray, ref_labels: np.ndarray, geoms: np.ndarray, transform: Affine,
           min_px: int = 12) -> np.ndarray:
    """Burn polygons as new objects onto background pixels of ``out`` and of the reference."""
    if geoms.size == 0:
        return out
    base = int(out.max()) + 1
    vals = base + np.arange(geoms.size)
    dtype = label_dtype(int(vals[-1]))
    fa = rasterize(zip(geoms, vals.tolist(), strict=True), out_shape=out.shape,
                   transform=transform, fill=0, all_touched=False, dtype=dtype)
    res = out.astype(dtype, copy=True)
    free = (fa != 0) & (out == 0) & (ref_labels == 0)
    res[free] = fa[free]
    return _drop_small(res, min_px) if min_px > 1 else res


def _merge_pairs(labels: np.ndarray, rng: np.random.Generator, share: float) -> np.ndarray:
    """Merge about ``share`` of the objects with a 4-adjacent neighbour."""
    a = np.concatenate([labels[:, :-1].ravel(), labels[:-1, :].ravel()])
    b = np.concatenate([labels[:, 1:].ravel(), labels[1:, :].ravel()])
    sel = (a != b) & (a != 0) & (b != 0)
    pairs = np.unique(np.stack([np.minimum(a[sel], b[sel]), np.maximum(a[sel], b[sel])], 1),
                      axis=0)
    n_obj = np.count_nonzero(np.unique(labels))
    k = min(pairs.shape[0], int(round(share * n_obj / 2)))
    if k == 0:
        return labels
    chosen = pairs[rng.choice(pairs.shape[0], k, replace=False)]
    top = int(labels.max()) + 1
    g = coo_matrix((np.ones(k), (chosen[:, 0], chosen[:, 1])), shape=(top, top))
    _, comp = connected_components(g, directed=False)
    # each component takes the label of its smallest member
    rep = np.full(comp.max() + 1, top)
    np.minimum.at(rep, comp, np.arange(top))
    return rep[comp][labels].astype(labels.dtype)


def _erode(labels: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Shrink every object by its own radius (pixels) from its outline."""
    inner = ndimage.distance_transform_edt(~_boundary(labels) & (labels != 0))
    keep = inner >= radius
    return np.where(keep, labels, 0).astype(labels.dtype)


def _fragment(ref: _Ref, rng: np.random.Generator, out: np.ndarray) -> np.ndarray:
    """Cut selected objects into 2-4 pieces across a principal axis (over-detection)."""
    n = ref.ids.size
    big = np.log(ref.area / np.median(ref.area))
    p = np.clip(0.35 + 0.25 * big, 0.08, 0.9)
    split = rng.random(n) < p
    pieces = np.where(split, rng.choice([2, 3, 4], n, p=[0.55, 0.3, 0.15]), 1)
    pieces = np.minimum(pieces, np.maximum(1, (ref.area // 40).astype(int)))
    axis = ref.orient + np.where(rng.random(n) < 0.75, 0.0, np.pi / 2)
    # cut positions as fractions of the extent along the axis: jittered equal parts
    cuts = np.full((n, 3), np.inf)
    for k in (2, 3, 4):
        sel = pieces == k
        base = np.arange(1, k) / k
        cuts[sel, : k - 1] = base + rng.uniform(-0.3, 0.3, (sel.sum(), k - 1)) / k
    idx = ref.index
    fg = out != 0
    same = fg & (idx >= 0)
    k = idx[same]
    r, c = np.nonzero(same)
    t = (c - ref.cx[k]) * np.cos(axis[k]) - (r - ref.cy[k]) * np.sin(axis[k])
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, k, t)
    np.maximum.at(hi, k, t)
    frac = (t - lo[k]) / np.maximum(hi[k] - lo[k], 1e-9)
    piece = (frac[:, None] > cuts[k]).sum(axis=1)
    new = np.zeros(out.shape, dtype=np.int64)
    new[same] = k.astype(np.int64) * 4 + piece + 1
    other = fg & ~same  # false alarms already painted keep their own labels
    new[other] = 4 * n + 1 + out[other].astype(np.int64)
    return new


def _shift(labels: np.ndarray, ref: _Ref, rng: np.random.Generator, dx: int, dy: int
           ) -> np.ndarray:
    """Move the whole output by (dx, dy) pixels and each object by a further ±1 pixel."""
    n = ref.ids.size
    jx, jy = rng.integers(-1, 2, n), rng.integers(-1, 2, n)
    fg = labels != 0
    r, c = np.nonzero(fg)
    k = np.minimum(np.searchsorted(ref.ids, labels[fg]), max(n - 1, 0))
    rr = r + dy + jy[k]
    cc = c + dx + jx[k]
    ok = (rr >= 0) & (rr < labels.shape[0]) & (cc >= 0) & (cc < labels.shape[1])
    out = np.zeros_like(labels)
    # overlapping moved objects: the larger label wins (deterministic)
    order = np.argsort(labels[fg][ok], kind="stable")
    out[rr[ok][order], cc[ok][order]] = labels[fg][ok][order]
    return out


def _smooth(geoms: np.ndarray, tol: float = 0.7) -> np.ndarray:
    """Smooth pixel staircases the way a detector's vector output would look
    (Douglas-Peucker with a tolerance just above a pixel's half diagonal)."""
    return shapely.make_valid(shapely.simplify(geoms, tol, preserve_topology=True))


def _polygonal(geoms: np.ndarray) -> np.ndarray:
    """Keep the polygonal part of each geometry (None when nothing is left)."""
    out = np.empty(geoms.size, dtype=object)
    for i, g in enumerate(geoms):  # only used on a few thousand geometries, once
        if g is None or g.is_empty:
            out[i] = None
        elif g.geom_type in ("Polygon", "MultiPolygon"):
            out[i] = g
        else:
            parts = [p for p in shapely.get_parts(g) if p.geom_type == "Polygon"]
            out[i] = shapely.multipolygons(parts) if len(parts) > 1 else (
                parts[0] if parts else None)
    return out


def _vector(geoms: np.ndarray, rng: np.random.Generator, min_area: float = 4.0,
            **fields: np.ndarray) -> dict[str, np.ndarray]:
    """Package polygons as a vector submission: shuffled ids 1..n, empty/tiny ones dropped."""
    geoms = _polygonal(geoms)
    ok = np.array([g is not None for g in geoms], dtype=bool)
    ok[ok] = shapely.area(geoms[ok]) >= min_area
    geoms = geoms[ok]
    order = rng.permutation(geoms.size)
    out = {"geometry": geoms[order], "id": np.arange(1, geoms.size + 1, dtype=np.int32)}
    for k, v in fields.items():
        out[k] = np.asarray(v)[ok][order]
    return out


def _cluster_merge(geoms: np.ndarray, rng: np.random.Generator, dist: float, keep: float,
                   max_size: np.ndarray,
                   pairs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Group polygons closer than ``dist`` (each link kept with prob. ``keep``, groups
    capped at ``max_size``), or link the given ``pairs``; returns a group index per polygon."""
    n = geoms.size
    if pairs is None:
        i, j = shapely.STRtree(geoms).query(geoms, predicate="dwithin", distance=dist)
        sel = i < j
        i, j = i[sel], j[sel]
    else:
        i, j = pairs
    links = rng.random(i.size) < keep
    i, j = i[links], j[links]
    order = rng.permutation(i.size)
    parent = np.arange(n)
    size = np.ones(n, dtype=int)
    cap = max_size.copy()

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for e in order:  # union-find over a few thousand links
        a, b = find(int(i[e])), find(int(j[e]))
        if a == b or size[a] + size[b] > min(cap[a], cap[b]):
            continue
        parent[b] = a
        size[a] += size[b]
        cap[a] = min(cap[a], cap[b])
    return np.array([find(a) for a in range(n)])


def _union_groups(geoms: np.ndarray, group: np.ndarray, close: float) -> np.ndarray:
    """Union each group's polygons, bridging gaps up to ``2 * close`` (morphological closing)."""
    _, g = np.unique(group, return_inverse=True)
    grown = shapely.buffer(geoms, close, quad_segs=2)
    order = np.argsort(g, kind="stable")
    bounds = np.searchsorted(g[order], np.arange(g.max() + 2))
    out = np.empty(bounds.size - 1, dtype=object)
    for k in range(out.size):
        members = grown[order[bounds[k]:bounds[k + 1]]]
        out[k] = members[0] if members.size == 1 else shapely.union_all(members)
    return shapely.buffer(out, -close * 0.85, quad_segs=2)


def _resolve_overlaps(geoms: np.ndarray, rng: np.random.Generator, merge_frac: float
                      ) -> np.ndarray:
    """Make overlapping polygons disjoint: pairs sharing more than ``merge_frac`` of the
    smaller one are merged (under-detection); otherwise the later one loses the overlap."""
    i, j = shapely.STRtree(geoms).query(geoms, predicate="intersects")
    sel = i < j
    i, j = i[sel], j[sel]
    inter = shapely.area(shapely.intersection(geoms[i], geoms[j]))
    small = np.minimum(shapely.area(geoms[i]), shapely.area(geoms[j]))
    big = inter > merge_frac * small
    group = _cluster_merge(geoms, rng, -1.0, 1.0, np.full(geoms.size, 10**9),
                           pairs=(i[big], j[big]))
    merged = _union_groups(geoms, group, 0.01)
    # remaining overlaps between groups: the group of the larger index gives way
    _, g = np.unique(group, return_inverse=True)
    a, b = g[i[~big]], g[j[~big]]
    pairs = np.unique(np.stack([np.minimum(a, b), np.maximum(a, b)], 1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    for lo, hi in pairs:  # a few hundred small clips
        merged[hi] = shapely.difference(merged[hi], merged[lo])
    return merged


SUBMISSIONS: dict[str, str] = {
    "s1_near_perfect.tif": "near-perfect: 2 % missed (small ones), 1 % merged with a touching "
                           "neighbour, 15 tiny false alarms, slight boundary noise",
    "s2_misses.tif": "cautious: 25 % missed, strongly preferring small buildings; few false "
                     "alarms; moderate boundary noise",
    "s3_false_alarms.gpkg": "eager: 6 % missed, smooth outlines, plus 600 false alarms "
                            "(vegetation-like blobs and road-like strips); stored in EPSG:4326",
    "s4_fragmented.tif": "over-segmenting: large buildings cut into 2-4 pieces across a "
                         "principal axis, 4 % missed, 2 % false alarms",
    "s5_merged.shp": "under-segmenting: neighbours closer than 2.5 m merged into one polygon "
                     "(each link kept with p = 0.7, groups of 2-7 at most), 5 % missed",
    "s6_eroded.tif": "shrunken outlines: every building eroded by 1 or 2 pixels (thin or small "
                     "ones vanish), 2 % missed",
    "s7_dilated.gpkg": "swollen outlines: every building buffered by 1-3 pixels (0.6-1.8 m); "
                       "detections of close neighbours overlap each other and both references",
    "s8_shifted.tif": "misregistered: whole output shifted 3 pixels east and 2 south (1.8 m, "
                      "1.2 m) plus ±1 pixel per object, 4 % missed",
    "s9_blobby.shp": "mediocre: buffered convex hulls with position and scale noise, hulls "
                     "overlapping by > 20 % merged, 18 % missed, 8 % false alarms, "
                     "confidence field",
}
"""File name -> behaviour of each submission (also written to ``manifest.json``)."""


def make_submissions(
    labels: np.ndarray, seed: int = SEED, transform: Affine | None = None
) -> dict[str, Any]:
    """Nine synthetic detector outputs for a reference label grid.

    Parameters
    ----------
    labels : numpy.ndarray
        Reference label grid (background 0), e.g. from :func:`make_scene`.
    seed : int
        Seed; submission ``k`` uses ``numpy.random.default_rng([seed, k])`` so
        each is reproducible on its own.
    transform : affine.Affine, optional
        Pixel-to-CRS transform of ``labels`` (default: :func:`scene_transform`).

    Returns
    -------
    dict
        File name (see :data:`SUBMISSIONS`) -> either a label array on the
        reference grid (``.tif``, own numbering, background 0) or a dict of
        columns ``geometry`` (shapely polygons in EPSG:32651), ``id`` and
        optionally ``score`` (``.gpkg`` / ``.shp``).
    """
    transform = scene_transform(labels.shape[0]) if transform is None else transform
    ref = _stats(labels)
    _, ref_geoms = vectorize_labels(labels, transform)  # same order as ref.ids
    n = ref.ids.size
    rng = [np.random.default_rng([seed, k]) for k in range(10)]
    subs: dict[str, Any] = {}

    # s1: near perfect
    g = rng[1]
    out = _remove(ref, labels, _pick(g, ref.area, 0.02, 1.0))
    out = _merge_pairs(out, g, 0.01)
    out = _wobble(out, g, 0.08)
    out = _paint(out, labels, _blobs(g, 15, ref, ref_geoms, transform, 0.0), transform)
    subs["s1_near_perfect.tif"] = _relabel(out, g, "scan")

    # s2: misses (small ones first)
    g = rng[2]
    out = _remove(ref, labels, _pick(g, ref.area, 0.25, 1.5))
    out = _wobble(out, g, 0.15, passes=2)
    out = _paint(out, labels, _blobs(g, max(1, n // 60), ref, ref_geoms, transform), transform)
    subs["s2_misses.tif"] = _relabel(out, g, "shuffle")

    # s3: many false alarms (vector, stored in EPSG:4326)
    g = rng[3]
    out = _remove(ref, labels, _pick(g, ref.area, 0.06, 1.0))
    out = _wobble(out, g, 0.15, passes=2)
    _, det = vectorize_labels(out, transform)
    det = _smooth(det)
    fa = _blobs(g, int(round(600 * n / 3000)), ref, ref_geoms, transform, 0.45)
    score = np.concatenate([g.uniform(0.55, 1.0, det.size), g.uniform(0.3, 0.8, fa.size)])
    subs["s3_false_alarms.gpkg"] = _vector(np.concatenate([det, fa]), g, score=score.round(3))

    # s4: fragmented (over-detection)
    g = rng[4]
    out = _remove(ref, labels, _pick(g, ref.area, 0.04, 1.0))
    out = _paint(out, labels, _blobs(g, n // 50, ref, ref_geoms, transform), transform)
    out = _fragment(ref, g, out)
    out = _wobble(out, g, 0.1)
    subs["s4_fragmented.tif"] = _relabel(_drop_small(out, 6), g, "scan")

    # s5: merged neighbours (under-detection, Shapefile)
    g = rng[5]
    keep = ~_pick(g, ref.area, 0.05, 1.0)
    geoms = ref_geoms[keep]
    group = _cluster_merge(geoms, g, 2.5, 0.7, g.integers(2, 8, geoms.size))
    det = _union_groups(geoms, group, 1.4)
    det = shapely.simplify(det, 0.5, preserve_topology=True)
    subs["s5_merged.shp"] = _vector(det, g)

    # s6: eroded
    g = rng[6]
    out = _remove(ref, labels, _pick(g, ref.area, 0.02, 1.0))
    rad = np.where(g.random(n) < 0.5, 1.0, 2.0)
    r_px = np.zeros(n + 1)
    r_px[:-1] = rad
    out = _erode(out, r_px[ref.index])
    out = _wobble(out, g, 0.05)
    subs["s6_eroded.tif"] = _relabel(_drop_small(out, 4), g, "scan")

    # s7: dilated (vector, overlapping detections)
    g = rng[7]
    keep = ~_pick(g, ref.area, 0.03, 1.0)
    grow = g.integers(1, 4, n) * PIXEL_SIZE
    det = shapely.simplify(ref_geoms[keep], 0.5, preserve_topology=True)
    det = shapely.buffer(det, grow[keep], join_style="mitre", mitre_limit=2.0)
    det = shapely.simplify(det, 0.2, preserve_topology=True)
    fa = _blobs(g, n // 100, ref, ref_geoms, transform, 0.2, margin=3.0)
    subs["s7_dilated.gpkg"] = _vector(np.concatenate([det, fa]), g)

    # s8: shifted
    g = rng[8]
    out = _remove(ref, labels, _pick(g, ref.area, 0.04, 1.0))
    out = _wobble(out, g, 0.1)
    out = _shift(out, ref, g, 3, 2)
    out = _paint(out, labels, _blobs(g, n // 70, ref, ref_geoms, transform), transform)
    subs["s8_shifted.tif"] = _relabel(out, g, "scan")

    # s9: blobby mediocre detector (Shapefile)
    g = rng[9]
    keep = ~_pick(g, ref.area, 0.18, 1.2)
    hull = shapely.convex_hull(ref_geoms[keep])
    c = shapely.centroid(hull)
    cx, cy = shapely.get_x(c), shapely.get_y(c)
    m = hull.size
    s = g.uniform(0.9, 1.1, m)
    dx, dy = g.normal(0, 0.6, m), g.normal(0, 0.6, m)
    xy, idx = shapely.get_coordinates(hull, return_index=True)
    xy = (xy - np.stack([cx, cy], -1)[idx]) * s[idx, None] + np.stack([cx + dx, cy + dy], -1)[idx]
    hull = shapely.set_coordinates(hull.copy(), xy)
    det = shapely.buffer(hull, 0.6, quad_segs=3)
    det = _resolve_overlaps(det, g, 0.2)
    det = shapely.simplify(det, 0.5, preserve_topology=True)
    fa = shapely.convex_hull(_blobs(g, int(round(0.08 * n)), ref, ref_geoms, transform, 0.3))
    fa = shapely.buffer(fa, 0.9, quad_segs=3)
    area_ha = shapely.area(det)
    sc_det = np.clip(0.45 + 0.1 * np.log(area_ha / 50.0) + g.normal(0, 0.1, det.size), 0.05, 1)
    sc_fa = np.clip(g.normal(0.35, 0.12, fa.size), 0.05, 1)
    score = np.concatenate([sc_det, sc_fa]).round(3)
    subs["s9_blobby.shp"] = _vector(np.concatenate([det, fa]), g, score=score)
    return subs


# --------------------------------------------------------------------------- writing


def _write_raster(path: Path, labels: np.ndarray, transform: Affine) -> None:
    profile = {
        "driver": "GTiff", "width": labels.shape[1], "height": labels.shape[0], "count": 1,
        "dtype": labels.dtype.name, "crs": scene_crs(), "transform": transform,
        "compress": "deflate", "predictor": 2, "zlevel": 9, "tiled": True,
        "blockxsize": 256, "blockysize": 256,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(labels, 1)


def _write_vector(path: Path, cols: dict[str, np.ndarray], layer: str, epsg: int = EPSG) -> None:
    import geopandas as gpd  # heavy import, only when writing
    import pyogrio

    data = {k: v for k, v in cols.items() if k != "geometry"}
    gdf = gpd.GeoDataFrame(data, geometry=list(cols["geometry"]), crs=f"EPSG:{EPSG}")
    if epsg != EPSG:
        gdf = gdf.to_crs(epsg=epsg)
    # A fixed "last change" date makes GeoPackages byte-identical between runs.
    pyogrio.set_gdal_config_options({"OGR_CURRENT_DATE": "2008-12-08T00:00:00Z"})
    try:
        if path.suffix == ".shp":
            gdf.to_file(path, driver="ESRI Shapefile", engine="pyogrio", encoding="UTF-8",
                        promote_to_multi=False)
        else:
            gdf.to_file(path, driver="GPKG", layer=layer, engine="pyogrio",
                        promote_to_multi=False, SPATIAL_INDEX="NO")
    finally:
        pyogrio.set_gdal_config_options({"OGR_CURRENT_DATE": None})


def _count(obj: Any) -> int:
    if isinstance(obj, np.ndarray):
        return int(np.count_nonzero(np.unique(obj)))
    return int(obj["geometry"].size)


def write_sample(
    out_dir: str | Path,
    size_px: int = SCENE_SIZE,
    n_buildings: int = N_BUILDINGS,
    seed: int = SEED,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Write the reference (GeoTIFF + GeoPackage), the nine submissions and a manifest.

    Every file is first written to a temporary folder inside ``out_dir`` and
    then moved into place with ``os.replace``.

    Returns
    -------
    dict
        The manifest written to ``manifest.json`` (files, formats, CRS, object counts).
    """
    out = Path(out_dir)
    (out / "submissions").mkdir(parents=True, exist_ok=True)
    b = make_buildings(size_px, n_buildings, seed)
    labels, has_px = rasterize_buildings(b)
    cls = dict(zip(b.ids[has_px].tolist(), b.classes[has_px].tolist(), strict=True))
    transform = b.transform
    ids, geoms = vectorize_labels(labels, transform)
    subs = make_submissions(labels, seed, transform)

    manifest: dict[str, Any] = {
        "generator": "sample_data/make_sample.py",
        "seed": seed,
        "scene": {"size_px": size_px, "pixel_size_m": PIXEL_SIZE, "crs": f"EPSG:{EPSG}",
                  "origin_upper_left": list(ORIGIN), "buildings_aimed_at": n_buildings},
        "reference": {"raster": "reference.tif", "vector": "reference.gpkg", "layer": "buildings",
                      "objects": int(ids.size),
                      "sheds": int(sum(cls[i] == "shed" for i in ids.tolist())),
                      "label_min": int(ids.min()), "label_max": int(ids.max()),
                      "dtype": labels.dtype.name},
        "submissions": [],
    }
    tmp = Path(tempfile.mkdtemp(prefix=".make_sample_", dir=out))
    try:
        (tmp / "submissions").mkdir()
        _write_raster(tmp / "reference.tif", labels, transform)
        _write_vector(tmp / "reference.gpkg", {
            "geometry": geoms, "id": ids.astype(np.int32),
            "class": np.array([cls[i] for i in ids.tolist()], dtype=object)}, "buildings")
        for name, obj in subs.items():
            path = tmp / "submissions" / name
            entry = {"file": f"submissions/{name}", "behaviour": SUBMISSIONS[name],
                     "objects": _count(obj)}
            if isinstance(obj, np.ndarray):
                _write_raster(path, obj, transform)
                entry.update(format="GTiff", crs=f"EPSG:{EPSG}", dtype=obj.dtype.name)
            else:
                epsg = 4326 if name == "s3_false_alarms.gpkg" else EPSG
                layer = "detections" if name.endswith(".gpkg") else Path(name).stem
                _write_vector(path, obj, layer, epsg)
                entry.update(format="GPKG" if name.endswith(".gpkg") else "ESRI Shapefile",
                             crs=f"EPSG:{epsg}", layer=layer,
                             fields=[k for k in obj if k != "geometry"])
            manifest["submissions"].append(entry)
            log(f"{name:24s} {entry['objects']:6d} objects")
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        for f in sorted(tmp.rglob("*")):
            if f.is_file():
                dest = out / f.relative_to(tmp)
                os.replace(f, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"reference: {ids.size} buildings; written to {out}")
    return manifest


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: ``python sample_data/make_sample.py [--out DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="output folder (default: the folder of this script)")
    parser.add_argument("--size", type=int, default=SCENE_SIZE, help="scene side in pixels")
    parser.add_argument("--buildings", type=int, default=N_BUILDINGS,
                        help="number of buildings aimed at")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    write_sample(args.out, args.size, args.buildings, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
