"""An input without a CRS: the error that says so, and the CRS it may suggest.

A layer or raster whose coordinates are in an unknown CRS (a Shapefile that lost its
``.prj``, a GeoPackage, GeoJSON or CSV layer without a CRS, a raster without
georeferencing) cannot be compared with an input that has one. The error says how to
give it one, and suggests a CRS only where the data supports it
(:func:`suggested_crs`, the one rule for every format):

* the other input's CRS, when the extents agree in it (the layer's bounds overlap
  the other input's bounds, read in that CRS);
* ``EPSG:4326``, when the coordinates are within longitude/latitude ranges and the
  other input's extent, in longitude/latitude, overlaps them;
* otherwise no example: a CRS that does not fit the data would only lead to "extent
  does not overlap".

The same error names the way the CRS is given where it is read: the Python API's
parameter (``crs=``, ``reference_options={"crs": …}``, ``submission_options={"crs":
…}``) in its message, the command line's option (``--crs``, ``--ref-crs``,
``--sub-crs``) in :meth:`MissingCRSError.cli_text`, which the CLI prints.
"""

from __future__ import annotations

import math
from typing import Any

from geoeval.errors import MESSAGE_CHARS, CRSMismatchError, cut, printable

Bounds = tuple[float, float, float, float]

#: The command line's option giving a side its CRS (in Python: ``crs=`` for an input
#: read alone, ``reference_options`` / ``submission_options`` for one side of a pair).
_FLAGS = {"reference": "--ref-crs", "submission": "--sub-crs"}


def overlap(a: Bounds, b: Bounds) -> bool:
    """Two extents share a point (the rule of the extents' check in
    :func:`geoeval.io.read_pair`, so that following a suggestion passes it)."""
    return not (a[0] > b[2] or b[0] > a[2] or a[1] > b[3] or b[1] > a[3])


def extent_text(b: Bounds) -> str:
    """An extent as plain numbers, as a GIS shows coordinates: ``(569800, 1449599.2,
    …)``, never ``1.4496e+06`` (micro-units kept, trailing zeros dropped).

    >>> extent_text((569800.0, 1449599.2, 2.5e-7, -12.0))
    '(569800, 1449599.2, 0, -12)'
    """
    def plain(v: float) -> str:
        text = f"{v:.6f}".rstrip("0").rstrip(".")
        return "0" if text == "-0" else text

    return "(" + ", ".join(plain(float(v)) for v in b) + ")"


def _finite(b: Any) -> bool:
    return b is not None and len(b) == 4 and all(math.isfinite(float(v)) for v in b)


def suggested_crs(bounds: Bounds | None, other_crs: Any,
                  other_bounds: Bounds | None) -> str | None:
    """The CRS to suggest for coordinates without one (``bounds``: their extent), next
    to an input in ``other_crs`` covering ``other_bounds``; ``None`` when nothing fits.

    The other input's CRS when the extents overlap in it; ``EPSG:4326`` when
    ``bounds`` lie within longitude/latitude ranges and overlap the other extent
    taken to longitude/latitude; else ``None``.

    Examples
    --------
    >>> suggested_crs((690000, 5330000, 690100, 5330100), "EPSG:32632",
    ...               (689900, 5329900, 690200, 5330200))
    'EPSG:32632'
    >>> suggested_crs((11.55, 48.09, 11.56, 48.10), "EPSG:32632",
    ...               (689900, 5329900, 690200, 5330200))
    'EPSG:4326'
    >>> suggested_crs((0, 0, 10, 10), "EPSG:32632", (689900, 5329900, 690200, 5330200))
    """
    from geoeval.grid import authority_code

    if not _finite(bounds) or other_crs is None or not _finite(other_bounds):
        return None
    assert bounds is not None and other_bounds is not None
    code = authority_code(other_crs)
    if code is not None and overlap(bounds, other_bounds):
        return code
    if not (-180 <= bounds[0] <= bounds[2] <= 180 and -90 <= bounds[1] <= bounds[3] <= 90):
        return None
    try:
        from pyproj import CRS, Transformer

        t = Transformer.from_crs(CRS.from_user_input(other_crs), CRS.from_epsg(4326),
                                 always_xy=True)
        lonlat = t.transform_bounds(*other_bounds, densify_pts=21)
    except Exception:  # an engineering CRS, a CRS PROJ cannot take to WGS 84
        return None
    return "EPSG:4326" if _finite(lonlat) and overlap(bounds, lonlat) else None


