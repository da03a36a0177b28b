"""The files-in, files-out entry points: scoring plus the outputs asked for.

:func:`score` and :func:`score_scenes` are :func:`geoeval.scoring.score` and
:func:`geoeval.scoring.score_scenes` with the JSON report, GeoPackage, CSV
tables, figure and per-scene reports written by :mod:`geoeval.report` (scoring
itself writes nothing; the command line writes through these functions). Every output is checked
before the work starts and written atomically at the end
(:func:`geoeval.outputs.output_run`): a failed run leaves no output.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from geoeval.outputs import declare, output_run
from geoeval.ranking.api import RankingResult
from geoeval.scoring import ScenesResult, ScoreResult, check_options
from geoeval.scoring import rank as _rank
from geoeval.scoring import score as _score
from geoeval.scoring import score_scenes as _score_scenes
from geoeval.scoring.options import check_keywords, score_options


def score(
    reference: Any,
    submission: Any,
    *,
    json: str | Path | None = None,
    gpkg: str | Path | None = None,
    gpkg_matcher: str | None = None,
    csv_dir: str | Path | None = None,
    parquet_dir: str | Path | None = None,
    figure: str | Path | None = None,
    breakdown_figure: str | Path | None = None,
    html: str | Path | None = None,
    html_command: str | None = None,
    objects_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> ScoreResult:
    """Score one submission against one reference and write the outputs asked for.

    Parameters
    ----------
    reference, submission : path or ObjectSet
        Labelled rasters or vector layers (or objects already read).
    json : path, optional
        Write the JSON report here (``docs/report.md``;
        :func:`geoeval.report.json_report.write_report`).
    gpkg : path, optional
        Write the styled GeoPackage here (:func:`geoeval.report.gpkg.write_gpkg`).
    gpkg_matcher : str, optional
        Matcher whose per-object result the GeoPackage, CSV tables and figure
        show (default ``mom`` when it ran, else the first matcher).
    csv_dir : path, optional
        Write the per-object tables as CSV into this folder (created if needed).
    parquet_dir : path, optional
        Write the GeoPackage's layers as GeoParquet files into this folder
        (:func:`geoeval.report.parquet.write_parquet`).
    figure : path, optional
        Save the status map and score chart (``.png`` or ``.svg``).
    breakdown_figure : path, optional
        Save the error breakdown's bar chart (``.png`` or ``.svg``); implies
        ``breakdown=True``.
    html : path, optional
        Write the submission's report as one self-contained HTML page
        (``.html``; ``docs/html-report.md``): scores, error breakdown, strata,
        status map, method; implies ``breakdown=True``.
    html_command : str, optional
        The command the page says produced it (default: this Python call).
    objects_dir : path, optional
        Write every object's result as a partitioned GeoParquet dataset into this
        new (or empty) folder (:mod:`geoeval.report.objects_dataset`); with
        ``engine="dask"`` on two vector layers the workers write it, one part
        per partition.
    progress : callable, optional
        Called with the name of each long step as it starts.
    **options
        Keywords of :func:`geoeval.scoring.score`: ``matchers``,
        ``hoover_threshold``, ``iou_threshold``, ``min_overlap``, ``mallows``,
        ``resolution``, ``approximate``, ``n_jobs``, ``breakdown`` (error
        breakdown, ``docs/breakdown.md``), ``geometry_measures`` and
        ``boundary_width`` (``docs/geometry-measures.md``), ``size_bins``,
        ``zones``, ``zone_field`` (``docs/strata.md``), ``bootstrap``,
        ``confidence``, ``seed``, ``block_size`` (``docs/confidence.md``),
        ``evaluation_crs`` (``docs/crs.md``), ``engine`` and ``scheduler``
        (``docs/scale.md``), the reader options (``band``, ``background``,
        ``layer``, ``id_field``, ``class_field``, ``crs``),
        ``reference_options`` / ``submission_options``, ``region`` and ``region_crs``
        (only the objects of a box, a polygon or a layer of polygons are read and
        scored, ``docs/region.md``), and ``strict`` (warnings are
        a :class:`~geoeval.errors.StrictError`, before the matching when known then,
        and nothing is written).

    Returns
    -------
    ScoreResult
        The same from every engine. When ``engine="dask"`` scored by partitions or
        blocks (``docs/scale.md``) the objects, overlap and matchings stayed on the
        workers: reading them raises :class:`~geoeval.errors.NotHeldError` saying what
        to use instead (``objects_dir`` writes every object's result), and
        ``objects_held`` is ``False``.

    Examples
    --------
    ``geoeval.score("sample_data/reference.tif", "sample_data/submissions/s4_fragmented.tif",
    json="report.json")`` scores two files; objects already read work the same.
    Two reference squares, one detection overlapping the first by 90 of 100 m²:

    >>> import geoeval
    >>> from shapely import box
    >>> from geoeval.objects import ObjectSet
    >>> ref = ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 30, 10)],
    ...                                 crs="EPSG:32631")
    >>> sub = ObjectSet.from_geometries([box(1, 0, 11, 10)], crs="EPSG:32631")
    >>> res = geoeval.score(ref, sub, matchers=["bgm", "iou"])
    >>> res.results["bgm"].precision, res.results["bgm"].recall, round(res.results["bgm"].f1, 4)
    (1.0, 0.5, 0.6667)
    >>> round(res.results["bgm"].accuracy, 4)  # eq. 1: 90 / (100 + 100 + 100 - 90)
    0.4286
    >>> round(res.results["iou"].accuracy, 4)  # mean IoU: 90 / 110
    0.8182
    """
    check_options(gpkg_matcher=gpkg_matcher)
    check_keywords(options, _keywords(score))  # a mistyped one: which was meant
    if breakdown_figure is not None or html is not None:
        options["breakdown"] = True
    if objects_dir is not None:
        options["lists"] = False  # the dataset holds them; the report names it
    if any(x is not None for x in (gpkg, csv_dir, parquet_dir, figure, breakdown_figure, html)):
        options["partitioned"] = False  # per-object outputs need the objects in memory
    value = score_options(**options)  # built and checked once, passed down whole
    if any(x is not None for x in (gpkg, csv_dir, parquet_dir, objects_dir)):
        value = value.but(attributes=True)  # the outputs that carry the inputs' attributes
    with output_run([reference, submission]) as outputs:
        declare(outputs, {"json": json, "gpkg": gpkg, "csv_dir": csv_dir,
                          "parquet_dir": parquet_dir, "figure": figure,
                          "breakdown_figure": breakdown_figure, "html": html})
        writer = None
        if objects_dir is not None:
            import functools

            from geoeval.report.objects_dataset import check_target

            check_target(objects_dir)
            writer = functools.partial(_open_objects, objects_dir, value.matchers)
        result = _score(reference, submission, value, progress=progress, objects=writer)
        result = _unlisted_noted(result, value.lists)
        if value.strict and result.warnings:  # those known before the work refused it
            from geoeval.errors import StrictError
            from geoeval.validate import option_name

            raise StrictError(result.warnings, option_name("strict", switch=True))
        if not result.objects_held:  # a Dask run by parts: the summary only
            if json is not None:
                from geoeval.report.json_report import write_report

                write_report(result, json)
            return result
        if objects_dir is not None:
            from geoeval.report.objects_dataset import write_objects_dataset

            _step(progress, "writing the objects dataset")
            from geoeval.output_targets import shown

            write_objects_dataset(result, objects_dir)
            result = dataclasses.replace(result, objects_dataset=shown(objects_dir))
        write_outputs(result, json=json, gpkg=gpkg, gpkg_matcher=gpkg_matcher, csv_dir=csv_dir,
                      parquet_dir=parquet_dir, figure=figure, breakdown_figure=breakdown_figure,
                      progress=progress)
        if html is not None:
            from geoeval.report.html import entry_report, render_page, write_html

            _step(progress, "writing the HTML report")
            name = _stem(submission, "submission")
            page = render_page(
                entries=[entry_report(name, result, matcher=gpkg_matcher)],
                command=html_command or python_call(
                    "geoeval.score", (reference, submission),
                    {**options, "gpkg_matcher": gpkg_matcher, "html": html}),
                reference=_stem(reference, None, suffix=True),
                strata_given=_strata_given(options))
            write_html(html, page)
    return result


def _unlisted_noted(result: ScoreResult, lists: bool) -> ScoreResult:
    """``result`` with a note when the lists were asked for (``--json``) and its report
    leaves them out (more than :data:`geoeval.matching.lists.LIST_LIMIT` objects; the
    report's ``not_listed`` says so too)."""
    unlisted = result.unlisted
    if not lists or unlisted is None:
        return result
    from geoeval.matching.lists import not_listed_note

    return dataclasses.replace(result, notes=(*result.notes, not_listed_note(unlisted)))


def rank(
    reference: Any,
    submissions: Sequence[Any],
    *,
    html: str | Path | None = None,
    html_command: str | None = None,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> RankingResult:
    """Score every submission against the reference, rank them, write the contest page.

    Parameters
    ----------
    reference, submissions, progress, **options
        As in :func:`geoeval.scoring.rank` (``matchers``: the one matcher ranked by,
        as :func:`score` names it; reader options, ranking and bootstrap settings;
        ``size_bins``, ``zones`` and ``zone_field`` add each entry's results by size
        and zone to the page). ``matcher=``, the former name of ``matchers=``, still
        works with a :class:`DeprecationWarning`.
    html : path, optional
        Write the contest report as one self-contained HTML page (``.html``;
        ``docs/html-report.md``): leaderboard, Hasse diagram, each entry's
        error breakdown, strata and status map, method, command and version.
        Each entry's part is taken as soon as it is scored (the scored scenes
        are not kept); implies ``breakdown=True`` for every entry.
    html_command : str, optional
        The command the page says produced it (default: this Python call).

    Returns
    -------
    RankingResult

    Examples
    --------
    Files (``geoeval.rank("sample_data/reference.tif", ["sample_data/submissions/
    s1_near_perfect.tif", "sample_data/submissions/s2_misses.tif"], matchers="bgm")``
    ranks s1_near_perfect first) or object sets already read, as here: three
    reference squares; A finds all three (one shifted by 1), B only the shifted one.

    >>> import pathlib, tempfile
    >>> import geoeval
    >>> from shapely import box
    >>> squares = [box(0, 0, 10, 10), box(20, 0, 30, 10), box(40, 0, 50, 10)]
    >>> ref = geoeval.ObjectSet.from_geometries(squares)
    >>> a = geoeval.ObjectSet.from_geometries([box(1, 0, 11, 10), *squares[1:]])
    >>> b = geoeval.ObjectSet.from_geometries([box(1, 0, 11, 10)])
    >>> page = pathlib.Path(tempfile.mkdtemp()) / "contest.html"
    >>> r = geoeval.rank(ref, [a, b], names=["A", "B"], matchers="bgm", html=page)
    >>> r.ranking
    ('A', 'B')
    >>> r.values["B"]["recall"], page.exists()
    (0.3333333333333333, True)
    """
    if "matcher" in options:  # the former name: warned at the caller's line, above
        from geoeval.scoring.contest import DEFAULT_MATCHER, one_matcher  # geoeval.rank's

        options["matchers"] = one_matcher(options.pop("matchers", DEFAULT_MATCHER), options,
                                          "geoeval.rank", stacklevel=4)  # wrapper (emit)
    # chained, not listed: submissions given in memory are looked at one at a time
    with output_run(itertools.chain([reference], submissions)) as outputs:
        declare(outputs, {"html": html})
        entries: list[Any] = []
        each = None
        if html is not None:
            from geoeval.report.html import entry_report, render_page, write_html

            options["breakdown"] = True

            def each(name: str, res: ScoreResult) -> None:
                entries.append(entry_report(name, res, index=len(entries)))

        result = _rank(reference, submissions, progress=progress, each=each, **options)
        if html is not None:
            _step(progress, "writing the HTML report")
            page = render_page(
                entries=entries, ranking=result,
                command=html_command or python_call(
                    "geoeval.rank", (reference, list(submissions)), {**options, "html": html}),
                reference=_stem(reference, None, suffix=True),
                strata_given=_strata_given(options))
            write_html(html, page)
    return result


def _keywords(function: Callable[..., Any]) -> tuple[str, ...]:
    """``function``'s own keywords (for the message of a keyword mistyped)."""
    import inspect

    return tuple(inspect.signature(function).parameters)


def python_call(function: str, args: Sequence[Any], kwargs: dict[str, Any]) -> str:
    """The Python call that reproduces a run, for the HTML page's provenance
    (paths as strings, options left at ``None`` or ``False`` omitted).

    Examples
    --------
    >>> python_call("geoeval.score", ("ref.tif", Path("a.tif")), {"html": "r.html", "n_jobs": None})
    "geoeval.score('ref.tif', 'a.tif', html='r.html')"
    >>> python_call("geoeval.rank", ("ref.tif", [{"a": 1}]), {"size_bins": [25, 50]})
    "geoeval.rank('ref.tif', [<dict>], size_bins=[25, 50])"
    """
    def text(v: Any) -> str:
        if isinstance(v, Path):
            return repr(str(v))
        if isinstance(v, list | tuple):
            inner = ", ".join(text(x) for x in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner})"
        if v is None or isinstance(v, str | int | float | bool):
            return repr(v)
        return f"<{type(v).__name__}>"  # data in memory (a GeoDataFrame, an array ...)

    parts = [text(a) for a in args]
    parts += [f"{k}={text(v)}" for k, v in kwargs.items()
              if v is not None and v is not False and k != "breakdown"]
    return f"{function}({', '.join(parts)})"


def _stem(path: Any, default: str | None, *, suffix: bool = False) -> str | None:
    if not isinstance(path, str | Path):
        return default
    from geoeval.errors import printable

    p = Path(path)
    return printable(p.name if suffix else p.stem)


def _strata_given(options: dict[str, Any]) -> bool:
    return options.get("size_bins") is not None or options.get("zones") is not None


def _open_objects(folder: str | Path, matchers: tuple[str, ...], id_kind: str,
                  crs: Any, attributes: Any = None) -> Any:
    from geoeval.report.objects_dataset import open_dataset

    return open_dataset(folder, matchers, id_kind, crs, attributes)


def write_outputs(
    result: ScoreResult,
    *,
    json: str | Path | None = None,
    gpkg: str | Path | None = None,
    gpkg_matcher: str | None = None,
    csv_dir: str | Path | None = None,
    parquet_dir: str | Path | None = None,
    figure: str | Path | None = None,
    breakdown_figure: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Write the JSON report, GeoPackage, CSV tables, GeoParquet files and figures
    that were asked for."""
    from geoeval.report.objects import choose_matcher

    if json is not None:
        from geoeval.report.json_report import write_report

        _step(progress, "writing the JSON report")
        write_report(result, json)
    targets = (gpkg, csv_dir, parquet_dir, figure, breakdown_figure)
    if all(t is None for t in targets):
        return
    from geoeval.report.breakdown import save_breakdown_figure
    from geoeval.report.csv import write_csv
    from geoeval.report.gpkg import write_gpkg
    from geoeval.report.parquet import write_parquet
    from geoeval.report.status_figure import save_status_figure

    writers = (write_gpkg, write_csv, write_parquet, save_status_figure, save_breakdown_figure)
    steps = ("writing the GeoPackage", "writing CSV tables", "writing GeoParquet files",
             "drawing the figure", "drawing the error breakdown")
    matcher = choose_matcher(result, gpkg_matcher)
    for target, writer, step in zip(targets, writers, steps, strict=True):
        if target is not None:  # each as writer(result, target, matcher=)
            _step(progress, step)
            writer(result, target, matcher=matcher)


def score_scenes(
    reference_dir: str | Path,
    submission_dir: str | Path,
    *,
    pairs: str | Path | None = None,
    json: str | Path | None = None,
    csv_dir: str | Path | None = None,
    scene_dir: str | Path | None = None,
    gpkg_matcher: str | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    **options: Any,
) -> ScenesResult:
    """Score every scene of two folders, pool the counts, write per-scene reports.

    Parameters
    ----------
    reference_dir, submission_dir, pairs, progress, **options
        As in :func:`geoeval.scoring.score_scenes` (pairing by name or by a CSV
        list; pooled SpaceNet-style).
    json : path-like, optional
        Write the multi-scene JSON report here (``docs/report.md``).
    csv_dir : path-like, optional
        Write ``scenes.csv`` (one row per scene and matcher, then the pooled
        rows) into this folder (created if needed).
    scene_dir : path-like, optional
        Write each scene's full JSON report (``<scene>.json``) and styled
        GeoPackage (``<scene>.gpkg``) into this folder (created if needed).
    gpkg_matcher : str, optional
        Matcher shown in the per-scene GeoPackages.

    Returns
    -------
    ScenesResult
    """
    check_options(gpkg_matcher=gpkg_matcher)
    from geoeval.report.json_report import write_report

    with output_run([reference_dir, submission_dir, pairs]) as outputs:
        declare(outputs, {"json": json, "csv_dir": csv_dir, "scene_dir": scene_dir})
        each = None
        if scene_dir is not None:
            from geoeval.outputs import ensure_folder
            from geoeval.report.gpkg import write_gpkg

            out_dir = ensure_folder(scene_dir)

            def each(name: str, res: ScoreResult) -> None:
                write_report(res, out_dir / f"{name}.json")
                write_gpkg(res, out_dir / f"{name}.gpkg", matcher=gpkg_matcher)

        result = _score_scenes(reference_dir, submission_dir, pairs=pairs, each=each,
                               progress=progress, attributes=scene_dir is not None,
                               **options)
        if json is not None:
            write_report(result, json)
        if csv_dir is not None:
            from geoeval.outputs import ensure_folder
            from geoeval.report.csv import write_scenes_csv

            write_scenes_csv(result, ensure_folder(csv_dir) / "scenes.csv")
    return result


def _step(progress: Callable[[str], None] | None, name: str) -> None:
    if progress is not None:
        progress(name)
