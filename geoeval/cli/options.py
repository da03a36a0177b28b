"""Option checks shared by the commands (rasterio's ``rio/options.py`` style).

A callback turns a bad value into a usage error (exit 2, one line) at the edge,
with the same rule the Python API applies (:mod:`geoeval.validate`), named by
the option instead of the keyword.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from geoeval import validate
from geoeval.cli import help as sections


def checked(check: Callable[..., Any], **bounds: Any) -> Callable[[Any, Any, Any], Any]:
    """A Typer/click callback applying ``check(name, value, **bounds)`` to the option."""

    def callback(ctx: Any, param: Any, value: Any) -> Any:
        if value is None or ctx.resilient_parsing:
            return value
        try:
            return check(param.opts[0] if param.opts else param.name, value, **bounds)
        except validate.BadValue as exc:
            raise typer.BadParameter(exc.detail) from None

    return callback


def rule(name: str) -> Callable[[Any, Any, Any], Any]:
    """The callback of an option whose range is ``validate.RULES[name]`` (the rule the
    Python API applies to the keyword ``name``), named by the option in the message."""

    def check(label: str, value: Any) -> Any:
        return validate.check(name, value, label=label)

    return checked(check)


def rule_text(name: str) -> str:
    """An option's range in words for its help (``in (0.5, 1]``), from the same rule."""
    return validate.RULES[name].text


FRACTION = checked(validate.fraction)
POSITIVE = checked(validate.positive)
COUNT = checked(validate.count)
SEED = checked(validate.count, minimum=0)
IOU = checked(validate.IOU.check)  # (0, 1]: every IoU threshold, matcher and box protocols
EPS = checked(validate.fraction, high_open=True)  # [0, 1): ROBIN's ε1..ε3
ALPHA = checked(validate.fraction, low_open=True, high_open=True)  # (0, 1): a test level
IMAGE_SIZE = checked(validate.image_size)  # "W,H" -> (W, H), both > 0


# --- options shared by `score` and `rank` -----------------------------------------
# One declaration each; defaults are read from the library's signature
# (geoeval.scoring.options.score_options), never copied.


def _defaults() -> dict[str, Any]:
    """The defaults of :func:`geoeval.scoring.options.score_options` (the one
    declaration of a score's keywords) and of every registered matcher parameter."""
    from geoeval.matching import registry
    from geoeval.scoring.options import score_options

    out = {k: p.default for k, p in inspect.signature(score_options).parameters.items()
           if p.default is not inspect.Parameter.empty}
    out.update({p.keyword: p.default for p in registry.parameters()})
    return out


DEFAULTS = _defaults()


def matcher_choice(*extra: str) -> Callable[[Any, Any, Any], Any]:
    """The callback of an option naming registered matchers
    (:mod:`geoeval.matching.registry`, as registered when the command runs), or one of
    ``extra``: a usage error listing the choices otherwise."""

    def callback(ctx: Any, param: Any, value: Any) -> Any:
        if value is None or ctx.resilient_parsing:
            return value
        from geoeval.matching import registry

        choices = (*extra, *registry.names())
        for v in value if isinstance(value, list | tuple) else [value]:
            if v not in choices:
                raise typer.BadParameter(
                    f"{v!r} is not one of {', '.join(repr(c) for c in choices)}.")
        return value

    return callback


#: ``score --matcher``: matchers by name, or ``all``.
MATCHERS_OR_ALL = matcher_choice("all")
#: One matcher (``--gpkg-matcher``, ``rank --matcher``).
ONE_MATCHER = matcher_choice()


class BoundaryBand(str, Enum):
    """``--boundary-iou-band``: the polygons' distance band or the reference code's
    pixel erosion (geoeval.measures.geometry.BOUNDARY_BANDS)."""

    distance = "distance"
    raster = "raster"


class EngineChoice(str, Enum):
    """``--engine``: where the overlap and the Mallows score run."""

    local = "local"
    dask = "dask"




ResolutionOpt = Annotated[float | None, typer.Option(
    help="Grid step (CRS units) for the Mallows score of two vector layers.",
    callback=POSITIVE, rich_help_panel=sections.MALLOWS)]
