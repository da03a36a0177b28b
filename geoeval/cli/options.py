"""The options the commands share, each declared once (rasterio's ``rio/options.py``
style): their types, help, defaults (from the library's one declaration,
:func:`geoeval.scoring.options.score_options`, and the matcher registry) and
callbacks (:mod:`geoeval.cli.callbacks`); the groups of options several commands take
as one parameter (``READERS``, ``MATCHER_OPTIONS``, ``STRATA``, ``BOOTSTRAP``,
``REPORTING``; :mod:`geoeval.cli.groups`).
"""

from __future__ import annotations

import inspect
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from geoeval.cli import help as sections
from geoeval.cli.callbacks import ALPHA, COUNT, POSITIVE, SEED, checked, measures_choice
from geoeval.cli.groups import Group
from geoeval.cli.printers import Reporting

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


# geometry measures (geoeval.measures.geometry)
def _measure_names() -> str:
    from geoeval.measures.geometry import measure_names

    return ", ".join(n.replace("_", "-") for n in measure_names())


MeasuresOpt = Annotated[str | None, typer.Option(
    "--measures", help=f"Geometry measures, comma-separated: {_measure_names()} or all (see "
                       "geometry-measures.md in docs).", callback=measures_choice,
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


# --- inputs where they live (object storage, the web) ---------------------------------
AnonOpt = Annotated[bool, typer.Option(
    "--anon", help="Read public buckets without credentials (AWS_NO_SIGN_REQUEST=YES).",
    rich_help_panel=sections.INPUTS)]


def input_arg(text: str | Path) -> Any:
    """An input argument as given on the command line (``parser=`` of its
    ``typer.Argument``): a URL (``s3://…``, ``https://…``, ``/vsis3/…``) stays text (a
    :class:`~pathlib.Path` would fold its ``//``), anything else is a
    :class:`~pathlib.Path` (an input the outputs are checked against,
    :mod:`geoeval.cli.guard`)."""
    from geoeval.io.locations import is_url

    return text if is_url(str(text)) else Path(text)


QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No table, no progress.")]
StrictOpt = Annotated[bool, typer.Option(
    "--strict", help="Warnings are errors (exit 2, nothing written).")]


def _reporting(json_path: JsonOpt = None, quiet: QuietOpt = False,
               strict: StrictOpt = False) -> Reporting:
    return Reporting(json_path, quiet, strict)


#: ``--json``, ``--quiet``, ``--strict``: ``out: Reporting = REPORTING`` in a command.
REPORTING = Group(_reporting, section=sections.OUTPUTS)


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


# a region read alone (geoeval.io.region)
BboxOpt = Annotated[str | None, typer.Option(
    "--bbox", metavar="X0,Y0,X1,Y1",
    help="Score only the objects whose representative point is in this box (in "
         "--bbox-crs), reading only what it needs.")]
BboxCrsOpt = Annotated[str | None, typer.Option(
    "--bbox-crs", metavar="CRS", help="CRS of --bbox (default the reference's), e.g. "
                                      "EPSG:4326.")]
RegionOpt = Annotated[str | None, typer.Option(  # text: a URL is not folded as a Path
    "--region", metavar="FILE",
    help="As --bbox, with this layer's polygons (in their own CRS).")]


def _region(bbox: BboxOpt = None, bbox_crs: BboxCrsOpt = None,
            region: RegionOpt = None) -> dict[str, Any]:
    """``--bbox``/``--bbox-crs``/``--region`` as the ``region``/``region_crs`` keywords
    (:func:`geoeval.io.region.region_of`)."""
    from geoeval.errors import InputError
    from geoeval.io.region import parse_bbox

    if bbox is not None and region is not None:
        raise InputError("give --bbox or --region, not both")
    if bbox_crs is not None and bbox is None:
        raise InputError("--bbox-crs applies to --bbox (a --region file is in its own CRS)")
    given = parse_bbox(bbox) if bbox is not None else region
    return {"region": given, "region_crs": bbox_crs} if given is not None else {}


#: ``--bbox``, ``--bbox-crs``, ``--region`` as :func:`geoeval.score` keywords.
REGION = Group(_region, section=sections.INPUTS)


def _bootstrap(bootstrap: BootstrapOpt = DEFAULTS["bootstrap"],
               confidence: ConfidenceOpt = DEFAULTS["confidence"],
               block_size: BlockSizeOpt = DEFAULTS["block_size"]) -> dict[str, Any]:
    return {"bootstrap": bootstrap, "confidence": confidence, "block_size": block_size}


#: The spatial block bootstrap's options (``--seed`` is each command's own: ``rank``'s
#: seeds the Markov chain), as :func:`geoeval.scoring.score` / :func:`geoeval.rank` keywords.
BOOTSTRAP = Group(_bootstrap, section=sections.BOOTSTRAP)
