"""Outputs written safely: checked before the work, atomic, all or nothing.

Every writer of geoeval goes through :func:`atomic_path` and :func:`ensure_folder`
(what a target is: :mod:`geoeval.output_targets`). On their own they write to a
temporary file beside the target and rename it on success, so a target is never
half-written. The report's text is :mod:`geoeval.encoding`.

A run that produces several outputs (``geoeval score --json … --gpkg …
--csv-dir …``) opens :func:`output_run`: it checks every declared target
*before* the work starts (folder exists and is writable, not a folder where a
file is expected, never one of the run's inputs, no two outputs on one path)
and then defers every rename to the end of the run. If anything fails, the
temporary files and the folders the run created are removed, so a failed run
leaves no output at all, and old outputs stay as they were. A run stopped by
Ctrl-C or SIGTERM (:mod:`geoeval.cancel`) is a failed run.

``-`` is standard output, for the text reports (:data:`STDOUT_OUTPUTS`); a
special file (a FIFO, a device, ``/dev/stdout``, ``/dev/fd/N``) is written in
place, never replaced. Both are staged in a temporary file like any output and
copied out when the run commits (:mod:`geoeval.streams`): a failed run writes
nothing there either. While an output takes standard output, nothing else is
printed on it.

An output may be a URL of object storage (``s3://``, ``gs://``, ``az://``,
``abfs://``; :mod:`geoeval.locations`), given as text (a :class:`~pathlib.Path`
would fold its ``//``). It is checked before the work as a local path is, and more
strictly (:mod:`geoeval.store_outputs`: the bucket written and deleted in, a folder's
prefix empty, never an input's URL or under an input's prefix; ``http(s)://``
refused), staged locally as any output (a folder in a local folder that stands in
for it, :func:`ensure_folder`; a GeoPackage too: SQLite cannot be written in place
on a store), and uploaded when the run commits, before anything local is renamed:
each file in one call, so that it appears whole; if an upload fails, or the run is
stopped, every object the run uploaded is deleted again. A dataset written in parts
by the Dask workers goes straight to a hidden staging prefix beside its target
(:func:`store_staging`) and is copied into place by the store at the commit.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from geoeval import cancel, store_outputs, streams
from geoeval.errors import OutputError
from geoeval.locations import Location, locate
from geoeval.output_targets import (
    OUTPUTS,
    STDOUT,
    STDOUT_KEY,
    input_files,
    is_special,
    is_stdout,
    option_key,
    plain_name,
    probe_folder,
    real_path,
    refuse_folded,
    shown,
    stdout_refusal,
    store_location,
    target_key,
    temp_prefix,
    url_key,
)

_ACTIVE: contextvars.ContextVar[Outputs | None] = contextvars.ContextVar(
    "geoeval_output_run", default=None)

class Outputs:
    """The outputs of one run (see :func:`output_run`)."""

    def __init__(self) -> None:
        self._inputs: set[str] = set()
        self._input_dirs: set[str] = set()
        self._targets: dict[str, str] = {}
        self._staged: dict[str, Path] = {}  # target's key -> its temporary file or folder
        self._created: list[Path] = []
        self._stdout: Any = None  # the stream standard output was, while an output has it
        self.written: list[Path] = []  # targets renamed into place, in order
        self._names: dict[str, Path] = {}  # real path -> the path as the caller gave it
        self._given: list[Path] = []  # declared targets as the caller gave them
        # object storage (geoeval.store_outputs): what the run reads and writes there
        self._input_urls: set[str] = set()  # the inputs' URL keys (patterns kept)
        self._checked: set[str] = set()  # URL targets checked before the work
        self._existed: dict[str, bool] = {}  # a file target's key -> an object was there
        self._uploads: dict[str, tuple[Path, Location]] = {}  # key -> staged file, target
        self._mirrors: dict[str, tuple[Path, Location]] = {}  # key -> local folder, target
        self._moves: list[tuple[Location, Location]] = []  # staging prefix -> target
        self._staging: list[Location] = []  # staging prefixes, deleted if the run fails
        self._uploaded: list[Location] = []  # objects put in place, deleted if it fails
        self._written_urls: list[tuple[str, int]] = []  # shown URL, files (0: a file)

    # -- declaring -----------------------------------------------------------------
    def add_inputs(self, inputs: Iterable[Any]) -> None:
        """Remember the run's inputs (paths; anything else, e.g. a GeoDataFrame, is ignored)."""
        for item in inputs:
            loc = store_location(item)
            if loc is not None:
                self._input_urls.add(url_key(loc))
                continue
            if isinstance(item, (str, os.PathLike)) and os.fspath(item):
                self._inputs |= input_files(item)
                if Path(item).is_dir():
                    self._input_dirs.add(real_path(item))

    def _input_url(self, key: str) -> bool:
        """Whether the URL target ``key`` is an input, lies under an input's prefix,
        matches an input's pattern (``s3://b/tiles/*.gpkg``) or holds an input."""
        import fnmatch

        return any(key == k or key.startswith(k + "/") or k.startswith(key + "/")
                   or fnmatch.fnmatchcase(key, k) for k in self._input_urls)

    def _claim(self, path: Path | str, option: str) -> None:
        real = target_key(path)
        what = f" ({option})" if option else ""
        loc = store_location(path)
        if loc is not None and self._input_url(real):
            raise OutputError(f"is an input of this run, or holds one; choose another "
                              f"output URL{what}", loc.display)
        if real in self._inputs or real in self._input_dirs:
            raise OutputError(f"is an input of this run; choose another output path{what}", path)
        other = self._targets.get(real)
        if other is not None and option_key(other) != option_key(option):
            if real == STDOUT_KEY:
                raise OutputError(f"standard output is given to both {other} and {option}; "
                                  "give one of them a file", path)
            raise OutputError(f"is given to both {other} and {option}", shown(path))
        self._targets.setdefault(real, option)
        if loc is not None:
            return
        self._given.append(Path(path))
        if real == STDOUT_KEY and self._stdout is None:
            self._stdout = streams.claim_stdout()

    def file(self, path: str | os.PathLike[str] | None, option: str = "", *,
             suffixes: tuple[str, ...] = ()) -> Path | None:
        """Check a file target now; ``None`` (not asked for) passes through."""
        if path is None:
            return None
        loc = store_location(path)
        if loc is not None:
            self._store_target(loc, option, "file", suffixes)
            return path  # type: ignore[return-value]
        target = Path(path)
        what = f" ({option})" if option else ""
        refusal = stdout_refusal(option, "file")
        if os.fspath(target) == STDOUT and refusal is not None:
            raise OutputError(refusal + what, target)
        if refusal is None and is_stdout(target):  # '-', /dev/stdout: no suffix to check
            self._claim(target, option)
            return target
        if suffixes and target.suffix.lower() not in suffixes:
            raise OutputError(f"must end in {' or '.join(suffixes)}{what}", target)
        self._claim(target, option)
        if is_special(target):  # written in place when the run commits
            return target
        if target.is_dir():
            raise OutputError(f"is a folder; give a file path{what}", target)
        folder = target.parent
        refuse_folded(target, what)
        if not folder.exists():
            raise OutputError(f"folder {str(folder)!r} does not exist{what}", target)
        if not folder.is_dir():
            raise OutputError(f"{str(folder)!r} is not a folder{what}", target)
        probe_folder(folder, target, what)
        return target

    def folder(self, path: str | os.PathLike[str] | None, option: str = "") -> Path | None:
        """Check a folder target now (created, with its parents, when written)."""
        if path is None:
            return None
        loc = store_location(path)
        if loc is not None:
            self._store_target(loc, option, "folder")
            return path  # type: ignore[return-value]
        target = Path(path)
        what = f" ({option})" if option else ""
        if os.fspath(target) == STDOUT:
            raise OutputError(f"{stdout_refusal(option, 'folder')}{what}", target)
        refuse_folded(target, what)
        self._claim(target, option)
        if target.exists() and not target.is_dir():
            raise OutputError(f"is a file; give a folder{what}", target)
        existing = target
        while not existing.exists():
            existing = existing.parent
        if not existing.is_dir():
            raise OutputError(f"{str(existing)!r} is a file, not a folder{what}", target)
        probe_folder(existing, target / "x", what)
        return target

    def _store_target(self, loc: Location, option: str, kind: str,
                      suffixes: tuple[str, ...] = ()) -> None:
        """Check an output in object storage now (:mod:`geoeval.store_outputs`)."""
        what = f" ({option})" if option else ""
        store_outputs.refuse_web(loc, what)
        if suffixes and Path(loc.name).suffix.lower() not in suffixes:
            raise OutputError(f"must end in {' or '.join(suffixes)}{what}", loc.display)
        self._claim(loc.text, option)
        self.check_store(loc, kind, what)

    def check_store(self, loc: Location, kind: str, what: str = "") -> None:
        """Check a URL target of ``kind`` (``"file"`` or ``"folder"``) before the
        work, once per run (:func:`geoeval.store_outputs.check_file`, ``check_folder``)."""
        key = url_key(loc)
        if key in self._checked:
            return
        if self._input_url(key):
            raise OutputError(f"is an input of this run, or holds one; choose another "
                              f"output URL{what}", loc.display)
        if kind == "file":
            self._existed[key] = store_outputs.check_file(loc, what)
        else:
            store_outputs.check_folder(loc, what)
        self._checked.add(key)

    def describe(self) -> str:
        """The written outputs, a declared folder's files counted under it."""
        folders = [Path(p) for p, flag in self._targets.items() if Path(p).is_dir()]
        items: dict[str, int] = {}
        for path in self.written:
            if target_key(path) == STDOUT_KEY:
                continue  # it is on the screen, or where stdout was sent
            real = Path(real_path(path))
            home = next((f for f in folders if f in real.parents), None)
            if home is None:
                items[str(path)] = 0
            else:
                shown = next(str(n) for n in self._given if real_path(n) == str(home))
                items[shown] = items.get(shown, 0) + 1
        for shown_url, n in self._written_urls:
            items[shown_url] = n
        return ", ".join(k if n == 0 else f"{k}{'' if k.endswith('/') else '/'} ({n} files)"
                         for k, n in items.items())

    # -- writing -------------------------------------------------------------------
    def _check_write(self, target: Path | str) -> None:
        loc = store_location(target)
        if loc is not None:
            if self._input_url(url_key(loc)):
                raise OutputError("is an input of this run, or holds one; choose another "
                                  "output URL", loc.display)
        elif real_path(target) in self._inputs:
            raise OutputError("is an input of this run; choose another output path", target)

    def _stage(self, tmp: Path, target: Path | str) -> None:
        loc = store_location(target)
        if loc is not None:  # uploaded when the run commits
            key = url_key(loc)
            previous = self._uploads.pop(key, None)
            if previous is not None:
                _remove(previous[0])
            self._uploads[key] = (tmp, loc)
            return
        key = target_key(target)
        previous = self._staged.pop(key, None)
        if previous is not None:
            _remove(previous)
        self._staged[key] = tmp
        self._names[key] = target

    def _mirror(self, loc: Location) -> Path:
        """The local folder that stands in for the folder ``loc`` in the store during
        the run: the files written in it are uploaded when the run commits."""
        key = url_key(loc)
        if key not in self._mirrors:
            self.check_store(loc, "folder")
            with cancel.deferred():  # made and registered, or neither
                local = Path(tempfile.mkdtemp(prefix="geoeval-"))
                cancel.track(local, "tree")
            self._mirrors[key] = (local, loc)
        return self._mirrors[key][0]

    def _in_mirror(self, path: Path) -> bool:
        """Whether ``path`` lies in a folder that stands in for one in a store (written
        at once there: the whole folder is uploaded when the run commits)."""
        real = Path(real_path(path))
        return any(Path(real_path(m)) in real.parents for m, _ in self._mirrors.values())

    def _put(self, local: Path, target: Location, *, replaces: bool = False) -> None:
        # a new object is remembered before its upload (deleted if the run fails even
        # mid-upload); one that replaces an object only once uploaded (a failed upload
        # leaves the old one, which a store never shows half-replaced)
        if not replaces:
            self._uploaded.append(target)
        store_outputs.upload(local, target)
        if replaces:
            self._uploaded.append(target)

    def _upload(self) -> None:
        """Every output in object storage put in place (:mod:`geoeval.store_outputs`):
        the datasets written in parts (copied by the store, metadata files last), the
        folders, the files new to their store, then those that replace an object, so
        that a failure before those leaves them as they were."""
        for staging, target in self._moves:
            objects = store_outputs.files_under(staging)
            rel = [o.key[len(staging.key.rstrip("/")) + 1:] for o in objects]
            order = sorted(range(len(rel)), key=lambda i: (rel[i].startswith("_"), rel[i]))
            for i in order:
                dest = target.child(rel[i])
                self._uploaded.append(dest)
                store_outputs.copy(objects[i], dest)
            store_outputs.delete_prefix(staging)
            self._staging.remove(staging)
            self._written_urls.append((target.display, len(objects)))
        self._moves.clear()
        for local, target in self._mirrors.values():
            files = sorted(p for p in local.rglob("*") if p.is_file())
            for path in files:
                self._put(path, store_outputs.name_in(target, path, local))
            self._written_urls.append((target.display, len(files)))
        uploads = sorted(self._uploads.items(), key=lambda kv: self._existed.get(kv[0], False))
        for key, (tmp, target) in uploads:
            self._put(tmp, target, replaces=self._existed.get(key, False))
            self._written_urls.append((target.display, 0))

    def _mkdir(self, folder: Path) -> None:
        missing = []
        probe = folder
        while not probe.exists():
            missing.append(probe)
            probe = probe.parent
        for p in reversed(missing):
            with cancel.deferred():  # made and registered, or neither
                p.mkdir()
                cancel.track(p, "folder")
                self._created.append(p)

    def _commit(self) -> None:
        # the store's uploads first (the likeliest to fail, and undone by deleting),
        # then the streams (a reader may be slow; Ctrl-C still stops the run), then
        # the renames, which a signal no longer interrupts (geoeval.cancel.finishing)
        self._upload()
        for tmp, _ in [*self._uploads.values(), *self._mirrors.values()]:
            _remove(tmp)
        self._uploads.clear()
        self._mirrors.clear()
        for key, tmp in list(self._staged.items()):
            target = self._names.get(key, Path(key))
            if key == STDOUT_KEY:
                streams.copy_file(tmp, self._stdout if self._stdout is not None
                                  else sys.stdout)
            elif is_special(target):
                streams.write_special(target, tmp)
            else:
                continue
            _remove(self._staged.pop(key))
            self.written.append(target)
        cancel.finishing()
        for key, tmp in self._staged.items():
            if tmp.is_dir():  # a dataset staged whole (move_folder); its target is empty
                with contextlib.suppress(FileNotFoundError):
                    os.rmdir(key)
            else:
                os.chmod(tmp, default_file_mode())
            os.replace(tmp, key)
            cancel.untrack(tmp)
            self.written.append(self._names.get(key, Path(key)))
        self._staged.clear()
        for folder in self._created:
            cancel.untrack(folder)

    def _rollback(self) -> None:
        for tmp in self._staged.values():
            _remove(tmp)
        self._staged.clear()
        for tmp, _ in [*self._uploads.values(), *self._mirrors.values()]:
            _remove(tmp)
        self._uploads.clear()
        self._mirrors.clear()
        for folder in reversed(self._created):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty: never removes what others put there
            cancel.untrack(folder)
        if self._uploaded or self._staging:
            self._unpublish()

    def _unpublish(self) -> None:
        """Delete what the run put in a store: the objects put in place, the staging
        prefixes (a signal does not cut this, and the hard stop waits for it:
        :func:`geoeval.cancel.cleaning`)."""
        with cancel.cleaning():
            left = store_outputs.delete_all(self._uploaded)
            for staging in self._staging:
                left += store_outputs.delete_prefix(staging)
            self._uploaded.clear()
            self._staging.clear()
        if left:
            print(f"geoeval: could not delete {len(left)} object(s) of this failed run: "
                  f"{left[0]}{' …' if len(left) > 1 else ''}", file=sys.stderr)

    def _release(self) -> None:
        if self._stdout is not None:
            streams.release_stdout(self._stdout)
            self._stdout = None


