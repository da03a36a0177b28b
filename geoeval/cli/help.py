"""How every command's help is laid out: click's help formatter, in sections.

Typer's rich help puts an option's names, second names, short names, type and
help in six table columns; at 80 columns the help column is then about 23
characters wide and ``geoeval score -h`` runs to 250 lines. Here click's own
formatter lays the help out in two columns (the help column about 48
characters wide at 80 columns), and two things are added:

* sections: an option's ``rich_help_panel`` (Typer's own parameter) names its
  section; ``-h``/``--help`` shows the sections of :data:`SHOWN` in full and
  every other section as one line of option names (``Inputs: --band,
  --layer, …``), so that every option can be found; ``--help-all`` shows them
  all in full;
* examples: the command's epilog, one ``$ geoeval …`` command per line, laid out
  for the help's width with `` \\`` continuation lines, never wrapped mid-command,
  so that each pastes into a shell as it is printed.

Flags are shown bare (``--quiet``, not ``--quiet <bool>``), arguments in the
usage line as click names them (``REFERENCE SUBMISSION``), and an option's
second long name (``--gt-format`` beside ``--ref-format``) parses but is left
out of the help (the command's text says the second names exist).
"""

from __future__ import annotations

import copy
import inspect
import re
import shlex
import typing
from collections.abc import Iterable, Iterator
from typing import Annotated, Any

import typer
from typer import echo
from typer.core import TyperCommand, TyperGroup

# --- section titles: an option's rich_help_panel -------------------------------------
OPTIONS = "Options"  # an option without a panel
OUTPUTS = "Outputs"
MORE_OUTPUTS = "More outputs"
INPUTS = "Inputs"
MATCHERS = "Matchers"
MALLOWS = "Mallows score"
STRATA = "By size and zone"
BOOTSTRAP = "Bootstrap"
GEOMETRY = "Geometry measures"
FOLDERS = "Folders of scenes"
ENGINE = "Engine"
ORDER = "Ordering"
FORMATS = "Formats per side"

#: The sections ``-h`` shows in full; any other section is one line of names there.
SHOWN = frozenset({OPTIONS, OUTPUTS})

#: How many examples ``-h`` shows (``--help-all``: every one).
EXAMPLES = 4
#: ``ctx.meta`` key set by ``--help-all``: every section in full.
HELP_ALL = "geoeval.help_all"
#: Widest first column (option names and metavar); a longer one gets its own line.
COLUMN = 26
#: Indent of an example's continuation lines, under its first line's.
CONTINUATION = 4
#: Stands for a hyphen while click wraps text: it breaks lines at hyphens
#: (``docs/html-`` / ``report.md``, ``--boundary-`` / ``width``), never at this one.
_HYPHEN = "\u2011"


