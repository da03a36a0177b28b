"""DOTA_devkit as the test oracle of ``geoeval boxes dota``, and seeded DOTA-like data sets.

The oracle is the evaluation code the DOTA authors published (Ding et al.,
CAPTAIN-WHU/DOTA_devkit, commit 9938855, 2019-07-05): ``dota_evaluation_task1.py``,
``dota_evaluation_task2.py`` and their ``dota-v1.5_`` variants, run unmodified, in
process, one ``voc_eval`` call per class as their ``main()`` does. Their polygon
IoU is the SWIG C++ extension ``polyiou`` (``polyiou.cpp``, ``polyiou.i``, still in
the repository: the last commit, "rm cpp", removed only the GPU NMS sources); it
is built here with swig and g++ as the devkit's readme says (``swig -c++ -python
polyiou.i``, then the extension from ``polyiou_wrap.cxx`` and ``polyiou.cpp``), once,
into a cache folder. The devkit's code is never copied into geoeval: it is read
from the local mirror of its repository at test time.

Where the devkit cannot answer (it crashes on a class without any detection:
``np.array([])[order, :]`` on an empty detection file, ``open`` on a missing one),
:func:`run_devkit` records the answer its own arithmetic gives for no detection,
AP 0, and says so in :attr:`DevkitResult.crashed`.

Imported by ``tests/test_dota.py`` and ``benchmarks/bench_dota.py`` (which times the
devkit's loop against geoeval in the same run).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests.mirrors import git_dir

MIRROR = git_dir("CAPTAIN-WHU/DOTA_devkit")
COMMIT = "99388551054be9a6dabb01c8bb2a7eb562d57b4f"
SCRIPTS = {(1, "1.0"): "dota_evaluation_task1.py", (2, "1.0"): "dota_evaluation_task2.py",
           (1, "1.5"): "dota-v1.5_evaluation_task1.py",
           (2, "1.5"): "dota-v1.5_evaluation_task2.py"}
SOURCES = ("polyiou.cpp", "polyiou.h", "polyiou.i", *SCRIPTS.values())

CLASSES_10 = ("plane", "baseball-diamond", "bridge", "ground-track-field", "small-vehicle",
              "large-vehicle", "ship", "tennis-court", "basketball-court", "storage-tank",
              "soccer-ball-field", "roundabout", "harbor", "swimming-pool", "helicopter")
#: Typical length and width (pixels) of each class, for generated objects.
SIZES = {"plane": (60, 55), "baseball-diamond": (90, 85), "bridge": (120, 25),
         "ground-track-field": (260, 150), "small-vehicle": (18, 9), "large-vehicle": (40, 12),
         "ship": (45, 14), "tennis-court": (60, 30), "basketball-court": (55, 32),
         "storage-tank": (30, 30), "soccer-ball-field": (220, 140), "roundabout": (100, 100),
         "harbor": (120, 40), "swimming-pool": (40, 20), "helicopter": (40, 35),
         "container-crane": (80, 20), "airport": (900, 300), "helipad": (30, 30)}


class DevkitUnavailable(RuntimeError):
    """The devkit's mirror, swig or a C++ compiler is missing (tests skip)."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "geoeval-tests"