BandOpt = Annotated[int, typer.Option(help="Raster band holding the labels.", callback=COUNT)]
BackgroundOpt = Annotated[int, typer.Option(help="Raster background label.")]
LayerOpt = Annotated[str | None, typer.Option(help="Vector layer (both inputs).")]
RefLayerOpt = Annotated[str | None, typer.Option(help="Reference layer.")]
SubLayerOpt = Annotated[str | None, typer.Option(help="Submission layer.")]
IdFieldOpt = Annotated[str | None, typer.Option(
    help="Vector field with object ids (both inputs).")]
RefIdFieldOpt = Annotated[str | None, typer.Option(help="Reference field with object ids.")]
SubIdFieldOpt = Annotated[str | None, typer.Option(
    help="Submission field with object ids.")]
CrsOpt = Annotated[str | None, typer.Option(
    help="CRS of inputs that have none (Shapefile without .prj, raster without "
         "georeferencing), e.g. EPSG:32651.")]
RefCrsOpt = Annotated[str | None, typer.Option(
    "--ref-crs", help="CRS of the reference, if it has none.")]
SubCrsOpt = Annotated[str | None, typer.Option(
    "--sub-crs", help="CRS of the submission(s), if they have none.")]
EvalCrsOpt = Annotated[str | None, typer.Option(
    "--eval-crs", help="Projected CRS to compute areas and distances in (default: the "
    "reference's; a geographic or Mercator one is replaced by a local equal-area "
    "projection, with a warning), e.g. EPSG:32631.")]
BreakdownOpt = Annotated[bool, typer.Option(
    "--breakdown", help="Error breakdown: what fixing each kind of error would gain "
                        "(TIDE-style; docs/breakdown.md).",
    rich_help_panel=sections.OUTPUTS)]
BreakdownFigureOpt = Annotated[Path | None, typer.Option(
    help="Save the error breakdown as a bar chart (.png or .svg); implies --breakdown.",
    rich_help_panel=sections.MORE_OUTPUTS)]


def _measures(ctx: Any, param: Any, value: Any) -> Any:
    """``--measures``: names checked by :func:`geoeval.measures.geometry.parse_measures`."""
    if value is None or ctx.resilient_parsing:
        return value
    from geoeval.errors import InputError
    from geoeval.measures.geometry import parse_measures

    try:
        return ",".join(parse_measures(value))
    except InputError as exc:
        raise typer.BadParameter(str(exc)) from None


# geometry measures (geoeval.measures.geometry)
def _measure_names() -> str:
    from geoeval.measures.geometry import measure_names

    return ", ".join(n.replace("_", "-") for n in measure_names())


MeasuresOpt = Annotated[str | None, typer.Option(
    "--measures", help=f"Geometry measures, comma-separated: {_measure_names()} or all (see "
                       "geometry-measures.md in docs).", callback=_measures,
    rich_help_panel=sections.GEOMETRY)]
BoundaryWidthOpt = Annotated[float | None, typer.Option(
    help="Boundary IoU band width in CRS units (default: 2 % of each reference object's "
         "bounding-box diagonal, at least one pixel).", callback=POSITIVE,
    rich_help_panel=sections.GEOMETRY)]
BoundaryBandOpt = Annotated[BoundaryBand, typer.Option(
    "--boundary-iou-band", help="Boundary IoU band: 'distance' (exact band of the polygons) "
    "or 'raster' (erosion by a 3 x 3 square as in Cheng et al.'s code, to reproduce "
    "published numbers; two label rasters on one grid).", rich_help_panel=sections.GEOMETRY)]
BOUNDARY_BAND_DEFAULT = BoundaryBand(DEFAULTS["boundary_band"])
# --- options every command has ------------------------------------------------------
JsonOpt = Annotated[Path | None, typer.Option(
    "--json", help="Write the JSON report ('-': standard output, no table).")]
HtmlOpt = Annotated[Path | None, typer.Option(
    "--html", help="Write the report as one self-contained HTML page ('-': standard "
                   "output; docs/html-report.md).", rich_help_panel=sections.OUTPUTS)]


def command_line() -> str:
    """The command as it was typed (``geoeval …``), for the HTML page's provenance."""
    import shlex

    import click

    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    from geoeval.errors import printable

    argv = obj.get("argv") if isinstance(obj, dict) else None
    return printable(shlex.join(["geoeval", *(sys.argv[1:] if argv is None else argv)]))


QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No table, no progress.")]
StrictOpt = Annotated[bool, typer.Option(
    "--strict", help="Warnings are errors (exit 2, nothing written).")]


