"""The one exception hierarchy of geoeval.

The CLI turns every :class:`GeoevalError` into a one-line message on stderr and
exit code 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class GeoevalError(Exception):
    """Base class of every error geoeval raises on purpose."""


class InputError(GeoevalError, ValueError):
    """A file or argument cannot be used as given (the message names it)."""

    def __init__(self, message: str, path: object | None = None) -> None:
        self.path = None if path is None else str(path)
        super().__init__(f"{self.path}: {message}" if self.path else message)


class CRSMismatchError(InputError):
    """The two inputs cannot be brought into one coordinate system."""


class SolverError(GeoevalError):
    """An optimisation solver failed or returned a non-optimal status."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (for one-line errors)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