class _Plain:
    """What commands and groups share: click's formatter, hyphens kept whole, the
    help option shown bare."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rich_markup_mode = None  # click's formatter (TyperCommand.format_help)

    def get_help(self, ctx: Any) -> str:
        return super().get_help(ctx).replace(_HYPHEN, "-")  # type: ignore[misc]

    def format_help_text(self, ctx: Any, formatter: Any) -> None:
        text = self.help  # type: ignore[attr-defined]
        self.help = _unbroken(text)
        try:
            super().format_help_text(ctx, formatter)  # type: ignore[misc]
        finally:
            self.help = text

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class _HelpAll:
    """What commands and groups share: ``--help-all`` (every section and every
    example) and the *Examples* of the epilog."""

    _help_all: Any = None

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)  # type: ignore[misc]
        every = self._help_all_option(ctx)
        return params if every is None else [*params, every]

    def _help_all_option(self, ctx: Any) -> Any:
        """``--help-all``: the help option's twin that shows every section and every
        example (a copy of click's own help option, whatever click Typer uses).
        Every command takes it; its help lists it when ``-h`` leaves something out."""
        if self._help_all is None:
            option = super().get_help_option(ctx)  # type: ignore[misc]
            if option is None:
                return None

            def show_all(ctx: Any, param: Any, value: bool) -> None:
                if value and not ctx.resilient_parsing:
                    ctx.meta[HELP_ALL] = True
                    echo(ctx.get_help(), color=ctx.color)
                    ctx.exit()

            every = copy.copy(option)
            every.name, every.opts, every.secondary_opts = "help_all", ["--help-all"], []
            every.callback, every.metavar = show_all, ""
            every.help = "Show every option and example and exit."
            self._help_all = every
        return self._help_all

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        """The *Examples*, each laid out by :func:`example_lines`."""
        commands = _examples(self)
        if not commands:
            return
        shown = commands if ctx.meta.get(HELP_ALL) else commands[:EXAMPLES]
        with formatter.section("Examples"):
            indent = formatter.current_indent
            for command in shown:
                for line in example_lines(command, formatter.width - indent):
                    formatter.write(" " * indent + line + "\n")
            if len(shown) < len(commands):
                formatter.write(f"{'':>{indent}}({len(commands) - len(shown)} more: "
                                f"{ctx.command_path} --help-all)\n")


class HelpCommand(_HelpAll, _Plain, TyperCommand):
    """A command whose help is laid out as this module says (``cls`` of every
    command, :func:`geoeval.cli.groups.add_command`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for p in self.params:  # messages name an argument as the usage line does
            if getattr(p, "param_type_name", "") == "argument" and p.metavar is None:
                p.metavar = p.name.upper() + ("..." if p.nargs != 1 else "")

    # --- -h, --help and --help-all ------------------------------------------------
    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.help = ("Show the main options and exit." if _folded(self, ctx)
                           else "Show this message and exit.")
        return option

    # --- usage, options, examples ------------------------------------------------
    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS] REFERENCE SUBMISSION`` as click writes it (this Typer writes
        ``{reference} {submission}``)."""
        pieces = [self.options_metavar] if self.options_metavar else []
        return pieces + [_usage_name(p) for p in self.get_params(ctx)
                         if getattr(p, "param_type_name", "") == "argument"]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        full = ctx.meta.get(HELP_ALL, False)
        sections = _sections(self, ctx)
        arguments = sections.pop("Arguments", [])
        shown = {t: ps for t, ps in sections.items() if full or t in SHOWN}
        width = min(max((len(_record(p, ctx)[0]) for ps in shown.values() for p in ps),
                        default=0), COLUMN)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(_aligned([_record(p, ctx) for p in arguments], width),
                                   col_max=COLUMN)
        folded = {}
        for title, params in sections.items():
            if title in shown:
                with formatter.section(title):
                    formatter.write_dl(_aligned([_record(p, ctx) for p in params], width),
                                       col_max=COLUMN)
            else:
                folded[title] = _unbroken(", ".join(_names(p) for p in params))
        if folded:
            with formatter.section(f"More options ({ctx.command_path} --help-all)"):
                formatter.write_dl(list(folded.items()), col_max=COLUMN)


class HelpGroup(_HelpAll, _Plain, TyperGroup):
    """A command group with the same help: its commands' descriptions whole
    (click cuts them at the column's end with ``...``)."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                text = command.short_help or (command.help or "").split("\n\n")[0]
                rows.append((name, _unbroken(" ".join(text.split()))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows, col_max=COLUMN)


def _unbroken(text: str | None) -> str | None:
    """``text`` with its hyphens as :data:`_HYPHEN` (put back by ``get_help``)."""
    return None if text is None else text.replace("-", _HYPHEN)


def _folded(command: Any, ctx: Any) -> bool:
    """Whether ``-h`` leaves out a section or an example of ``command``."""
    return (any(title not in SHOWN for title in _sections(command, ctx, helps=False)
                if title != "Arguments")
            or len(_examples(command)) > EXAMPLES)


def _examples(command: Any) -> list[str]:
    """The commands of ``command``'s *Examples* (its epilog's ``$ …`` lines)."""
    return [line[2:] for line in (command.epilog or "").splitlines()
            if line.startswith("$ ")]


def _sections(command: Any, ctx: Any, helps: bool = True) -> dict[str, list[Any]]:
    """``command``'s parameters by section, in their order: ``Arguments`` first, then
    the sections of :data:`SHOWN`, then the others; ``-h`` and ``--help-all`` last
    in their section (``helps``; left out otherwise)."""
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    out: dict[str, list[Any]] = {}
    for param in params:
        if getattr(param, "param_type_name", "") == "argument":
            title = "Arguments"
        else:
            title = getattr(param, "rich_help_panel", None) or OPTIONS
        out.setdefault(title, []).append(param)
    if helps:
        home = OPTIONS if OPTIONS in out or OUTPUTS not in out else OUTPUTS
        out.setdefault(home, []).append(command.get_help_option(ctx))
        if _folded(command, ctx):
            out[home].append(command._help_all_option(ctx))
    order = ["Arguments", *(t for t in out if t in SHOWN), *out]
    return {t: out[t] for t in dict.fromkeys(order) if t in out}


def _names(param: Any) -> str:
    """An option's names in the folded list: its first long name (``-m`` too), with
    its negative (``--approximate/--exact``)."""
    long = next((o for o in param.opts if o.startswith("--")), param.opts[0])
    second = "".join(f"/{o}" for o in param.secondary_opts if o.startswith("--"))
    return long + second


def _record(param: Any, ctx: Any) -> tuple[str, str]:
    """click's help record of ``param``: an argument by its usage name (no type: the
    usage line says what it is), an option by its first long name (and short one),
    a flag bare."""
    if getattr(param, "param_type_name", "") == "argument":
        record = param.get_help_record(ctx)
        text = (record[1] if record else "").replace("[required]", "").strip()
        return _usage_name(param).strip("[]"), _unbroken(text)
    opts, metavar = param.opts, param.metavar
    param.opts = ([o for o in opts if not o.startswith("--")]
                  + [next(o for o in opts if o.startswith("--"))])
    if getattr(param, "is_flag", False):
        param.metavar = ""
    try:
        record = param.get_help_record(ctx)
    finally:
        param.opts, param.metavar = opts, metavar
    if record is None:
        return ("", "")
    # a repeatable option takes one value at a time: <str>, not <list[str]>
    return re.sub(r"<list\[(\w+)\]>", lambda m: f"<{m[1].lower()}>", record[0]), \
        _unbroken(record[1])


def _aligned(rows: list[tuple[str, str]], width: int) -> list[tuple[str, str]]:
    """Rows whose help starts in one column in every section (click aligns each
    section on its own): a short first column padded to ``width``."""
    return [(first.ljust(width) if second and len(first) < width else first, second)
            for first, second in rows]


def _usage_name(param: Any) -> str:
    name = param.metavar or param.name.upper()
    usage = name if param.required else f"[{name}]"
    if param.nargs != 1 and param.metavar is None:
        usage += "..."
    return usage


def example_lines(command: str, width: int, more: int = CONTINUATION) -> list[str]:
    """``command`` as lines of at most ``width`` characters that paste as one command:
    broken between words (an option and its value kept together where they fit),
    each line but the last ending in `` \\``, the following ones indented by ``more``.

    >>> example_lines("geoeval score ref.tif sub.tif -m bgm --json r.json", 32)
    ['geoeval score ref.tif sub.tif \\\\', '    -m bgm --json r.json']
    """
    lines: list[str] = []
    line = ""
    for unit in _units(_words(command)):
        candidates = [unit] if len(unit) + more + 2 <= width else unit.split(" ")
        for part in candidates:
            if not line:
                line = part
            elif len(line) + 1 + len(part) + 2 <= width:
                line += " " + part
            else:
                lines.append(line + " \\")
                line = " " * more + part
    return [*lines, line] if line else lines


def _words(command: str) -> list[str]:
    """The shell words of ``command``, quotes kept as written (a comment dropped)."""
    lexer = shlex.shlex(command, posix=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def _units(words: Iterable[str]) -> Iterator[str]:
    """Words kept together on a line: an option with the value that follows it."""
    words = list(words)
    k = 0
    while k < len(words):
        word = words[k]
        if (word.startswith("-") and k + 1 < len(words)
                and not words[k + 1].startswith("-") and "=" not in word):
            yield f"{word} {words[k + 1]}"
            k += 2
        else:
            yield word
            k += 1


def joined(lines: Iterable[str]) -> Iterator[str]:
    """The commands of printed example lines (`` \\`` continuations joined): what a
    shell runs when they are pasted. Lines that are not ``geoeval …`` commands are
    skipped."""
    current = ""
    for raw in lines:
        text = raw.strip()
        if current:
            current += " " + text.removesuffix("\\").strip()
        elif text.startswith("geoeval"):
            current = text.removesuffix("\\").strip()
        else:
            continue
        if not text.endswith("\\"):
            yield " ".join(current.split())
            current = ""


def in_section(parameter: inspect.Parameter, section: str | None) -> inspect.Parameter:
    """``parameter`` (an ``Annotated[..., typer.Option(...)]`` one) in the help's
    ``section`` (its ``rich_help_panel``) unless it names one itself."""
    args = typing.get_args(parameter.annotation)
    if section is None or not args:
        return parameter
    info = []
    for a in args[1:]:
        if isinstance(a, typer.models.OptionInfo) and a.rich_help_panel is None:
            a = copy.copy(a)
            a.rich_help_panel = section
        info.append(a)
    return parameter.replace(annotation=Annotated[(args[0], *info)])


def examples(module_doc: str | None, prefix: str) -> str | None:
    """A command's *Examples*, rio style: the ``$ geoeval …`` lines of its module's
    docstring that start with ``prefix`` (continuation lines joined), one per line
    (its help's epilog, laid out by :meth:`HelpCommand.format_epilog`)."""
    lines, current = [], ""
    for raw in (module_doc or "").splitlines():
        text = raw.strip()
        if current:
            current += " " + text.rstrip("\\").strip()
            if not text.endswith("\\"):
                lines.append(current)
                current = ""
        elif text.startswith("$ " + prefix + " ") or text == "$ " + prefix:
            current = text[2:].rstrip("\\").strip()
            if not text.endswith("\\"):
                lines.append(current)
                current = ""
    return "\n".join("$ " + " ".join(line.split()) for line in lines) or None


def help_text(command: Any, path: Iterable[str] = (), *, full: bool = False,
              width: int = 80) -> str:
    """What ``geoeval PATH -h`` (``--help-all`` when ``full``) prints at ``width``
    columns; ``command`` is the root click command (:data:`geoeval.cli.main.command`)."""
    # click's formatter leaves two of a terminal's columns free (not of a width given)
    ctx = command.make_context("geoeval", [], resilient_parsing=True,
                               terminal_width=width - 2)
    for name in path:
        command = command.commands[name]
        ctx = command.make_context(name, [], parent=ctx, resilient_parsing=True)
    if full:
        ctx.meta[HELP_ALL] = True
    return ctx.get_help()


def leaves(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group under ``command`` with its path (``("boxes", "voc")``),
    ``command`` itself first."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from leaves(sub, (*path, name))
