"""Headless Chromium for tests and benchmarks, driven over the DevTools protocol on a pipe.

Chromium started with ``--remote-debugging-pipe`` reads protocol messages (JSON, each ended by
a NUL byte) on its fd 3 and writes replies and events on fd 4, so no socket and no extra
package is needed::

    with Browser() as browser:
        browser.open(Path("out/index.html").resolve().as_uri())
        browser.evaluate("document.title")
        browser.screenshot(Path("shot.png"))
        assert not browser.errors
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> str | None:
    """The Chromium (or Chrome) executable on PATH or at /usr/bin/chromium, or None."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


class Browser:
    """One headless Chromium with one page; ``errors`` collects console errors, uncaught
    exceptions and failed loads of that page."""

    def __init__(self, executable: str | None = None, *, width: int = 1280,
                 height: int = 900, timeout: float = 30.0) -> None:
        exe = executable or find_chromium()
        if exe is None:
            raise ConfigError("no Chromium found: install Debian's `chromium` package")
        self.timeout = timeout
        self.errors: list[str] = []
        self._profile = tempfile.mkdtemp(prefix="dealroom-chromium-")
        to_child, self._out = os.pipe()
        self._in, from_child = os.pipe()
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child)]
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             f"--window-size={width},{height}", f"--user-data-dir={self._profile}",
             "about:blank"],
            pass_fds=(3, 4), preexec_fn=lambda: (os.dup2(high[0], 3), os.dup2(high[1], 4)),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_child, from_child, *high):
            os.close(fd)
        self._id = 0
        self._replies: dict[int, queue.Queue] = {}
        self._events: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=self.session)

    # -- the protocol ------------------------------------------------------------------------
    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._in, 1 << 16):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                if "id" in message and message["id"] in self._replies:
                    self._replies[message["id"]].put(message)
                else:
                    self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                        for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails") or {}
            self.errors.append((details.get("exception") or {}).get("description")
                               or details.get("text", "exception"))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(params["entry"].get("text", ""))
        self._events.put(message)

    def send(self, method: str, session: str | None = None, wait: float | None = None,
             **params: Any) -> dict[str, Any]:
        """Send one command and wait for its result (``wait`` seconds, default the browser's
        timeout); a RuntimeError for a protocol error."""
        with self._lock:
            self._id += 1
            ident = self._id
            self._replies[ident] = queue.Queue()
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        try:
            reply = self._replies[ident].get(timeout=wait or self.timeout)
        except queue.Empty:
            raise TimeoutError(f"Chromium did not answer {method} in {wait or self.timeout} s") \
                from None
        finally:
            del self._replies[ident]
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    # -- the page ----------------------------------------------------------------------------
    def open(self, url: str) -> None:
        """Load ``url`` and wait for its load event."""
        while not self._events.empty():
            self._events.get_nowait()
        self.send("Page.navigate", session=self.session, url=url)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            try:
                event = self._events.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if event.get("method") == "Page.loadEventFired":
                return
        raise TimeoutError(f"{url} did not load in {self.timeout} s")

    def evaluate(self, expression: str, wait: float | None = None) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send("Runtime.evaluate", session=self.session, wait=wait,
                           expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails'].get('text')} "
                               f"{result['result'].get('description', '')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float | None = None) -> Any:
        """Poll ``expression`` until it is truthy; its value (TimeoutError when it stays not).
        A page that is navigating (after a click on a link) is polled again."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression, wait=5.0)
            except (RuntimeError, TimeoutError):
                value = None  # the context went away with a navigation: ask the new page
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"{expression} stayed false for {timeout or self.timeout} s")

    def click(self, selector: str) -> None:
        """Click the first element matching ``selector`` (a LookupError when there is none)."""
        if not self.evaluate(f"(e => e ? (e.click(), true) : false)"
                             f"(document.querySelector({json.dumps(selector)}))"):
            raise LookupError(f"no element matches {selector}")

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        """Save a PNG of the page (the viewport, or the whole page)."""
        data = self.send("Page.captureScreenshot", session=self.session, format="png",
                         captureBeyondViewport=full_page)["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._out)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