class MissingCRSError(CRSMismatchError):
    """An input has no CRS where one is needed.

    ``problem`` says what is missing (``Shapefile without .prj (…): its CRS is
    unknown``); ``side`` (``"reference"``, ``"submission"`` or ``None`` for an input
    read alone) names how its CRS is given; ``example`` is a CRS that fits its
    coordinates (:func:`suggested_crs`) or ``None``; ``note`` says why there is none;
    ``bounds`` is the input's extent, kept so that whoever reads the other input can
    suggest a CRS (:meth:`beside`).
    """

    def __init__(self, problem: str, path: object | None = None, *, side: str | None = None,
                 example: str | None = None, note: str = "",
                 bounds: Bounds | None = None) -> None:
        self.problem, self.side, self.example, self.note = problem, side, example, note
        self.bounds = bounds
        super().__init__(self._text(python=True), path)

    def _option(self, python: bool, value: str | None) -> str:
        """How this side's CRS is given: ``submission_options={'crs': 'EPSG:4326'}`` in
        Python, ``--sub-crs EPSG:4326`` on the command line (``value`` ``None``: the
        parameter or option alone)."""
        if python:
            v = "..." if value is None else repr(value)
            return f"crs={v}" if self.side is None else f"{self.side}_options={{'crs': {v}}}"
        flag = _FLAGS.get(self.side, "--crs")
        return flag if value is None else f"{flag} {value}"

    def _text(self, python: bool) -> str:
        example = ("" if self.example is None
                   else f" (e.g. {self._option(python, self.example)})")
        return (f"{self.problem}; give it the CRS its coordinates are in with "
                f"{self._option(python, None)}{example}{self.note}")

    def cli_text(self) -> str:
        """The message as the command line says it (its options, not the API's)."""
        text = cut(printable(self._text(python=False)), MESSAGE_CHARS)
        return f"{self.path}: {text}" if self.path else text

    def beside(self, side: str, other_crs: Any, other_bounds: Bounds | None,
               other_name: str) -> MissingCRSError:
        """The same error for the ``side`` of a pair whose other input (``other_name``)
        is in ``other_crs`` over ``other_bounds``: with the CRS its coordinates fit,
        if any, else a note of why none is suggested."""
        example = suggested_crs(self.bounds, other_crs, other_bounds)
        note = ""
        if example is None and other_crs is not None and self.bounds is not None \
                and _finite(self.bounds) and _finite(other_bounds) \
                and not overlap(self.bounds, other_bounds):
            from geoeval.grid import crs_name

            note = (f" (its extent {extent_text(self.bounds)} is not where {other_name} is in "
                    f"{crs_name(other_crs)}, nor in longitude/latitude: which CRS it is "
                    "in, the data's source can tell)")
        return MissingCRSError(self.problem, self.path, side=side, example=example,
                               note=note, bounds=self.bounds)

    def __reduce__(self) -> Any:  # crosses from a Dask worker to the client whole
        return (_missing_crs, (self.problem, self.path, self.side, self.example, self.note,
                               self.bounds))


def _missing_crs(problem: str, path: object | None, side: str | None, example: str | None,
                 note: str, bounds: Bounds | None) -> MissingCRSError:
    return MissingCRSError(problem, path, side=side, example=example, note=note, bounds=bounds)

