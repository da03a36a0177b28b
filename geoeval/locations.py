"""Where an input or output lives: a local path, or a URL of object storage or the web.

A user names data as they find it published: ``s3://bucket/key``, ``gs://…``,
``az://container/blob`` (also ``abfs://`` and ``abfss://``), ``https://host/file``,
or GDAL's own virtual file names (``/vsis3/…``, ``/vsicurl/…``), or a local path.
:func:`locate` reads that text once into a :class:`Location`, which gives each
library the name it understands:

- GDAL (rasterio for rasters and COGs, pyogrio for GeoPackage, FlatGeobuf,
  Shapefile, GeoJSON): its virtual file system name, :attr:`Location.gdal`
  (``/vsis3/bucket/key``, ``/vsigs/…``, ``/vsiaz/…``, ``/vsicurl/https://…``);
- Arrow (GeoParquet files and dataset folders): a file system and a path in it,
  :func:`arrow_filesystem`.

Credentials and endpoints come the standard way, from each store's environment
variables and profiles (``AWS_PROFILE``, ``AWS_ACCESS_KEY_ID``, …,
``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_NAME``, …). GDAL reads
another spelling of an S3-compatible endpoint than the AWS tools do:
:func:`gdal_options` translates ``AWS_ENDPOINT_URL`` (``http://127.0.0.1:9000``)
once into GDAL's ``AWS_S3_ENDPOINT`` (``127.0.0.1:9000``), ``AWS_HTTPS`` and
``AWS_VIRTUAL_HOSTING``. Anonymous access to public buckets: ``anon=True`` or
``AWS_NO_SIGN_REQUEST=YES``.

Secrets never reach a message, a report or a page: :func:`redact` (applied by
:attr:`Location.display`) drops a URL's password and shows its query string, where
signed URLs carry their signature, as ``?…``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

#: URL schemes of object stores and the web -> GDAL's virtual file system prefix.
STORE_SCHEMES = {"s3": "/vsis3/", "gs": "/vsigs/", "gcs": "/vsigs/", "az": "/vsiaz/",
                 "abfs": "/vsiaz/", "abfss": "/vsiaz/", "http": "/vsicurl/",
                 "https": "/vsicurl/"}
#: GDAL's virtual file systems of those stores -> the URL scheme that names the same.
_VSI_SCHEMES = {"vsis3": "s3", "vsigs": "gs", "vsiaz": "az", "vsiadls": "az",
                "vsicurl": "https"}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True)
class Location:
    """One input's or output's place, read once from the text the user gave.

    Attributes
    ----------
    text : str
        As given (it may hold secrets: print :attr:`display`, never this).
    scheme : str
        ``""`` for a local path; else ``s3``, ``gs``, ``az``, ``http``, ``https``
        (``gcs`` is read as ``gs``, ``abfs``/``abfss`` as ``az``), or ``vsi`` for a
        GDAL virtual file name of another kind (``/vsimem/``, ``/vsizip/`` …).
    bucket : str
        The bucket or container (object stores), the host and port (the web).
    key : str
        The object's key in the bucket, or the URL's path, without a leading ``/``.
    """

    text: str
    scheme: str
    bucket: str = ""
    key: str = ""

    @property
    def is_local(self) -> bool:
        """A path of the local file system."""
        return self.scheme == ""

    @property
    def is_store(self) -> bool:
        """An object store (``s3``, ``gs``, ``az``): keys under a prefix can be listed."""
        return self.scheme in ("s3", "gs", "az")

    @property
    def display(self) -> str:
        """The text to print: secrets removed (:func:`redact`)."""
        return redact(self.text)

    @property
    def name(self) -> str:
        """The last part of the path (``ref.tif`` of ``s3://b/scenes/ref.tif``)."""
        if self.is_local or self.scheme == "vsi":
            return os.path.basename(self.text.rstrip("/"))
        return self.key.rstrip("/").rsplit("/", 1)[-1]

    @property
    def gdal(self) -> str:
        """The name GDAL opens: its virtual file system for a URL, the text for a
        local path or a ``/vsi…`` name."""
        if self.is_local or self.scheme == "vsi":
            return self.text
        if self.scheme in ("http", "https"):
            return "/vsicurl/" + self.text if not self.text.startswith("/vsi") else self.text
        return f"{STORE_SCHEMES[self.scheme]}{self.bucket}/{self.key}"

    @property
    def url(self) -> str:
        """The URL (``s3://bucket/key``) of a store or web location; the text of a
        local path."""
        if self.is_local or self.scheme == "vsi":
            return self.text
        if self.scheme in ("http", "https"):
            return self.text.removeprefix("/vsicurl/")
        return f"{self.scheme}://{self.bucket}/{self.key}"

    def child(self, name: str) -> Location:
        """The location of ``name`` inside this one (a folder or a prefix)."""
        if self.is_local or self.scheme == "vsi":
            return locate(os.path.join(self.text, name))
        base = self.url.split("?", 1)[0].rstrip("/")
        return locate(f"{base}/{name}")


def is_url(text: object) -> bool:
    """Whether ``text`` names a place in object storage or on the web (a URL of a
    known scheme, or GDAL's name of one: ``/vsis3/…``, ``/vsicurl/…``)."""
    if not isinstance(text, str):
        return False
    m = _SCHEME.match(text)
    if m:
        return m.group(1).lower() in STORE_SCHEMES
    head = text[1:].split("/", 1)[0] if text.startswith("/vsi") else ""
    return head in _VSI_SCHEMES


def locate(text: str | os.PathLike[str]) -> Location:
    """Read the place ``text`` names (see the module).

    Examples
    --------
    >>> locate("s3://open-data/buildings/part-0.parquet").gdal
    '/vsis3/open-data/buildings/part-0.parquet'
    >>> locate("/vsigs/bucket/dem.tif").url
    'gs://bucket/dem.tif'
    >>> locate("https://user:pw@example.org/ref.tif?X-Amz-Signature=abc").display
    'https://user@example.org/ref.tif?…'
    >>> locate("scenes/ref.tif").is_local
    True
    """
    if not isinstance(text, str):
        return Location(os.fspath(text), "")
    m = _SCHEME.match(text)
    if m and m.group(1).lower() in STORE_SCHEMES:
        scheme = m.group(1).lower()
        scheme = {"gcs": "gs", "abfs": "az", "abfss": "az"}.get(scheme, scheme)
        parts = urlsplit(text)
        if scheme in ("http", "https"):
            return Location(text, scheme, parts.netloc.rsplit("@", 1)[-1], parts.path.lstrip("/"))
        bucket = parts.netloc.rsplit("@", 1)[0] if m.group(1).lower().startswith("abfs") \
            else parts.netloc  # abfs://container@account.dfs.core.windows.net/path
        return Location(text, scheme, bucket, parts.path.lstrip("/"))
    if text.startswith("/vsi"):
        head, _, rest = text[1:].partition("/")
        scheme = _VSI_SCHEMES.get(head)
        if scheme == "https":
            return locate(rest) if _SCHEME.match(rest) else Location(text, "vsi")
        if scheme is not None and not os.path.lexists(text):
            bucket, _, key = rest.partition("/")
            return Location(text, scheme, bucket, key)
        return Location(text, "vsi")
    return Location(text, "")


_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/@?#]*)@")
_QUERY = re.compile(r"\?[^\s'\"]*")


def redact(text: str) -> str:
    """``text`` with what may be a secret taken out: a URL's password (``user:pw@``
    becomes ``user@``) and its query string (``?…``), which is where signed URLs
    (S3 presigned, Azure SAS, GCS signed) carry their signature. Any URL inside
    ``text`` is treated alike, so a library's message about a URL can be shown.

    Examples
    --------
    >>> redact("s3://b/ref.tif")
    's3://b/ref.tif'
    >>> redact("cannot open https://h/x.tif?sig=SECRET&se=2026: 403")
    'cannot open https://h/x.tif?… 403'
    """
    def one(url: str) -> str:
        url = _USERINFO.sub(lambda m: m.group(1) + m.group(2).split(":", 1)[0] + "@", url)
        return _QUERY.sub("?…", url)

    return re.sub(r"[A-Za-z][A-Za-z0-9+.-]*://\S+|/vsi\S+", lambda m: one(m.group(0)), text)


#: Attempts of a request to a store before its failure is reported, unless
#: ``AWS_MAX_ATTEMPTS`` says otherwise.
ATTEMPTS = 4


def max_attempts(environ: Mapping[str, str] | None = None) -> int:
    """Attempts of one request to a store (the first included): ``AWS_MAX_ATTEMPTS``
    (the AWS tools' setting) when it is a positive whole number, else
    :data:`ATTEMPTS`."""
    env = os.environ if environ is None else environ
    try:
        n = int(env.get("AWS_MAX_ATTEMPTS", ""))
    except ValueError:
        return ATTEMPTS
    return n if n >= 1 else ATTEMPTS


def gdal_options(environ: Mapping[str, str] | None = None, *, anon: bool = False
                 ) -> dict[str, str]:
    """GDAL configuration options that the standard environment implies but GDAL does
    not read in that spelling.

    ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` (the AWS tools' name of an
    S3-compatible endpoint, e.g. MinIO, Ceph, a local test server) becomes
    ``AWS_S3_ENDPOINT`` (host, port and path, without the scheme),
    ``AWS_HTTPS=NO`` for ``http://`` and ``AWS_VIRTUAL_HOSTING=FALSE`` (such servers
    name the bucket in the path). ``anon`` (or ``AWS_NO_SIGN_REQUEST=YES``) asks for
    no signature. Transient HTTP failures are retried 3 times, 1 s apart and growing
    (``GDAL_HTTP_MAX_RETRY``, ``GDAL_HTTP_RETRY_DELAY``), or as many times as
    ``AWS_MAX_ATTEMPTS`` (the AWS tools' setting: attempts, the first included) allows.
    What the environment already sets in GDAL's own spelling is kept.

    Examples
    --------
    >>> gdal_options({"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"})["AWS_S3_ENDPOINT"]
    '127.0.0.1:9000'
    """
    env = os.environ if environ is None else environ
    out = {"GDAL_HTTP_MAX_RETRY": str(max_attempts(env) - 1), "GDAL_HTTP_RETRY_DELAY": "1"}
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint and "AWS_S3_ENDPOINT" not in env:
        parts = urlsplit(endpoint if "://" in endpoint else "https://" + endpoint)
        out["AWS_S3_ENDPOINT"] = parts.netloc + parts.path.rstrip("/")
        out["AWS_HTTPS"] = "NO" if parts.scheme == "http" else "YES"
        out["AWS_VIRTUAL_HOSTING"] = "FALSE"
    # set either way: a process's earlier anonymous run must not leave it on
    out["AWS_NO_SIGN_REQUEST"] = "YES" if anon else "NO"
    return {k: v for k, v in out.items() if k not in env}


def arrow_filesystem(location: Location, *, anon: bool = False,
                     environ: Mapping[str, str] | None = None) -> tuple[Any, str]:
    """A pyarrow file system for ``location`` and the path in it.

    S3 with the endpoint of ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` when set
    (credentials, profile and region as the AWS SDK finds them), Google Cloud
    Storage, Azure (account from ``AZURE_STORAGE_ACCOUNT_NAME`` or
    ``AZURE_STORAGE_ACCOUNT``), and the local file system. ``anon`` (or
    ``AWS_NO_SIGN_REQUEST=YES``) reads public buckets without credentials. The web
    has no Arrow file system: a GeoParquet file behind ``https://`` is read through
    GDAL's ``/vsicurl/`` instead.

    Raises
    ------
    ValueError
        A web URL (no Arrow file system), or a GDAL virtual name of another kind.
    """
    import pyarrow.fs as pafs

    env = os.environ if environ is None else environ
    anon = anon or env.get("AWS_NO_SIGN_REQUEST", "").upper() in ("YES", "TRUE", "1")
    if location.is_local:
        return pafs.LocalFileSystem(), os.path.abspath(location.text)
    path = f"{location.bucket}/{location.key}".rstrip("/")
    if location.scheme == "s3":
        kwargs: dict[str, Any] = {"anonymous": anon,
                                  "retry_strategy": pafs.AwsStandardS3RetryStrategy(
                                      max_attempts=max_attempts(env))}
        endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
        if endpoint:
            parts = urlsplit(endpoint if "://" in endpoint else "https://" + endpoint)
            kwargs.update(endpoint_override=parts.netloc + parts.path.rstrip("/"),
                          scheme=parts.scheme, force_virtual_addressing=False)
            kwargs.setdefault("region", env.get("AWS_REGION")
                              or env.get("AWS_DEFAULT_REGION") or "us-east-1")
        return pafs.S3FileSystem(**kwargs), path
    if location.scheme == "gs":
        return pafs.GcsFileSystem(anonymous=anon), path
    if location.scheme == "az":
        account = env.get("AZURE_STORAGE_ACCOUNT_NAME") or env.get("AZURE_STORAGE_ACCOUNT")
        if not account:
            raise ValueError(f"{location.display}: set AZURE_STORAGE_ACCOUNT_NAME to the "
                             "storage account that holds it")
        return pafs.AzureFileSystem(account_name=account), path
    raise ValueError(f"{location.display}: no Arrow file system for this kind of location")


def configure_gdal(*, anon: bool = False, environ: Mapping[str, str] | None = None) -> None:
    """Give :func:`gdal_options` to both copies of GDAL in the process: rasterio's and
    pyogrio's wheels each carry their own, and each reads its own configuration."""
    options = gdal_options(environ, anon=anon)
    import pyogrio
    import rasterio.env

    pyogrio.set_gdal_config_options(options)
    for key, value in options.items():
        rasterio.env.set_gdal_config(key, value)