def terminal(stderr: bool = False) -> Any:
    """The console geoeval prints on (stdout, or stderr): text is taken as it is, never
    as rich markup (a file named ``s[x].gpkg`` was printed ``s.gpkg``)."""
    from rich.console import Console

    return Console(stderr=stderr, markup=False)


def warn(warnings: Any, *, strict: bool = False, prefix: str = "") -> None:
    """The one warning printer: each warning as a line on stderr, cut to a readable
    length (:func:`geoeval.errors.cut`: a class name of megabytes from a file); with
    ``--strict`` they are then an error (exit 2), and the run's outputs are not
    written."""
    from rich.text import Text

    from geoeval.errors import MESSAGE_CHARS, InputError, cut

    lines = [f"{prefix}{w}" for w in warnings]
    err = terminal(stderr=True)
    for line in lines:
        err.print(Text.assemble(("warning:", "yellow"), " ", cut(line, MESSAGE_CHARS)),
                  highlight=False, soft_wrap=True)
    if strict and lines:
        raise InputError(f"--strict: {len(lines)} warning(s), the first: {lines[0]}")


def note(notes: Any, *, quiet: bool = False) -> None:
    """Notes on how a run ran (where the work went, and why) on stderr: not warnings
    (``--strict`` ignores them), not part of the report; none with ``--quiet``."""
    if quiet:
        return
    from geoeval.errors import MESSAGE_CHARS, cut

    err = terminal(stderr=True)
    for line in notes:
        err.print(f"note: {cut(str(line), MESSAGE_CHARS)}", highlight=False, soft_wrap=True)


def show(renderables: Any, *, quiet: bool = False) -> None:
    """Print tables and text on stdout, laid out for its width (no number cut)."""
    if quiet:
        return
    from geoeval.report.layout import show as layout

    layout(terminal(), list(renderables))


def write_report(json_path: Path | None, report: Any) -> None:
    """``--json``: the result's report written atomically by
    :func:`geoeval.report.json_report.write_report` (every output goes through the
    report layer)."""
    if json_path is None:
        return
    from geoeval.report.json_report import write_report as write_json_report

    write_json_report(report, json_path)


class Group:
    """Options declared once and shared by several commands (rio's shared options,
    taken as one parameter, as FastAPI's ``Depends``).

    A command's parameter whose default is a ``Group`` stands, in its help and on
    its command line, for the group's options, in its place; the command receives
    ``build(**those options)``. :func:`add_command` expands them
    (:func:`with_groups`). ``parameters`` defaults to ``build``'s own. ``section``:
    the help's section (:mod:`geoeval.cli.help`) of those without one of their own.
    """

    def __init__(self, build: Callable[..., Any],
                 parameters: list[inspect.Parameter] | Callable[[], list[inspect.Parameter]]
                 | None = None, section: str | None = None) -> None:
        self.build = build
        self._parameters = parameters
        self.section = section

    @property
    def parameters(self) -> list[inspect.Parameter]:
        """The group's options, in its help section (a callable giving them is asked each
        time: the matcher registry's parameters as they are when a command is built)."""
        if self._parameters is None:
            found = list(inspect.signature(self.build, eval_str=True).parameters.values())
        elif callable(self._parameters):
            found = list(self._parameters())
        else:
            found = list(self._parameters)
        return [sections.in_section(p, self.section) for p in found]