def devkit_dir() -> Path:
    """A folder holding the devkit's evaluation scripts and a built ``polyiou``.

    Built once per devkit commit and Python version (swig, g++), atomically (one
    folder renamed into place), so parallel test workers share it.
    """
    tag = f"dota_devkit-{COMMIT[:12]}-{sysconfig.get_config_var('SOABI')}"
    target = cache_root() / tag
    if (target / "ok").exists():
        return target
    if not MIRROR.exists():
        raise DevkitUnavailable(f"DOTA_devkit mirror not found at {MIRROR}")
    for tool in ("swig", "g++", "git"):
        if shutil.which(tool) is None:
            raise DevkitUnavailable(f"{tool} is not installed (apt-get install swig g++)")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=tag + ".", dir=target.parent))
    try:
        for name in SOURCES:
            text = subprocess.run(["git", "--git-dir", str(MIRROR), "show", f"{COMMIT}:{name}"],
                                  check=True, capture_output=True).stdout
            (work / name).write_bytes(text)
        subprocess.run(["swig", "-c++", "-python", "polyiou.i"], cwd=work, check=True,
                       capture_output=True)
        include = sysconfig.get_paths()["include"]
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        subprocess.run(["g++", "-O2", "-shared", "-fPIC", "polyiou_wrap.cxx", "polyiou.cpp",
                        f"-I{include}", "-o", f"_polyiou{suffix}"], cwd=work, check=True,
                       capture_output=True)
        (work / "ok").write_text(COMMIT)
        try:
            work.rename(target)
        except OSError:  # another worker got there first
            shutil.rmtree(work, ignore_errors=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        shutil.rmtree(work, ignore_errors=True)
        detail = getattr(exc, "stderr", b"") or b""
        raise DevkitUnavailable(f"building polyiou failed: {exc} {detail[-300:]!r}") from exc
    return target


_MODULES: dict[tuple[int, str], object] = {}


def script(task: int, version: str) -> object:
    """The devkit's evaluation module for ``task`` and ``version`` (v2.0 has no
    script of its own: the v1.0 ones)."""
    key = (task, "1.5" if version == "1.5" else "1.0")
    if key not in _MODULES:
        folder = devkit_dir()
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        os.environ.setdefault("MPLBACKEND", "Agg")  # the scripts import pyplot
        name = f"devkit_{SCRIPTS[key].removesuffix('.py').replace('-', '_').replace('.', '_')}"
        spec = importlib.util.spec_from_file_location(name, folder / SCRIPTS[key])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[key] = module
    return _MODULES[key]


@dataclass
class DevkitResult:
    """Per-class AP and mAP as the devkit's ``main()`` computes them."""

    ap: dict[str, float]
    map: float
    crashed: list[str] = field(default_factory=list)  # classes without a detection file
    seconds: float = 0.0


def hbb_labels(label_dir: Path, out: Path) -> Path:
    """The task-2 ground truth the task-2 scripts read: each labelTxt object as its
    enclosing box ``xmin ymin xmax ymin xmax ymax xmin ymax class difficult``
    (``dota_utils.dots4ToRec8``), no header lines (the task-2 ``parse_gt`` reads every
    line as an object)."""
    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(label_dir.glob("*.txt")):
        rows = []
        for line in f.read_text().splitlines():
            parts = line.split()
            if len(parts) < 9:
                continue
            xy = np.array([float(v) for v in parts[:8]]).reshape(4, 2)
            x0, y0 = xy.min(axis=0)
            x1, y1 = xy.max(axis=0)
            coords = [x0, y0, x1, y0, x1, y1, x0, y1]
            rows.append(" ".join(repr(float(v)) for v in coords) + " " + " ".join(parts[8:]))
        (out / f.name).write_text("".join(r + "\n" for r in rows))
    return out


def run_devkit(label_dir: Path, det_dir: Path, *, task: int = 1, version: str = "1.0",
               classes: tuple[str, ...] = CLASSES_10, use_07_metric: bool = True,
               work: Path | None = None) -> DevkitResult:
    """Run the devkit's ``voc_eval`` for every class, as its ``main()`` does.

    ``label_dir`` holds labelTxt files (task 2: converted by :func:`hbb_labels`);
    ``det_dir`` ``Task{task}_<class>.txt`` files. The image set is every label
    file's name. A class without a detection file gets AP 0 (the devkit crashes).
    """
    module = script(task, version)
    work = Path(tempfile.mkdtemp()) if work is None else work
    if task == 2:
        label_dir = hbb_labels(label_dir, work / "hbb")
    names = sorted(p.stem for p in label_dir.glob("*.txt"))
    imageset = work / "imageset.txt"
    imageset.write_text("".join(n + "\n" for n in names))
    annopath = str(label_dir / "{:s}.txt")
    detpath = str(det_dir / f"Task{task}_{{:s}}.txt")
    aps: dict[str, float] = {}
    crashed = []
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
        for c in classes:
            f = Path(detpath.format(c))
            if not f.exists() or not f.read_text().strip():
                crashed.append(c)
                aps[c] = 0.0
                continue
            _, _, ap = module.voc_eval(detpath, annopath, str(imageset), c, ovthresh=0.5,
                                       use_07_metric=use_07_metric)
            aps[c] = float(ap)
    seconds = time.perf_counter() - start
    return DevkitResult(aps, float(sum(aps.values()) / len(classes)), crashed, seconds)


# --- seeded DOTA-like data sets ------------------------------------------------------


@dataclass
class Dataset:
    """A generated reference (labelTxt) and submission (Task1/Task2 files)."""

    images: list[str]
    sizes: np.ndarray           # (n_images, 2) width, height
    gt_image: np.ndarray        # image index of each object
    gt_corners: np.ndarray      # (n, 8)
    gt_class: np.ndarray        # str
    gt_difficult: np.ndarray    # int
    det_image: np.ndarray
    det_corners: np.ndarray     # (m, 8)
    det_class: np.ndarray
    det_score: np.ndarray
    gt_decimals: int = 0
    det_decimals: int = 1
    headers: bool = True


def rectangles(centre: np.ndarray, length: np.ndarray, width: np.ndarray,
               angle: np.ndarray) -> np.ndarray:
    """``(n, 8)`` corners of rotated rectangles, clockwise on screen (y down)."""
    c, s = np.cos(angle), np.sin(angle)
    u = np.column_stack([c, s]) * (length / 2)[:, None]
    v = np.column_stack([-s, c]) * (width / 2)[:, None]
    pts = [centre - u - v, centre + u - v, centre + u + v, centre - u + v]
    return np.stack(pts, axis=1).reshape(-1, 8)


def synthetic(n_images: int = 20, objects_per_image: float = 30.0,
              detections: int = 3000, classes: tuple[str, ...] = CLASSES_10,
              seed: int = 0, adversarial: bool = False) -> Dataset:
    """A seeded DOTA-like data set.

    Images of 800-4000 px with a skewed object count (negative binomial around
    ``objects_per_image``, one dominant class per image), rotated rectangles with
    integer corners, about 8 % difficult; detections are jittered copies of the
    objects (most found once or several times, some under a wrong class) and
    clutter, scores on a 0.001 grid (ties), one-decimal coordinates.

    ``adversarial`` adds: corners in random order (self-intersecting quadrilaterals),
    counter-clockwise corners, degenerate quadrilaterals (repeated and collinear
    corners), objects crossing the image border, duplicated reference objects,
    detections identical to a reference object, images without objects or without
    detections, one class without any detection and one class absent from the
    reference.
    """
    rng = np.random.default_rng(seed)
    names = [f"P{1000 + i:04d}" for i in range(n_images)]
    sizes = rng.integers(800, 4001, (n_images, 2))
    counts = rng.negative_binomial(1.2, 1.2 / (1.2 + objects_per_image), n_images)
    if adversarial and n_images > 2:
        counts[rng.choice(n_images, 2, replace=False)] = 0
    g_img = np.repeat(np.arange(n_images), counts)
    n = g_img.size
    k = len(classes)
    dominant = rng.integers(0, k, n_images)
    g_cls = np.where(rng.random(n) < 0.6, dominant[g_img], rng.integers(0, k, n))
    if adversarial and k > 2:
        g_cls[g_cls == k - 1] = 0  # the last class never in the reference
    base = np.array([SIZES.get(classes[c], (40, 20)) for c in range(k)], dtype=float)
    scale = np.exp(rng.normal(0, 0.3, n))
    length, width = base[g_cls, 0] * scale, base[g_cls, 1] * scale
    margin = 0.0 if adversarial else 1.0
    lo = margin * length[:, None] / 2
    centre = lo + rng.random((n, 2)) * (sizes[g_img] - 2 * lo)
    angle = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0, np.pi, n))
    g_xy = np.round(rectangles(centre, length, width, angle))
    difficult = (rng.random(n) < 0.08).astype(int)
    if adversarial and n > 4:
        dup = rng.choice(n, max(1, n // 50), replace=False)  # exact duplicates
        g_img = np.r_[g_img, g_img[dup]]
        g_cls = np.r_[g_cls, g_cls[dup]]
        g_xy = np.r_[g_xy, g_xy[dup]]
        difficult = np.r_[difficult, rng.integers(0, 2, dup.size)]
        length, width, angle = (np.r_[a, a[dup]] for a in (length, width, angle))
        order = np.argsort(g_img, kind="stable")
        g_img, g_cls, g_xy, difficult = g_img[order], g_cls[order], g_xy[order], difficult[order]
        length, width, angle = length[order], width[order], angle[order]
        n = g_img.size

    # detections: jittered copies of objects, then clutter
    n_copy = int(detections * 0.75) if n else 0
    src = rng.integers(0, n, n_copy) if n else np.zeros(0, dtype=int)
    gxy = g_xy[src].reshape(-1, 4, 2)
    c0 = gxy.mean(axis=1)
    quality = rng.random(n_copy)
    jitter = 0.02 + 0.4 * quality
    d_centre = c0 + rng.normal(0, 1, (n_copy, 2)) * (jitter * width[src])[:, None]
    d_len = length[src] * np.exp(rng.normal(0, jitter / 2))
    d_wid = width[src] * np.exp(rng.normal(0, jitter / 2))
    d_ang = angle[src] + rng.normal(0, jitter / 3)
    d_xy = rectangles(d_centre, d_len, d_wid, d_ang)
    d_cls = np.where(rng.random(n_copy) < 0.9, g_cls[src], rng.integers(0, k, n_copy))
    d_score = np.clip(rng.beta(5, 2, n_copy) * (1.1 - quality * 0.6), 0.001, 1.0)
    d_img = g_img[src]
    m = detections - n_copy
    c_img = rng.integers(0, n_images, m)
    c_cls = rng.integers(0, k, m)
    c_len = base[c_cls, 0] * np.exp(rng.normal(0, 0.4, m))
    c_wid = base[c_cls, 1] * np.exp(rng.normal(0, 0.4, m))
    c_centre = rng.random((m, 2)) * sizes[c_img]
    c_xy = rectangles(c_centre, c_len, c_wid, rng.uniform(0, np.pi, m))
    d_xy = np.r_[d_xy, c_xy]
    d_img = np.r_[d_img, c_img]
    d_cls = np.r_[d_cls, c_cls]
    d_score = np.r_[d_score, rng.beta(1.5, 5, m)]
    if adversarial and d_xy.shape[0] > 10:
        D = d_xy.shape[0]
        pts = d_xy.reshape(D, 4, 2)
        pick = rng.random(D)
        shuffled = pick < 0.05  # corners in random order: often self-intersecting
        perm = np.argsort(rng.random((D, 4)), axis=1)
        pts[shuffled] = np.take_along_axis(pts, perm[:, :, None], axis=1)[shuffled]
        ccw = (pick >= 0.05) & (pick < 0.15)
        pts[ccw] = pts[ccw][:, ::-1]
        repeat = (pick >= 0.15) & (pick < 0.17)  # a repeated corner (a triangle)
        pts[repeat, 3] = pts[repeat, 2]
        line = (pick >= 0.17) & (pick < 0.18)  # collinear corners (zero area)
        pts[line, 2] = 2 * pts[line, 1] - pts[line, 0]
        pts[line, 3] = 3 * pts[line, 1] - 2 * pts[line, 0]
        point = (pick >= 0.18) & (pick < 0.185)
        pts[point] = pts[point][:, :1]
        d_xy = pts.reshape(D, 8)
        if n:
            same = rng.choice(n, max(1, n // 20), replace=False)  # identical to the object
            d_xy = np.r_[d_xy, g_xy[same]]
            d_img = np.r_[d_img, g_img[same]]
            d_cls = np.r_[d_cls, g_cls[same]]
            d_score = np.r_[d_score, rng.random(same.size)]
        quiet = rng.choice(n_images, min(2, n_images), replace=False)
        keep = ~np.isin(d_img, quiet)  # images without a detection
        keep &= d_cls != 1  # the second class without any detection
        d_xy, d_img, d_cls, d_score = d_xy[keep], d_img[keep], d_cls[keep], d_score[keep]
    d_score = np.round(np.clip(d_score, 0.001, 1.0), 3)  # a 0.001 grid: ties
    cls = np.asarray(classes)
    return Dataset(names, sizes, g_img, g_xy, cls[g_cls], difficult, d_img, d_xy, cls[d_cls],
                   d_score, gt_decimals=1 if adversarial else 0)


def _num(values: np.ndarray, decimals: int) -> list[str]:
    if decimals == 0:
        return [str(int(v)) for v in values]
    return [f"{v:.{decimals}f}" for v in values]


def write(data: Dataset, root: Path) -> tuple[Path, Path]:
    """Write ``root/labelTxt/<image>.txt`` and ``root/det/Task{1,2}_<class>.txt``."""
    labels, dets = root / "labelTxt", root / "det"
    labels.mkdir(parents=True, exist_ok=True)
    per_image: dict[int, list[str]] = {i: [] for i in range(len(data.images))}
    for i, xy, c, d in zip(data.gt_image, data.gt_corners, data.gt_class, data.gt_difficult,
                           strict=True):
        per_image[int(i)].append(" ".join(_num(xy, data.gt_decimals)) + f" {c} {int(d)}")
    for i, name in enumerate(data.images):
        head = f"imagesource:GoogleEarth\ngsd:{0.1 + 0.01 * i:.6f}\n" if data.headers else ""
        (labels / f"{name}.txt").write_text(head + "".join(r + "\n" for r in per_image[i]))
    write_detections(data, dets)
    return labels, dets


def write_detections(data: Dataset, dets: Path) -> Path:
    """``dets/Task1_<class>.txt`` (corners) and ``Task2_<class>.txt`` (their bounding boxes)."""
    dets.mkdir(parents=True, exist_ok=True)
    images = np.asarray(data.images)
    quad = data.det_corners.reshape(-1, 4, 2)
    hbb = np.column_stack([quad.min(axis=1), quad.max(axis=1)])
    for c in np.unique(data.det_class):
        sel = np.flatnonzero(data.det_class == c)
        names = images[data.det_image[sel]]
        scores = [f"{s:.3f}" for s in data.det_score[sel]]
        for task, coords in ((1, data.det_corners), (2, hbb)):
            text = "".join(f"{n} {s} " + " ".join(_num(xy, data.det_decimals)) + "\n"
                           for n, s, xy in zip(names, scores, coords[sel], strict=True))
            (dets / f"Task{task}_{c}.txt").write_text(text)
    return dets


def jittered(images: tuple[str, ...], gt_image: np.ndarray, gt_corners: np.ndarray,
             gt_class: np.ndarray, seed: int = 0, copies: float = 1.5) -> Dataset:
    """Detections made from given objects (e.g. real labels): each object's corners turned,
    scaled and moved about its centre (a few copies, some under another class), plus
    clutter copied to random places; scores on a 0.001 grid."""
    rng = np.random.default_rng(seed)
    n = gt_image.size
    src = np.repeat(np.arange(n), rng.poisson(copies, n))
    q = gt_corners[src].reshape(-1, 4, 2)
    centre = q.mean(axis=1, keepdims=True)
    e, f = q[:, 1] - q[:, 0], q[:, 3] - q[:, 0]
    size = np.sqrt(np.abs(e[:, 0] * f[:, 1] - e[:, 1] * f[:, 0]))[:, None, None]
    quality = rng.random(src.size)[:, None, None]
    a = rng.normal(0, 0.15, src.size)[:, None, None] * quality
    rot = np.concatenate([np.concatenate([np.cos(a), -np.sin(a)], 2),
                          np.concatenate([np.sin(a), np.cos(a)], 2)], 1)
    moved = np.einsum("nij,nkj->nki", rot, (q - centre) * np.exp(
        rng.normal(0, 0.1, (src.size, 1, 1)) * quality)) + centre
    moved += rng.normal(0, 0.25, (src.size, 1, 2)) * size * quality
    classes = np.unique(gt_class)
    d_class = np.where(rng.random(src.size) < 0.93, gt_class[src],
                       classes[rng.integers(0, classes.size, src.size)])
    clutter = rng.integers(0, n, n // 3)
    far = gt_corners[clutter].reshape(-1, 4, 2) + rng.uniform(-300, 300, (clutter.size, 1, 2))
    return Dataset(list(images), np.zeros((len(images), 2)), gt_image, gt_corners, gt_class,
                   np.zeros(n, int), np.r_[gt_image[src], gt_image[clutter]],
                   np.r_[moved.reshape(-1, 8), far.reshape(-1, 8)],
                   np.r_[d_class, gt_class[clutter]],
                   np.round(np.clip(np.r_[1 - 0.7 * quality.ravel() - rng.uniform(0, 0.2,
                                                                                 src.size),
                                          rng.uniform(0, 0.5, clutter.size)], 0.001, 1), 3))


def example_labels(out: Path) -> Path:
    """The devkit's own example annotations (``example/labelTxt``: 7 DOTA-v1.0 images,
    984 objects), copied from the mirror into ``out``."""
    if not MIRROR.exists():
        raise DevkitUnavailable(f"DOTA_devkit mirror not found at {MIRROR}")
    listing = subprocess.run(["git", "--git-dir", str(MIRROR), "ls-tree", "--name-only",
                              f"{COMMIT}:example/labelTxt"], check=True, capture_output=True,
                             text=True).stdout.split()
    out.mkdir(parents=True, exist_ok=True)
    for name in listing:
        text = subprocess.run(["git", "--git-dir", str(MIRROR), "show",
                               f"{COMMIT}:example/labelTxt/{name}"], check=True,
                              capture_output=True).stdout
        (out / name).write_bytes(text)
    return out


def expected_map(aps: dict[str, float], metric: str) -> float | None:
    """The devkit's mAP (its class list's APs added in order, over its length); with
    ``area`` the classes whose AP is NaN (no reference object) left out, as geoeval does."""
    values = [a for a in aps.values() if not (metric == "area" and a != a)]
    if not values:
        return None
    total = 0.0
    for a in values:
        total = total + a
    return total / (len(aps) if metric == "voc07" else len(values))
