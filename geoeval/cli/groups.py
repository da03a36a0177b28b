"""Commands built from shared pieces: options declared once and taken as one parameter
(:class:`Group`, expanded in place by :func:`with_groups`), each command added the one
way (:func:`add_command`: ``-h``, help laid out by :mod:`geoeval.cli.help` with the
*Examples* of its module's docstring) and command groups (:func:`command_group`)."""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Iterable
from typing import Annotated, Any

import typer

from geoeval.cli import help as sections
from geoeval.cli.callbacks import rule


class Group:
    """Options declared once and shared by several commands (rio's shared options,
    taken as one parameter, as FastAPI's ``Depends``).

    A command's parameter whose default is a ``Group`` stands, in its help and on
    its command line, for the group's options, in its place; the command receives
    ``build(**those options)``. :func:`add_command` expands them
    (:func:`with_groups`). ``parameters`` defaults to ``build``'s own. ``section``:
    the help's section (:mod:`geoeval.cli.help`) of those without one of their own.
    """

    def __init__(self, build: Callable[..., Any],
                 parameters: list[inspect.Parameter] | Callable[[], list[inspect.Parameter]]
                 | None = None, section: str | None = None) -> None:
        self.build = build
        self._parameters = parameters
        self.section = section

    @property
    def parameters(self) -> list[inspect.Parameter]:
        """The group's options, in its help section (a callable giving them is asked each
        time: the matcher registry's parameters as they are when a command is built)."""
        if self._parameters is None:
            found = list(inspect.signature(self.build, eval_str=True).parameters.values())
        elif callable(self._parameters):
            found = list(self._parameters())
        else:
            found = list(self._parameters)
        return [sections.in_section(p, self.section) for p in found]


def with_groups(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with each :class:`Group` parameter replaced by the group's options
    (the signature Typer reads), called with what each group builds from them.

    A decorator of the commands (so that calling one from Python takes the options
    too); :func:`add_command` applies it as well (expanding twice changes nothing).
    """
    command = getattr(command, "__grouped__", command)  # expanded again from the original
    signature = inspect.signature(command, eval_str=True)
    groups = {p.name: p.default for p in signature.parameters.values()
              if isinstance(p.default, Group)}
    if not groups:
        return command
    options = {name: group.parameters for name, group in groups.items()}
    params = [q for p in signature.parameters.values()
              for q in (options[p.name] if p.name in groups else [p])]
    names = [q.name for q in params]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:  # a programming error, caught by the CLI tests
        raise TypeError(f"{command.__name__}: options declared twice: {', '.join(clash)}")

    expanded = signature.replace(parameters=params)

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        bound = expanded.bind(*args, **kwargs)  # a direct call (tests) as Typer's
        bound.apply_defaults()
        values = dict(bound.arguments)
        for name, group in groups.items():
            values[name] = group.build(**{q.name: values.pop(q.name)
                                          for q in options[name]})
        return command(**values)

    run.__signature__ = expanded  # type: ignore[attr-defined]
    run.__grouped__ = command  # type: ignore[attr-defined]
    run.__annotations__ = {q.name: q.annotation for q in params}
    return run


def ruled(annotation: Any, name: str, help: str, default: Any) -> inspect.Parameter:
    """An option whose range is ``validate.RULES[name]`` (:func:`rule`), as a keyword
    parameter of a :class:`Group`: one parametrised declaration instead of one
    ``Annotated[..., typer.Option(help=..., callback=rule(name))]`` per option."""
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                             annotation=Annotated[annotation, typer.Option(
                                 help=help, callback=rule(name))])


def add_command(app: typer.Typer, name: str, command: Callable[..., Any],
                module_doc: str | None) -> None:
    """Register ``command`` as ``name`` on ``app`` (the one way every command is
    added): its :class:`Group` options expanded, its help laid out by
    :mod:`geoeval.cli.help` with the *Examples* of ``module_doc``, and ``-h`` as
    ``--help``."""
    from geoeval.cli.help import HelpCommand

    prefix = " ".join(p for p in ("geoeval", _group_name(app), name) if p)
    app.command(name, cls=HelpCommand, context_settings=CONTEXT,
                epilog=sections.examples(module_doc, prefix))(with_groups(command))


def command_group(name: str, help: str, modules: Iterable[str], **settings: Any) -> typer.Typer:
    """A Typer app (the main one or a group such as ``boxes``) whose commands are
    added by each module of ``modules``' ``register(app)``."""
    from geoeval.cli.help import HelpGroup

    app = typer.Typer(name=name, help=help, no_args_is_help=True, context_settings=CONTEXT,
                      cls=HelpGroup, rich_markup_mode=None, **settings)
    for module in modules:
        importlib.import_module(module).register(app)
    return app


def _group_name(app: typer.Typer) -> str:
    return "" if app.info.name in (None, "geoeval") else str(app.info.name)


#: Every command and group: ``-h`` as ``--help``, help laid out for 80 columns at most.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 80}
