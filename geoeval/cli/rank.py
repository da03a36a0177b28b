"""``geoeval rank``: rank submissions with Hasse diagrams (Özdemir et al. 2010, §4.3).

Examples on the bundled sample (they run as written from a checkout):

    $ geoeval rank sample_data/reference.tif sample_data/submissions/s1_near_perfect.tif \
          sample_data/submissions/s2_misses.tif sample_data/submissions/s6_eroded.tif \
          --matcher bgm
    $ geoeval rank sample_data/reference.tif sample_data/submissions/s5_merged.shp \
          sample_data/submissions/s7_dilated.gpkg -m iou --figure ranking.svg
    $ geoeval rank sample_data/reference.tif sample_data/submissions/s2_misses.tif \
          sample_data/submissions/s8_shifted.tif -m bgm --html contest.html \
          --size-bins coco

A table of indicators instead of scenes: ``geoeval rank --table scores.csv
--indicators precision,recall,f1``.

Thin: parses options, calls :func:`geoeval.rank` or :func:`geoeval.rank_table`,
prints a table with rich.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import typer

from geoeval.cli.options import (
    DEFAULTS,
    BackgroundOpt,
    BandOpt,
    BlockSizeOpt,
    BootstrapOpt,
    ConfidenceOpt,
    CrsOpt,
    EvalCrsOpt,
    HooverOpt,
    HtmlOpt,
    IdFieldOpt,
    IouOpt,
    JobsOpt,
    JsonOpt,
    LayerOpt,
    MinOverlapOpt,
    OneMatcher,
    Progress,
    QuietOpt,
    RefCrsOpt,
    RefLayerOpt,
    ResolutionOpt,
    SizeBinsOpt,
    StrictOpt,
    SubCrsOpt,
    SubLayerOpt,
    ZoneFieldOpt,
    ZonesOpt,
    add_command,
    command_line,
    reader_options,
    rule,
    show,
    warn,
)
from geoeval.errors import InputError


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    return items or None


def _rank_defaults() -> dict[str, Any]:
    from geoeval.scoring.contest import rank

    return {k: p.default for k, p in inspect.signature(rank).parameters.items()
            if p.default is not inspect.Parameter.empty}


RANK_DEFAULTS = _rank_defaults()  # from geoeval.rank's signature, never copied
DEFAULT_MATCHER = OneMatcher(RANK_DEFAULTS["matcher"])


def rank_command(
    paths: Annotated[list[Path] | None, typer.Argument(
        metavar="REFERENCE SUBMISSION...",
        help="The reference, then one or more submissions (omit with --table).",
        show_default=False)] = None,
    table: Annotated[Path | None, typer.Option(
        help="CSV of precomputed indicators: a 'name' column + one per indicator.")] = None,
    matcher: Annotated[OneMatcher, typer.Option(
        "--matcher", "-m", metavar="NAME",
        help="bgm, hoover, mom or iou: the matcher whose precision, recall and accuracy "
             "are the indicators.")
    ] = DEFAULT_MATCHER,
    indicators: Annotated[str | None, typer.Option(
        help="Comma-separated indicator columns (--table).")] = None,
    lower_is_better: Annotated[str | None, typer.Option(
        help="Comma-separated columns where lower is better.")] = None,
    tie_break: Annotated[str, typer.Option(
        help="Column breaking remaining ties (higher first).")] = "accuracy",
    json_path: JsonOpt = None,
    figure: Annotated[Path | None, typer.Option(
        help="Hasse diagram + rank-frequency heat map (.png or .svg).")] = None,
    html: HtmlOpt = None,
    size_bins: SizeBinsOpt = DEFAULTS["size_bins"],
    zones: ZonesOpt = DEFAULTS["zones"],
    zone_field: ZoneFieldOpt = DEFAULTS["zone_field"],
    method: Annotated[str, typer.Option(help="auto | exact | mcmc.")] = RANK_DEFAULTS["method"],
    max_states: Annotated[int, typer.Option(
        help="Up-set cap for exact.", callback=rule("max_states"))] = RANK_DEFAULTS["max_states"],
    samples: Annotated[int | None, typer.Option(
        help="MCMC steps counted.", callback=rule("samples"))] = RANK_DEFAULTS["samples"],
    burn_in: Annotated[int | None, typer.Option(
        help="MCMC steps discarded.", callback=rule("burn_in"))] = RANK_DEFAULTS["burn_in"],
    seed: Annotated[int, typer.Option(
        help="MCMC seed.", callback=rule("seed"))] = RANK_DEFAULTS["seed"],
    max_rounds: Annotated[int, typer.Option(
        help="CRF round limit.", callback=rule("max_rounds"))] = RANK_DEFAULTS["max_rounds"],
    hoover_threshold: HooverOpt = DEFAULTS["hoover_threshold"],
    iou_threshold: IouOpt = DEFAULTS["iou_threshold"],
    min_overlap: MinOverlapOpt = DEFAULTS["min_overlap"],
    resolution: ResolutionOpt = DEFAULTS["resolution"],
    band: BandOpt = DEFAULTS["band"],
    background: BackgroundOpt = DEFAULTS["background"],
    layer: LayerOpt = None,
    ref_layer: RefLayerOpt = None,
    sub_layer: SubLayerOpt = None,
    id_field: IdFieldOpt = DEFAULTS["id_field"],
    crs: CrsOpt = DEFAULTS["crs"],
    ref_crs: RefCrsOpt = None,
    sub_crs: SubCrsOpt = None,
    eval_crs: EvalCrsOpt = DEFAULTS["evaluation_crs"],
    bootstrap: BootstrapOpt = RANK_DEFAULTS["bootstrap"],
    confidence: ConfidenceOpt = RANK_DEFAULTS["confidence"],
    block_size: BlockSizeOpt = RANK_DEFAULTS["block_size"],
    jobs: JobsOpt = DEFAULTS["n_jobs"],
    quiet: QuietOpt = False,
    strict: StrictOpt = False,
) -> None:
    """Rank submissions: dominance order, Hasse diagram, rank intervals and
    frequencies over linear extensions, iterated cumulative rank frequency."""
    from geoeval import rank, rank_table  # deferred: keeps `--help` fast

    options = {
        "method": method,
        "max_states": max_states,
        "samples": samples,
        "burn_in": burn_in,
        "seed": seed,
        "max_rounds": max_rounds,
    }
    paths = list(paths or [])
    strata = {"size_bins": size_bins, "zones": zones, "zone_field": zone_field}
    if html is None and any(v is not None for v in strata.values()):
        raise InputError("--size-bins, --zones and --zone-field apply with --html "
                         "(each entry's results by size and zone on the page)")
    if table is not None:
        if paths:
            raise InputError("give either --table or REFERENCE SUBMISSION..., not both")
        if html is not None:
            raise InputError("--html needs REFERENCE SUBMISSION... (the page shows each "
                             "entry's scene); with --table use --json or --figure")
        result = rank_table(
            table,
            indicators=_split(indicators),
            lower_is_better=_split(lower_is_better) or (),
            tie_break=tie_break,
            **options,
        )
    else:
        if len(paths) < 2:
            raise InputError("need REFERENCE and at least one SUBMISSION (or --table)")
        if indicators is not None or lower_is_better is not None:
            raise InputError("--indicators and --lower-is-better apply to --table only")
        readers = reader_options(band=band, background=background, layer=layer,
                                 ref_layer=ref_layer, sub_layer=sub_layer, id_field=id_field,
                                 crs=crs, eval_crs=eval_crs, ref_crs=ref_crs,
                                 sub_crs=sub_crs)
        del readers["class_field"]
        with Progress(quiet, "reading the reference") as progress:
            result = rank(
                paths[0],
                paths[1:],
                matcher=matcher.value,
                hoover_threshold=hoover_threshold,
                iou_threshold=iou_threshold,
                min_overlap=min_overlap,
                resolution=resolution,
                n_jobs=jobs,
                bootstrap=bootstrap,
                confidence=confidence,
                block_size=block_size,
                progress=progress,
                html=html,
                html_command=None if html is None else command_line(),
                **{k: v for k, v in strata.items() if v is not None},
                **readers,
                **options,
            )
    warn(getattr(result, "warnings", ()), strict=strict)
    if not quiet:
        _print(result)
    if json_path is not None:
        from geoeval.report.json_report import write_report

        write_report(result, json_path)
    if figure is not None:
        from geoeval.report.figures_ranking import save_ranking_figure  # deferred

        save_ranking_figure(result, figure)


def _print(result: object) -> None:
    from geoeval.report.tables import ranking_tables

    parts = list(ranking_tables(result))
    if getattr(result, "bootstrap", None) is not None:
        from geoeval.report.strata_tables import rank_bootstrap_table

        parts.append(rank_bootstrap_table(result))
    show(parts)


def register(app: typer.Typer) -> None:
    """Add ``rank`` to the main app."""
    add_command(app, "rank", rank_command, __doc__)
