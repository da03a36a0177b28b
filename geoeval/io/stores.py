"""Files in object storage and on the web for the readers GDAL does not serve.

GDAL reads rasters and most vector layers from a URL by itself (its virtual file
systems: :attr:`geoeval.io.locations.Location.gdal`). Everything else geoeval reads
— GeoParquet through Arrow, COCO and CrowdAI JSON, DOTA and VOC folders of text and
XML files, tile patterns and dataset folders to list — goes through this module:

- :func:`open_input`: a seekable binary file (a local file; Arrow's file of an
  object store, which reads the ranges asked for; :class:`WebFile`, HTTP range
  requests, for ``https://``), so a Parquet reader fetches only the footer and the
  row groups it reads;
- :func:`read_bytes`: a whole file (one request);
- :func:`list_files`, :func:`glob`, :func:`kind`: folders and prefixes listed,
  patterns (``s3://b/tiles/*.gpkg``) expanded — the web has no listing;
- :func:`failure`: any failure of these as one :class:`~geoeval.errors.InputError`
  line naming the URL (secrets removed) and what to do.

Transient failures are retried: Arrow's S3 client 4 attempts
(:func:`~geoeval.io.locations.arrow_filesystem`), GDAL 3 retries 1 s apart and
growing (:func:`~geoeval.io.locations.gdal_options`), a web request here
:data:`WEB_ATTEMPTS` attempts, 0.5 s, 1 s and 2 s apart.
"""

from __future__ import annotations

import fnmatch
import io
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

from geoeval.errors import InputError
from geoeval.io.locations import Location, arrow_filesystem, locate, redact

#: Attempts of one web request before its failure is reported (transient failures:
#: connection reset or refused, timeouts, HTTP 429 and 5xx).
WEB_ATTEMPTS = 4
#: Seconds a web request waits for an answer.
WEB_TIMEOUT = 30.0
_GLOB = ("*", "?", "[")
T = TypeVar("T")


#: Read object storage without credentials in this process (``anon=True`` at the edge,
#: :func:`use_anon`); a worker of another process reads its own environment
#: (``AWS_NO_SIGN_REQUEST=YES``).
_ANON: list[bool] = [False]


def use_anon(anon: bool) -> None:
    """Read object storage without credentials in this process from now on (or not)."""
    _ANON[0] = bool(anon)


def anonymous() -> bool:
    """Whether this process reads object storage without credentials (:func:`use_anon`)."""
    return _ANON[0]


def _fs(loc: Location, anon: bool = False) -> tuple[Any, str]:
    """Arrow's file system of ``loc``: without credentials when ``anon``, or when this
    process was told so (:func:`use_anon`: ``--anon``)."""
    try:
        return arrow_filesystem(loc, anon=anon or anonymous())
    except ValueError as exc:
        raise InputError(str(exc)) from None


def kind(loc: Location, *, anon: bool = False) -> str:
    """``'file'``, ``'folder'`` (a local folder, or a prefix holding objects) or
    ``'missing'``. A web URL is a ``'file'`` when it answers, as the web has no
    folders.

    Raises
    ------
    InputError
        The store cannot be reached or refuses (:func:`failure`).
    """
    if loc.is_local or loc.scheme == "vsi":
        return ("folder" if os.path.isdir(loc.text) else
                "file" if os.path.lexists(loc.text) else "missing")
    if not loc.is_store:
        _web(loc, "HEAD")
        return "file"
    import pyarrow.fs as pafs

    fs, path = _fs(loc, anon)
    try:
        info = fs.get_file_info(path)
    except OSError as exc:
        raise failure(exc, loc) from None
    return {pafs.FileType.File: "file", pafs.FileType.Directory: "folder"}.get(
        info.type, "missing")


def size(loc: Location, *, anon: bool = False) -> int:
    """The size in bytes of the file at ``loc``."""
    with open_input(loc, anon=anon) as f:
        return f.size() if hasattr(f, "size") else f.seek(0, io.SEEK_END)