def with_groups(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with each :class:`Group` parameter replaced by the group's options
    (the signature Typer reads), called with what each group builds from them.

    A decorator of the commands (so that calling one from Python takes the options
    too); :func:`add_command` applies it as well (expanding twice changes nothing).
    """
    command = getattr(command, "__grouped__", command)  # expanded again from the original
    signature = inspect.signature(command, eval_str=True)
    groups = {p.name: p.default for p in signature.parameters.values()
              if isinstance(p.default, Group)}
    if not groups:
        return command
    options = {name: group.parameters for name, group in groups.items()}
    params = [q for p in signature.parameters.values()
              for q in (options[p.name] if p.name in groups else [p])]
    names = [q.name for q in params]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:  # a programming error, caught by the CLI tests
        raise TypeError(f"{command.__name__}: options declared twice: {', '.join(clash)}")

    expanded = signature.replace(parameters=params)

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        bound = expanded.bind(*args, **kwargs)  # a direct call (tests) as Typer's
        bound.apply_defaults()
        values = dict(bound.arguments)
        for name, group in groups.items():
            values[name] = group.build(**{q.name: values.pop(q.name)
                                          for q in options[name]})
        return command(**values)

    run.__signature__ = expanded  # type: ignore[attr-defined]
    run.__grouped__ = command  # type: ignore[attr-defined]
    run.__annotations__ = {q.name: q.annotation for q in params}
    return run


def ruled(annotation: Any, name: str, help: str, default: Any) -> inspect.Parameter:
    """An option whose range is ``validate.RULES[name]`` (:func:`rule`), as a keyword
    parameter of a :class:`Group`: one parametrised declaration instead of one
    ``Annotated[..., typer.Option(help=..., callback=rule(name))]`` per option."""
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                             annotation=Annotated[annotation, typer.Option(
                                 help=help, callback=rule(name))])


@dataclass(frozen=True)
class Reporting:
    """``--json``, ``--quiet`` and ``--strict``, and the end every command shares."""

    json_path: Path | None = None
    quiet: bool = False
    strict: bool = False

    def finish(self, result: Any, tables: Callable[[Any], Any] | None = None) -> None:
        """The result's warnings (with ``--strict`` an error, before anything is
        written), its ``--json`` report, then its ``tables(result)`` unless ``--quiet``."""
        note(getattr(result, "notes", ()), quiet=self.quiet)
        warn(getattr(result, "warnings", ()), strict=self.strict)
        write_report(self.json_path, result)
        if tables is not None and not self.quiet:
            show(tables(result))


def _reporting(json_path: JsonOpt = None, quiet: QuietOpt = False,
               strict: StrictOpt = False) -> Reporting:
    return Reporting(json_path, quiet, strict)


#: ``--json``, ``--quiet``, ``--strict``: ``out: Reporting = REPORTING`` in a command.
REPORTING = Group(_reporting, section=sections.OUTPUTS)


def add_command(app: typer.Typer, name: str, command: Callable[..., Any],
                module_doc: str | None) -> None:
    """Register ``command`` as ``name`` on ``app`` (the one way every command is
    added): its :class:`Group` options expanded, its help laid out by
    :mod:`geoeval.cli.help` with the *Examples* of ``module_doc``, and ``-h`` as
    ``--help``."""
    from geoeval.cli.help import HelpCommand

    prefix = " ".join(p for p in ("geoeval", _group_name(app), name) if p)
    app.command(name, cls=HelpCommand, context_settings=CONTEXT,
                epilog=sections.examples(module_doc, prefix))(with_groups(command))


def command_group(name: str, help: str, modules: Iterable[str], **settings: Any) -> typer.Typer:
    """A Typer app (the main one or a group such as ``boxes``) whose commands are
    added by each module of ``modules``' ``register(app)``."""
    from geoeval.cli.help import HelpGroup

    app = typer.Typer(name=name, help=help, no_args_is_help=True, context_settings=CONTEXT,
                      cls=HelpGroup, rich_markup_mode=None, **settings)
    for module in modules:
        importlib.import_module(module).register(app)
    return app


def _group_name(app: typer.Typer) -> str:
    return "" if app.info.name in (None, "geoeval") else str(app.info.name)


#: Every command and group: ``-h`` as ``--help``, help laid out for 80 columns at most.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 80}
JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", help="Processes for the Mallows score (default: every core).",
    callback=COUNT, rich_help_panel=sections.ENGINE)]
EngineOpt = Annotated[EngineChoice, typer.Option(
    help="Run the overlap and the Mallows score here (local) or on a Dask cluster (dask): "
         "a local one of --jobs worker processes, or the one at --scheduler.",
    rich_help_panel=sections.ENGINE)]
SchedulerOpt = Annotated[str | None, typer.Option(
    help="With --engine dask: address of a running Dask scheduler, e.g. tcp://host:8786.",
    rich_help_panel=sections.ENGINE)]

# strata and bootstrap (geoeval.scoring.strata, geoeval.scoring.bootstrap)
SizeBinsOpt = Annotated[str | None, typer.Option(
    help="Also score by object size: 'coco' (32², 96² pixels) or increasing area edges in "
         "square CRS units, e.g. 100,900; an area on an edge goes to the upper bin.")]
