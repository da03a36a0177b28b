"""Checks of numeric arguments, shared by the Python API and the command line.

Each check returns the value (as ``float`` or ``int``) or raises
:class:`~geoeval.errors.InputError` naming the argument: the API passes its
keyword (``resolution``), the CLI its option (``--resolution``), so the
same rule gives the same message in both.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import overload

from geoeval.errors import InputError

# True while a command of the CLI runs (geoeval.cli.guard): messages made deep inside
# then name its options (--resolution), else the Python keywords (resolution=).
_COMMAND_LINE: ContextVar[bool] = ContextVar("geoeval_command_line", default=False)


@contextmanager
def command_line_names() -> Iterator[None]:
    """Inside, :func:`option_name` names the command line's options (the CLI runs every
    command inside it)."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def spelled(python: str, command_line: str) -> str:
    """A setting as the caller knows it: ``command_line`` inside a command
    (:func:`command_line_names`), else ``python`` (``spelled("approximate=False",
    "--exact")``; :func:`option_name` when the option is the keyword with dashes)."""
    return command_line if _COMMAND_LINE.get() else python


def option_name(keyword: str, switch: bool = False) -> str:
    """A setting named as the caller knows it, for a message made after the arguments
    were parsed (a note, a warning): ``resolution=`` from Python, ``--resolution``
    inside a command (:func:`command_line_names`); a ``switch`` (a flag without a
    value) is ``strict=True`` from Python.

    Examples
    --------
    >>> option_name("resolution"), option_name("strict", switch=True)
    ('resolution=', 'strict=True')
    >>> with command_line_names():
    ...     option_name("resolution"), option_name("strict", switch=True)
    ('--resolution', '--strict')
    """
    return spelled(f"{keyword}=True" if switch else f"{keyword}=",
                   "--" + keyword.replace("_", "-"))


class BadValue(InputError):
    """An argument outside its valid range: ``name`` and ``detail`` kept apart, so the
    CLI can name the option its own way (``Invalid value for '--x': detail``)."""

    def __init__(self, name: str, detail: str) -> None:
        self.name = name
        self.detail = detail
        super().__init__(f"{name} {detail}")


def interval(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    """A range in words: ``in (0.5, 1]``, ``more than 0``, ``at most 1``."""
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'more than' if low_open else 'at least'} {low:g}"
    assert high is not None
    return f"{'less than' if high_open else 'at most'} {high:g}"


@overload
def number(name: str, value: float | int, *, low: float | None = ..., high: float | None = ...,
           low_open: bool = ..., high_open: bool = ..., integer: bool = ...) -> float: ...
@overload
def number(name: str, value: None, *, low: float | None = ..., high: float | None = ...,
           low_open: bool = ..., high_open: bool = ..., integer: bool = ...) -> None: ...
def number(name: str, value: float | int | None, *, low: float | None = None,
           high: float | None = None, low_open: bool = False, high_open: bool = False,
           integer: bool = False) -> float | int | None:
    """``value`` if it is a finite number within the bounds, else :class:`BadValue`.

    ``None`` passes through (an option not given). ``low_open``/``high_open`` make a
    bound strict. With ``integer=True`` the value must be a whole number and an
    ``int`` is returned.

    Examples
    --------
    >>> number("confidence", 0.5, low=0, high=1)
    0.5
    >>> try:
    ...     number("resolution", 0, low=0, low_open=True)
    ... except InputError as exc:
    ...     print(exc)
    resolution must be more than 0, got 0
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)  # numpy scalars, strings of numbers
        except (TypeError, ValueError):
            raise BadValue(name, f"must be a number, got {value!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise BadValue(name, f"must be a finite number, got {value!r}")
    if integer:
        if float(value) != int(value):
            raise BadValue(name, f"must be a whole number, got {value!r}")
        value = int(value)
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        raise BadValue(name, f"must be {interval(low, high, low_open, high_open)}, got {value!r}")
    return value


def fraction(name: str, value: float | None, *, low_open: bool = False,
             high_open: bool = False) -> float | None:
    """A number in [0, 1] (ends open on request); ``None`` passes through."""
    return number(name, value, low=0.0, high=1.0, low_open=low_open, high_open=high_open)


def positive(name: str, value: float | None) -> float | None:
    """A finite number > 0; ``None`` passes through."""
    return number(name, value, low=0.0, low_open=True)


def count(name: str, value: int | None, *, minimum: int = 1) -> int | None:
    """A whole number >= ``minimum``; ``None`` passes through."""
    return number(name, value, low=minimum, integer=True)


def image_size(name: str, value: str | tuple[float, float] | None) -> tuple[float, float] | None:
    """``"W,H"`` (or ``"WxH"``, or a pair) -> ``(W, H)``, both positive and finite.

    Examples
    --------
    >>> image_size("--image-size", "640,480")
    (640.0, 480.0)
    >>> image_size("--image-size", "640,-1")
    Traceback (most recent call last):
    ...
    geoeval.validate.BadValue: --image-size must be W,H with W, H > 0 (e.g. 640,480), got '640,-1'
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else ",".join(map(str, value))
    detail = f"must be W,H with W, H > 0 (e.g. 640,480), got {text!r}"
    try:
        w, h = (float(p) for p in text.replace("x", ",").split(","))
    except ValueError:
        raise BadValue(name, detail) from None
    if not (w > 0 and h > 0 and math.isfinite(w) and math.isfinite(h)):
        raise BadValue(name, detail)
    return (w, h)