def open_input(loc: Location, *, anon: bool = False) -> Any:
    """A seekable binary file at ``loc`` (a context manager): only what is read is
    fetched.

    Raises
    ------
    InputError
        Missing, refused, unreachable (:func:`failure`); a web server that does not
        answer range requests.
    """
    if loc.is_local or loc.scheme == "vsi":
        try:
            return open(loc.text, "rb")
        except OSError as exc:
            raise failure(exc, loc) from None
    if not loc.is_store:
        return WebFile(loc)
    fs, path = _fs(loc, anon)
    try:
        return fs.open_input_file(path)
    except OSError as exc:
        raise failure(exc, loc) from None


def open_version(loc: Location, *, anon: bool = False) -> tuple[Any, tuple[Any, ...]]:
    """:func:`open_input` of a URL, and what names this version of the file: its URL,
    size and modification time (a store) or ``ETag``/``Last-Modified`` (the web), from
    the one request that opens it. A reader may keep what it read of the file (a
    Parquet footer) under that key: a file replaced since has another."""
    if not loc.is_store:
        f = WebFile(loc)
        return f, (loc.text, f.size(), f.version)
    fs, path = _fs(loc, anon)
    try:
        info = fs.get_file_info(path)
        if info.type.name != "File":
            raise FileNotFoundError(path)
        return fs.open_input_file(path), (loc.text, info.size, info.mtime_ns)
    except OSError as exc:
        raise failure(exc, loc) from None


def read_bytes(loc: Location, *, anon: bool = False) -> bytes:
    """The whole file at ``loc`` (one request for a URL)."""
    if loc.is_local or loc.scheme == "vsi":
        try:
            with open(loc.text, "rb") as f:
                return f.read()
        except OSError as exc:
            raise failure(exc, loc) from None
    if not loc.is_store:
        return _web(loc, "GET")
    fs, path = _fs(loc, anon)
    try:
        with fs.open_input_stream(path) as f:
            data = f.read()
        expected = fs.get_file_info(path).size
    except OSError as exc:
        raise failure(exc, loc) from None
    if expected is not None and len(data) != expected:
        raise _truncated(loc, len(data), expected)
    return data


def list_files(loc: Location, *, recursive: bool = False, anon: bool = False,
               hidden: bool = False) -> list[Location]:
    """The files in the folder or under the prefix ``loc``, sorted by name (hidden
    ones, starting with ``.`` or ``_``, left out unless ``hidden``, as a folder's
    listing gives them to readers of one file per item; in sub-folders too when
    ``recursive``).

    Raises
    ------
    InputError
        A web URL (the web has no listing), a missing folder or prefix, or
        :func:`failure`.
    """
    if not (loc.is_local or loc.is_store):
        raise InputError("the web has no folders to list: name each file's URL, or put the "
                         "files in object storage (s3://, gs://, az://)", loc.display)
    import pyarrow.fs as pafs

    if loc.is_local:
        fs, path = pafs.LocalFileSystem(), os.path.abspath(loc.text)
    else:
        fs, path = _fs(loc, anon)
    try:
        infos = fs.get_file_info(pafs.FileSelector(path.rstrip("/"), recursive=recursive))
    except FileNotFoundError:
        raise InputError("no such folder or prefix", loc.display) from None
    except OSError as exc:
        raise failure(exc, loc) from None
    base = path.rstrip("/")
    out = []
    for info in infos:
        rel = info.path[len(base):].lstrip("/")
        if info.type != pafs.FileType.File or (not hidden and any(
                part.startswith((".", "_")) for part in rel.split("/"))):
            continue
        out.append(loc.child(rel))
    return sorted(out, key=lambda x: x.text)


def is_pattern(text: str) -> bool:
    """Whether ``text`` (a URL) holds a wildcard (``*``, ``?``, ``[``)."""
    return any(c in locate(text).key for c in _GLOB)


def glob(text: str, *, anon: bool = False) -> list[Location]:
    """The files of an object store that the pattern ``text`` matches
    (``s3://b/tiles/*.gpkg``, ``gs://b/20??/*.parquet``), sorted; ``*`` does not
    cross a ``/``, as in a shell.

    Raises
    ------
    InputError
        A web URL (no listing), or :func:`failure`.
    """
    loc = locate(text)
    if not loc.is_store:
        raise InputError("the web has no folders to list, so a pattern cannot be expanded: "
                         "name each file's URL, or put the files in object storage",
                         loc.display)
    parts = loc.key.split("/")
    fixed = next(i for i, p in enumerate(parts) if any(c in p for c in _GLOB))
    root = locate(f"{loc.scheme}://{loc.bucket}/{'/'.join(parts[:fixed])}")
    recursive = fixed < len(parts) - 1
    pattern = "/".join(parts[fixed:])
    found = []
    for f in list_files(root, recursive=recursive, anon=anon):
        rel = f.key[len(root.key):].lstrip("/") if root.key else f.key
        got, want = rel.split("/"), pattern.split("/")
        if len(got) == len(want) and all(
                fnmatch.fnmatchcase(a, b) for a, b in zip(got, want, strict=True)):
            found.append(f)
    return found


