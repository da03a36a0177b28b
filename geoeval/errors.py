"""The one exception hierarchy of geoeval.

``GeoevalError`` → ``InputError`` (a file or argument cannot be used),
``OutputError`` (an output target cannot be written), ``CapacityError`` (a job
too large for the limits it was given), ``SolverError`` (a solver failed) and
``NotHeldError`` (a part of a result left on a Dask cluster's workers).
The CLI turns every :class:`GeoevalError` into a one-line message on stderr and
exit code 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class GeoevalError(Exception):
    """Base class of every error geoeval raises on purpose.

    ``path``, when given, names the file or option at fault and starts the message.
    """

    def __init__(self, message: str, path: object | None = None) -> None:
        self.path = None if path is None else printable(path)
        self.message = cut(printable(message), MESSAGE_CHARS)
        super().__init__(f"{self.path}: {self.message}" if self.path else self.message)

    def cli_text(self) -> str:
        """The message as the command line prints it: the same, but where it names a
        parameter of the Python API (``submission_options={'crs': …}``), the option of
        the command line instead (``--sub-crs``)."""
        return str(self)


class InputError(GeoevalError, ValueError):
    """A file or argument cannot be used as given (the message names it)."""


class FieldError(InputError):
    """A reader option names a field the input lacks, or one whose values cannot
    serve (``keyword``: ``"id_field"`` or ``"class_field"``).

    The message names the option and ``field``, then ``problem`` and ``detail``
    (``--id-field 'oid' is not a field (fields: uid)``). A reader raises it knowing
    only its file; whoever knows which side the file is calls :meth:`on`, so that
    the message names the side, and the option as it was given: that side's own
    (``--ref-id-field``) or the one for both inputs (``--id-field``, then with the
    per-side options a missing field would call for).
    """

    #: Options that also exist for one side alone: keyword -> (reference's, submission's).
    SIDE_FLAGS = {"id_field": ("--ref-id-field", "--sub-id-field")}

    def __init__(self, keyword: str, field: str, problem: str, path: object | None = None,
                 *, detail: str = "", side: str | None = None, own: bool = False) -> None:
        self.keyword, self.field, self.problem, self.detail = keyword, field, problem, detail
        self.side, self.own = side, own
        super().__init__(self._text(), path)

    def _text(self) -> str:
        flag = "--" + self.keyword.replace("_", "-")
        per_side = self.SIDE_FLAGS.get(self.keyword)
        if self.own and per_side is not None and self.side in ("reference", "submission"):
            flag = per_side[self.side == "submission"]
        text = f"{flag} {self.field!r} {self.problem}"
        if self.side is not None:
            text += (" of" if self.missing else " in") + f" the {self.side}"
        text += self.detail
        if self.side is not None and not self.own and per_side is not None and self.missing:
            text += f"; {' / '.join(per_side)} name one side's field"
        return text

    @property
    def missing(self) -> bool:
        """The input has no such field (``is not a field``, ``is not a column``)."""
        return self.problem.startswith("is not a ")

    def on(self, side: str, own: bool = False) -> FieldError:
        """The same error about the ``side`` (``"reference"``, ``"submission"``),
        with the option that side was given on its own (``own``) or for both."""
        return FieldError(self.keyword, self.field, self.problem, self.path,
                          detail=self.detail, side=side, own=own)

    def __reduce__(self) -> Any:  # crosses from a Dask worker to the client whole
        return (_field_error, (self.keyword, self.field, self.problem, self.path,
                               self.detail, self.side, self.own))


def _field_error(keyword: str, field: str, problem: str, path: object | None, detail: str,
                 side: str | None, own: bool) -> FieldError:
    return FieldError(keyword, field, problem, path, detail=detail, side=side, own=own)


class CRSMismatchError(InputError):
    """The two inputs cannot be brought into one coordinate system."""


class OutputError(GeoevalError):
    """An output target cannot be written (missing folder, no permission, is an input…)."""


class CapacityError(GeoevalError):
    """The job exceeds a size limit (memory, states, …); the message says which option helps."""


class SolverError(GeoevalError):
    """An optimisation solver failed or returned a non-optimal status."""


class NotHeldError(GeoevalError, AttributeError):
    """A part of a result that the run did not bring to this process (the Dask engine
    keeps each object and matching on its workers); the message says what to use
    instead. An :class:`AttributeError` too, so ``getattr(result, name, default)`` and
    ``hasattr`` treat it as absent."""


class StrictError(InputError):
    """``--strict`` (``strict=True``) refused a run for its warnings (``warnings``, each
    a line; the message counts them and quotes the first), before the work when they
    were known before it."""

    def __init__(self, warnings: Any, label: str = "--strict") -> None:
        self.warnings = tuple(str(w) for w in warnings)
        self.label = label
        super().__init__(f"{label}: {len(self.warnings)} warning(s), the first: "
                         f"{self.warnings[0]}")

    def __reduce__(self) -> Any:
        return (StrictError, (self.warnings, self.label))


class GeoevalWarning(UserWarning):
    """What geoeval accepted with a remark (a box outside its image, an input
    reprojected, a side with no objects …). The public functions give each of a
    result's ``warnings`` as a Python warning of this class too (as geopandas
    does), so ``warnings.simplefilter("error", GeoevalWarning)`` or pytest's
    ``filterwarnings`` can act on them; the CLI prints them itself instead."""


def result_warnings(result: object) -> list[str]:
    """A result's warnings: its ``warnings``, then each scene's (``scene: text``)."""
    out = [str(w) for w in getattr(result, "warnings", ()) or ()]
    for scene in getattr(result, "scenes", ()) or ():
        out += [f"{getattr(scene, 'name', '')}: {w}" for w in getattr(scene, "warnings", ())]
    return out


def emit(result: object, stacklevel: int = 3) -> None:
    """Give each of ``result``'s warnings as a :class:`GeoevalWarning` (``stacklevel``
    3: the warning points at the line that called the public function)."""
    import warnings

    for text in result_warnings(result):
        warnings.warn(text, GeoevalWarning, stacklevel=stacklevel)


#: The longest message an error carries (a few lines of a terminal); a longer one, e.g.
#: holding a 52 MB number from a file, is cut in its middle.
MESSAGE_CHARS = 600
#: The longest reason quoted from a library (GDAL, a parser) inside a message.
REASON_CHARS = 200


def cut(text: str, limit: int) -> str:
    """``text`` of at most ``limit`` characters: its start and end kept, the middle
    replaced by `` … (N characters) … ``.

    Examples
    --------
    >>> cut("a" * 10, 20)
    'aaaaaaaaaa'
    >>> cut("x" * 1000, 60)
    'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx … (963 characters) … xxxxxx'
    """
    if len(text) <= limit:
        return text
    tail = max(limit // 10, 0)
    note = " … ({} characters) … "
    head = max(limit - tail - len(note.format(len(text))), 1)
    return text[:head] + note.format(len(text) - head - tail) + (text[-tail:] if tail else "")


def sendable(func: F) -> F:
    """``func`` (a task a Dask worker runs) raising its :class:`GeoevalError` without
    the library error it replaced, so that the error reaches the client as itself.

    ``raise InputError(...) from None`` hides the library's error but keeps it as
    ``__context__``, and the error is pickled with it to cross to the client; GDAL's
    errors (rasterio's and pyogrio's ``CPLE_*``) cannot be unpickled, and Dask then
    sends a plain ``Exception`` holding the text of ours: a traceback instead of
    the one-line message.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except GeoevalError as exc:
            error = exc
        error.__context__ = error.__cause__ = None  # raised outside the handler: stays None
        raise error

    return wrapper  # type: ignore[return-value]


def swapped(reference: str, submission: str) -> str:
    """The hint for two inputs given in the wrong order: what each place expects.

    Examples
    --------
    >>> swapped("ground truth", "results")
    'the arguments look swapped (expected order: REFERENCE (ground truth) SUBMISSION (results))'
    """
    return (f"the arguments look swapped (expected order: REFERENCE ({reference}) "
            f"SUBMISSION ({submission}))")


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (for one-line errors)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def printable(text: object) -> str:
    """``text`` as valid UTF-8: the bytes of a file name that are not UTF-8 (which
    Python keeps as lone surrogates, PEP 383) written ``\\xNN``, as Python writes
    bytes. A name from any file system can then be printed, and written into a
    report, a GeoPackage or a page.

    Examples
    --------
    >>> import os
    >>> printable(os.fsdecode(b"r\\xe9f.tif"))
    'r\\\\xe9f.tif'
    """
    text = str(text)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # surrogates of another origin
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")
