"""``geoeval boxes …``: the box-based challenges (VOC, COCO, ROBIN, Neovision2).

A Typer sub-app; each protocol's commands live in ``geoeval.cli.boxes_<name>``
and expose ``register(boxes_app)``.
"""

from __future__ import annotations

import typer

from geoeval.cli.options import command_group

# protocol modules geoeval.cli.boxes_<name>, each with register(boxes_app)
BOX_COMMANDS: tuple[str, ...] = ("voc", "coco", "robin", "neovision2")

boxes_app = command_group(
    "boxes", "Box-based challenges: PASCAL VOC, COCO, ROBIN, DARPA Neovision2.",
    (f"geoeval.cli.boxes_{name}" for name in BOX_COMMANDS))


def register(app: typer.Typer) -> None:
    """Add the ``boxes`` command group to the main app."""
    app.add_typer(boxes_app, name="boxes")
