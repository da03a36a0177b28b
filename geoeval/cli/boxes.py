"""``geoeval boxes …``: the box-based challenges (VOC, COCO, ROBIN, Neovision2).

A Typer sub-app; each protocol's commands live in ``geoeval.cli.boxes_<name>``
and expose ``register(boxes_app)``.
"""

from __future__ import annotations

import importlib

import typer

from geoeval.cli.options import CONTEXT

# protocol modules geoeval.cli.boxes_<name>, each with register(boxes_app)
BOX_COMMANDS: tuple[str, ...] = ("voc", "coco", "robin", "neovision2")

boxes_app = typer.Typer(
    name="boxes",
    help="Box-based challenges: PASCAL VOC, COCO, ROBIN, DARPA Neovision2.",
    no_args_is_help=True,
    context_settings=CONTEXT,
)

for _name in BOX_COMMANDS:
    importlib.import_module(f"geoeval.cli.boxes_{_name}").register(boxes_app)


def register(app: typer.Typer) -> None:
    """Add the ``boxes`` command group to the main app."""
    app.add_typer(boxes_app, name="boxes")
