"""The building-polygon papers' own evaluation scripts, run as test oracles.

Each script is read from its public repository at a pinned commit (the bare
mirrors under ``/work/.mirror``, or ``GEOEVAL_ORACLE_MIRRORS``), written to a
temporary folder and imported there; none of their code is part of geoeval. They
were written for shapely 1 (multi-part geometries iterable) and import helpers
they never use here (tqdm, descartes, multiprocess, skimage); :func:`_shims` gives
them those for the duration of a call, and nothing else is changed.

============  ==============================================  ==========  ====================
name          repository                                      commit      file
============  ==============================================  ==========  ====================
polyworld     zorzi-s/PolyWorldPretrainedNetwork              cc3d3ea     coco_IoU_cIoU.py
pix2poly      yeshwanth95/Pix2Poly                            d2e288b     eval/.../cIoU.py
hisup_polis   SarahwXU/HiSup                                  88bd550     .../metrics/polis.py
hisup_angle   SarahwXU/HiSup                                  88bd550     .../angle_eval.py
ffl_eval      Lydorn/Polygonization-by-Frame-Field-Learning   2dce7c1     eval_coco.py
lydorn_utils  Lydorn/lydorn_utils (FFL's submodule)           2af4e3b     polygon_utils.py
============  ==============================================  ==========  ====================
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import json
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np

from tests.mirrors import MIRRORS

#: name -> (mirror folder, commit, path in the repository)
SCRIPTS = {
    "polyworld": ("zorzi-s+PolyWorldPretrainedNetwork",
                  "cc3d3ea43750b2085bc71a7e62889526d853b624", "coco_IoU_cIoU.py"),
    "pix2poly": ("yeshwanth95+Pix2Poly", "d2e288b4e267ae910cee6f54bece8eec98f43bea",
                 "eval/hisup_eval_utils/metrics/cIoU.py"),
    "hisup_polis": ("SarahwXU+HiSup", "88bd55036c8c6614f1fb76c7c86eed0839c04f1b",
                    "hisup/utils/metrics/polis.py"),
    "hisup_angle": ("SarahwXU+HiSup", "88bd55036c8c6614f1fb76c7c86eed0839c04f1b",
                    "hisup/utils/metrics/angle_eval.py"),
    "ffl_eval": ("Lydorn+Polygonization-by-Frame-Field-Learning",
                 "2dce7c1c3d1e601a95f3ab9aa9d90c8069ed1ffe", "eval_coco.py"),
    "lydorn_polygon_utils": ("Lydorn+lydorn_utils", "2af4e3ba7b6452007801a50d28718bed27077c83",
                             "lydorn_utils/polygon_utils.py"),
}

_cache: dict[str, types.ModuleType] = {}
_folder = Path(tempfile.mkdtemp(prefix="geoeval-oracles-"))


def available() -> str | None:
    """``None`` when every script can be read, else the reason why not."""
    try:
        import pycocotools  # noqa: F401
    except ImportError:
        return "pycocotools is not installed"
    for repo, commit, path in SCRIPTS.values():
        if _source(repo, commit, path) is None:
            return f"{repo} at {commit[:7]} is not in {MIRRORS}"
    return None


def _source(repo: str, commit: str, path: str) -> str | None:
    git_dir = MIRRORS / repo / "repo"
    if not git_dir.is_dir():
        return None
    out = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                         capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def _stub(name: str, **attrs: Any) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


def _tqdm(iterable: Any = None, *args: Any, **kwargs: Any) -> Any:
    class Bar(list):
        def set_description(self, *a: Any, **k: Any) -> None:
            pass

        def refresh(self) -> None:
            pass

    return Bar(iterable if iterable is not None else [])


@contextlib.contextmanager
def _shims():
    """shapely 1's iterable collections and stand-ins for unused imports, for one call."""
    from shapely.geometry.base import BaseMultipartGeometry

    stubs = {
        "tqdm": _stub("tqdm", tqdm=_tqdm),
        "descartes": _stub("descartes", PolygonPatch=None),
        "multiprocess": _stub("multiprocess", Pool=None, current_process=None),
        "skimage": _stub("skimage"),
        "skimage.draw": _stub("skimage.draw"),
    }
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    BaseMultipartGeometry.__iter__ = lambda self: iter(self.geoms)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(io.StringIO()), np.errstate(all="ignore"):
            yield out
    finally:
        del BaseMultipartGeometry.__iter__
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def _module(name: str) -> types.ModuleType:
    if name in _cache:
        return _cache[name]
    repo, commit, path = SCRIPTS[name]
    src = _source(repo, commit, path)
    if src is None:
        raise RuntimeError(f"{repo} at {commit[:7]} is not in {MIRRORS}")
    file = _folder / f"oracle_{name}.py"
    file.write_text(src)
    if name == "ffl_eval":  # its package of helpers: the real polygon_utils, stubs for the rest
        pkg = _stub("lydorn_utils", __path__=[])
        pkg.polygon_utils = _module("lydorn_polygon_utils")
        for sub in ("python_utils", "run_utils", "print_utils"):
            setattr(pkg, sub, _stub(f"lydorn_utils.{sub}"))
        sys.modules["lydorn_utils"] = pkg
        for sub in ("polygon_utils", "python_utils", "run_utils", "print_utils"):
            sys.modules[f"lydorn_utils.{sub}"] = getattr(pkg, sub)
    if name == "lydorn_polygon_utils":
        sys.modules.setdefault("lydorn_utils", _stub("lydorn_utils", __path__=[]))
        sys.modules.setdefault("lydorn_utils.python_utils", _stub(
            "lydorn_utils.python_utils", module_exists=lambda name: name == "shapely"))
        sys.modules["lydorn_utils"].python_utils = sys.modules["lydorn_utils.python_utils"]
    spec = importlib.util.spec_from_file_location(f"oracle_{name}", file)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # a pool's workers find its functions by name
    with _shims():
        spec.loader.exec_module(mod)
    _cache[name] = mod
    return mod


