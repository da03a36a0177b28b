"""A score's options: one immutable value, built and checked once at the edge.

:func:`score_options` is the one declaration of the keywords of
:func:`geoeval.score` (their defaults and their checks); it returns a frozen
:class:`ScoreOptions` that every later step reads whole: the dispatch
(:mod:`geoeval.scoring.dispatch`), the readers (each side's
:class:`ReaderOptions`), the matchers (:meth:`ScoreOptions.arguments`), the
measures, strata, bootstrap and engines. No layer regroups it or rebuilds it
from its own arguments. :func:`side` decides once what each input is (its kind) and which
reader options apply to it.

A matcher's own parameters are registry entries
(:func:`geoeval.matching.registry.parameters`): any registered parameter keyword is
accepted, checked by its rule, and reported in the registry's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from geoeval import validate
from geoeval.errors import FieldError, InputError
from geoeval.matching import MATCHERS, registry
from geoeval.objects import ObjectSet

#: Kinds of input a side can be (decided once, :func:`side`).
OBJECTS, RASTER, VECTOR = "objects", "raster", "vector"


@dataclass(frozen=True)
class ReaderOptions:
    """How to read one input (:func:`geoeval.io.read`'s keywords).

    ``band`` and ``background`` apply to rasters, ``layer``, ``id_field`` and
    ``class_field`` to vector layers, ``crs`` (assumed where an input has none) to
    both; ``input_type`` forces the kind; ``max_memory`` bounds a raster read whole.
    """

    input_type: str | None = None
    band: int = 1
    background: int = 0
    layer: str | int | None = None
    id_field: str | None = None
    class_field: str | None = None
    crs: Any = None
    max_memory: int | None = None

    def keywords(self, kind: str, given: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The reader's keywords for an input of ``kind``: the options that apply to it,
        and those given for this side alone (``given``) whatever they are."""
        if kind == OBJECTS:
            return {}
        applies = ({"band", "background", "crs", "input_type", "max_memory"}
                   if kind == RASTER else
                   {"layer", "id_field", "class_field", "crs", "input_type"})
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in given or (f.name in applies and value is not None):
                out[f.name] = value
        if kind == RASTER:  # a raster's band and background are always passed
            out.setdefault("band", self.band)
            out.setdefault("background", self.background)
        return out


@dataclass(frozen=True)
class SideOptions:
    """One side's reader options: the shared ones with this side's own on top
    (``given``: the names set for this side alone)."""

    readers: ReaderOptions = field(default_factory=ReaderOptions)
    given: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Strata:
    """``size_bins`` (``"coco"`` or increasing area edges), ``zones`` (a layer or a
    GeoDataFrame) and ``zone_field`` (:mod:`geoeval.scoring.strata`)."""

    size_bins: tuple[float, ...] | str | None = None
    zones: Any = None
    zone_field: str | None = None


@dataclass(frozen=True)
class Bootstrap:
    """The spatial block bootstrap (:mod:`geoeval.scoring.bootstrap`)."""

    n: int
    confidence: float = 0.95
    seed: int = 0
    block_size: float | None = None


@dataclass(frozen=True)
class Geometry:
    """The geometry measures asked for (:mod:`geoeval.measures.geometry`)."""

    measures: tuple[str, ...]
    boundary_width: float | None = None
    boundary_band: str = "distance"


@dataclass(frozen=True)
class EngineOptions:
    """Where the work runs (:mod:`geoeval.engine`): ``local`` or ``dask`` (at
    ``scheduler``, or a local cluster of ``n_jobs`` workers of ``memory_limit``)."""

    name: str = "local"
    scheduler: str | None = None
    n_jobs: int | None = None
    memory_limit: str | None = None


@dataclass(frozen=True)
class ScoreOptions:
    """Everything a score was asked for, checked (:func:`score_options` builds it).

    Attributes
    ----------
    matchers : tuple of str
        Registered matcher names, in the order asked (duplicates removed).
    parameters : tuple of (str, value)
        The registered matcher parameters given (keyword, checked value); the others
        take their defaults (:meth:`parameter_values`).
    mallows : bool
        The Mallows score for every matcher's instances (MOM always has it).
    resolution, approximate : optional
        The Mallows score's grid step for two vector layers, and its pooling.
    reference, submission : SideOptions
        Each side's reader options.
    evaluation_crs : CRS-like, optional
    breakdown : bool
    strata : Strata or None
    bootstrap : Bootstrap or None
    geometry : Geometry or None
    engine : EngineOptions
    per_class : bool
        Every class also scored on its own (``class_field``, or classes in memory).
    lists : bool
        The report lists every object (else only with an objects dataset, which
        names them), up to :data:`geoeval.matching.lists.LIST_LIMIT` objects; past it
        the report says how many it leaves out and where they are.
    by_parts : bool
        A Dask run may score by partitions or blocks (``False`` when an output needs
        every object in this process: GeoPackage, CSV, figures, HTML).
    strict : bool
        Warnings are an error (:class:`~geoeval.errors.StrictError`), raised as soon
        as they are known: those of reading, the evaluation CRS and empty sides
        before the matching.
    anon : bool
        Inputs in object storage are read without credentials (public buckets).
    attributes : bool
        The vector inputs' attribute columns are read (every field; the columns of a
        GeoDataFrame kept) for the per-object outputs that carry them as
        ``ref_<name>`` / ``sub_<name>``. Not a keyword of :func:`score_options`:
        :func:`geoeval.score` sets it (:meth:`but`) when it writes a GeoPackage,
        CSV tables, GeoParquet files or an objects dataset; otherwise only the id
        and class fields are read.
    region : geoeval.io.region.Region or None
        Only the objects of both sides whose representative point is in this region
        are read and scored (:mod:`geoeval.io.region`); its CRS is the reference's
        until the score resolves it (:func:`geoeval.io.region.resolved`).
    """

    matchers: tuple[str, ...] = MATCHERS
    parameters: tuple[tuple[str, Any], ...] = ()
    mallows: bool = False
    resolution: float | None = None
    approximate: bool | None = None
    reference: SideOptions = field(default_factory=SideOptions)
    submission: SideOptions = field(default_factory=SideOptions)
    evaluation_crs: Any = None
    breakdown: bool = False
    strata: Strata | None = None
    bootstrap: Bootstrap | None = None
    geometry: Geometry | None = None
    engine: EngineOptions = field(default_factory=EngineOptions)
    per_class: bool = False
    lists: bool = True
    by_parts: bool = True
    strict: bool = False
    attributes: bool = False
    region: Any = None
    anon: bool = False

    @property
    def n_jobs(self) -> int | None:
        return self.engine.n_jobs

    @property
    def class_field(self) -> str | None:
        """The reference's class field (``--class-field``): every class is also scored."""
        return self.reference.readers.class_field

    def parameter_values(self) -> dict[str, Any]:
        """Every registered matcher parameter: the value given, else its default."""
        values = {p.keyword: p.default for p in registry.parameters()}
        values.update(self.parameters)
        return values

    def arguments(self, matcher: str) -> dict[str, Any]:
        """Matcher ``matcher``'s keyword arguments (:meth:`Matcher.arguments`)."""
        return registry.get(matcher).arguments(self.parameter_values())

    def matcher_arguments(self) -> dict[str, dict[str, Any]]:
        """Each chosen matcher's keyword arguments."""
        return {name: self.arguments(name) for name in self.matchers}

    @property
    def mallows_matchers(self) -> tuple[str, ...]:
        """The matchers whose instances get the Mallows score: MOM always (it is its
        accuracy, Özdemir et al. 2010, eq. 13), every one with :attr:`mallows`."""
        return tuple(n for n in self.matchers
                     if self.mallows or registry.get(n).accuracy == registry.MALLOWS)

    def report_parameters(self, evaluation_crs: dict[str, Any] | None,
                          chosen_resolution: float | None = None) -> dict[str, Any]:
        """The report's ``parameters``: the matchers, the evaluation CRS, each matcher
        parameter in the registry's order, the Mallows settings when computed (with the
        grid step chosen from the data, ``chosen_resolution``, and its rule). Not the
        engine: where the work ran does not change the report. A region
        (:attr:`region`) is recorded as ``region``."""
        params: dict[str, Any] = {"matchers": list(self.matchers)}
        if evaluation_crs is not None:
            params["evaluation_crs"] = evaluation_crs
        if self.region is not None:
            params["region"] = self.region.record()
        used = {p.keyword for n in self.matchers for p in registry.get(n).parameters}
        values = self.parameter_values()
        for p in registry.parameters():  # the report lists them in registry order
            if p.keyword in used:
                params[p.keyword] = values[p.keyword]
        if self.mallows_matchers:
            params["mallows"] = {"resolution": self.resolution, "approximate": self.approximate}
            if chosen_resolution is not None:
                from geoeval.measures.rasterize import AUTO_RESOLUTION_RULE

                params["mallows"].update(resolution=chosen_resolution,
                                         resolution_rule=AUTO_RESOLUTION_RULE)
        return params

    @contextmanager
    def sides_named(self) -> Iterator[None]:
        """A field error of an input read inside names the option as it was given:
        that side's own (``reference_options``, ``--ref-id-field``) or the one for both
        (:meth:`geoeval.errors.FieldError.on`; the readers name the side)."""
        try:
            yield
        except FieldError as exc:
            if exc.side not in ("reference", "submission"):
                raise
            own = exc.keyword in getattr(self, exc.side).given
            raise exc.on(exc.side, own=own) from None

    def but(self, **changes: Any) -> ScoreOptions:
        """A copy with ``changes`` (fields of this class, already checked values)."""
        return replace(self, **changes)


def score_options(
    *,
    matchers: Sequence[str] | str = MATCHERS,
    matcher_options: Mapping[str, Any] | None = None,
    mallows: bool = False,
    resolution: float | None = None,
    approximate: bool | None = None,
    n_jobs: int | None = None,
    band: int = 1,
    background: int = 0,
    layer: str | int | None = None,
    id_field: str | None = None,
    class_field: str | None = None,
    crs: Any = None,
    evaluation_crs: Any = None,
    reference_options: Mapping[str, Any] | None = None,
    submission_options: Mapping[str, Any] | None = None,
    size_bins: Sequence[float] | str | None = None,
    zones: Any = None,
    zone_field: str | None = None,
    bootstrap: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    block_size: float | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    memory_limit: str | None = None,
    breakdown: bool = False,
    geometry_measures: Sequence[str] | str | None = None,
    boundary_width: float | None = None,
    boundary_band: str = "distance",
    per_class: bool = False,
    lists: bool = True,
    partitioned: bool = True,
    strict: bool = False,
    region: Any = None,
    region_crs: Any = None,
    anon: bool = False,
    **parameters: Any,
) -> ScoreOptions:
    """The options of a score, checked: :class:`InputError` naming the first bad one.

    Parameters
    ----------
    matchers : sequence of str
        Names of :mod:`geoeval.matching.registry` (default all registered at import:
        ``bgm``, ``hoover``, ``mom``, ``iou``).
    **parameters
        Registered matcher parameters by keyword (``hoover_threshold``,
        ``iou_threshold``, ``min_overlap``, and those of any matcher registered
        since: :func:`geoeval.matching.registry.parameters`), each checked by its
        rule; ``matcher_options`` is the same as a mapping.
    mallows : bool
        Also compute the Mallows score for the instances of the other matchers (MOM
        always gets it: it is MOM's accuracy).
    resolution : float, optional
        Grid step (CRS units) for the Mallows score when both inputs are vector
        layers (default chosen from the data, with a warning).
    approximate : bool, optional
        Mallows block pooling: ``None`` exact up to the announced size, then pooled
        and flagged; ``True`` pool large instances; ``False`` never.
    n_jobs : int, optional
        Processes for the Mallows score (default: every core); Dask workers of a local
        cluster.
    band, background, layer, id_field, class_field, crs
        Reader options applied to both inputs (each where it applies). ``crs`` is
        assumed for inputs without one. ``class_field``: a vector field holding each
        object's class; the reference must have it, the submission's is used when it
        has one; every class is then also scored on its own.
    evaluation_crs : CRS-like, optional
        CRS to compute areas and distances in (``docs/crs.md``).
    reference_options, submission_options : mapping, optional
        Per-side reader options overriding the shared ones.
    size_bins, zones, zone_field
        Strata (``docs/strata.md``).
    bootstrap, confidence, seed, block_size
        The spatial block bootstrap (``docs/confidence.md``).
    engine, scheduler, memory_limit
        Where the work runs (``docs/scale.md``).
    breakdown : bool
        The error breakdown (``docs/breakdown.md``).
    geometry_measures, boundary_width, boundary_band
        Geometry measures (``docs/geometry-measures.md``).
    per_class : bool
        Score every class on its own (objects read with their classes; implied by
        ``class_field``).
    lists : bool
        The report lists every object (``instances``, ``missed_ids``,
        ``false_alarm_ids``) up to :data:`geoeval.matching.lists.LIST_LIMIT` objects;
        past it each matcher's ``not_listed`` says how many and where they are
        (``docs/report.md``).
    partitioned : bool
        A Dask run may go by partitions or blocks.
    strict : bool
        Warnings are an error (:class:`~geoeval.errors.StrictError`, as ``--strict``),
        raised as soon as they are known: those of reading, the evaluation CRS and
        empty sides before the matching, the rest at the end.
    region : tuple, shapely geometry, GeoDataFrame, GeoSeries or path, optional
        Score only the objects of both sides whose representative point is in this
        region, reading only what it needs (``docs/region.md``):
        ``(xmin, ymin, xmax, ymax)`` or a shapely (Multi)Polygon in ``region_crs``,
        or polygons in their own CRS (a GeoDataFrame, a GeoSeries, a vector file).
    region_crs : CRS-like, optional
        The CRS of a box or shapely geometry given as ``region`` (default the
        reference's).
    anon : bool
        Read inputs in object storage without credentials (public buckets; as
        ``AWS_NO_SIGN_REQUEST=YES``).

    Returns
    -------
    ScoreOptions

    Examples
    --------
    >>> o = score_options(matchers=["iou", "hoover"], iou_threshold=0.7)
    >>> o.matchers, o.arguments("iou"), o.arguments("hoover")
    (('iou', 'hoover'), {'threshold': 0.7}, {'threshold': 0.6})
    >>> score_options(hoover_threshold=0.4)
    Traceback (most recent call last):
    ...
    geoeval.validate.BadValue: hoover_threshold must be in (0.5, 1], got 0.4
    """
    names = tuple(dict.fromkeys([matchers] if isinstance(matchers, str) else matchers))
    if not names:
        raise InputError(f"no matcher given (choose from {', '.join(registry.names())})")
    for name in names:
        registry.get(name)
    check_keywords(parameters)
    given = {**dict(matcher_options or {}), **parameters}
    checked = []
    for keyword, value in given.items():
        p = registry.parameter(keyword)  # InputError naming the known ones
        checked.append((keyword, p.check(value)))
    for name, value in (("resolution", resolution), ("n_jobs", n_jobs), ("band", band)):
        validate.check(name, value)
    from geoeval.engine import check_engine

    check_engine(engine, scheduler)
    shared = ReaderOptions(band=band, background=background, layer=layer, id_field=id_field,
                           class_field=class_field, crs=crs)
    sides = tuple(_side_options(shared, own, which) for own, which in (
        (reference_options, "reference_options"), (submission_options, "submission_options")))
    strata = None
    if size_bins is not None or zones is not None:
        strata = Strata(_size_bins(size_bins), zones, zone_field)
    boot = None
    if bootstrap is not None:
        from geoeval.scoring.bootstrap import check_bootstrap

        check_bootstrap(bootstrap, confidence, seed, block_size)
        boot = Bootstrap(int(bootstrap), float(confidence), int(seed), block_size)
    from geoeval.io.region import region_of

    area = region_of(region, region_crs)
    geometry = None
    if geometry_measures is not None or boundary_width is not None:
        from geoeval.measures.geometry import check_boundary_band, parse_measures

        measures = parse_measures(geometry_measures)
        validate.positive("boundary_width", boundary_width)
        check_boundary_band(boundary_band)
        if measures:
            geometry = Geometry(measures, boundary_width, boundary_band)
    return ScoreOptions(
        matchers=names, parameters=tuple(checked), mallows=bool(mallows),
        resolution=resolution, approximate=approximate, reference=sides[0],
        submission=sides[1], evaluation_crs=evaluation_crs, breakdown=bool(breakdown),
        strata=strata, bootstrap=boot, geometry=geometry,
        engine=EngineOptions(engine, scheduler, n_jobs, memory_limit),
        per_class=bool(per_class) or class_field is not None, lists=bool(lists),
        by_parts=bool(partitioned), strict=bool(strict), region=area,
        anon=bool(anon))


def check_keywords(given: Mapping[str, Any], also: Iterable[str] = (),
                   function: str = "geoeval.score") -> None:
    """:class:`InputError` for the first of ``given``'s keywords that is neither one of
    :func:`score_options` nor a registered matcher parameter, pointing at the known
    keyword it most resembles (``matcher`` → ``did you mean matchers=?``) among those
    and ``also`` (the keywords of ``function``, the one called, besides).

    Examples
    --------
    >>> check_keywords({"matcher": "bgm"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geoeval.errors.InputError: unknown keyword 'matcher': did you mean matchers=? (...)
    """
    import difflib
    import inspect

    own = [name for name, p in inspect.signature(score_options).parameters.items()
           if p.kind is not inspect.Parameter.VAR_KEYWORD]
    parameters = [p.keyword for p in registry.parameters()]
    known = [*own, *parameters]
    for keyword in given:
        if keyword in known:
            continue
        close = difflib.get_close_matches(str(keyword), [*known, *also], n=1, cutoff=0.6)
        hint = f": did you mean {close[0]}=?" if close else ""
        raise InputError(f"unknown keyword {keyword!r}{hint} (the matchers' parameters: "
                         f"{', '.join(parameters)}; every keyword: help({function}))")


def _side_options(shared: ReaderOptions, own: Mapping[str, Any] | None,
                  which: str) -> SideOptions:
    """The shared reader options with one side's own on top (names checked)."""
    own = dict(own or {})
    known = {f.name for f in fields(ReaderOptions)}
    unknown = sorted(set(own) - known)
    if unknown:
        raise InputError(f"{which}: unknown reader option {unknown[0]!r} (known: "
                         f"{', '.join(sorted(known))})")
    if own.get("band") is not None:
        validate.check("band", own["band"])
    return SideOptions(replace(shared, **own), frozenset(own))


def _size_bins(size_bins: Sequence[float] | str | None) -> tuple[float, ...] | str | None:
    """``size_bins`` checked before the work (COCO's step comes from the data later)."""
    if size_bins is None:
        return None
    from geoeval.scoring.strata import size_edges

    size_edges(size_bins, None, None, 1.0)
    return size_bins if isinstance(size_bins, str) else tuple(float(v) for v in size_bins)


@dataclass(frozen=True)
class Side:
    """One input: its source (a path or URL resolved once into an
    :class:`~geoeval.io.inputs.Input`, or data in memory), its kind (decided once:
    :data:`OBJECTS`, :data:`RASTER` or :data:`VECTOR`) and the reader's keywords for
    it."""

    source: Any
    kind: str
    keywords: tuple[tuple[str, Any], ...] = ()

    @property
    def reader(self) -> dict[str, Any]:
        """:func:`geoeval.io.read`'s keywords."""
        return dict(self.keywords)

    def but(self, **keywords: Any) -> Side:
        """This side with reader keywords added or changed (e.g. ``region``)."""
        return replace(self, keywords=tuple({**dict(self.keywords), **keywords}.items()))

    @property
    def is_file(self) -> bool:
        """A path or URL (a file, a folder dataset or a pattern of tiles), not data in
        memory."""
        from geoeval.io.inputs import Input

        return isinstance(self.source, Input | str | Path)

    @property
    def input(self) -> Any:
        """The :class:`~geoeval.io.inputs.Input` of a path or URL, ``None`` for data in
        memory."""
        from geoeval.io.inputs import Input

        return self.source if isinstance(self.source, Input) else None


def side(source: Any, options: SideOptions, *, optional_class: bool = False,
         attributes: bool = False, anon: bool = False) -> Side:
    """The :class:`Side` of ``source`` read with ``options``: its kind decided once
    (an :class:`ObjectSet`, data in memory, a path or URL: resolved here, once, into
    an :class:`~geoeval.io.inputs.Input`, :func:`geoeval.io.inputs.resolve`, that the
    later stages read; ``anon``: a public bucket read without credentials).

    ``attributes`` (:attr:`ScoreOptions.attributes`): a vector input is read with its
    attribute columns (:func:`geoeval.io.read`'s ``attributes``), else without.

    With ``optional_class`` (the submission of a per-class score) the class field is
    dropped when the input has no such field: its objects then take the class of the
    reference they overlap most.
    """
    from geoeval.io import in_memory_type, input_kind
    from geoeval.io.inputs import resolve

    if isinstance(source, ObjectSet):
        return Side(source, OBJECTS)
    if in_memory_type(source) is None:
        # a path or URL: a zip archive as the member it holds, its format and shape,
        # decided here once
        source = resolve(source, input_type=options.readers.input_type, anon=anon)
    kind = input_kind(source, options.readers.input_type)
    keywords = options.readers.keywords(kind, options.given)
    keywords["input_type"] = kind  # the readers take it as decided here
    if kind == VECTOR:
        keywords["attributes"] = bool(attributes)
    if optional_class and keywords.get("class_field") is not None \
            and not _has_field(source, kind, keywords):
        del keywords["class_field"]
    return Side(source, kind, tuple(keywords.items()))


def _has_field(source: Any, kind: str, keywords: dict[str, Any]) -> bool:
    """Whether a vector input has the class field (unknown: ``True``, the reader then
    reports the problem with its own message)."""
    from geoeval.io import in_memory_type

    name = keywords["class_field"]
    if in_memory_type(source) is not None:
        return in_memory_type(source) == VECTOR and name in getattr(source, "columns", ())
    if kind != VECTOR:
        return True
    import pyogrio

    from geoeval.io.paths import local_path

    if source.location.name.lower().endswith((".parquet", ".geoparquet")) \
            or source.shape != "file":
        return True  # the reader checks it (GeoParquet, tiles, datasets)
    try:
        fields_ = pyogrio.read_info(local_path(source), layer=keywords.get("layer"))["fields"]
    except Exception:
        return True
    return name in list(fields_)
