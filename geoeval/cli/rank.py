"""``geoeval rank``: rank submissions with Hasse diagrams (Özdemir et al. 2010, §4.3).

    $ geoeval rank reference.tif sub1.tif sub2.tif sub3.tif --matcher bgm
    $ geoeval rank --table scores.csv --indicators precision,recall,accuracy \\
          --json ranking.json --figure ranking.svg

Thin: parses options, calls :func:`geoeval.rank` or :func:`geoeval.rank_table`,
prints a table with rich.
"""

from __future__ import annotations

from pathlib import Path

import typer

from geoeval.cli.options import COUNT, FRACTION, HOOVER, SEED
from geoeval.errors import InputError


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    return items or None


def rank_command(
    paths: list[Path] = typer.Argument(  # noqa: B008
        None,
        help="REFERENCE SUBMISSION [SUBMISSION ...] (omit with --table).",
        show_default=False,
    ),
    table: Path | None = typer.Option(  # noqa: B008
        None, "--table", help="CSV of precomputed indicators: a 'name' column + one per indicator."
    ),
    matcher: str = typer.Option("mom", "--matcher", help="mom | bgm | hoover | iou."),
    indicators: str | None = typer.Option(
        None, "--indicators", help="Comma-separated indicator columns (--table)."
    ),
    lower_is_better: str | None = typer.Option(
        None, "--lower-is-better", help="Comma-separated columns where lower is better."
    ),
    tie_break: str = typer.Option(
        "accuracy", "--tie-break", help="Column breaking remaining ties (higher first)."
    ),
    json_path: Path | None = typer.Option(None, "--json", help="Write the full report here."),  # noqa: B008
    figure: Path | None = typer.Option(  # noqa: B008
        None, "--figure", help="Hasse diagram + rank-frequency heat map (.png or .svg)."
    ),
    method: str = typer.Option("auto", "--method", help="auto | exact | mcmc."),
    max_states: int = typer.Option(2_000_000, "--max-states", help="Up-set cap for exact.",
                                   callback=COUNT),
    samples: int | None = typer.Option(None, "--samples", help="MCMC steps counted.",
                                       callback=COUNT),
    burn_in: int | None = typer.Option(None, "--burn-in", help="MCMC steps discarded.",
                                       callback=SEED),
    seed: int = typer.Option(0, "--seed", help="MCMC seed.", callback=SEED),
    max_rounds: int = typer.Option(20, "--max-rounds", help="CRF round limit.", callback=SEED),
    hoover_threshold: float = typer.Option(0.6, "--hoover-threshold", callback=HOOVER,
                                           help="Hoover threshold T, 0.5 < T <= 1."),
    iou_threshold: float = typer.Option(0.5, "--iou-threshold", callback=FRACTION,
                                        help="IoU matcher threshold, 0 <= t <= 1."),
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
    if table is not None:
        if paths:
            raise InputError("give either --table or REFERENCE SUBMISSION..., not both")
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
        result = rank(
            paths[0],
            paths[1:],
            matcher=matcher,
            hoover_threshold=hoover_threshold,
            iou_threshold=iou_threshold,
            **options,
        )
    _print(result)
    if json_path is not None:
        result.write_json(json_path)
    if figure is not None:
        from geoeval.report.figures_ranking import save_ranking_figure  # deferred

        save_ranking_figure(result, figure)


def _print(result: object) -> None:
    from rich.console import Console
    from rich.table import Table

    from geoeval.ranking.api import RankingResult

    assert isinstance(result, RankingResult)
    st = result.stats
    if st.exact:
        count = f"{st.linear_extensions:,} linear extensions (exact, {st.states:,} up-sets)"
    else:
        est = st.linear_extensions_estimate
        rse = st.linear_extensions_rse
        est_text = "not estimated" if est is None else f"≈ {est:.4g} (rel. SE {rse:.2g})"
        count = f"linear extensions {est_text}; sampled, {st.samples:,} steps, seed {st.seed}"
    title = "Ranking" + (f" — matcher {result.matcher}" if result.matcher else "")
    tab = Table(title=title, caption=count)
    tab.add_column("rank", justify="right")
    tab.add_column("name", no_wrap=True)
    for col in result.indicators:
        tab.add_column(col + (" ↓" if col in result.lower_is_better else ""), justify="right")
    tab.add_column("interval", justify="center")
    tab.add_column("E(rank)", justify="right")
    intervals, expected = result.rank_intervals, result.expected_ranks
    for r, name in enumerate(result.ranking, start=1):
        vals = [result.values[name].get(c) for c in result.indicators]
        lo, hi = intervals[name]
        tab.add_row(
            str(r),
            name,
            *["–" if v is None else f"{v:.4f}" for v in vals],
            f"[{lo}, {hi}]",
            f"{expected[name]:.3f}",
        )
    console = Console()
    console.print(tab)
    rounds = len(result.rounds)
    state = "converged" if result.converged else f"not converged ({result.stop_reason})"
    console.print(f"CRF: {rounds} round(s), {state}.")
    for tie in result.ties:
        console.print(f"tie {' > '.join(tie['items'])} broken by {tie['by']}")
    for note in (*result.notes, *st.notes):
        console.print(f"note: {note}")


def register(app: typer.Typer) -> None:
    """Add ``rank`` to the main app."""
    app.command("rank")(rank_command)
