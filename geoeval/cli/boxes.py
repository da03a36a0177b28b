"""``geoeval boxes …``: one command per registered box protocol.

The commands come from the registry (:mod:`geoeval.challenges.registry`): an
entry that names a command written by hand (``geoeval.cli.boxes_voc`` …) gets
that one; any other entry gets a command generated from the entry:
``REFERENCE SUBMISSION``, one option per parameter (its choices or its range
checked at the edge), ``--json``/``--quiet``/``--strict``, and the entry's
tables printed. A protocol registered before the command line is built (a
plug-in, at import time) is a command like the others.

Examples on the bundled sample (they run as written from a checkout):

    $ geoeval boxes voc sample_data/boxes/voc/gt sample_data/boxes/voc/det
    $ geoeval boxes coco sample_data/boxes/coco/instances.json \
          sample_data/boxes/coco/results.json
    $ geoeval boxes dota sample_data/boxes/dota/labelTxt sample_data/boxes/dota/det
    $ geoeval boxes crowdai sample_data/boxes/crowdai/annotation.json \
          sample_data/boxes/crowdai/results.json
    $ geoeval boxes robin sample_data/boxes/robin/gt sample_data/boxes/robin/run1 \
          sample_data/boxes/robin/run2 sample_data/boxes/robin/run3
    $ geoeval boxes robin-categories sample_data/boxes/robin/gt \
          sample_data/boxes/robin/run1
    $ geoeval boxes neovision2 sample_data/boxes/neovision2/truth \
          sample_data/boxes/neovision2/results
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from geoeval.challenges import registry
from geoeval.cli.callbacks import checked
from geoeval.cli.groups import CONTEXT, add_command
from geoeval.cli.input_paths import input_path
from geoeval.cli.options import REPORTING, AnonOpt
from geoeval.cli.printers import Reporting


def generated_command(protocol: registry.BoxProtocol) -> Callable[..., Any]:
    """The command of an entry without one of its own (its signature is Typer's input)."""
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter("reference", positional,
                          annotation=Annotated[Path, typer.Argument(
                              help=protocol.reference, parser=input_path)]),
        inspect.Parameter("submission", positional,
                          annotation=Annotated[Path, typer.Argument(
                              help=protocol.submission, parser=input_path)]),
        *(_option(protocol.name, p) for p in protocol.parameters),
        inspect.Parameter("out", positional, default=REPORTING, annotation=Reporting),
    ]

    def command(reference: Path, submission: Path, out: Reporting = REPORTING,
                **options: Any) -> None:
        values = {k: v.value if isinstance(v, Enum) else v for k, v in options.items()}
        result = protocol.run(reference, submission, **values)
        out.finish(result, registry.resolve(protocol.tables))

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__name__ = f"{protocol.name.replace('-', '_')}_command"
    command.__doc__ = protocol.title + (f"\n\nReference: {protocol.source}."
                                        if protocol.source else "")
    return command


def _option(protocol: str, p: registry.Option) -> inspect.Parameter:
    """One parameter as a Typer option: a choice, a flag, or a checked value."""
    kind: Any = p.value_type
    settings: dict[str, Any] = {"help": p.help}
    default = p.default
    if p.choices:
        kind = Enum(f"{protocol}_{p.keyword}", {str(c): str(c) for c in p.choices}, type=str)
        default = None if p.default is None else kind(str(p.default))
    elif kind is not bool:
        settings["callback"] = checked(lambda name, value, p=p: p.check(value, name))
    if p.default is None:
        kind = kind | None
    return inspect.Parameter(p.keyword, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                             default=default,
                             annotation=Annotated[kind, typer.Option(p.option, **settings)])


def _command_and_doc(protocol: registry.BoxProtocol) -> tuple[Callable[..., Any], str]:
    """The entry's command and the text its help's examples come from."""
    if protocol.command is None:
        return generated_command(protocol), "\n".join(protocol.examples)
    command = registry.resolve(protocol.command)
    return command, sys.modules[command.__module__].__doc__ or ""


def boxes_group() -> typer.Typer:
    """The ``boxes`` command group, one command per registered protocol."""
    from geoeval.cli.help import HelpGroup, examples

    app = typer.Typer(name="boxes", no_args_is_help=True, context_settings=CONTEXT,
                      cls=HelpGroup, rich_markup_mode=None,
                      epilog=examples(__doc__, "geoeval boxes"),
                      help="Box-based challenges: "
                           + ", ".join(registry.names()) + ". Every input may also be a "
                           "URL: s3://, gs://, az:// (a prefix is a folder), https:// "
                           "(files only: the web has no listing).")
    for name in registry.names():
        command, doc = _command_and_doc(registry.get(name))
        add_command(app, name, command, doc)

    @app.callback()
    def inputs(anon: AnonOpt = False) -> None:
        """Options of every box protocol's inputs (before the protocol's name)."""
        from geoeval.io.stores import use_anon

        use_anon(anon)

    return app


def register(app: typer.Typer) -> None:
    """Add the ``boxes`` command group to the main app."""
    app.add_typer(boxes_group(), name="boxes")
