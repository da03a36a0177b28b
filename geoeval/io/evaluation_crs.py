"""The CRS areas and distances are computed in: never degrees, never Mercator, silently.

Every measure of geoeval is an area (overlaps, IoU, the BGM union) or a
distance (the Mallows score, localisation metrics) in CRS units. In a
geographic CRS those units are degrees, whose length on the ground shrinks with
the cosine of the latitude (a "square" of 0.001° at 60° N is a 55 m × 111 m
rectangle), and in a Mercator projection (Web Mercator EPSG:3857 included) the
scale grows as ``1 / cos(latitude)``, areas by its square: at 60° N Web Mercator
areas are four times too large. So:

* a vector reference in such a CRS is evaluated in a **local Lambert azimuthal
  equal-area projection** centred on the data (Snyder 1987, *Map Projections —
  A Working Manual*, USGS PP 1395, §24): areas are exact, and distances within
  a city-sized scene are true to a few parts per million. Both sides are
  reprojected; the report says so (``parameters.evaluation_crs``) and warns;
* ``evaluation_crs=`` (``--eval-crs``) chooses the CRS instead; a geographic
  one is refused. A CRS the user chose is recorded in the report, not warned
  about (``--strict`` passes);
* a labelled raster in such a CRS cannot be reprojected without resampling
  (which would change the objects): it is refused, with the ``gdalwarp``
  command and the UTM zone that would do it.
"""

from __future__ import annotations

from typing import Any

from geoeval.errors import InputError
from geoeval.grid import authority_code, crs_code, same_crs
from geoeval.io import crs_name, extent
from geoeval.objects import ObjectSet


def _crs(value: Any) -> Any:
    from pyproj import CRS

    return CRS.from_user_input(value)


def unsuitable(crs: Any) -> str | None:
    """Why areas and distances must not be computed in ``crs`` (``None``: they may).

    Examples
    --------
    >>> unsuitable("EPSG:4326"), unsuitable("EPSG:3857"), unsuitable("EPSG:32631")
    ('geographic (degrees)', 'Mercator (scale grows with latitude)', None)
    """
    if crs is None:
        return None
    try:
        c = _crs(crs)
    except Exception:
        return None
    if c.is_geographic:
        return "geographic (degrees)"
    op = c.coordinate_operation
    method = (op.method_name if op is not None else "") or ""
    if "mercator" in method.lower() and not any(
            w in method.lower() for w in ("transverse", "oblique")):
        return "Mercator (scale grows with latitude)"
    return None


def _centre_lonlat(crs: Any, bounds: tuple[float, float, float, float]) -> tuple[float, float]:
    """Longitude and latitude (degrees, the CRS's own datum) of the centre of ``bounds``."""
    from pyproj import Transformer

    c = _crs(crs)
    x, y = (bounds[0] + bounds[2]) / 2, (bounds[1] + bounds[3]) / 2
    t = Transformer.from_crs(c, c.geodetic_crs, always_xy=True)
    lon, lat = t.transform(x, y)
    return float(lon), float(lat)


def local_equal_area(crs: Any, bounds: tuple[float, float, float, float]) -> Any:
    """A Lambert azimuthal equal-area CRS centred on ``bounds`` (on ``crs``'s datum).

    Examples
    --------
    >>> local_equal_area("EPSG:4326", (2.30, 48.80, 2.40, 48.90)).name
    'geoeval local equal-area (Lambert azimuthal, centre 48.85000 N, 2.35000 E)'
    """
    from pyproj.crs import ProjectedCRS
    from pyproj.crs.coordinate_operation import LambertAzimuthalEqualAreaConversion

    lon, lat = _centre_lonlat(crs, bounds)
    name = (f"geoeval local equal-area (Lambert azimuthal, centre {abs(lat):.5f} "
            f"{'N' if lat >= 0 else 'S'}, {abs(lon):.5f} {'E' if lon >= 0 else 'W'})")
    return ProjectedCRS(conversion=LambertAzimuthalEqualAreaConversion(lat, lon),
                        geodetic_crs=_crs(crs).geodetic_crs, name=name)


def utm_code(crs: Any, bounds: tuple[float, float, float, float]) -> str | None:
    """``EPSG:326xx``/``327xx``: the WGS 84 UTM zone of the centre of ``bounds``."""
    from pyproj.aoi import AreaOfInterest
    from pyproj.database import query_utm_crs_info

    try:
        lon, lat = _centre_lonlat(crs, bounds)
        found = query_utm_crs_info(datum_name="WGS 84", area_of_interest=AreaOfInterest(
            lon, lat, lon, lat))
    except Exception:
        return None
    return f"{found[0].auth_name}:{found[0].code}" if found else None


def _bounds(ref: ObjectSet, sub: ObjectSet) -> tuple[float, float, float, float] | None:
    """Extent of the reference (of the submission when the reference is empty), so
    that every submission scored against one reference gets the same projection."""
    return extent(ref) or extent(sub)


#: ``parameters.evaluation_crs.rule`` when the inputs stay in the reference's CRS.
REFERENCE_RULE = "the reference's CRS"


