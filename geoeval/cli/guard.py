"""The output guard of every command: each output option it was given checked before
the work (:data:`geoeval.output_targets.OUTPUTS`, the one table of outputs), every file it
writes renamed into place (uploaded, for a URL of object storage) only when the whole
command has succeeded. Every output option takes a local path or a URL
(:func:`output_value`)."""

from __future__ import annotations

import copy
import functools
import inspect
import os
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from geoeval.locations import is_url
from geoeval.output_targets import OUTPUTS as ALL_OUTPUTS

# Every other path-valued parameter of a command is one of its inputs.
OUTPUTS = {o.name: o for o in ALL_OUTPUTS}  # a command's parameter name -> its output


def _stdout_usage(bound: dict[str, Any]) -> None:
    """``-`` (standard output) given to an output that cannot take it, or to two
    outputs: a usage error (geoeval.output_targets.stdout_refusal is the rule)."""
    import importlib

    from geoeval.output_targets import STDOUT, stdout_refusal

    # the click typer uses (its own copy, typer._click, since typer 0.24)
    click = importlib.import_module(typer.BadParameter.__module__)  # click.exceptions
    package = typer.BadParameter.__module__.rpartition(".")[0]
    ctx = importlib.import_module(f"{package}.globals").get_current_context(silent=True)
    taken = []
    for name, o in OUTPUTS.items():
        value = bound.get(name)
        if value is None or os.fspath(value) != STDOUT:
            continue
        flag, refusal = o.flag, stdout_refusal(o.flag, o.kind)
        if refusal is not None:
            raise click.BadParameter(refusal, ctx=ctx, param_hint=f"'{flag}'")
        taken.append(flag)
    if len(taken) > 1:
        raise click.UsageError(f"{' and '.join(taken)} both name '-' (standard output); "
                               "give all but one of them a file", ctx=ctx)


def output_value(text: str) -> Path | str:
    """An output option's value: a URL of object storage or the web kept as its text
    (a :class:`~pathlib.Path` would fold its ``//``; the web is refused before the
    work, with the option named), anything else a local path."""
    return text if is_url(text) else Path(text)


def _taking_urls(annotation: Any) -> Any:
    """``Annotated[T, typer.Option(...)]`` with the option parsed by
    :func:`output_value` (a copy: the option may be shared by other commands)."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return annotation
    base, *extras = typing.get_args(annotation)
    infos = []
    for info in extras:
        if isinstance(info, typer.models.ParameterInfo) and info.parser is None \
                and getattr(info, "click_type", None) is None:
            info = copy.copy(info)
            info.parser = output_value
            info.metavar = info.metavar or "<path>"  # as click names a Path's
        infos.append(info)
    return typing.Annotated[(base, *infos)]


def _paths(value: Any) -> list[Path | str]:
    """The inputs in a parameter's value: paths, and URLs given as text."""
    if isinstance(value, Path) or (isinstance(value, str) and is_url(value)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, Path) or (isinstance(v, str) and is_url(v))]
    return []


def guarded(command: Callable[..., Any]) -> Callable[..., Any]:
    """Run a command inside one output run (:func:`geoeval.outputs.output_run`), its
    messages naming the command line's options (:func:`geoeval.validate.option_name`).

    Before the command starts, every output option it was given is checked (its
    folder exists and is writable, it is not one of the command's inputs, no two
    outputs share a path); every file it writes is renamed into place only when
    the whole command has succeeded, and a line on stderr says what was written.
    Every output option takes a URL of object storage too (:func:`output_value`).
    """
    signature = inspect.signature(command, eval_str=True)
    parsed = signature.replace(parameters=[
        p.replace(annotation=_taking_urls(p.annotation)) if p.name in OUTPUTS else p
        for p in signature.parameters.values()])

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        from geoeval.heap import memory_kept
        from geoeval.outputs import declare, output_run
        from geoeval.parallel import collector_paused
        from geoeval.validate import command_line_names

        bound = signature.bind_partial(*args, **kwargs).arguments
        inputs = [p for name, value in bound.items() if name not in OUTPUTS
                  for p in _paths(value)]
        _stdout_usage(bound)
        # messages made inside name the options (--resolution), not the keywords
        with collector_paused(), memory_kept(), output_run(inputs) as outputs, \
                command_line_names():
            declare(outputs, bound, flags=True)
            result = command(*args, **kwargs)
        written = outputs.describe()
        if written and not bound.get("quiet"):
            print("wrote " + written, file=sys.stderr)
        return result

    run.__signature__ = parsed  # type: ignore[attr-defined]  # what Typer reads
    run.__annotations__ = {p.name: p.annotation for p in parsed.parameters.values()}
    return run


def guard_all(app: typer.Typer) -> None:
    """Apply :func:`guarded` to every command of ``app`` and of its command groups."""
    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = guarded(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            guard_all(group.typer_instance)