class WebFile(io.RawIOBase):
    """A file on the web read by HTTP range requests: seekable, each read one request
    (after one ``HEAD`` for its size). A server that answers a range request with the
    whole file is refused: reading part of a file needs ranges.
    """

    def __init__(self, loc: Location) -> None:
        super().__init__()
        self.loc = loc
        self._pos = 0
        headers = _web(loc, "HEAD", headers_only=True)
        length = headers.get("Content-Length")
        if length is None:
            raise InputError("the server gives no size (Content-Length) for this file, "
                             "which reading part of it needs; download the file first",
                             loc.display)
        self._size = int(length)
        #: What names this version of the file (``ETag``, else ``Last-Modified``).
        self.version = headers.get("ETag") or headers.get("Last-Modified")

    def size(self) -> int:
        return self._size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, n: int = -1) -> bytes:
        end = self._size if n is None or n < 0 else min(self._size, self._pos + n)
        if end <= self._pos:
            return b""
        data = _web(self.loc, "GET", byte_range=(self._pos, end))
        self._pos += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def _web(loc: Location, method: str, *, byte_range: tuple[int, int] | None = None,
         headers_only: bool = False) -> Any:
    """One web request, retried on transient failures; the body (or the headers)."""
    request = urllib.request.Request(loc.url, method=method)
    if byte_range is not None:
        request.add_header("Range", f"bytes={byte_range[0]}-{byte_range[1] - 1}")

    def once() -> Any:
        with urllib.request.urlopen(request, timeout=WEB_TIMEOUT) as answer:
            if headers_only or method == "HEAD":
                return answer.headers
            if byte_range is not None and answer.status != 206:
                raise InputError(reason("ranges", loc), loc.display)
            data = answer.read()
            expected = (byte_range[1] - byte_range[0] if byte_range is not None
                        else answer.headers.get("Content-Length"))
            if expected is not None and len(data) != int(expected):
                raise _truncated(loc, len(data), int(expected))
            return data

    return _retried(once, loc)


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code == 429 or exc.code >= 500
    return isinstance(exc, (urllib.error.URLError, TimeoutError, ConnectionError))


def _retried(fn: Callable[[], T], loc: Location) -> T:
    for attempt in range(WEB_ATTEMPTS):
        try:
            return fn()
        except InputError:
            raise
        except (OSError, urllib.error.URLError) as exc:
            if attempt == WEB_ATTEMPTS - 1 or not _transient(exc):
                raise failure(exc, loc) from None
            time.sleep(0.5 * 2 ** attempt)
    raise AssertionError("unreachable")


def _truncated(loc: Location, got: int, expected: int) -> InputError:
    return InputError(f"the transfer ended after {got:,} of {expected:,} bytes (a "
                      "connection cut, or the object changed while it was read); try again",
                      loc.display)


#: The one table of reasons a read where data lives fails, in the user's terms, with
#: what to do: :func:`failure` (Python's and Arrow's exceptions) and
#: :func:`gdal_failure` (GDAL's messages, for what rasterio and pyogrio read) pick from it.
REASONS = {
    "missing": "no such object (check the bucket and key)",
    "missing-web": "no such file on the server (404)",
    "missing-local": "no such file or folder",
    "denied": ("access denied: check the credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID…, "
               "GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*), or use --anon for a "
               "public bucket"),
    "denied-web": ("access denied (403): the URL's signature may have expired, or the file "
                   "is not public"),
    "denied-local": "permission denied",
    "credentials": ("no credentials found: set AWS_PROFILE or AWS_ACCESS_KEY_ID and "
                    "AWS_SECRET_ACCESS_KEY (or the store's own variables), or use --anon for "
                    "a public bucket"),
    "credentials-web": ("the server asks for credentials (401): a signed URL may have "
                        "expired"),
    "unreachable": ("cannot reach the server{}: check the URL, the network and, for an "
                    "S3-compatible store, AWS_ENDPOINT_URL"),
    "timeout": "the server did not answer in time: try again, or check the network",
    "ranges": ("the server does not answer range requests (HTTP Range), which reading part "
               "of a file needs; download the file first"),
    "range-refused": "the server refused the byte range asked for (416)",
}

