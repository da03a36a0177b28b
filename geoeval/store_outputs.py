"""Outputs in object storage (``s3://``, ``gs://``, ``az://``/``abfs://``): checked
before the work, written whole or not at all.

:mod:`geoeval.outputs` stages every output of a run in a local temporary file or
folder, as it does for local paths, and calls this module to check a store's target
before the work and to upload, move and delete objects when the run ends:

- **whole**: a file is uploaded by one call (Arrow's file system: a small object in
  one PUT, a large one as a multipart upload completed at its end); on S3, Google
  Cloud Storage and Azure Blob Storage an object becomes visible only when its
  upload completes, never half-written. A folder (a prefix) is many objects: they
  are uploaded one after the other when the run has succeeded, and if one upload
  fails, or the run is stopped, every object the run uploaded is deleted again
  (:func:`delete`), so a failed run leaves no object and no partial prefix.
- **checked before the work**: the web (``http://``, ``https://``) is read-only
  for geoeval and refused (:func:`refuse_web`); a folder's prefix must hold no
  object (:func:`check_folder`); a file must not name a prefix that holds objects
  (:func:`check_file`); and the bucket must exist and accept writes and deletes:
  a small object is written and deleted (:func:`probe`). A missing bucket, access
  denied, missing credentials or an unreachable endpoint is one line naming the URL
  (:func:`reason`).
- **deleted exactly**: through GDAL (``VSIUnlink``), which deletes the object and
  nothing else; Arrow's S3 file system re-creates an empty "directory" object for
  the parent of every object it deletes, which would leave an empty prefix behind.

Credentials come from each store's standard environment (:mod:`geoeval.locations`);
messages name the URL with its secrets removed (:attr:`Location.display`).
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from geoeval.errors import OutputError
from geoeval.locations import STORE_SCHEMES, Location, arrow_filesystem, locate, redact

#: The name a write probe's object starts with (deleted at once).
PROBE = ".geoeval-probe-"

#: What a store's error message means, the first match wins: (marks, reason).
_REASONS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("NO_SUCH_BUCKET", "NoSuchBucket", "bucket does not exist", "ContainerNotFound"),
     "the bucket does not exist"),
    (("credentials", "Credentials", "NoCredentialProviders", "InvalidAccessKeyId",
      "SignatureDoesNotMatch"),
     "no valid credentials (set AWS_PROFILE or AWS_ACCESS_KEY_ID and "
     "AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*)"),
    (("ACCESS_DENIED", "AccessDenied", "HTTP status 403", "Forbidden",
      "AuthorizationPermissionMismatch"),
     "access denied: the credentials may not write there"),
    (("NETWORK_CONNECTION", "curlCode", "Could not connect", "Couldn't connect",
      "Connection refused", "timed out", "Timeout"),
     "cannot reach the store"),
)


def reason(exc: BaseException, location: Location | None = None) -> str:
    """A store's error in a few words: the bucket missing, access denied, no
    credentials, the endpoint unreachable (which endpoint), or the library's own
    message's first line, secrets removed. When the store refused and no
    credentials for ``location``'s store are in sight (:func:`credentials_hint`),
    that is said too.

    Examples
    --------
    >>> reason(OSError("AWS Error NO_SUCH_BUCKET during PutObject operation: ..."))
    'the bucket does not exist'
    """
    text = str(exc)
    for marks, why in _REASONS:
        if any(m in text for m in marks):
            if why == "cannot reach the store":
                endpoint = (os.environ.get("AWS_ENDPOINT_URL_S3")
                            or os.environ.get("AWS_ENDPOINT_URL"))
                return f"cannot reach the store{f' at {redact(endpoint)}' if endpoint else ''}"
            if why.startswith("access denied"):
                hint = credentials_hint(location)
                return f"access denied; {hint}" if hint else why
            return why
    first = redact(text.strip().splitlines()[0] if text.strip() else type(exc).__name__)
    first = re.sub(r"^When [^:]*: ", "", first.split(" (Request ID")[0])  # Arrow's "When …:"
    hint = credentials_hint(location)
    return f"{first}; {hint}" if hint else first


#: Where each store's client finds credentials: environment variables, then files.
_CREDENTIALS = {
    "s3": (("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN",
            "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI"),
           (("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials"),
            ("AWS_CONFIG_FILE", "~/.aws/config")),
           "set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
    "gs": (("GOOGLE_APPLICATION_CREDENTIALS",),
           ((None, "~/.config/gcloud/application_default_credentials.json"),),
           "set GOOGLE_APPLICATION_CREDENTIALS, or run gcloud auth application-default "
           "login"),
}


def credentials_hint(location: Location | None,
                     environ: Any = None) -> str:
    """``"no credentials in the environment or ~/.aws: set …"`` when none of the
    places ``location``'s store (S3, Google Cloud Storage) reads credentials from
    holds any, else ``""`` (Azure's are too many kinds to tell).

    Examples
    --------
    >>> credentials_hint(locate("s3://b/k"), {"HOME": "/nonexistent"})[:44]
    'no credentials in the environment or ~/.aws '
    >>> credentials_hint(locate("s3://b/k"), {"AWS_PROFILE": "research"})
    ''
    """
    if location is None or location.scheme not in _CREDENTIALS:
        return ""
    env = os.environ if environ is None else environ
    names, files, advice = _CREDENTIALS[location.scheme]
    if any(env.get(n) for n in names):
        return ""
    home = env.get("HOME", "")
    for variable, default in files:
        path = (env.get(variable) if variable else None) or default
        if os.path.exists(path.replace("~", home, 1) if home else os.path.expanduser(path)):
            return ""
    where = "~/.aws" if location.scheme == "s3" else "~/.config/gcloud"
    return f"no credentials in the environment or {where} ({advice})"


def refuse_web(location: Location, what: str = "") -> None:
    """Raise :class:`OutputError` for a web URL: geoeval reads the web, never writes it."""
    if location.scheme in ("http", "https"):
        raise OutputError("the web is read-only: write to a local path or an s3://, gs:// "
                          f"or az:// URL{what}", location.display)


def filesystem(location: Location, what: str = "") -> tuple[Any, str]:
    """Arrow's file system of ``location`` and its path there (bucket/key)."""
    try:
        return arrow_filesystem(location)
    except (ValueError, OSError) as exc:
        raise OutputError(f"{reason(exc, location)}{what}", location.display) from None


def _info(fs: Any, path: str, location: Location, what: str) -> Any:
    try:
        return fs.get_file_info(path)
    except OSError as exc:
        raise OutputError(f"{reason(exc, location)}{what}", location.display) from None


def _holds_objects(fs: Any, path: str, location: Location, what: str) -> bool:
    """Whether objects are stored under ``path``/ (an empty "directory" object does
    not count)."""
    import pyarrow.fs as pafs

    try:
        entries = fs.get_file_info(pafs.FileSelector(path, recursive=False,
                                                     allow_not_found=True))
    except OSError as exc:
        raise OutputError(f"{reason(exc, location)}{what}", location.display) from None
    return bool(entries)


def probe(location: Location, prefix: str, what: str = "") -> None:
    """Write a small object under ``prefix`` (bucket/key of a folder) and delete it:
    raises :class:`OutputError`, naming ``location``, unless both work."""
    fs, _ = filesystem(location, what)
    name = f"{prefix.rstrip('/')}/{PROBE}{uuid.uuid4().hex[:12]}"
    try:
        with fs.open_output_stream(name) as f:
            f.write(b"")
    except OSError as exc:
        raise OutputError(f"cannot write there: {reason(exc, location)}{what}",
                          location.display) from None
    try:
        delete(Location(f"{location.scheme}://{name}", location.scheme,
                        *name.split("/", 1)), fs)
    except OSError as exc:
        raise OutputError(f"can write there but not delete ({reason(exc, location)}), "
                          f"which a failed run must do to leave nothing{what}",
                          location.display) from None


def check_file(location: Location, what: str = "") -> bool:
    """Check a file's URL before the work (see the module); whether an object is
    there already (it is then replaced when the run succeeds)."""
    import pyarrow.fs as pafs

    refuse_web(location, what)
    if not location.key or location.key.endswith("/"):
        raise OutputError(f"names a bucket or a prefix; give an object's URL "
                          f"(…/report.json){what}", location.display)
    fs, path = filesystem(location, what)
    kind = _info(fs, path, location, what).type
    if kind == pafs.FileType.Directory and _holds_objects(fs, path, location, what):
        raise OutputError(f"is a folder (objects are stored under it); give a file's "
                          f"URL{what}", location.display)
    probe(location, path.rsplit("/", 1)[0], what)
    return kind == pafs.FileType.File


def check_folder(location: Location, what: str = "") -> None:
    """Check a folder's URL (a prefix) before the work: no object under it, the
    bucket writable (see the module)."""
    import pyarrow.fs as pafs

    refuse_web(location, what)
    fs, path = filesystem(location, what)
    kind = _info(fs, path, location, what).type if "/" in path else None
    if kind == pafs.FileType.File:
        raise OutputError(f"is an object (a file); give a folder's URL{what}",
                          location.display)
    if kind != pafs.FileType.NotFound and _holds_objects(fs, path, location, what):
        raise OutputError(f"holds objects already; give a new or empty prefix{what}",
                          location.display)
    probe(location, path, what)


def files_under(location: Location) -> list[Location]:
    """The objects under the prefix ``location``, in key order."""
    import pyarrow.fs as pafs

    fs, path = filesystem(location)
    try:
        infos = fs.get_file_info(pafs.FileSelector(path, recursive=True,
                                                   allow_not_found=True))
    except OSError as exc:
        raise OutputError(reason(exc, location), location.display) from None
    keys = sorted(i.path[len(path) + 1:] for i in infos if i.type == pafs.FileType.File)
    return [location.child(k) for k in keys]


def upload(local: str | os.PathLike[str], location: Location) -> None:
    """Upload the local file ``local`` to ``location`` in one call (complete or not
    there: see the module)."""
    import pyarrow.fs as pafs

    fs, path = filesystem(location)
    try:
        pafs.copy_files(os.fspath(local), path, source_filesystem=pafs.LocalFileSystem(),
                        destination_filesystem=fs)
    except OSError as exc:
        raise OutputError(f"could not upload ({reason(exc, location)})",
                          location.display) from None


def put(data: Any, location: Location) -> None:
    """Write ``data`` (bytes or an Arrow buffer) as the object ``location``."""
    fs, path = filesystem(location)
    try:
        with fs.open_output_stream(path) as f:
            f.write(data)
    except OSError as exc:
        raise OutputError(f"could not write ({reason(exc, location)})",
                          location.display) from None


def copy(source: Location, target: Location) -> None:
    """Copy an object within its store (the store copies it: no data through here)."""
    fs, src = filesystem(source)
    _, dst = filesystem(target)
    try:
        fs.copy_file(src, dst)
    except OSError as exc:
        raise OutputError(f"could not copy {source.display} ({reason(exc, target)})",
                          target.display) from None


def delete(location: Location, fs: Any = None) -> None:
    """Delete the object ``location`` (nothing else: see the module); no error when
    it is not there."""
    import pyarrow.fs as pafs

    from geoeval.locations import configure_gdal

    name = f"{STORE_SCHEMES[location.scheme]}{location.bucket}/{location.key}"
    try:
        import pyogrio

        unlink = getattr(pyogrio, "vsi_unlink", None)
    except ImportError:  # pragma: no cover - a dependency
        unlink = None
    if unlink is not None:
        configure_gdal()
        with contextlib.suppress(AttributeError):
            pyogrio.vsi_curl_clear_cache(name)  # GDAL must not trust an old listing
        with contextlib.suppress(FileNotFoundError):
            unlink(name)
    if fs is None:
        fs, _ = filesystem(location)
    path = f"{location.bucket}/{location.key}"
    if unlink is None or fs.get_file_info(path).type != pafs.FileType.NotFound:
        with contextlib.suppress(FileNotFoundError):
            fs.delete_file(path)  # GDAL could not: Arrow's delete (an empty parent kept)


def delete_all(locations: Iterator[Location] | list[Location]) -> list[str]:
    """Delete every object of ``locations``, going on after a failure; the URLs that
    could not be deleted (each with its reason)."""
    left = []
    for loc in locations:
        try:
            delete(loc)
        except (OSError, OutputError) as exc:
            left.append(f"{loc.display} ({reason(exc)})")
    return left


def delete_prefix(location: Location) -> list[str]:
    """Delete every object under the prefix ``location`` (a staging prefix: all of
    it is the run's), in batches through GDAL, then any left one by one; what could
    not be deleted, as :func:`delete_all` says it."""
    import pyogrio

    from geoeval.locations import configure_gdal

    rmtree = getattr(pyogrio, "vsi_rmtree", None)
    name = f"{STORE_SCHEMES[location.scheme]}{location.bucket}/{location.key.rstrip('/')}"
    if rmtree is not None:
        configure_gdal()
        with contextlib.suppress(AttributeError):
            pyogrio.vsi_curl_clear_cache(name)
        with contextlib.suppress(OSError):
            rmtree(name)
    try:
        return delete_all(files_under(location))
    except OutputError as exc:
        return [f"{location.display}/ ({exc.message})"]


def staging_prefix(target: Location) -> Location:
    """A new hidden prefix beside the folder ``target`` for a dataset written in parts
    (``s3://b/.objects.geoeval-partial-1a2b3c4d/`` for ``s3://b/objects``)."""
    parent, _, name = target.key.rstrip("/").rpartition("/")
    hidden = f".{name or target.bucket}.geoeval-partial-{uuid.uuid4().hex[:8]}"
    base = f"{target.scheme}://{target.bucket}/{parent + '/' if parent else ''}"
    return locate(base + hidden)


def name_in(folder: Location, path: Path, root: Path) -> Location:
    """The object under ``folder`` of the local file ``path`` of the folder ``root``."""
    return folder.child(path.relative_to(root).as_posix())
