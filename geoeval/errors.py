"""The one exception hierarchy of geoeval.

``GeoevalError`` → ``InputError`` (a file or argument cannot be used),
``OutputError`` (an output target cannot be written), ``CapacityError`` (a job
too large for the limits it was given) and ``SolverError`` (a solver failed).
The CLI turns every :class:`GeoevalError` into a one-line message on stderr and
exit code 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class GeoevalError(Exception):
    """Base class of every error geoeval raises on purpose.

    ``path``, when given, names the file or option at fault and starts the message.
    """

    def __init__(self, message: str, path: object | None = None) -> None:
        self.path = None if path is None else str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}" if self.path else message)


class InputError(GeoevalError, ValueError):
    """A file or argument cannot be used as given (the message names it)."""


class CRSMismatchError(InputError):
    """The two inputs cannot be brought into one coordinate system."""


class OutputError(GeoevalError):
    """An output target cannot be written (missing folder, no permission, is an input…)."""


class CapacityError(GeoevalError):
    """The job exceeds a size limit (memory, states, …); the message says which option helps."""


class SolverError(GeoevalError):
    """An optimisation solver failed or returned a non-optimal status."""


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


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (for one-line errors)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