# --- one rule per option ------------------------------------------------------------
# Every numeric option of the API and the command line is checked by its rule here:
# the CLI's callbacks (geoeval.cli.callbacks.rule) and the API's checks
# (geoeval.scoring.check_options, the matchers) read this table, so a range is
# written once, and the docs' table of ranges (docs/errors.md) is tested against it.


class Rule:
    """The valid range of one numeric option: ``check(name, value)`` returns the
    value or raises :class:`BadValue`; ``text`` is the range in words."""

    def __init__(self, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False,
                 integer: bool = False, why: str = "") -> None:
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        self.integer, self.why = integer, why

    def check(self, name: str, value: float | int | None) -> float | int | None:
        return number(name, value, low=self.low, high=self.high, low_open=self.low_open,
                      high_open=self.high_open, integer=self.integer)

    @property
    def text(self) -> str:
        """``in (0.5, 1]``, ``at least 1``, ``more than 0``."""
        kind = "a whole number " if self.integer else ""
        return kind + interval(self.low, self.high, self.low_open, self.high_open)


_COUNT = Rule(low=1, integer=True)
_ZERO_UP = Rule(low=0, integer=True)
_POSITIVE = Rule(low=0.0, low_open=True)

#: Any IoU threshold (a matcher's, a box protocol's): in (0, 1].
IOU = Rule(low=0.0, high=1.0, low_open=True,
           why="an IoU; at 0 every disjoint pair would be a match")
#: A fraction: in [0, 1].
FRACTION = Rule(low=0.0, high=1.0, why="a fraction")

#: Keyword -> its rule (the CLI option is the keyword with dashes). A matcher's own
#: parameters carry theirs in the matcher registry (:mod:`geoeval.matching.registry`).
RULES: dict[str, Rule] = {
    "resolution": _POSITIVE,
    "block_size": _POSITIVE,
    "boundary_width": _POSITIVE,
    "n_jobs": _COUNT,
    "band": _COUNT,
    "bootstrap": _COUNT,
    "max_states": _COUNT,
    "samples": _COUNT,
    "burn_in": _ZERO_UP,
    "seed": _ZERO_UP,
    "max_rounds": _ZERO_UP,
    "confidence": Rule(low=0.0, high=1.0, low_open=True, high_open=True,
                       why="the coverage of an interval"),
    "dilation_ratio": Rule(low=0.0, why="a fraction of the image diagonal (Boundary IoU's "
                                        "band is at least one pixel wide)"),
}


def check(name: str, value: float | int | None, *, label: str | None = None
          ) -> float | int | None:
    """``value`` checked by ``RULES[name]``, named ``label`` (default ``name``) in
    the message.

    Examples
    --------
    >>> check("confidence", 0.95)
    0.95
    >>> check("resolution", 0, label="--resolution")
    Traceback (most recent call last):
    ...
    geoeval.validate.BadValue: --resolution must be more than 0, got 0
    """
    return RULES[name].check(label or name, value)
