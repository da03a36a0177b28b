"""A static HTTP server that answers range requests, for the tests (run as a process).

``python tests/range_server.py FOLDER PORT_FILE``: serves FOLDER on a free loopback
port, writes the port to PORT_FILE once it listens, and counts the bytes it sends in
``FOLDER/.bytes-sent`` (a request's path ``/.reset`` sets the count to 0). Python's
``http.server`` ignores ``Range``, which GDAL's ``/vsicurl/`` needs for a partial read.
A query string is accepted and ignored, as a signed URL's would be.
"""

from __future__ import annotations

import http.server
import os
import re
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(sys.argv[1]).resolve() if __name__ == "__main__" else Path(".")
_sent = [0]
_lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _target(self) -> Path | None:
        rel = unquote(urlsplit(self.path).path).lstrip("/")
        p = (ROOT / rel).resolve()
        return p if p.is_file() and ROOT in p.parents else None

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def do_GET(self) -> None:  # noqa: N802
        if urlsplit(self.path).path == "/.reset":
            with _lock:
                _sent[0] = 0
                self._count()
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        p = self._target()
        if p is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = p.stat().st_size
        start, end, status = 0, size - 1, 200
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if m and size:
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:  # the last N bytes
                start = max(size - int(m.group(2)), 0)
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Accept-Ranges", "bytes")
        stat = p.stat()  # as static servers do: a version of the file for caches
        self.send_header("ETag", f'"{stat.st_mtime_ns:x}-{stat.st_size:x}"')
        self.send_header("Last-Modified", self.date_time_string(stat.st_mtime))
        self.send_header("Content-Length", str(end - start + 1))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        if body:  # counted before the client can have it: a count read after a read is whole
            with open(p, "rb") as f:
                f.seek(start)
                data = f.read(end - start + 1)
            with _lock:
                _sent[0] += len(data)
                self._count()
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _count(self) -> None:
        tmp = ROOT / f".bytes-sent.{threading.get_ident()}"
        tmp.write_text(str(_sent[0]))
        os.replace(tmp, ROOT / ".bytes-sent")  # a reader never sees a half-written count


def main() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = sys.argv[2] + ".tmp"
    Path(tmp).write_text(str(server.server_address[1]))
    os.replace(tmp, sys.argv[2])
    server.serve_forever()


if __name__ == "__main__":
    main()
