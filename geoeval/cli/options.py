"""Option checks shared by the commands (rasterio's ``rio/options.py`` style).

A callback turns a bad value into a usage error (exit 2, one line) at the edge,
with the same rule the Python API applies (:mod:`geoeval.validate`), named by
the option instead of the keyword.
"""

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


FRACTION = checked(validate.fraction)
POSITIVE = checked(validate.positive)
COUNT = checked(validate.count)
SEED = checked(validate.count, minimum=0)
HOOVER = checked(validate.number, low=0.5, high=1.0, low_open=True)
