"""A headless Chromium driven over the DevTools protocol, standard library only.

Chromium's ``--remote-debugging-pipe`` reads protocol messages on file
descriptor 3 and writes them on 4, each a JSON text ended by a NUL byte; no
WebSocket client is needed. Used by ``test_html_browser.py`` (the HTML report
in a real browser: console errors, figures drawn, numbers) and by
``docs/make_html_screenshots.py``.

    with Browser() as b:
        page = b.open("file:///tmp/contest.html", width=1280, height=900)
        page.evaluate("document.title"), page.console, page.screenshot(path)
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EXECUTABLES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    """The first Chromium on PATH, or None."""
    return next((p for p in map(shutil.which, EXECUTABLES) if p), None)


class BrowserError(RuntimeError):
    """The browser answered a command with an error, or did not answer."""


class Browser:
    """One headless Chromium process (a context manager: the process ends with it)."""

    def __init__(self, executable: str | None = None, timeout: float = 60.0) -> None:
        exe = executable or find_chromium()
        if exe is None:
            raise BrowserError("no chromium on PATH")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="geoeval-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        args = [exe, "--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}", "about:blank"]
        # a small Python puts the two pipe ends on descriptors 3 and 4, then becomes
        # chromium (dash, Debian's sh, cannot redirect descriptors above 9)
        script = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
                  "os.execv(sys.argv[3], sys.argv[3:])")
        self.process = subprocess.Popen([sys.executable, "-c", script, str(to_chrome_r),
                                         str(from_chrome_w), *args],
                                        pass_fds=(to_chrome_r, from_chrome_w),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    # -- protocol ------------------------------------------------------------------
    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        """Send one command and wait for its answer (events meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method,
                                   "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str | None = None) -> dict[str, Any]:
        """Wait for an event (or take it from those already received)."""
        for k, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId") == session:
                return self.events.pop(k)
        while True:
            event = self._read()
            if event.get("method") == method and event.get("sessionId") == session:
                return event
            self.events.append(event)

    def _read(self) -> dict[str, Any]:
        import select

        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_chrome], [], [], max(left, 0))
            if not ready:
                raise BrowserError(f"no answer from chromium in {self.timeout:g} s")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(text)

    # -- pages ---------------------------------------------------------------------
    def open(self, url: str, *, width: int = 1280, height: int = 900, mobile: bool = False,
             scripts: bool = True) -> Page:
        """A new tab of ``width`` × ``height`` CSS pixels showing ``url`` (loaded)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": mobile}, session=session)
        if not scripts:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=session)
        page = Page(self, session, width)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        return page

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """One tab: evaluate script, read its console, take screenshots."""

    def __init__(self, browser: Browser, session: str, width: int) -> None:
        self.browser, self.session, self.width = browser, session, width

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (JSON-able), run in the page."""
        result = self.browser.send("Runtime.evaluate",
                                   {"expression": expression, "returnByValue": True},
                                   session=self.session)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:60]}…: {result['exceptionDetails']}")
        return result["result"].get("value")

    @property
    def console(self) -> list[str]:
        """Errors and warnings the page produced: console calls, uncaught
        exceptions, and the browser's own log (failed loads, blocked content)."""
        self.evaluate("0")  # flush: events sent before this answer are in
        out = []
        for e in self.browser.events:
            if e.get("sessionId") != self.session:
                continue
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in (
                    "error", "warning", "assert"):
                out.append(f"console.{p['type']}: "
                           + " ".join(str(a.get("value", a.get("description")))
                                      for a in p.get("args", [])))
            elif e.get("method") == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(f"exception: {d.get('exception', {}).get('description') or d['text']}")
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] in (
                    "error", "warning"):
                out.append(f"log {p['entry']['level']}: {p['entry']['text']}")
        return out

    def screenshot(self, path: str | Path, *, top: float = 0, height: int | None = None) -> Path:
        """A PNG of the page from ``top``, ``height`` CSS pixels tall (default: to the end)."""
        full = int(self.evaluate("document.documentElement.scrollHeight"))
        h = full - top if height is None else min(height, full - top)
        shot = self.browser.send("Page.captureScreenshot",
                                 {"format": "png", "captureBeyondViewport": True,
                                  "clip": {"x": 0, "y": top, "width": self.width, "height": h,
                                           "scale": 1}}, session=self.session)
        target = Path(path)
        target.write_bytes(base64.b64decode(shot["data"]))
        return target
