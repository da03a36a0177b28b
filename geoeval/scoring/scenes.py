"""Many scenes: score every (reference, submission) pair of two folders and pool.

Pairs come from file names (same name without extension: ``tile_07.tif`` with
``tile_07.gpkg``) or from a CSV list. Each scene is scored on its own
(:func:`geoeval.scoring.score`) and reported; the pooled result sums the counts over
scenes before taking the ratios, as the SpaceNet building challenge does
(TP, FP and FN summed over all tiles, then precision, recall and F1):
``precision = Σ(No − FA) / Σ No``, ``recall = Σ(Nr − MD) / Σ Nr``
(Özdemir et al. 2010, eq. 14–15, over the union of the scenes). Pooled
accuracies: BGM ``Σ matched overlap / Σ union area`` (eq. 1 over all scenes);
Hoover, IoU and Mallows the mean over all instances of all scenes (eq. 2, 13).

Only per-scene summaries are kept in memory (not the label grids), so the
number of scenes is not limited by memory.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError, StrictError
from geoeval.io import VECTOR_SUFFIXES
from geoeval.matching import registry
from geoeval.measures import counts as _counts
from geoeval.scoring.result import REPORT_SCHEMA_VERSION, ScoreResult

#: Raster suffixes considered when pairing by name (vector: VECTOR_SUFFIXES but .csv).
RASTER_SUFFIXES = {".tif", ".tiff", ".vrt", ".img", ".png", ".jp2", ".asc", ".nc", ".hdr"}
DATA_SUFFIXES = (RASTER_SUFFIXES | VECTOR_SUFFIXES) - {".csv"}


@dataclass(frozen=True)
class Scene:
    """One scored scene: names, paths, the summary per matcher and what pooling needs."""

    name: str
    reference: str
    submission: str | None
    results: dict[str, dict[str, Any]]
    pool: dict[str, dict[str, float]]
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"scene": self.name, "reference": self.reference, "submission": self.submission,
                "results": self.results, "warnings": list(self.warnings)}


@dataclass(frozen=True)
class ScenesResult:
    """Scores of many scenes and their pooled totals (:func:`score_scenes`)."""

    scenes: tuple[Scene, ...]
    pooled: dict[str, dict[str, Any]]
    parameters: dict[str, Any]
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:
        from geoeval.reprs import counted, number, warned

        pooled = ", ".join(f"{m}: F1 {number(p.get('f1'))}" for m, p in self.pooled.items())
        return (f"<ScenesResult {counted(len(self.scenes), 'scene')}; pooled {pooled}"
                f"{warned(self.warnings)}>")

    def to_dict(self) -> dict[str, Any]:
        """The JSON report of a multi-scene run (``docs/report.md``)."""
        from geoeval._version import __version__

        return {
            "geoeval": __version__,
            "schema": REPORT_SCHEMA_VERSION,
            "report": "scenes",
            "scenes_scored": len(self.scenes),
            "parameters": self.parameters,
            "warnings": list(self.warnings),
            "pooled": self.pooled,
            "scenes": [s.to_dict() for s in self.scenes],
        }

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per scene and matcher, then one per matcher for the pooled totals."""
        out = []
        for s in self.scenes:
            for m, r in s.results.items():
                out.append({"scene": s.name, "matcher": m, "scenes": 1,
                            "reference_objects": s.pool[m]["nr"],
                            "submission_objects": s.pool[m]["no"], **_flat(r)})
        for m, r in self.pooled.items():
            out.append({"scene": "(pooled)", "matcher": m, **_flat(r)})
        return out


def _flat(r: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in r.items() if k != "instances_by_kind"}
    for k, v in r.get("instances_by_kind", {}).items():
        out[k.replace("-", "_")] = v
    return out


def pair_scenes(
    reference_dir: str | Path,
    submission_dir: str | Path,
    pairs: str | Path | None = None,
) -> tuple[list[tuple[str, Path, Path | None]], list[str]]:
    """Pair reference and submission files.

    Parameters
    ----------
    reference_dir, submission_dir : path-like
    pairs : path-like, optional
        CSV with columns ``reference`` and ``submission`` (and optionally
        ``scene``); relative paths are taken from ``reference_dir`` and
        ``submission_dir`` respectively. Without it, files are paired by name
        without extension (data files only: sidecars such as ``.prj``,
        ``.dbf``, ``.aux.xml`` are ignored).

    Returns
    -------
    pairs : list of (scene name, reference path, submission path or None)
        A reference without a submission is scored against nothing (every
        object missed), as SpaceNet counts a tile without proposals.
    warnings : list of str
        Submissions without a reference (ignored).
    """
    rdir, sdir = Path(reference_dir), Path(submission_dir)
    for d in (rdir, sdir):
        if not d.is_dir():
            raise InputError("is not a folder", d)
    if pairs is not None:
        return _read_pairs(Path(pairs), rdir, sdir), []
    refs, subs = _by_stem(rdir), _by_stem(sdir)
    if not refs:
        raise InputError("holds no raster or vector file to score", rdir)
    out = [(stem, path, subs.get(stem)) for stem, path in sorted(refs.items())]
    warnings = [f"{subs[s]}: no reference of that name in {rdir}; ignored"
                for s in sorted(set(subs) - set(refs))]
    missing = [stem for stem, _, sub in out if sub is None]
    if missing:
        warnings.append(f"{len(missing)} scene(s) without a submission in {sdir}, scored as "
                        f"empty (every object missed): {', '.join(missing[:5])}"
                        + (" …" if len(missing) > 5 else ""))
    return out, warnings


