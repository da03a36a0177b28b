"""``geoeval score REFERENCE SUBMISSION``: score one submission against a reference.

Examples on the bundled sample (they run as written from a checkout; the help
shows them):

$ geoeval score sample_data/reference.tif \
      sample_data/submissions/s4_fragmented.tif
$ geoeval score sample_data/reference.gpkg \
      sample_data/submissions/s5_merged.shp --id-field id -m mom --json report.json
$ geoeval score sample_data/reference.tif \
      sample_data/submissions/s9_blobby.shp -m iou --gpkg out.gpkg --figure map.png
$ geoeval score sample_data/reference.tif sample_data/submissions/s8_shifted.tif \
      -m iou --html report.html
$ geoeval score sample_data/reference.tif \
      sample_data/submissions/s4_fragmented.tif -m hoover --breakdown \
      --breakdown-figure err.png
$ geoeval score sample_data/reference.tif sample_data/submissions/s2_misses.tif \
      -m bgm --zones sample_data/zones.gpkg --zone-field NAME
$ geoeval score sample_data/reference.tif sample_data/submissions/s2_misses.tif \
      -m bgm --size-bins coco --bootstrap 200
$ geoeval score sample_data/reference.gpkg \
      sample_data/submissions/s9_blobby.shp --id-field id --class-field class \
      -m bgm --csv-dir tables/
$ geoeval score ref_scenes/ sub_scenes/ --scene-dir scenes/ --json pooled.json

The last one is a template: two folders of scenes, paired by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from geoeval.cli import help as sections
from geoeval.cli.callbacks import MATCHERS_OR_ALL, ONE_MATCHER
from geoeval.cli.groups import add_command, with_groups
from geoeval.cli.options import (
    BOOTSTRAP,
    BOUNDARY_BAND_DEFAULT,
    DEFAULTS,
    MATCHER_OPTIONS,
    READERS,
    REGION,
    REPORTING,
    STRATA,
    AnonOpt,
    BootSeedOpt,
    BoundaryBandOpt,
    BoundaryWidthOpt,
    BreakdownFigureOpt,
    BreakdownOpt,
    EngineOpt,
    HtmlOpt,
    JobsOpt,
    MeasuresOpt,
    ResolutionOpt,
    SchedulerOpt,
    input_arg,
)
from geoeval.cli.printers import (
    Reporting,
    command_line,
    show,
    strict_printed,
    terminal,
    warn,
)
from geoeval.cli.progress import Progress


@with_groups
def score_command(
    reference: Annotated[Path, typer.Argument(
        metavar="REFERENCE", show_default=False, parser=input_arg,
        help="Labelled raster, vector layer, folder of scenes or quoted tile pattern "
             "('tiles/*.gpkg'); a path or URL (s3://, gs://, az://, https://).")],
    submission: Annotated[Path, typer.Argument(
        metavar="SUBMISSION", show_default=False, parser=input_arg,
        help="The same, for the detector's output.")],
    matcher: Annotated[list[str] | None, typer.Option(
        "--matcher", "-m", metavar="NAME", callback=MATCHERS_OR_ALL,
        help="Matcher to run: bgm, hoover, mom, iou or all (the default); repeat the "
             "option for several.")] = None,
    thresholds: dict = MATCHER_OPTIONS,
    mallows: Annotated[bool, typer.Option(
        "--mallows", help="Mallows score for the other matchers' instances too.",
        rich_help_panel=sections.MALLOWS)
    ] = DEFAULTS["mallows"],
    resolution: ResolutionOpt = DEFAULTS["resolution"],
    approximate: Annotated[bool | None, typer.Option(
        "--approximate/--exact",
        help="Mallows: pool large instances into blocks / never. Default: exact up to "
             "the announced size, pooled and flagged beyond.",
        rich_help_panel=sections.MALLOWS)] = DEFAULTS["approximate"],
    readers: dict = READERS,
    region: dict = REGION,
    class_field: Annotated[str | None, typer.Option(
        help="Vector field of classes: also score each class alone.",
        rich_help_panel=sections.OPTIONS)] = None,
    strata: dict = STRATA,
    bootstrap: dict = BOOTSTRAP,
    seed: BootSeedOpt = DEFAULTS["seed"],
    out: Reporting = REPORTING,
    gpkg: Annotated[Path | None, typer.Option(
        help="Write a styled GeoPackage (layers reference, submission, instances, summary).",
        rich_help_panel=sections.OUTPUTS)
    ] = None,
    gpkg_matcher: Annotated[str | None, typer.Option(
        metavar="NAME", callback=ONE_MATCHER,
        help="Matcher shown in the GeoPackage, CSV tables and figure (default mom).",
        rich_help_panel=sections.MORE_OUTPUTS)] = None,
    csv_dir: Annotated[Path | None, typer.Option(
        help="Write the per-object tables as CSV files there.",
        rich_help_panel=sections.OUTPUTS)] = None,
    parquet_dir: Annotated[Path | None, typer.Option(
        help="Write the GeoPackage's layers as GeoParquet files into this folder.",
        rich_help_panel=sections.MORE_OUTPUTS)] = None,
    figure: Annotated[Path | None, typer.Option(
        help="Save a status map and score chart (.png or .svg).",
        rich_help_panel=sections.OUTPUTS)] = None,
    html: HtmlOpt = None,
    breakdown: BreakdownOpt = DEFAULTS["breakdown"],
    breakdown_figure: BreakdownFigureOpt = None,
    measures: MeasuresOpt = DEFAULTS["geometry_measures"],
    boundary_width: BoundaryWidthOpt = DEFAULTS["boundary_width"],
    boundary_band: BoundaryBandOpt = BOUNDARY_BAND_DEFAULT,
    pairs: Annotated[Path | None, typer.Option(
        help="Folders: CSV list of pairs (columns: reference, submission and "
             "optionally scene).",
        rich_help_panel=sections.FOLDERS)] = None,
    scene_dir: Annotated[Path | None, typer.Option(
        help="Folders: write each scene's JSON report and GeoPackage here.",
        rich_help_panel=sections.FOLDERS)] = None,
    jobs: JobsOpt = DEFAULTS["n_jobs"],
    engine: EngineOpt = DEFAULTS["engine"],
    scheduler: SchedulerOpt = DEFAULTS["scheduler"],
    memory_limit: Annotated[str | None, typer.Option(
        help="With --engine dask and no --scheduler: memory limit of each local worker "
             "(e.g. 6GB).",
        rich_help_panel=sections.ENGINE)] = None,
    objects: Annotated[Path | None, typer.Option(
        "--objects", help="Write every object's result as a partitioned GeoParquet dataset "
                          "into this new folder (the Dask workers write it by partitions).",
        rich_help_panel=sections.MORE_OUTPUTS)
    ] = None,
    anon: AnonOpt = False,
) -> None:
    """Score SUBMISSION against REFERENCE: counts, precision, recall, F1, accuracy.

    With two folders, every scene is scored (files paired by name, or --pairs)
    and the counts are pooled over scenes as SpaceNet does.

    """
    import geoeval
    from geoeval.errors import InputError
    from geoeval.matching import registry

    chosen = matcher or ["all"]
    matchers = registry.names() if "all" in chosen else tuple(chosen)
    out_matcher = gpkg_matcher
    err = terminal(stderr=True)
    options = dict(
        matchers=matchers, **thresholds, mallows=mallows, resolution=resolution,
        approximate=approximate, n_jobs=jobs,
        engine=engine.value if hasattr(engine, "value") else engine, scheduler=scheduler,
        **readers, **region, class_field=class_field, **strata,
        **bootstrap, seed=seed, strict=out.strict, **({"anon": True} if anon else {}))
    folders = _is_folder(reference) or _is_folder(submission)
    if folders:
        if not (_is_folder(reference) and _is_folder(submission)):
            folder, file = ((reference, submission) if _is_folder(reference)
                            else (submission, reference))
            raise InputError(f"is a file but {folder} is a folder; to score a folder of "
                             "scenes, give a folder for both arguments", file)
        for name, value in (("--gpkg", gpkg), ("--figure", figure), ("--objects", objects),
                            ("--parquet-dir", parquet_dir),
                            ("--breakdown", breakdown or None),
                            ("--breakdown-figure", breakdown_figure), ("--html", html),
                            ("--measures", measures), ("--boundary-width", boundary_width),
                            ("--boundary-iou-band",
                             None if boundary_band.value == "distance" else boundary_band)):
            if value is not None:
                raise InputError(f"{name} takes one scene; with folders use --scene-dir")
        with strict_printed():
            _score_folders(reference, submission, options, pairs=pairs, scene_dir=scene_dir,
                           gpkg_matcher=out_matcher, csv_dir=csv_dir, out=out, err=err)
        return
    for name, value in (("--pairs", pairs), ("--scene-dir", scene_dir)):
        if value is not None:
            raise InputError(f"{name} applies to folders of scenes only")
    with strict_printed(), Progress(out.quiet) as progress:
        result = geoeval.score(reference, submission, progress=progress, gpkg=gpkg,
                               gpkg_matcher=out_matcher, csv_dir=csv_dir,
                               parquet_dir=parquet_dir, figure=figure,
                               breakdown=breakdown, breakdown_figure=breakdown_figure,
                               html=html, html_command=None if html is None else command_line(),
                               geometry_measures=measures, boundary_width=boundary_width,
                               boundary_band=boundary_band.value,
                               objects_dir=objects, memory_limit=memory_limit,
                               lists=out.json_path is not None, **options)
    out.finish(result)
    if not out.quiet:  # the same tables from every route: they read the result's summary
        _print(result, figure=figure is not None, breakdown=breakdown)


def _print(result: Any, *, figure: bool, breakdown: bool, console: Any = None) -> None:
    """The tables, laid out for the terminal's width (no number cut), the plain
    reading of the result, and one line on what to try next (on ``console``,
    default stdout)."""
    from geoeval.report.layout import show
    from geoeval.report.summary_tables import summary_tables
    from geoeval.report.tables import score_tables

    parts: list[Any] = [*score_tables(result), *summary_tables(result)]
    # what was printed decides the hints: --html computes (and so prints) the breakdown
    breakdown = breakdown or result.summary.breakdown is not None
    if result.summary.geometry is not None:
        from geoeval.report.geometry_tables import geometry_table

        parts.append(geometry_table(result))
    hints = [hint for used, hint in ((figure, "--figure map.png (where the errors are)"),
                                     (breakdown, "--breakdown (what each kind of error costs)"))
             if not used]
    hints.append("docs/which-matcher.md (which matcher answers your question)")
    from rich.text import Text

    parts.append(Text("Try next: " + ", ".join(hints) + ".", style="italic"))
    show(console or terminal(), parts)


def _is_folder(path: Path | str) -> bool:
    """A local folder of scenes (the rule of :func:`geoeval.io.inputs.is_scene_folder`:
    a FileGDB ``.gdb`` folder and a GeoParquet dataset are one vector data source
    each)."""
    from geoeval.io.inputs import is_scene_folder

    return is_scene_folder(path)


def _score_folders(reference: Path, submission: Path, options: dict, *, pairs: Path | None,
                   scene_dir: Path | None, gpkg_matcher: str | None, csv_dir: Path | None,
                   out: Reporting, err: Any) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    import geoeval

    columns = (TextColumn("scoring {task.description}", markup=False), BarColumn(),
               MofNCompleteColumn())
    with Progress(*columns, console=err, disable=out.quiet, transient=True) as bar:
        task = bar.add_task("scenes", total=None)

        def progress(done: int, total: int, scene: str) -> None:
            bar.update(task, completed=done, total=total, description=scene)

        result = geoeval.score_scenes(reference, submission, pairs=pairs, json=out.json_path,
                                      csv_dir=csv_dir, scene_dir=scene_dir,
                                      gpkg_matcher=gpkg_matcher, progress=progress, **options)
    warn([*result.warnings, *(f"{scene.name}: {w}" for scene in result.scenes
                               for w in scene.warnings)], strict=out.strict)
    from geoeval.report.scene_tables import scenes_table

    show([scenes_table(result)], quiet=out.quiet)


def register(app: typer.Typer) -> None:
    """Add ``score`` to the main app."""
    add_command(app, "score", score_command, __doc__)