#: GDAL's words (``/vsis3/``, ``/vsicurl/``, …; rasterio's and pyogrio's messages) -> the
#: reason of :data:`REASONS` they mean; the first that matches wins.
_GDAL_WORDS = (
    ("credentials", ("AWS_SECRET_ACCESS_KEY and AWS_NO_SIGN_REQUEST", "InvalidCredentials",
                     "No valid AWS credentials", "InvalidAccessKeyId",
                     "credentials not filled", "No credentials")),
    ("missing", ("HTTP response code: 404", "NoSuchKey", "NoSuchBucket",
                 "does not exist in the file system", "No such file or directory")),
    ("denied", ("HTTP response code: 403", "AccessDenied", "Access Denied",
                "SignatureDoesNotMatch")),
    ("credentials", ("HTTP response code: 401",)),
    ("timeout", ("timed out", "Timeout was reached", "Operation too slow")),
    ("unreachable", ("Could not resolve host", "Couldn't connect", "Could not connect",
                     "Failed to connect", "Connection refused", "Connection reset",
                     "HTTP response code: 0")),
    ("ranges", ("Range downloading not supported", "does not support range")),
)


def reason(key: str, loc: Location, detail: str = "") -> str:
    """The words of reason ``key`` (:data:`REASONS`) for ``loc``: the web's and a local
    file's own variant when there is one."""
    variant = "-local" if loc.is_local or loc.scheme == "vsi" else (
        "-web" if not loc.is_store else "")
    text = REASONS.get(key + variant, REASONS[key])
    return text.format(detail) if "{}" in text else text


def gdal_failure(message: str, loc: Location) -> InputError | None:
    """GDAL's ``message`` about ``loc`` (a URL) as :func:`failure`'s one line, or
    ``None`` when it names none of the reasons (the reader then says what GDAL said).

    Examples
    --------
    >>> str(gdal_failure("HTTP response code: 404", locate("https://h/x.tif?sig=1")))
    'https://h/x.tif?…: no such file on the server (404)'
    """
    for key, words in _GDAL_WORDS:
        if any(w.lower() in message.lower() for w in words):
            return InputError(reason(key, loc), loc.display)
    return None


def failure(exc: BaseException, loc: Location) -> InputError:
    """``exc``, raised while reading ``loc``, as one line: what went wrong in the
    user's terms and what to do, the URL with its secrets removed.

    Examples
    --------
    >>> str(failure(FileNotFoundError("no"), locate("s3://b/k.tif")))
    's3://b/k.tif: no such object (check the bucket and key)'
    """
    text = str(exc)
    if isinstance(exc, urllib.error.HTTPError):
        key = {401: "credentials", 403: "denied", 404: "missing", 416: "range-refused"}.get(
            exc.code)
        why = (reason(key, loc) if key is not None
               else f"the server answered HTTP {exc.code} {exc.reason}")
    elif isinstance(exc, FileNotFoundError) or "NoSuchKey" in text or "NoSuchBucket" in text:
        why = reason("missing", loc)
    elif "ACCESS_DENIED" in text or "AccessDenied" in text or isinstance(exc, PermissionError):
        why = reason("denied", loc)
    elif "credentials" in text.lower() and "no" in text.lower():
        why = reason("credentials", loc)
    elif ("NETWORK_CONNECTION" in text or "Could not connect" in text
          or "Connection refused" in text or isinstance(exc, (ConnectionError,
                                                              urllib.error.URLError))):
        detail = getattr(exc, "reason", None)
        why = reason("unreachable", loc, f" ({detail})" if detail else "")
    elif isinstance(exc, TimeoutError) or "timed out" in text.lower():
        why = reason("timeout", loc)
    else:
        why = redact(text.splitlines()[0] if text else type(exc).__name__)
    return InputError(why, loc.display)
