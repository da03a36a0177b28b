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

from geoeval.cli import help as sections
from geoeval.cli.callbacks import ONE_MATCHER, given
from geoeval.cli.groups import Group, add_command, ruled, with_groups
from geoeval.cli.options import (
    BOOTSTRAP,
    DEFAULTS,
    MATCHER_OPTIONS,
    READERS,
    REGION,
    REPORTING,
    STRATA,
    AnonOpt,
    HtmlOpt,
    JobsOpt,
    ResolutionOpt,
    input_arg,
)
from geoeval.cli.printers import Reporting, command_line, strict_printed
from geoeval.cli.progress import Progress
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
DEFAULT_MATCHER = RANK_DEFAULTS["matchers"]

#: The order's options, as keywords of :func:`geoeval.rank` and :func:`geoeval.rank_table`:
#: (name, type, help); each checked by its rule in :data:`geoeval.validate.RULES`.
ORDER_OPTIONS: tuple[tuple[str, Any, str], ...] = (
    ("max_states", int, "Up-set cap for exact."),
    ("samples", int | None, "MCMC steps counted."),
    ("burn_in", int | None, "MCMC steps discarded."),
    ("seed", int, "MCMC seed."),
    ("max_rounds", int, "CRF round limit."),
)
METHOD = inspect.Parameter("method", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           default=RANK_DEFAULTS["method"],
                           annotation=Annotated[str, typer.Option(help="auto | exact | mcmc.")])
ORDER = Group(lambda **options: options,
              [METHOD, *(ruled(kind, name, text, RANK_DEFAULTS[name])
                         for name, kind, text in ORDER_OPTIONS)], section=sections.ORDER)

#: What only scoring the scenes uses (``REFERENCE SUBMISSION...``): refused with ``--table``
#: (``--html`` has its own message).
SCENE_OPTIONS = ("matcher", "resolution", "jobs",
                 *(p.name for g in (READERS, REGION, MATCHER_OPTIONS, BOOTSTRAP, STRATA)
                   for p in g.parameters))
#: What only a table of indicators uses (``--table``): refused with scenes.
TABLE_OPTIONS = ("indicators", "lower_is_better", "tie_break")


@with_groups
def rank_command(
    paths: Annotated[list[Path] | None, typer.Argument(
        metavar="REFERENCE SUBMISSION...", parser=input_arg,
        help="The reference, then one or more submissions (omit with --table); paths "
             "or URLs (s3://, gs://, az://, https://).",
        show_default=False)] = None,
    table: Annotated[Path | None, typer.Option(
        help="CSV of precomputed indicators: a 'name' column + one per indicator.")] = None,
    matcher: Annotated[str, typer.Option(
        "--matcher", "-m", metavar="NAME", callback=ONE_MATCHER,
        help="bgm, hoover, mom or iou: the matcher whose precision, recall and accuracy "
             "are the indicators.")
    ] = DEFAULT_MATCHER,
    indicators: Annotated[str | None, typer.Option(
        help="Comma-separated indicator columns (--table).")] = None,
    lower_is_better: Annotated[str | None, typer.Option(
        help="Comma-separated columns where lower is better.")] = None,
    tie_break: Annotated[str, typer.Option(
        help="Column breaking remaining ties (higher first).")] = "accuracy",
    figure: Annotated[Path | None, typer.Option(
        help="Hasse diagram + rank-frequency heat map (.png or .svg).",
        rich_help_panel=sections.OUTPUTS)] = None,
    html: HtmlOpt = None,
    strata: dict = STRATA,
    options: dict = ORDER,
    thresholds: dict = MATCHER_OPTIONS,
    resolution: ResolutionOpt = DEFAULTS["resolution"],
    readers: dict = READERS,
    region: dict = REGION,
    bootstrap: dict = BOOTSTRAP,
    jobs: JobsOpt = DEFAULTS["n_jobs"],
    out: Reporting = REPORTING,
    anon: AnonOpt = False,
) -> None:
    """Rank submissions: dominance order, Hasse diagram, rank intervals and
    frequencies over linear extensions, iterated cumulative rank frequency."""
    from geoeval import rank, rank_table  # deferred: keeps `--help` fast

    paths = list(paths or [])
    if table is not None:
        if paths:
            raise InputError("give either --table or REFERENCE SUBMISSION..., not both")
        _refuse(given(*SCENE_OPTIONS), "when rank scores REFERENCE SUBMISSION..., "
                "not to --table (precomputed indicators: no scene to score or resample)")
    else:
        _refuse(given(*TABLE_OPTIONS), "to --table only (scenes are ranked on "
                "precision, recall and accuracy, ties broken by accuracy)")
    if html is None and any(v is not None for v in strata.values()):
        raise InputError("--size-bins, --zones and --zone-field apply with --html "
                         "(each entry's results by size and zone on the page)")
    if table is not None:
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
        with strict_printed(), Progress(out.quiet, "reading the reference") as progress:
            result = rank(
                paths[0],
                paths[1:],
                matchers=matcher,
                resolution=resolution,
                n_jobs=jobs,
                progress=progress,
                html=html,
                html_command=None if html is None else command_line(),
                **{k: v for k, v in strata.items() if v is not None},
                **thresholds,
                **readers,
                **region,
                **bootstrap,
                **options,
                strict=out.strict,
                **({"anon": True} if anon else {}),
            )
    out.finish(result, _tables)
    if figure is not None:
        from geoeval.report.figures_ranking import save_ranking_figure  # deferred

        save_ranking_figure(result, figure)


def _refuse(flags: list[str], why: str) -> None:
    """A usage error naming ``flags`` (options that would be silently ignored), if any."""
    if not flags:
        return
    named = flags[0] if len(flags) == 1 else f"{', '.join(flags[:-1])} and {flags[-1]}"
    verb = "applies" if len(flags) == 1 else "apply"
    raise InputError(f"{named} {verb} {why}")


def _tables(result: object) -> list[Any]:
    from geoeval.report.ranking_tables import ranking_tables

    return ranking_tables(result)


def register(app: typer.Typer) -> None:
    """Add ``rank`` to the main app."""
    add_command(app, "rank", rank_command, __doc__)
