"""What an output target is, before anything is written to it.

The one table of every output (:data:`OUTPUTS`: keyword, option, file or folder,
suffixes) that the API's and the command line's checks read; what a target's name
means: standard output (``-``), a special file (a FIFO, a device), a URL of object
storage (:mod:`geoeval.locations`; one folded by :class:`pathlib.Path` refused), a
local path and the input files beside it; the key that identifies a target, and the
names of the temporaries written beside it. :mod:`geoeval.outputs` runs the writing.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geoeval.errors import OutputError
from geoeval.locations import Location, is_url, locate

# files that belong to an input beside it (shapefile parts, GDAL sidecars)
_SIDECAR_SUFFIXES = (".shp", ".shx", ".dbf", ".prj", ".cpg", ".qix", ".sbn", ".sbx",
                     ".shp.xml", ".tfw", ".tifw", ".wld", ".aux.xml")
_GDAL_SIDECARS = (".aux.xml", ".ovr", ".msk")


#: The path that means standard output.
STDOUT = "-"
#: Outputs that may be standard output (``-``): the one-file text reports, by their
#: keyword (``json``) or option (``--json``).
STDOUT_OUTPUTS = ("json", "markdown", "html")
STDOUT_KEY = "<standard output>"


def is_stdout(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is standard output: ``-``, or a name of the file descriptor 1
    is open on (``/dev/stdout``, ``/dev/fd/1``)."""
    if os.fspath(path) == STDOUT:
        return True
    if not os.path.isabs(path) or not os.fspath(path).startswith(("/dev/", "/proc/")):
        return False
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except (OSError, ValueError):
        return False


def is_special(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is written in place rather than replaced: standard output, an
    existing FIFO, device or socket, or an existing name under ``/dev`` or ``/proc``
    (``/dev/stderr``, ``/dev/fd/3``: the file a descriptor is open on)."""
    if is_stdout(path):
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return (not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
            or os.path.abspath(path).startswith(("/dev/", "/proc/")))


def stdout_refusal(option: str, kind: str = "file") -> str | None:
    """Why ``option`` (an output of ``kind`` "file" or "folder") cannot be standard
    output, or ``None`` when it can."""
    if kind == "file" and option_key(option) in STDOUT_OUTPUTS:
        return None
    allowed = ", ".join(f"--{k}" for k in STDOUT_OUTPUTS)
    what = "a folder" if kind == "folder" else "a file"
    return f"'-' (standard output) takes a text report only ({allowed}); give {what} path"


def real_path(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def store_location(path: Any) -> Location | None:
    """The place in object storage or on the web that ``path`` names (text, or a
    :class:`~geoeval.locations.Location`), or ``None`` for a local path."""
    if isinstance(path, Location):
        return None if path.is_local or path.scheme == "vsi" else path
    if isinstance(path, str) and is_url(path):
        return locate(path)
    return None


def _folded_url(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a URL that :class:`~pathlib.Path` folded (``s3:/b/k`` from
    ``s3://b/k``), not a local path: its first part (``s3:``) is no folder here."""
    import re

    text = os.fspath(path)
    m = re.match(r"^([a-z0-9]+):/(?!/)", text)
    return (bool(m) and is_url(text.replace(":/", "://", 1))
            and not os.path.exists(m.group(1) + ":"))


def refuse_folded(path: str | os.PathLike[str], what: str) -> None:
    if _folded_url(path):
        url = os.fspath(path).replace(":/", "://", 1)
        raise OutputError(f"is {url} folded by pathlib.Path; give the URL as text{what}",
                          path)


def url_key(location: Location) -> str:
    """What identifies a URL target: its URL without query or trailing ``/``."""
    return "url:" + location.url.split("?", 1)[0].rstrip("/")


def shown(path: str | os.PathLike[str]) -> str:
    """``path`` as messages and reports name it: a URL without its secrets
    (:attr:`~geoeval.locations.Location.display`), a local path as given."""
    loc = store_location(path)
    return loc.display if loc is not None else os.fspath(path)


def output_target(path: str | os.PathLike[str]) -> Path | str:
    """An output as the writers pass it on: a :class:`~pathlib.Path`, or a URL kept as
    its text (a ``Path`` would fold its ``//``)."""
    return os.fspath(path) if store_location(path) is not None else Path(path)


def suffix_of(path: str | os.PathLike[str]) -> str:
    """The suffix of an output's name, lower case (``.png``), of a path or a URL."""
    loc = store_location(path)
    name = loc.name if loc is not None else Path(path).name
    return Path(name).suffix.lower()


def option_key(option: str) -> str:
    """``--csv-dir`` and ``csv_dir`` name the same output."""
    return option.lstrip("-").replace("-", "_")


def input_files(path: str | os.PathLike[str]) -> set[str]:
    """Real paths an input consists of: the file and its sidecars, or a folder's files."""
    p = Path(path)
    out = {real_path(p)}
    if p.is_dir():
        out.update(real_path(q) for q in p.rglob("*") if q.is_file())
    elif p.parent.is_dir():
        stem = p.name[: -len(p.suffix)] if p.suffix else p.name
        names = {stem + s for s in _SIDECAR_SUFFIXES} | {p.name + s for s in _GDAL_SIDECARS}
        lower = {n.lower() for n in names}
        with contextlib.suppress(OSError):
            out.update(real_path(q) for q in p.parent.iterdir() if q.name.lower() in lower)
    return out


#: The longest file name, in bytes, of the common file systems (NAME_MAX).
NAME_MAX = 255


def temp_prefix(target: Path, room: int) -> str:
    """``.NAME.``: the start of a temporary name beside ``target`` that ``room`` more
    bytes will end (``mkstemp``'s random part and suffix, a tag).

    The target's name in plain characters (a library between us and the file may
    read ``;``, ``!`` or a tab in a name as syntax: pyogrio cut ``g;x.gpkg`` at the
    ``;``), cut so that the whole name stays within :data:`NAME_MAX` bytes, with
    room for what a writer adds beside it (SQLite's ``-journal``, ``-wal``): a legal
    250-byte output name must not fail for its temporary name.
    """
    return f".{plain_name(target.name)[:max(1, NAME_MAX - _BESIDE - room - 2)]}."


_BESIDE = len("-journal")  # the longest name a writer appends to its file's


def plain_name(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "._+-") else "_" for c in name)


