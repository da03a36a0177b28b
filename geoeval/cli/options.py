"""Option checks shared by the commands (rasterio's ``rio/options.py`` style).

A callback turns a bad value into a usage error (exit 2, one line) at the edge,
with the same rule the Python API applies (:mod:`geoeval.validate`), named by
the option instead of the keyword.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
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
IOU = checked(validate.fraction, low_open=True)  # (0, 1]: the box protocols' IoU threshold
EPS = checked(validate.fraction, high_open=True)  # [0, 1): ROBIN's ε1..ε3
ALPHA = checked(validate.fraction, low_open=True, high_open=True)  # (0, 1): a test level
IMAGE_SIZE = checked(validate.image_size)  # "W,H" -> (W, H), both > 0


# Output options of every command: parameter name -> (flag, "file" | "folder", suffixes).
# Every other path-valued parameter of a command is one of its inputs.
OUTPUTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "json_path": ("--json", "file", ()),
    "markdown_path": ("--markdown", "file", ()),
    "gpkg": ("--gpkg", "file", (".gpkg",)),
    "figure": ("--figure", "file", (".png", ".svg")),
    "csv_dir": ("--csv-dir", "folder", ()),
    "scene_dir": ("--scene-dir", "folder", ()),
    "figure_dir": ("--figure-dir", "folder", ()),
}


def _paths(value: Any) -> list[Path]:
    if isinstance(value, Path):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, Path)]
    return []


def guarded(command: Callable[..., Any]) -> Callable[..., Any]:
    """Run a command inside one output run (:func:`geoeval.outputs.output_run`).

    Before the command starts, every output option it was given is checked (its
    folder exists and is writable, it is not one of the command's inputs, no two
    outputs share a path); every file it writes is renamed into place only when
    the whole command has succeeded, and a line on stderr says what was written.
    """
    signature = inspect.signature(command)

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        from geoeval.outputs import output_run

        bound = signature.bind_partial(*args, **kwargs).arguments
        inputs = [p for name, value in bound.items() if name not in OUTPUTS
                  for p in _paths(value)]
        with output_run(inputs) as outputs:
            for name, (flag, kind, suffixes) in OUTPUTS.items():
                value = bound.get(name)
                if value is None:
                    continue
                if kind == "file":
                    outputs.file(value, flag, suffixes=suffixes)
                else:
                    outputs.folder(value, flag)
            result = command(*args, **kwargs)
        if outputs.written and not bound.get("quiet"):
            print("wrote " + outputs.describe(), file=sys.stderr)
        return result

    return run


def guard_all(app: typer.Typer) -> None:
    """Apply :func:`guarded` to every command of ``app`` and of its command groups."""
    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = guarded(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            guard_all(group.typer_instance)
