"""Entry point of the ``geoeval`` command.

Each command lives in its own module of this package and exposes
``register(app)``; commands parse options, call the public API and print.
Every :class:`geoeval.errors.GeoevalError` and every usage error becomes one
line on stderr and exit code 2. The edges of a run are handled here, once for
every command: Ctrl-C and SIGTERM stop it with one line and exit 130 / 143
(:mod:`geoeval.cancel`), and a closed pipe on stdout or stderr only stops the
printing there (:mod:`geoeval.streams`).
"""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path
from typing import Any

import typer

from geoeval.cli.groups import command_group
from geoeval.cli.guard import guard_all

# command modules of geoeval.cli, each with register(app)
COMMANDS: tuple[str, ...] = ("score", "boxes", "rank", "audit")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            text = version("geoeval")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            text = "unknown (not installed)"
        typer.echo(f"geoeval {text}")
        raise typer.Exit()


def _root(
    show_version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True,
        help="Print geoeval's version and exit."),
) -> None:
    """Evaluate and rank object detectors: rasters, vector layers and boxes."""


def build_app() -> typer.Typer:
    """The app and its commands, from the registries as they are now: a matcher (with
    its parameters) or a box protocol registered since geoeval was imported gets its
    command-line choices and options when the app is built again."""
    built = command_group(
        "geoeval", "Evaluate and rank object detectors: rasters, vector layers and boxes.",
        (f"geoeval.cli.{name}" for name in COMMANDS),
        add_completion=False, pretty_exceptions_enable=False)
    built.callback()(_root)
    guard_all(built)  # every command: outputs checked first, written all or nothing
    return built


def build_command() -> Any:
    """The click command of :func:`build_app` (what :func:`main` runs; help laid out by
    :mod:`geoeval.cli.help`)."""
    return typer.main.get_command(build_app())


app = build_app()

#: The click command (help laid out by geoeval.cli.help).
command = typer.main.get_command(app)


def _click_exception(exc: BaseException) -> bool:
    """Whether ``exc`` is a click exception, of the click typer actually uses.

    typer ≥ 0.24 vendors click as ``typer._click`` (its classes are not
    ``click.ClickException``); older typer releases use click itself. Both name
    the base class ``ClickException``, so the check is by name in the MRO.
    """
    return any(cls.__name__ == "ClickException" for cls in type(exc).__mro__)


def _usage_message(exc: BaseException) -> str:
    """One line for a click usage error: the command, the problem, where help is."""
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "geoeval"
    text = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
    hint = f" (see '{command} --help')" if ctx is not None else ""
    return f"{command}: error: {text}{hint}{_unquoted_pattern_hint(text)}"


def _plain_reason(exc: BaseException) -> str | None:
    """What is wrong with an option's value, in geoeval's words, when typer's check of
    it (pydantic, since typer 0.29) said it in pydantic's: ``Value error, 'dasq' is not
    one of 'local', 'dask'.``, ``Input should be a valid integer, unable to parse string
    as an integer``. ``None``: the message is already plain (geoeval's own checks)."""
    cause = exc.__cause__
    if type(cause).__name__ != "ValidationError" or not hasattr(cause, "errors"):
        return None
    errors = cause.errors()
    if not errors:
        return None
    first = errors[0]
    value, kind = first.get("input"), first.get("type", "")
    describe = getattr(getattr(exc, "param", None), "type_descriptor", None)
    choices = getattr(describe, "choices", None) if getattr(describe, "is_choice", False) \
        else None
    if choices:
        names = (str(getattr(c, "value", c)) for c in choices)
        return f"{value!r} is not one of {', '.join(names)}"
    if kind == "int_parsing":
        return f"must be a whole number, got {value!r}"
    if kind in ("float_parsing", "float_type"):
        return f"must be a number, got {value!r}"
    error = first.get("ctx", {}).get("error")
    if kind == "value_error" and error is not None:
        return str(error).rstrip(".")
    return str(first.get("msg", "")).removeprefix("Value error, ") or None


def _unquoted_pattern_hint(text: str) -> str:
    """A hint when extra arguments look like a file pattern the shell expanded.

    ``geoeval score tiles/*.gpkg dets.gpkg`` reaches us as every tile's name: the
    layer-of-tiles form needs the pattern quoted (``'tiles/*.gpkg'``).
    """
    if not text.startswith("Got unexpected extra argument"):
        return ""
    inside = re.search(r"\(([^()]*)\)$", text)
    names = inside.group(1).split() if inside else []
    suffixes = {Path(n).suffix.lower() for n in names}
    if not names or len(suffixes) != 1 or not all(Path(n).is_file() for n in names):
        return ""
    folder = Path(names[0]).parent
    return (f"; if these are the tiles of one layer, quote the pattern so the shell "
            f"does not expand it: '{folder / ('*' + suffixes.pop())}'")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code: 0, 2 on a usage error or a
    :class:`GeoevalError`, 130 / 143 when Ctrl-C / SIGTERM stopped the run (then
    it printed ``geoeval: interrupted; no output was written``)."""
    from geoeval import cancel, streams

    with streams.guarded(), cancel.handled() as run:
        try:
            code = _main(argv)
        except KeyboardInterrupt:  # one that did not pass through click
            code = cancel.exit_code(signal.SIGINT)
        if run.stopped or code == cancel.exit_code(signal.SIGINT):
            return run.report()
        return code


def _main(argv: list[str] | None) -> int:
    import warnings

    from geoeval.errors import GeoevalError, GeoevalWarning

    try:
        with warnings.catch_warnings():  # the CLI prints a result's warnings itself (one line
            warnings.simplefilter("ignore", GeoevalWarning)  # each, --strict), not twice
            # obj: the arguments as given, for the HTML report's provenance
            # (options.command_line); click's result is the command's return value
            # (None), or the code of a typer.Exit; typer turns KeyboardInterrupt into
            # Exit(130)
            code = command.main(args=argv, standalone_mode=False,  # type: ignore[attr-defined]
                                obj={"argv": list(sys.argv[1:] if argv is None else argv)})
    except GeoevalError as exc:
        print(f"geoeval: error: {' '.join(exc.cli_text().split())}", file=sys.stderr)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        print("geoeval: aborted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not _click_exception(exc):
            raise
        if type(exc).__name__ == "NoArgsIsHelpError":
            # `geoeval` or `geoeval boxes` alone: the help, as click does, exit 2
            # click puts the help in the message; typer's rich help printed itself
            # while the message was made (the message is then empty)
            text = exc.format_message()  # type: ignore[attr-defined]
            if text.strip():
                print(text)
            return 2
        if type(exc).__name__ in ("Abort",):
            print("geoeval: aborted", file=sys.stderr)
            return 130
        reason = _plain_reason(exc)
        if reason is not None:
            exc.message = reason  # type: ignore[attr-defined]
        if hasattr(exc, "ctx"):
            print(_usage_message(exc), file=sys.stderr)
        else:
            print(f"geoeval: error: {' '.join(exc.format_message().split())}",  # type: ignore[attr-defined]
                  file=sys.stderr)
        return int(getattr(exc, "exit_code", 2) or 2)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
