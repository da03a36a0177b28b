"""Callbacks of the options: a bad value is a usage error (exit 2, one line) at the edge,
with the same rule the Python API applies (:mod:`geoeval.validate`, the matcher
registry), named by the option instead of the keyword (rasterio's ``rio/options.py``
style)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from geoeval import validate


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


def given(*names: str) -> list[str]:
    """The options among ``names`` (parameter names) that the running command was given
    (on its command line or by an environment variable), each by its flag, in the
    order of the command's help; none when no command runs (a call from Python)."""
    import importlib

    # the click typer uses (its own copy, typer._click, since typer 0.24)
    package = typer.BadParameter.__module__.rpartition(".")[0]
    ctx = importlib.import_module(f"{package}.globals").get_current_context(silent=True)
    if ctx is None:
        return []
    source = importlib.import_module(f"{package}.core").ParameterSource
    typed = (source.COMMANDLINE, source.ENVIRONMENT)
    return [p.opts[0] if p.opts else p.name for p in ctx.command.params
            if p.name in names and ctx.get_parameter_source(p.name) in typed]


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


def measures_choice(ctx: Any, param: Any, value: Any) -> Any:
    """``--measures``: names checked by :func:`geoeval.measures.geometry.parse_measures`."""
    if value is None or ctx.resilient_parsing:
        return value
    from geoeval.errors import InputError
    from geoeval.measures.geometry import parse_measures

    try:
        return ",".join(parse_measures(value))
    except InputError as exc:
        raise typer.BadParameter(str(exc)) from None