ZonesOpt = Annotated[Path | None, typer.Option(
    help="Also score by zone: polygon layer; each object goes to the zone holding its "
         "representative point, or to 'outside'.")]
ZoneFieldOpt = Annotated[str | None, typer.Option(
    help="Field naming the zones (default the feature number).")]
BootstrapOpt = Annotated[int | None, typer.Option(
    help="Spatial block bootstrap replicates: confidence intervals for every measure.",
    callback=COUNT)]
ConfidenceOpt = Annotated[float, typer.Option(
    help="Coverage of the bootstrap intervals, 0 < c < 1.", callback=ALPHA)]
BootSeedOpt = Annotated[int, typer.Option(
    "--seed", help="Seed of the bootstrap draws (same seed, same intervals).", callback=SEED,
    rich_help_panel=sections.BOOTSTRAP)]
BlockSizeOpt = Annotated[float | None, typer.Option(
    help="Bootstrap block side in CRS units (default: a tenth of the reference bounds).",
    callback=POSITIVE)]


def progress_jsonl(text: str) -> None:
    """One machine-readable progress line on stderr (``GEOEVAL_PROGRESS=jsonl``):
    ``{"progress": TEXT, "step": STEP, "done": N, "total": M}``; ``step`` is the text
    before the first colon, ``done``/``total`` the first ``N/M`` count in the text
    (null when there is none). Read by the QGIS plugin (docs/qgis.md)."""
    import json

    done, total = _count(text)
    line = {"progress": text, "step": text.split(":")[0], "done": done, "total": total}
    print(json.dumps(line), file=sys.stderr, flush=True)


_COUNT = r"(\d[\d,]*)/(\d[\d,]*)"


def _count(text: str) -> tuple[int | None, int | None]:
    """The first ``N/M`` count of a progress text (``None, None`` when there is none)."""
    import re

    count = re.search(_COUNT, text)
    return ((int(count[1].replace(",", "")), int(count[2].replace(",", ""))) if count
            else (None, None))


def _CountBar() -> Any:  # noqa: N802 - a rich column, made when first needed
    """A rich bar column drawn only for a step with a count (no bar otherwise)."""
    from rich.progress import BarColumn
    from rich.text import Text

    class CountBar(BarColumn):
        def render(self, task: Any) -> Any:
            return super().render(task) if task.total is not None else Text("")

    return CountBar(bar_width=30)


class Progress:
    """Step texts on stderr: a live status line on a terminal (with a bar of the
    text's first ``N/M`` count when it has one, e.g. the Dask engine's ``scoring on
    the cluster: 37/120, about 40 s left (matching 12/48 partitions)``); otherwise (a
    log, a pipe) plain lines once the run has lasted ``delay`` seconds (a quick run, or an
    error, prints none; a step reported before then is printed when it is
    reached), then a new step at once, the same step at most every ``every``
    seconds, and, while a step runs without news, a line at least every
    ``heartbeat`` seconds saying how long it has run. Silent when ``quiet``. With
    the environment variable ``GEOEVAL_PROGRESS=jsonl`` every step is one JSON
    line instead (:func:`progress_jsonl`), even when ``quiet``."""

    def __init__(self, quiet: bool, first: str = "reading", every: float = 5.0,
                 delay: float = 3.0, heartbeat: float = 10.0, console: Any = None) -> None:
        import threading
        import time

        self.console = console if console is not None else terminal(stderr=True)
        self.quiet, self.every, self.first, self.delay = quiet, every, first, delay
        self.heartbeat = heartbeat
        self._start = time.monotonic()
        self.jsonl = os.environ.get("GEOEVAL_PROGRESS", "").lower() == "jsonl"
        self.live = not quiet and not self.jsonl and self.console.is_terminal
        self._status: Any = None
        self._last_step, self._last_time = "", 0.0
        self._text, self._since, self._printed = "", self._start, 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Any = None

    def __enter__(self) -> Progress:
        if self.live:
            from rich.progress import Progress as Bars
            from rich.progress import SpinnerColumn, TextColumn

            self._status = Bars(SpinnerColumn("dots"),
                                TextColumn("{task.description}", markup=False),
                                _CountBar(), console=self.console, transient=True)
            self._status.__enter__()
            self._task = self._status.add_task(self.first, total=None)
        else:
            self(self.first)
            if not self.quiet and not self.jsonl:
                import threading

                self._thread = threading.Thread(target=self._beat, daemon=True,
                                                name="geoeval-progress")
                self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._status is not None:
            self._status.__exit__(*exc)

    def _print(self, text: str, now: float) -> None:
        print(f"geoeval: {text}", file=sys.stderr, flush=True)
        self._printed = now

    def _beat(self) -> None:
        """The pending step once ``delay`` has passed, then a line every
        ``heartbeat`` seconds while no new one is printed."""
        import time

        while not self._stop.wait(0.25):
            with self._lock:
                now = time.monotonic()
                if now - self._start < self.delay or not self._text:
                    continue
                if self._printed < self._since:  # reported before the delay
                    self._print(self._text, now)
                    self._last_step, self._last_time = self._text.split(":")[0], now
                elif now - self._printed >= self.heartbeat:
                    self._print(f"{self._text} (still running, {now - self._since:.0f} s)",
                                now)

    def __call__(self, text: str) -> None:
        import time

        if self.jsonl:
            progress_jsonl(text)
            return
        if self.quiet:
            return
        if self._status is not None:
            done, total = _count(text)
            if total is None:  # no count: no bar (rich keeps a total once set)
                self._status.remove_task(self._task)
                self._task = self._status.add_task(text, total=None)
            else:
                self._status.update(self._task, description=text, completed=done,
                                    total=total)
            return
        with self._lock:
            step, now = text.split(":")[0], time.monotonic()
            if step != self._text.split(":")[0]:
                self._since = now
            self._text = text
            if now - self._start < self.delay:
                return
            if step != self._last_step or now - self._last_time >= self.every:
                self._print(text, now)
                self._last_step, self._last_time = step, now