def _remove(tmp: Path) -> None:
    """Remove a temporary file or staging folder of the run."""
    with contextlib.suppress(OSError):
        if tmp.is_dir():
            shutil.rmtree(tmp)
        else:
            tmp.unlink()
    cancel.untrack(tmp)


def declare(run: Outputs, values: Mapping[str, Any], *, flags: bool = False) -> None:
    """Check the outputs given in ``values`` (by keyword, or with ``flags`` by the
    commands' parameter names) in ``run``, before the work: each named by its keyword
    or flag (:meth:`Outputs.file`, :meth:`Outputs.folder`)."""
    for o in OUTPUTS:
        value = values.get(o.name if flags else o.keyword)
        if value is None:
            continue
        label = o.flag if flags else o.keyword
        if o.kind == "file":
            run.file(value, label, suffixes=o.suffixes)
        else:
            run.folder(value, label)


@contextlib.contextmanager
def output_run(inputs: Iterable[Any] = ()) -> Iterator[Outputs]:
    """Open (or join) the output run of this call: declare targets, then write them.

    Nested calls join the outermost run, so the CLI and the Python API it calls
    share one set of checks and one commit at the very end.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with output_run([d / "in.tif"]) as out:
    ...     target = out.file(d / "report.json", "--json")
    ...     with atomic_path(target) as tmp:
    ...         _ = tmp.write_text("{}")
    ...     (d / "report.json").exists()     # not yet: renamed at the end of the run
    False
    >>> (d / "report.json").read_text()
    '{}'
    """
    active = _ACTIVE.get()
    if active is not None:
        active.add_inputs(inputs)
        yield active
        return
    run = Outputs()
    token = _ACTIVE.set(run)
    try:
        run.add_inputs(inputs)
        yield run
    except BaseException:
        run._rollback()
        raise
    else:
        try:
            run._commit()
        except BaseException as exc:
            run._rollback()
            if not isinstance(exc, OSError):
                raise
            raise OutputError(f"could not write outputs ({exc.strerror or exc})",
                              getattr(exc, "filename", None)) from None
    finally:
        _ACTIVE.reset(token)
        run._release()