def _by_stem(folder: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for p in sorted(folder.iterdir()):
        if p.name.startswith(".") or p.suffix.lower() not in DATA_SUFFIXES:
            continue
        if p.is_dir() and p.suffix.lower() != ".gdb":
            continue
        if p.stem in found:
            raise InputError(f"two files for scene {p.stem!r} ({found[p.stem].name}, {p.name}); "
                             "use --pairs", folder)
        found[p.stem] = p
    return found


def _read_pairs(path: Path, rdir: Path, sdir: Path) -> list[tuple[str, Path, Path | None]]:
    if not path.is_file():
        raise InputError("no such file", path)
    out: list[tuple[str, Path, Path | None]] = []
    seen: set[str] = set()
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        fields = [f.strip().lower() for f in reader.fieldnames or []]
        if "reference" not in fields or "submission" not in fields:
            raise InputError("needs a header with columns reference,submission "
                             "(and optionally scene)", path)
        for line, row in enumerate(reader, start=2):
            row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
            if not row.get("reference"):
                raise InputError(f"line {line}: empty reference", path)
            ref = rdir / row["reference"]
            sub = sdir / row["submission"] if row.get("submission") else None
            if not ref.exists():
                raise InputError(f"line {line}: no such reference file {ref}", path)
            if sub is not None and not sub.exists():
                raise InputError(f"line {line}: no such submission file {sub}", path)
            name = row.get("scene") or Path(row["reference"]).stem
            if name in seen:
                raise InputError(f"line {line}: scene {name!r} listed twice", path)
            seen.add(name)
            out.append((name, ref, sub))
    if not out:
        raise InputError("lists no pair", path)
    return out


def score_scenes(
    reference_dir: str | Path,
    submission_dir: str | Path,
    *,
    pairs: str | Path | None = None,
    each: Callable[[str, ScoreResult], None] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    attributes: bool = False,
    **options: Any,
) -> ScenesResult:
    """Score every scene of two folders and pool the counts (SpaceNet style).

    Parameters
    ----------
    reference_dir, submission_dir : path-like
        Folders of references and submissions (paired by :func:`pair_scenes`).
    pairs : path-like, optional
        CSV list of pairs (see :func:`pair_scenes`).
    each : callable, optional
        ``each(scene, result)`` with each scene's full :class:`ScoreResult`
        before it is reduced to its summary (:func:`geoeval.score_scenes` writes
        the per-scene reports with it); nothing here writes files.
    progress : callable, optional
        ``progress(done, total, scene)`` after each scene.
    attributes : bool
        Read the vector scenes' attribute columns (the per-scene GeoPackages that
        :func:`geoeval.score_scenes` writes with ``each`` carry them; default: only
        the id and class fields, :attr:`~geoeval.scoring.options.ScoreOptions.attributes`).
    **options
        Keyword arguments of :func:`geoeval.scoring.score` (matchers, thresholds,
        reader options, ``class_field`` …).

    Returns
    -------
    ScenesResult

    Notes
    -----
    Pooling (SpaceNet; Özdemir et al. 2010, eq. 14–15 over all scenes):
    ``P = Σ_s (No_s − FA_s) / Σ_s No_s``, ``R = Σ_s (Nr_s − MD_s) / Σ_s Nr_s``,
    ``F1 = 2PR / (P + R)``; ``P`` or ``R`` is ``null`` when its denominator is 0, F1
    then 0 (:func:`geoeval.measures.counts.f1_values`), ``null`` only when both are.
    """
    from contextlib import nullcontext

    from geoeval.engine import Engine, open_engine
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    for bad in ("gpkg", "csv_dir", "figure"):
        if options.get(bad) is not None:
            raise InputError(f"{bad} is per scene: use scene_dir (--scene-dir) with many scenes")
    if options.get("region") is not None:  # a scene outside it would hold no object
        from geoeval.validate import spelled

        raise InputError(f"{spelled('region=', '--bbox/--region')} applies to one layer a "
                         "side, not to folders of scenes (a quoted pattern of tiles is one "
                         "layer: 'tiles/*.gpkg')")
    engine = options.pop("engine", "local")
    given = engine if isinstance(engine, Engine) else None
    value = score_options(**options, engine="local" if given else engine,
                          partitioned=False).but(attributes=attributes)  # checked once
    found, warnings = pair_scenes(reference_dir, submission_dir, pairs)
    if value.strict and warnings:  # known from the folders: refused before any scene
        from geoeval.validate import option_name

        raise StrictError(warnings, option_name("strict", switch=True))
    scenes: list[Scene] = []
    e = value.engine
    # one engine for every scene: a Dask cluster is started once, not once per scene
    opened = (nullcontext(given) if given is not None
              else open_engine(e.name, e.scheduler, e.n_jobs, e.memory_limit))
    with opened as eng:
        for k, (name, ref, sub) in enumerate(found):
            try:
                res = (_score_empty(ref, value) if sub is None
                       else score(ref, sub, value, opened=eng))
            except StrictError as exc:  # the scene named, as in the scenes' warnings
                raise StrictError([f"{name}: {w}" for w in exc.warnings], exc.label) from None
            if each is not None:
                each(name, res)
            scenes.append(_scene(name, ref, sub, res))
            del res
            if progress is not None:
                progress(k + 1, len(found), name)
    matchers = list(scenes[0].results) if scenes else []
    pooled = {m: _pool([s.pool[m] for s in scenes], m) for m in matchers}
    params = {"matchers": matchers, "pairing": "list" if pairs is not None else "name",
              "pairs": None if pairs is None else str(pairs),
              "reference_dir": str(reference_dir), "submission_dir": str(submission_dir),
              "pooling": "counts summed over scenes, then ratios (SpaceNet)"}
    result = ScenesResult(tuple(scenes), pooled, params, tuple(warnings))
    if value.strict:
        from geoeval.errors import result_warnings
        from geoeval.validate import option_name

        late = result_warnings(result)
        if late:
            raise StrictError(late, option_name("strict", switch=True))
    return result


def _score_empty(ref: Path, options: Any) -> Any:
    """A scene without a submission: the reference against no object."""
    from geoeval.objects import ObjectSet
    from geoeval.scoring.scene import read_reference, score_objects

    reference = read_reference(ref, options)
    empty = ObjectSet(ids=np.zeros(0, np.int64), areas=np.zeros(0), crs=reference.crs,
                      geometry=np.zeros(0, dtype=object), path="<no submission>",
                      input_type="memory")
    # the matchers and the Mallows score only, as an empty scene has nothing else
    bare = options.but(evaluation_crs=None, breakdown=False, strata=None, bootstrap=None,
                       geometry=None)
    return score_objects(reference, empty, bare, warnings=reference.warnings)


def _scene(name: str, ref: Path, sub: Path | None, res: Any) -> Scene:
    results, pool = {}, {}
    for m, r in res.results.items():
        results[m] = r.summary()
        scores = r.matching.arrays.score
        scores = scores[~np.isnan(scores)]
        mal = np.asarray(r.instance_mallows if r.instance_mallows is not None else [], float)
        mal = mal[~np.isnan(mal)]
        pool[m] = {
            "nr": len(res.reference), "no": len(res.submission),
            "matched_reference": results[m]["matched_reference"],
            "matched_submission": results[m]["matched_submission"],
            "missed": results[m]["missed"], "false_alarms": results[m]["false_alarms"],
            "matched_overlap": r.matching.matched_overlap, "union_area": res.overlap.union_area,
            "n_scores": scores.size, "sum_scores": float(scores.sum()),
            "n_mallows": mal.size, "sum_mallows": float(mal.sum()),
            "mallows_computed": r.mallows is not None,
            "kinds": r.matching.kind_counts(),
        }
    return Scene(name, str(ref), None if sub is None else str(sub), results, pool,
                 tuple(res.warnings))


def _pool(items: Sequence[dict[str, Any]], matcher: str) -> dict[str, Any]:
    """The pooled measures: each scene's sums added, then
    :func:`geoeval.measures.counts.measures_from_sums` (the one formula of each
    measure) with the matcher's accuracy rule. The Mallows score is pooled only
    when every scene has one."""
    tot = {k: sum(it[k] for it in items) for k in (
        "nr", "no", "matched_reference", "matched_submission", "missed", "false_alarms",
        "matched_overlap", "union_area", "n_scores", "sum_scores", "n_mallows", "sum_mallows")}
    every_mallows = all(it["mallows_computed"] for it in items)
    sums = {"n_ref": tot["nr"], "n_sub": tot["no"], "matched_ref": tot["matched_reference"],
            "matched_sub": tot["matched_submission"], "score_sum": tot["sum_scores"],
            "score_n": tot["n_scores"], "mallows_sum": tot["sum_mallows"],
            "mallows_n": tot["n_mallows"] if every_mallows else 0,
            "matched_area": tot["matched_overlap"], "union_area": tot["union_area"]}
    v = {k: _counts.as_number(x) for k, x in
         _counts.measures_from_sums(registry.accuracy_rule(matcher), sums).items()}
    kinds: dict[str, int] = {}
    for it in items:
        for k, n in it["kinds"].items():
            kinds[k] = kinds.get(k, 0) + n
    return {
        "scenes": len(items),
        "reference_objects": tot["nr"], "submission_objects": tot["no"],
        "matched_reference": tot["matched_reference"],
        "matched_submission": tot["matched_submission"],
        "missed": tot["missed"], "false_alarms": tot["false_alarms"],
        "precision": v["precision"], "recall": v["recall"], "f1": v["f1"],
        "matched_overlap": tot["matched_overlap"], "accuracy": v["accuracy"],
        "mallows": v["mallows"],
        "instances_by_kind": kinds,
    }