def _readers(band: BandOpt = DEFAULTS["band"], background: BackgroundOpt = DEFAULTS["background"],
             layer: LayerOpt = None, ref_layer: RefLayerOpt = None, sub_layer: SubLayerOpt = None,
             id_field: IdFieldOpt = DEFAULTS["id_field"], ref_id_field: RefIdFieldOpt = None,
             sub_id_field: SubIdFieldOpt = None, crs: CrsOpt = DEFAULTS["crs"],
             ref_crs: RefCrsOpt = None, sub_crs: SubCrsOpt = None,
             eval_crs: EvalCrsOpt = DEFAULTS["evaluation_crs"]) -> dict[str, Any]:
    """The shared reader options as :func:`geoeval.scoring.score` keywords (the
    ``--ref-*``/``--sub-*`` ones as each side's own options)."""

    def side(**given: Any) -> dict[str, Any] | None:
        own = {k: v for k, v in given.items() if v is not None}
        return own or None

    return {"band": band, "background": background, "layer": layer, "id_field": id_field,
            "crs": crs, "evaluation_crs": eval_crs,
            "reference_options": side(layer=ref_layer, id_field=ref_id_field, crs=ref_crs),
            "submission_options": side(layer=sub_layer, id_field=sub_id_field, crs=sub_crs)}


#: The reader options of ``score`` and ``rank`` (``readers: dict = READERS``).
READERS = Group(_readers, section=sections.INPUTS)


def matcher_parameters() -> list[inspect.Parameter]:
    """Every registered matcher parameter (:func:`geoeval.matching.registry.parameters`)
    as a command-line option: ``--`` and its keyword, its help and range, its default,
    its rule as the callback. A matcher registered before the commands are built has
    its options with no other edit."""
    from geoeval.matching import registry

    out = []
    for p in registry.parameters():
        kind: Any = float if p.default is not None else float | None
        out.append(inspect.Parameter(
            p.keyword, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=p.default,
            annotation=Annotated[kind, typer.Option(
                p.option, help=f"{p.help}, {p.range}.",
                callback=checked(lambda name, value, p=p: p.check(value, name)))]))
    return out


#: The matchers' parameters, as :func:`geoeval.scoring.score` keywords (from the registry,
#: when a command is built).
MATCHER_OPTIONS = Group(lambda **parameters: parameters, matcher_parameters,
                        section=sections.MATCHERS)


def _strata(size_bins: SizeBinsOpt = DEFAULTS["size_bins"], zones: ZonesOpt = DEFAULTS["zones"],
            zone_field: ZoneFieldOpt = DEFAULTS["zone_field"]) -> dict[str, Any]:
    return {"size_bins": size_bins, "zones": zones, "zone_field": zone_field}