Json = Any  # a path to a JSON file, or its loaded content


def _write(gt: Json, dt: Json) -> tuple[str, str]:
    """Paths of the two files (written to a scratch folder if given loaded)."""
    if isinstance(gt, (str, Path)) and isinstance(dt, (str, Path)):
        return str(gt), str(dt)
    d = Path(tempfile.mkdtemp(dir=_folder))
    (d / "gt.json").write_text(json.dumps(_load(gt)))
    (d / "dt.json").write_text(json.dumps(_load(dt)))
    return str(d / "gt.json"), str(d / "dt.json")


def _load(x: Json) -> Any:
    return json.loads(Path(x).read_text()) if isinstance(x, (str, Path)) else x


def _coco(gt: Json, dt: Json, coco_class: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """pycocotools' (or another API's) COCO objects: the ground truth and ``loadRes``."""
    if coco_class is None:
        from pycocotools.coco import COCO as coco_class
    with contextlib.redirect_stdout(io.StringIO()):
        if isinstance(gt, (str, Path)):
            coco_gt = coco_class(str(gt), **kwargs)
        else:
            coco_gt = coco_class(**kwargs)
            coco_gt.dataset = copy.deepcopy(gt)
            coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(str(dt) if isinstance(dt, (str, Path)) else copy.deepcopy(dt))
    return coco_gt, coco_dt


def _printed(text: str, label: str) -> float:
    m = re.search(rf"^{re.escape(label)}\s+(\S+)\s*$", text, re.M)
    if m is None:
        raise AssertionError(f"{label!r} not printed:\n{text}")
    return float(m.group(1))


def polyworld_iou_ciou(gt: Json, dt: Json) -> tuple[float, float]:
    """PolyWorld's ``compute_IoU_cIoU``: (mean IoU, mean C-IoU) as it prints them."""
    mod = _module("polyworld")
    g, d = _write(gt, dt)
    with _shims() as out:
        mod.compute_IoU_cIoU(input_json=d, gti_annotations=g)
    text = out.getvalue()
    return _printed(text, "Mean IoU:"), _printed(text, "Mean C-IoU:")


def pix2poly(gt: Json, dt: Json) -> tuple[float, float, float]:
    """Pix2Poly's copy of PolyWorld's script (it also takes references of several
    rings, as their union): its ``Mean IoU``, ``Mean C-IoU`` and ``Mean N-Ratio``."""
    mod = _module("pix2poly")
    g, d = _write(gt, dt)
    with _shims() as out:
        mod.compute_IoU_cIoU(input_json=d, gti_annotations=g)
    text = out.getvalue()
    return (_printed(text, "Mean IoU:"), _printed(text, "Mean C-IoU:"),
            _printed(text, "Mean N-Ratio:"))


def defined_for_polyworld(dt: list, gt: dict) -> list:
    """The results on images with a reference annotation: on the others PolyWorld's
    script reuses the previous image's reference mask (or fails on the first)."""
    with_gt = {a["image_id"] for a in gt["annotations"]}
    return [d for d in dt if d["image_id"] in with_gt]


def hisup_polis(gt: Json, dt: Json) -> float:
    """HiSup's ``PolisEval(...).evaluate()``."""
    mod = _module("hisup_polis")
    coco_gt, coco_dt = _coco(gt, dt)
    with _shims():
        return float(mod.PolisEval(coco_gt, coco_dt).evaluate())


def defined_for_angles(gt: dict, dt: list) -> tuple[dict, list]:
    """The part of a data set on which the angle scripts run to the end.

    Both crash (shapely 2, GEOS 3.12+) on an image with predictions and no
    reference (``GEOSException`` when intersecting with an empty collection) and
    HiSup's on an image with a reference and no prediction (``ZeroDivisionError``
    on an empty union's area). Neither kind of image gives an angle to the
    measure's definition, so leaving them out changes no value: these are
    compared with geoeval on the whole data set.
    """
    with_gt = {a["image_id"] for a in gt["annotations"]}
    with_dt = {d["image_id"] for d in dt if d["image_id"] in with_gt}
    gt = dict(gt, images=[i for i in gt["images"] if i["id"] in with_dt],
              annotations=[a for a in gt["annotations"] if a["image_id"] in with_dt])
    return gt, [d for d in dt if d["image_id"] in with_dt]


def hisup_mta(gt: Json, dt: Json, processes: int | None = None) -> np.ndarray:
    """HiSup's copy of the frame-field-learning ``ContourEval``: max angles in degrees
    (with ``processes``, in a pool of that many, as HiSup's ``tools/evaluation.py``
    runs it with 20)."""
    mod = _module("hisup_angle")
    if isinstance(gt, (str, Path)):
        coco_gt, coco_dt = _coco(gt, dt)
    else:
        coco_gt, coco_dt = _coco(*defined_for_angles(gt, dt))
    with _shims():
        if processes is None:
            return np.asarray(mod.ContourEval(coco_gt, coco_dt).evaluate(pool=None), dtype=float)
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(processes) as pool:
            return np.asarray(mod.ContourEval(coco_gt, coco_dt).evaluate(pool=pool),
                              dtype=float)


def ffl_mta(gt: dict, dt: list) -> np.ndarray:
    """Frame-field learning's ``eval_coco.ContourEval`` on the images with detections."""
    mod = _module("ffl_eval")
    gt, dt = defined_for_angles(gt, dt)
    coco_gt, coco_dt = _coco(gt, dt)
    with _shims():
        ids = {d["image_id"] for d in dt}
        return np.asarray(mod.ContourEval(coco_gt, coco_dt, DtImgIds=ids).evaluate(pool=None),
                          dtype=float)
