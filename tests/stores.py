"""Object storage and the web on loopback, for the tests: servers run as processes.

:func:`s3_server` starts moto's S3-compatible server (``moto.server``) and
:func:`web_server` the range-answering static server of ``tests/range_server.py``,
each in its own process on a free port of 127.0.0.1, and stops it by its process
id. In-process servers are not an option: pyogrio holds the GIL while GDAL reads,
so a server thread in the same process could never answer it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEY, SECRET = "geoeval-test-key", "geoeval-test-SECRET-do-not-print"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _wait_until(ready, proc: subprocess.Popen, what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        with contextlib.suppress(OSError):
            if ready():
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer within {seconds:.0f} s")


@dataclass(frozen=True)
class S3Server:
    """A running S3-compatible server: its endpoint and the environment a client needs."""

    endpoint: str

    @property
    def environ(self) -> dict[str, str]:
        """The standard AWS variables of a client of this server (credentials, region,
        endpoint); nothing in GDAL's own spelling."""
        return {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
                "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": self.endpoint}

    @contextlib.contextmanager
    def environment(self) -> Iterator[None]:
        """:attr:`environ` set in ``os.environ`` meanwhile (a module's fixture), the
        variables as they were afterwards."""
        saved = {k: os.environ.get(k) for k in self.environ}
        os.environ.update(self.environ)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=KEY,
                            aws_secret_access_key=SECRET, region_name="us-east-1")

    def upload(self, bucket: str, files: dict[str, Path]) -> None:
        """Put ``files`` (key -> local file) into ``bucket``, made if missing."""
        c = self.client()
        with contextlib.suppress(c.exceptions.BucketAlreadyOwnedByYou):
            c.create_bucket(Bucket=bucket)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(8) as pool:  # one request each: hundreds of small files
            list(pool.map(lambda kv: c.put_object(Bucket=bucket, Key=kv[0],
                                                  Body=Path(kv[1]).read_bytes()),
                          files.items()))


_SHARED: dict[str, tuple[subprocess.Popen, S3Server]] = {}


@contextlib.contextmanager
def s3_server(environ: dict[str, str] | None = None, *, own: bool = False
              ) -> Iterator[S3Server]:
    """moto's S3 server in its own process group. Without ``environ`` and ``own``, one
    server shared by every test of this process (started on first use, stopped at
    exit: each module keeps to its own buckets), as starting one costs a second or
    two; else a server of its own, stopped on exit. ``environ`` adds to its
    environment (``INITIAL_NO_AUTH_ACTION_COUNT``: requests served before it checks
    credentials, which it then refuses unless an IAM user of its own holds them)."""
    if environ is None and not own:
        if "s3" not in _SHARED or _SHARED["s3"][0].poll() is not None:
            proc, server = _start_s3(None)
            _SHARED["s3"] = (proc, server)
            atexit.register(_stop, proc)
        yield _SHARED["s3"][1]
        return
    proc, server = _start_s3(environ)
    try:
        yield server
    finally:
        _stop(proc)


def _start_s3(environ: dict[str, str] | None) -> tuple[subprocess.Popen, S3Server]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, **(environ or {})})
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_until(lambda: urllib.request.urlopen(endpoint + "/moto-api/", timeout=2),
                    proc, "the S3 test server")
    except BaseException:
        _stop(proc)
        raise
    return proc, S3Server(endpoint)


@dataclass(frozen=True)
class WebServer:
    """A running static server of ``folder`` that answers range requests."""

    url: str
    folder: Path

    def bytes_sent(self) -> int:
        """Bytes of file bodies sent since the start or the last :meth:`reset`."""
        p = self.folder / ".bytes-sent"
        return int(p.read_text() or 0) if p.exists() else 0

    def reset(self) -> None:
        urllib.request.urlopen(self.url + "/.reset", timeout=5).read()


@contextlib.contextmanager
def web_server(folder: Path) -> Iterator[WebServer]:
    """``tests/range_server.py`` serving ``folder`` in its own process group."""
    port_file = folder.parent / f".{folder.name}-port"
    port_file.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, str(HERE / "range_server.py"), str(folder),
                             str(port_file)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_until(port_file.exists, proc, "the web test server")
        yield WebServer(f"http://127.0.0.1:{port_file.read_text()}", folder)
    finally:
        _stop(proc)
