"""Where a score runs: one function chooses the route from the inputs and the options.

:func:`dispatch` is the one place that decides, with a typed reason
(:class:`Why`), between

* :attr:`Route.LOCAL`: this process (``engine="local"``);
* :attr:`Route.PARTITIONS`: two vector layers read, matched and written by
  partitions on a Dask cluster (:mod:`geoeval.engine.layers`);
* :attr:`Route.BLOCKS`: two label rasters on one grid scanned and matched by blocks
  on a Dask cluster (:mod:`geoeval.engine.mosaic`);
* :attr:`Route.CLIENT`: the client reads both inputs, the cluster computes the
  overlap and the Mallows score (:meth:`geoeval.engine.Engine.overlap`).

Every route gives the same report (``docs/report.md``); a Dask run that has to go
through the client says why in a note when the inputs could otherwise have gone by
parts (:attr:`Why.noted`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from geoeval.matching import registry
from geoeval.scoring.options import RASTER, VECTOR, ScoreOptions, Side


class Route(str, Enum):
    """Where the work of a score runs."""

    LOCAL = "local"
    PARTITIONS = "dask by partitions"
    BLOCKS = "dask by raster blocks"
    CLIENT = "dask in the client"


class Reason(Enum):
    """Why a Dask run goes through the client: its words (``{}`` filled by
    :attr:`Why.detail`) and whether the user is told (inputs that could never go by
    parts are not worth a note)."""

    OUTPUTS = ("an output needs every object in this process", False)
    NOT_FILES = ("the inputs are not files", False)
    NOT_A_PAIR = ("the inputs are not two vector layers nor two label rasters", False)
    FOLDER = ("an input is a folder", False)
    MATCHER = ("matcher {} is not computed by partitions", True)
    OPTION = ("{}= is not computed by {} yet", True)
    ONE_CRS = ("one layer has no CRS", True)
    CRS_DIFFER = ("the layers are in different CRSs (reprojection)", True)
    NEEDS_EVALUATION_CRS = ("the {}' CRS needs an evaluation CRS (reprojection)", True)
    SIDE_OPTION = ("a {} given for one side is not read by {} yet", True)
    GRIDS_DIFFER = ("the rasters are on different grids (resampling)", True)
    FORMAT = ("{} files are not read {} yet", True)
    RASTER_DATASET = ("the objects dataset of label rasters is not written by blocks yet",
                      True)

    @property
    def words(self) -> str:
        return self.value[0]

    @property
    def noted(self) -> bool:
        return self.value[1]


@dataclass(frozen=True)
class Why:
    """A :class:`Reason` with what it names."""

    reason: Reason
    detail: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.reason.words.format(*self.detail)

    @property
    def noted(self) -> bool:
        return self.reason.noted


@dataclass(frozen=True)
class Choice:
    """The route chosen, why not by parts (:attr:`Route.CLIENT`), and what the route
    needs (the blocks' :class:`~geoeval.scoring.by_blocks.Plan`)."""

    route: Route
    why: Why | None = None
    plan: Any = None
    kind: str | None = None

    @property
    def note(self) -> str | None:
        """What the user is told about the route (``None``: nothing worth saying)."""
        if self.route is not Route.CLIENT or self.why is None or not self.why.noted:
            return None
        what = "rasters" if self.kind == RASTER else "layers"
        return (f"engine 'dask': {self.why.text}, so both {what} are read and matched in "
                "the client (docs/scale.md)")


def dispatch(reference: Side, submission: Side, options: ScoreOptions, *, dask: bool,
             objects: bool = False) -> Choice:
    """The route of a score of ``reference`` against ``submission`` (their kinds decided
    once, :func:`geoeval.scoring.options.side`) with ``options``, on a Dask cluster
    (``dask``) or not; ``objects``: an objects dataset is to be written. Only the
    files' headers and metadata are read."""
    if not dask:
        return Choice(Route.LOCAL)
    if not options.by_parts:
        return _client(Reason.OUTPUTS)
    if not (reference.is_file and submission.is_file):
        return _client(Reason.NOT_FILES)
    kinds = {reference.kind, submission.kind}
    if kinds == {RASTER}:
        return _blocks(reference, submission, options, objects)
    if kinds == {VECTOR}:
        return _partitions(reference, submission, options)
    return _client(Reason.NOT_A_PAIR)


def _client(reason: Reason, *detail: str, kind: str | None = None) -> Choice:
    return Choice(Route.CLIENT, Why(reason, detail), kind=kind)


def _partitions(reference: Side, submission: Side, options: ScoreOptions) -> Choice:
    """Two vector layers by partitions, unless an input or option needs the client."""
    from geoeval.io.inputs import FOLDER, PATTERN

    ref_input, sub_input = reference.input, submission.input
    for inp in (ref_input, sub_input):  # the facts resolved once (geoeval.io.inputs)
        if inp.shape != PATTERN and not inp.format.pieces:
            return _client(Reason.FORMAT, inp.format.name, "by pieces", kind=VECTOR)
    if FOLDER in (ref_input.shape, sub_input.shape):
        return _client(Reason.FOLDER)
    bad = [m for m in options.matchers if not registry.get(m).partitionable]
    if bad:
        return _client(Reason.MATCHER, bad[0], kind=VECTOR)
    for name, value in (("geometry_measures", options.geometry),
                        ("evaluation_crs", options.evaluation_crs),
                        ("crs", options.reference.readers.crs)):
        if value is not None:
            return _client(Reason.OPTION, name, "partitions", kind=VECTOR)
    ro, so = reference.reader, submission.reader
    why = _crs_reason(_layer_crs(ref_input, ro), _layer_crs(sub_input, so))
    if why is not None:
        return _client(*why, kind=VECTOR)
    shared = options.reference.readers.class_field
    if any(o.get("crs") is not None for o in (ro, so)) or ro.get("class_field") != shared \
            or so.get("class_field") not in (None, shared):
        return _client(Reason.SIDE_OPTION, "CRS or class field", "partitions", kind=VECTOR)
    return Choice(Route.PARTITIONS)


def _layer_crs(inp: Any, reader: dict[str, Any]) -> Any:
    """A layer's CRS from its metadata, read once per input: from the plan of its pieces
    that the Dask engine then reads (:func:`geoeval.io.pieces.planned`); a pattern of
    tiles from its first tile (its plan is made on the workers)."""
    from geoeval.errors import FieldError
    from geoeval.io.inputs import PATTERN
    from geoeval.io.pieces import layer_crs, planned

    layer = reader.get("layer")
    if inp.shape != PATTERN:
        try:
            return planned(inp, layer=layer, id_field=reader.get("id_field"))[1]
        except FieldError:  # the planning says it, naming the side
            pass
    return inp.memo(("crs", layer), lambda: layer_crs(inp, layer))


def _crs_reason(ref_crs: Any, sub_crs: Any) -> tuple[Any, ...] | None:
    """Why the layers' CRSs need the client (reprojection), or ``None``."""
    from geoeval.io.evaluation_crs import same_crs, unsuitable

    if (ref_crs is None) != (sub_crs is None):
        return (Reason.ONE_CRS,)
    if ref_crs is None:
        return None
    if not same_crs(ref_crs, sub_crs):
        return (Reason.CRS_DIFFER,)
    if unsuitable(ref_crs) is not None:
        return Reason.NEEDS_EVALUATION_CRS, "layers"
    return None


def _blocks(reference: Side, submission: Side, options: ScoreOptions,
            objects: bool) -> Choice:
    """Two label rasters on one grid by blocks, unless an input or option needs the
    client."""
    from geoeval.grid import same_crs
    from geoeval.io.evaluation_crs import unsuitable
    from geoeval.io.raster import open_source
    from geoeval.scoring.by_blocks import Plan

    for s in (reference, submission):
        fmt = s.input.format  # resolved once (geoeval.io.inputs)
        if fmt.reader() is not None:  # a registered format's own reader: not GDAL's blocks
            return _client(Reason.FORMAT, fmt.name, "by blocks", kind=RASTER)
    keep = ("band", "background")
    ro, so = reference.reader, submission.reader
    rs, rt, rc = open_source(reference.source, **{k: ro[k] for k in keep if k in ro})
    ss, st, sc = open_source(submission.source, **{k: so[k] for k in keep if k in so})
    if rs.shape != ss.shape or tuple(rt) != tuple(st) or not same_crs(rc, sc):
        return _client(Reason.GRIDS_DIFFER, kind=RASTER)
    strata = options.strata
    for name, value in (  # options that need every object in one process
            ("class_field", options.class_field),
            ("size_bins", None if strata is None else strata.size_bins),
            ("zones", None if strata is None else strata.zones),
            ("bootstrap", options.bootstrap), ("breakdown", options.breakdown or None),
            ("geometry_measures", options.geometry),
            ("evaluation_crs", options.evaluation_crs),
            ("crs", options.reference.readers.crs)):
        if value is not None:
            return _client(Reason.OPTION, name, "blocks", kind=RASTER)
    if any(o.get(k) is not None for o in (ro, so) for k in ("crs", "max_memory")):
        return _client(Reason.SIDE_OPTION, "CRS or memory limit", "blocks", kind=RASTER)
    if rc is not None and unsuitable(rc) is not None:
        return _client(Reason.NEEDS_EVALUATION_CRS, "rasters", kind=RASTER)
    if objects:
        return _client(Reason.RASTER_DATASET, kind=RASTER)
    return Choice(Route.BLOCKS, plan=Plan((rs, ss), rt, rc))