def evaluation_record(crs: Any, rule: str = REFERENCE_RULE) -> dict[str, Any]:
    """The report's ``parameters.evaluation_crs``: the CRS areas and distances were
    computed in, once. ``crs``: its short name (:func:`geoeval.grid.crs_code`, the
    form of ``reference.crs`` and ``submission.crs``); ``rule``: why that CRS;
    ``wkt``: its definition (WKT2) only where no authority code names it (the local
    equal-area projection, an engineering CRS), else ``None``.

    Examples
    --------
    >>> evaluation_record("EPSG:32651")
    {'crs': 'EPSG:32651', 'rule': "the reference's CRS", 'wkt': None}
    >>> r = evaluation_record(local_equal_area("EPSG:4326", (2.3, 48.8, 2.4, 48.9)), "local")
    >>> r["crs"], r["wkt"][:7]
    ('geoeval local equal-area (Lambert azimuthal, centre 48.85000 N, 2.35000 E)', 'PROJCRS')
    """
    wkt = None if authority_code(crs) is not None else _crs(crs).to_wkt()
    return {"crs": crs_code(crs), "rule": rule, "wkt": wkt}


def to_evaluation_crs(
    reference: ObjectSet, submission: ObjectSet, evaluation_crs: Any = None,
) -> tuple[ObjectSet, ObjectSet, dict[str, Any] | None, list[str]]:
    """Both sides in a CRS where areas and distances mean something on the ground.

    Parameters
    ----------
    reference, submission : ObjectSet
        In one CRS (the reference's), as :func:`geoeval.io.read_pair` returns them.
    evaluation_crs : CRS-like, optional
        The CRS to evaluate in. Default: the reference's, unless it is
        geographic or Mercator (:func:`unsuitable`), then
        :func:`local_equal_area` centred on the reference's extent.

    Returns
    -------
    reference, submission : ObjectSet
    info : dict or None
        :func:`evaluation_record` of the CRS when the sides were reprojected;
        ``None`` when they stay in their CRS.
    warnings : list of str
        The CRS geoeval chose (the reference's was unsuitable); none for a CRS the
        caller chose.

    Raises
    ------
    InputError
        ``evaluation_crs`` is not a CRS, is geographic, or is given for inputs
        without a CRS; a labelled raster would need reprojecting (the message
        gives the ``gdalwarp`` command).
    """
    requested = None
    if evaluation_crs is not None:
        try:
            requested = _crs(evaluation_crs)
        except Exception as exc:
            raise InputError(f"{evaluation_crs!r} is not a CRS ({exc})",
                             "--eval-crs") from None
        if requested.is_geographic:
            raise InputError(f"{crs_name(requested)} is geographic (degrees): areas and "
                             "distances need a projected CRS, e.g. the UTM zone of the data",
                             "--eval-crs")
        if reference.crs is None:
            raise InputError("the inputs have no CRS to reproject from; give them one "
                             "(--crs) or leave --eval-crs out", "--eval-crs")
    if reference.crs is None:
        return reference, submission, None, []
    why = unsuitable(reference.crs)
    if requested is None and why is None:
        return reference, submission, None, []
    if requested is not None and same_crs(requested, reference.crs):
        return reference, submission, None, []
    bounds = _bounds(reference, submission)
    if bounds is None:  # nothing to measure: nothing to reproject
        return reference, submission, None, []
    for objects in (reference, submission):
        if objects.grid is not None:
            utm = utm_code(reference.crs, bounds)
            target = crs_name(requested) if requested is not None else (utm or "a projected CRS")
            what = (f"in {crs_name(reference.crs)}, a {why} CRS, so its pixel areas are not "
                    "areas on the ground" if requested is None else
                    f"in {crs_name(reference.crs)}, not in the evaluation CRS {target}")
            example = (requested.to_string() if requested is not None
                       else (utm or "EPSG:<utm zone>"))
            raise InputError(
                f"is a labelled raster {what}; a raster cannot be reprojected without "
                f"resampling its objects. Reproject it first, e.g. gdalwarp -t_srs {example} "
                f"-r near {objects.path} out.tif"
                + ("" if requested is not None or utm is None
                   else f" ({utm} is the UTM zone of the data's centre)"),
                objects.path)
    if requested is not None:
        target, rule = requested, "given (evaluation_crs)"
    else:
        target = local_equal_area(reference.crs, bounds)
        rule = (f"the reference's CRS is {why}: local Lambert azimuthal equal-area "
                "projection centred on the data")
    from geoeval.io.vector import reproject

    ref = reproject(reference, target)
    sub = reproject(submission, target).in_crs(ref.crs)
    info = evaluation_record(target, rule)
    if requested is not None:  # the user's choice, recorded in the report: no warning
        return ref, sub, info, []
    from geoeval.validate import spelled

    warning = (f"areas and distances are computed in {crs_name(target)}, not in the "
               f"inputs' {crs_name(reference.crs)} ({why}); set "
               f"{spelled('evaluation_crs=', '--eval-crs')} to choose the CRS")
    return ref, sub, info, [warning]