def probe_folder(folder: Path, target: Path, what: str) -> None:
    """Raise :class:`OutputError` unless a file can be created in ``folder``."""
    try:
        # an unnamed file where the system has them (O_TMPFILE): none left if interrupted
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OutputError(f"cannot write in folder {str(folder)!r} ({reason}){what}",
                          target) from None


def target_key(path: str | os.PathLike[str]) -> str:
    """What identifies an output target: standard output, a URL, or the real path."""
    loc = store_location(path)
    if loc is not None:
        return url_key(loc)
    return STDOUT_KEY if is_stdout(path) else real_path(path)


@dataclass(frozen=True)
class Output:
    """One kind of output a run can write (declared once, :data:`OUTPUTS`).

    Attributes
    ----------
    keyword : str
        Its keyword in :func:`geoeval.score` and the other API calls.
    flag : str
        Its command-line option.
    kind : {'file', 'folder'}
    suffixes : tuple of str
        What a file's name must end in (any, when empty).
    parameter : str
        The commands' parameter name, when not ``keyword``.
    """

    keyword: str
    flag: str
    kind: str
    suffixes: tuple[str, ...] = ()
    parameter: str = ""

    @property
    def name(self) -> str:
        """The commands' parameter name."""
        return self.parameter or self.keyword


#: Every output of every command and API call: the one table the API's and the command
#: line's checks before the work read (:func:`declare`).
OUTPUTS: tuple[Output, ...] = (
    Output("json", "--json", "file", parameter="json_path"),
    Output("markdown", "--markdown", "file", parameter="markdown_path"),
    Output("gpkg", "--gpkg", "file", (".gpkg",)),
    Output("figure", "--figure", "file", (".png", ".svg")),
    Output("breakdown_figure", "--breakdown-figure", "file", (".png", ".svg")),
    Output("html", "--html", "file", (".html", ".htm")),
    Output("csv_dir", "--csv-dir", "folder"),
    Output("parquet_dir", "--parquet-dir", "folder"),
    Output("scene_dir", "--scene-dir", "folder"),
    Output("figure_dir", "--figure-dir", "folder"),
    Output("objects_dir", "--objects", "folder", parameter="objects"),
)