def published(path: Path) -> Path | str:
    """Where ``path``, a file written in an output folder, is once the run commits:
    the object's URL (shown) for a file of a folder that stands in for one in a store
    (:func:`ensure_folder`), else ``path``."""
    run = _ACTIVE.get()
    if run is not None:
        real = Path(real_path(path))
        for local, loc in run._mirrors.values():
            if Path(real_path(local)) in real.parents:
                return store_outputs.name_in(loc, real, Path(real_path(local))).display
    return path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; it becomes ``path`` on success.

    Inside an :func:`output_run` the rename waits for the end of the run; outside
    one it happens at once. On error the temporary file is removed. Problems with
    the target are :class:`~geoeval.errors.OutputError`.

    ``path`` may be a URL of object storage: the temporary file is then in the
    system's temporary folder, uploaded when the run commits (or at once, outside a
    run), in one call: the object appears whole or not at all.
    """
    loc = store_location(path)
    if loc is not None:
        with _store_file(loc) as tmp:
            yield tmp
        return
    target = Path(path)
    run = _ACTIVE.get()
    folder = target.parent
    if run is not None:
        run._check_write(target)
    special = is_special(target)
    if not special:
        if target.is_dir():
            raise OutputError("is a folder; give a file path", target)
        if not folder.is_dir():
            raise OutputError(f"folder {str(folder)!r} does not exist", target)
    # a special target is staged in the temporary folder and copied out in the end
    where = None if special else folder
    try:
        with cancel.deferred():  # made and registered, or neither
            suffix = plain_name(target.suffix)
            prefix = "geoeval-" if special else temp_prefix(target, 8 + len(suffix))
            fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=where)
            cancel.track(tmp)
    except OSError as exc:
        raise OutputError(f"cannot write in folder {str(where or tempfile.gettempdir())!r} "
                          f"({exc.strerror})", target) from None
    tmp_path = Path(tmp)
    try:
        os.close(fd)
        yield tmp_path
        if run is not None and not run._in_mirror(target):
            run._stage(tmp_path, target)
            return
        try:
            if is_stdout(target):
                streams.copy_file(tmp_path, sys.stdout)
            elif special:
                streams.write_special(target, tmp_path)
            else:
                os.chmod(tmp_path, default_file_mode())
                os.replace(tmp_path, target)
        except OSError as exc:
            raise OutputError(f"cannot write ({exc.strerror})", target) from None
        _remove(tmp_path)
    except BaseException:
        _remove(tmp_path)
        raise


@contextlib.contextmanager
def _store_file(loc: Location) -> Iterator[Path]:
    """:func:`atomic_path` of an object in a store: a local temporary file, uploaded
    when the run commits (at once outside a run)."""
    run = _ACTIVE.get()
    store_outputs.refuse_web(loc)
    if run is not None:
        run._check_write(loc.text)
    try:
        with cancel.deferred():  # made and registered, or neither
            suffix = plain_name(Path(loc.name).suffix)
            fd, tmp = tempfile.mkstemp(prefix="geoeval-", suffix=suffix)
            cancel.track(tmp)
    except OSError as exc:
        raise OutputError(f"cannot write in folder {tempfile.gettempdir()!r} "
                          f"({exc.strerror})", loc.display) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if run is not None:
            run._stage(tmp_path, loc.text)
            return
        store_outputs.upload(tmp_path, loc)
        _remove(tmp_path)
    except BaseException:
        _remove(tmp_path)
        raise


def store_staging(target: str | Location) -> Location:
    """A hidden staging prefix beside ``target`` (a folder's URL) for a dataset that
    is written in parts, by the Dask workers straight into the store: deleted if the
    run fails (:func:`move_folder` puts its objects in place when the run commits).
    The target is checked first (empty, writable: :meth:`Outputs.check_store`)."""
    loc = target if isinstance(target, Location) else locate(target)
    staging = store_outputs.staging_prefix(loc)
    run = _ACTIVE.get()
    if run is not None:
        run.check_store(loc, "folder")
        run._staging.append(staging)
    return staging


def abandon_staging(staging: str | Location) -> None:
    """Delete a staging prefix of :func:`store_staging` (its run failed)."""
    loc = staging if isinstance(staging, Location) else locate(staging)
    run = _ACTIVE.get()
    with cancel.cleaning():
        store_outputs.delete_prefix(loc)
    if run is not None and loc in run._staging:
        run._staging.remove(loc)


def check_new_folder(path: str | os.PathLike[str], option: str = "") -> None:
    """Check before the work that ``path``, a folder's URL in a store, holds no
    object and can be written (once per run)."""
    loc = store_location(path)
    if loc is None:
        raise ValueError(f"not a URL of object storage: {path!r}")
    what = f" ({option})" if option else ""
    store_outputs.refuse_web(loc, what)
    run = _ACTIVE.get()
    if run is not None:
        run.check_store(loc, "folder", what)
    else:
        store_outputs.check_folder(loc, what)


def move_folder(staging: str | os.PathLike[str] | Location,
                target: str | os.PathLike[str]) -> Path | str:
    """Move a folder written whole in ``staging`` (beside ``target``) to ``target``, an
    empty or missing folder: at the end of the output run when inside one (so a
    failed or interrupted run removes it), else now. Both may be in a store (a
    staging prefix of :func:`store_staging`): its objects are then copied by the
    store, metadata files (``_metadata``) last; returns the target's URL, shown."""
    loc = store_location(target)
    if loc is not None:
        source = staging if isinstance(staging, Location) else locate(os.fspath(staging))
        run = _ACTIVE.get()
        if run is not None:
            run._moves.append((source, loc))
            if source not in run._staging:
                run._staging.append(source)
            return loc.display
        own = Outputs()
        own._moves.append((source, loc))
        own._staging.append(source)
        try:
            own._upload()
        except BaseException:
            own._rollback()
            raise
        return loc.display
    staging, target = Path(staging), Path(target)
    run = _ACTIVE.get()
    cancel.track(staging, "tree")
    if run is not None:
        run._stage(staging, target)
        return target
    try:
        if target.is_dir():
            target.rmdir()  # checked empty before the work
        os.replace(staging, target)
    except OSError as exc:
        _remove(staging)
        raise OutputError(f"cannot write ({exc.strerror})", target) from None
    cancel.untrack(staging)
    return target


def ensure_folder(path: str | os.PathLike[str]) -> Path:
    """Create an output folder (and its parents); removed again if the run fails.

    A folder's URL in a store gives a local folder that stands in for it during the
    output run (write into it as into the folder): its files are uploaded when the
    run commits. Outside an output run, a URL is an error: nothing would upload it.
    """
    loc = store_location(path)
    if loc is not None:
        store_outputs.refuse_web(loc)
        run = _ACTIVE.get()
        if run is None:
            raise OutputError("a folder in object storage is written by an output run "
                              "(geoeval.outputs.output_run), which uploads it at its end",
                              loc.display)
        return run._mirror(loc)
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise OutputError("is a file; give a folder", folder)
    run = _ACTIVE.get()
    try:
        if run is not None:
            run._mkdir(folder)
        else:
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create folder ({exc.strerror})", folder) from None
    return folder


def default_file_mode() -> int:
    """``0o666`` minus the process umask: the mode ``open(path, "w")`` would give
    (``mkstemp`` creates files readable by their owner only)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
