"""Entry point of the ``geoeval`` command.

Each command lives in its own module of this package and exposes
``register(app)``; commands parse options, call the public API and print.
Every :class:`geoeval.errors.GeoevalError` becomes one line on stderr and exit
code 2.
"""

from __future__ import annotations

import importlib
import sys

import typer

# command modules of geoeval.cli, each with register(app)
COMMANDS: tuple[str, ...] = ("score", "boxes", "rank", "audit")

app = typer.Typer(
    name="geoeval",
    help="Evaluate and rank object detectors: rasters, vector layers and boxes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for _name in COMMANDS:
    importlib.import_module(f"geoeval.cli.{_name}").register(app)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (2 on a :class:`GeoevalError`)."""
    from geoeval.errors import GeoevalError

    try:
        app(args=argv, standalone_mode=False)
    except GeoevalError as exc:
        print(f"geoeval: error: {exc}", file=sys.stderr)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        print("geoeval: aborted", file=sys.stderr)
        return 1
    except Exception as exc:  # click usage errors
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            return 2
        raise
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