#: ``--size-bins``, ``--zones``, ``--zone-field`` as :func:`geoeval.scoring.score` keywords.
STRATA = Group(_strata, section=sections.STRATA)


def _bootstrap(bootstrap: BootstrapOpt = DEFAULTS["bootstrap"],
               confidence: ConfidenceOpt = DEFAULTS["confidence"],
               block_size: BlockSizeOpt = DEFAULTS["block_size"]) -> dict[str, Any]:
    return {"bootstrap": bootstrap, "confidence": confidence, "block_size": block_size}


#: The spatial block bootstrap's options (``--seed`` is each command's own: ``rank``'s
#: seeds the Markov chain), as :func:`geoeval.scoring.score` / :func:`geoeval.rank` keywords.
BOOTSTRAP = Group(_bootstrap, section=sections.BOOTSTRAP)


# Output options of every command: parameter name -> (flag, "file" | "folder", suffixes).
# Every other path-valued parameter of a command is one of its inputs.
OUTPUTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "json_path": ("--json", "file", ()),
    "markdown_path": ("--markdown", "file", ()),
    "gpkg": ("--gpkg", "file", (".gpkg",)),
    "figure": ("--figure", "file", (".png", ".svg")),
    "breakdown_figure": ("--breakdown-figure", "file", (".png", ".svg")),
    "html": ("--html", "file", (".html", ".htm")),
    "csv_dir": ("--csv-dir", "folder", ()),
    "parquet_dir": ("--parquet-dir", "folder", ()),
    "scene_dir": ("--scene-dir", "folder", ()),
    "figure_dir": ("--figure-dir", "folder", ()),
    "objects": ("--objects", "folder", ()),
}


def _stdout_usage(bound: dict[str, Any]) -> None:
    """``-`` (standard output) given to an output that cannot take it, or to two
    outputs: a usage error (geoeval.outputs.stdout_refusal is the rule)."""
    import importlib

    from geoeval.outputs import STDOUT, stdout_refusal

    # the click typer uses (its own copy, typer._click, since typer 0.24)
    click = importlib.import_module(typer.BadParameter.__module__)  # click.exceptions
    package = typer.BadParameter.__module__.rpartition(".")[0]
    ctx = importlib.import_module(f"{package}.globals").get_current_context(silent=True)
    taken = []
    for name, (flag, kind, _) in OUTPUTS.items():
        value = bound.get(name)
        if value is None or os.fspath(value) != STDOUT:
            continue
        refusal = stdout_refusal(flag, kind)
        if refusal is not None:
            raise click.BadParameter(refusal, ctx=ctx, param_hint=f"'{flag}'")
        taken.append(flag)
    if len(taken) > 1:
        raise click.UsageError(f"{' and '.join(taken)} both name '-' (standard output); "
                               "give all but one of them a file", ctx=ctx)


def _paths(value: Any) -> list[Path]:
    if isinstance(value, Path):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, Path)]
    return []


def guarded(command: Callable[..., Any]) -> Callable[..., Any]:
    """Run a command inside one output run (:func:`geoeval.outputs.output_run`).

    Before the command starts, every output option it was given is checked (its
    folder exists and is writable, it is not one of the command's inputs, no two
    outputs share a path); every file it writes is renamed into place only when
    the whole command has succeeded, and a line on stderr says what was written.
    """
    signature = inspect.signature(command)

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        from geoeval.outputs import output_run
        from geoeval.parallel import collector_paused

        bound = signature.bind_partial(*args, **kwargs).arguments
        inputs = [p for name, value in bound.items() if name not in OUTPUTS
                  for p in _paths(value)]
        _stdout_usage(bound)
        with collector_paused(), output_run(inputs) as outputs:
            for name, (flag, kind, suffixes) in OUTPUTS.items():
                value = bound.get(name)
                if value is None:
                    continue
                if kind == "file":
                    outputs.file(value, flag, suffixes=suffixes)
                else:
                    outputs.folder(value, flag)
            result = command(*args, **kwargs)
        written = outputs.describe()
        if written and not bound.get("quiet"):
            print("wrote " + written, file=sys.stderr)
        return result

    return run


def guard_all(app: typer.Typer) -> None:
    """Apply :func:`guarded` to every command of ``app`` and of its command groups."""
    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = guarded(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            guard_all(group.typer_instance)
