"""``dealroom view --serve``: the viewer's folder over HTTP, on 127.0.0.1 only.

Only what a browser on this machine asks for is answered: a ``Host`` that is not
``127.0.0.1``, ``localhost`` or ``[::1]`` with the served port gets 421 (a DNS-rebinding page
names its own host), a path that is malformed (``%00``, bad percent-encoding, a backslash)
400, and a path that resolves outside the folder (through ``..`` or a symlink placed in it)
404, as does a folder: only the files of the folder are served, ``/`` being its
``index.html``.
"""

from __future__ import annotations

import email.utils
import functools
import os
import urllib.parse
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO, cast

from dealroom.errors import ConfigError, InputError

HOST = "127.0.0.1"
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""The host names a request may give in its ``Host`` header (with the served port)."""


class _Handler(SimpleHTTPRequestHandler):
    """Files of ``directory`` only: the Host checked, the path checked and resolved inside."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Requests are not logged."""

    def send_head(self) -> BinaryIO | None:  # type: ignore[override]
        """Headers of the file asked for and the open file, or None after an error reply."""
        if not self._host_ok():
            self.send_error(HTTPStatus.MISDIRECTED_REQUEST, "unknown Host")
            return None
        path = self._local_path()
        if path is None:
            self.send_error(HTTPStatus.BAD_REQUEST, "malformed path")
            return None
        if not path.is_file():
            self.send_error(HTTPStatus.NOT_FOUND, "not found")
            return None
        try:
            fh = open(path, "rb")  # noqa: SIM115 (the base class copies and closes it)
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "not found")
            return None
        stat = os.fstat(fh.fileno())
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Length", str(stat.st_size))
        self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        return fh

    def _host_ok(self) -> bool:
        port = cast(tuple[str, int], self.server.server_address)[1]
        host = (self.headers.get("Host") or "").strip().lower()
        return host in {f"{name}:{port}" for name in LOCAL_NAMES}

    def _local_path(self) -> Path | None:
        """The file the request's path names, resolved, if it lies inside the folder (the
        folder itself when outside it: not a file, so 404); None for a malformed path."""
        raw = urllib.parse.urlsplit(self.path).path
        try:
            path = urllib.parse.unquote(raw, errors="strict")
        except UnicodeDecodeError:
            return None
        if not path.startswith("/") or "\0" in path or "\\" in path or _bad_escape(raw):
            return None
        root = Path(self.directory).resolve()
        relative = path.lstrip("/") or "index.html"
        if relative.endswith("/"):
            relative += "index.html"
        try:
            target = (root / relative).resolve()
        except (OSError, ValueError, RuntimeError):
            return None
        return target if target.is_relative_to(root) else root


def _bad_escape(raw: str) -> bool:
    """True when ``raw`` holds a ``%`` not followed by two hex digits."""
    parts = raw.split("%")[1:]
    return any(len(p) < 2 or any(c not in "0123456789abcdefABCDEF" for c in p[:2])
               for p in parts)


def make_server(folder: Path, port: int = 0) -> ThreadingHTTPServer:
    """A server of ``folder`` bound to 127.0.0.1:``port`` (0: a free port); run it with
    ``serve_forever()``. A port outside 0-65535 is an InputError, one in use a ConfigError."""
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise InputError(f"--port {port} is not a port: give 1-65535 (or 0: any free port)")
    handler = functools.partial(_Handler, directory=str(Path(folder).resolve()))
    try:
        return ThreadingHTTPServer((HOST, port), handler)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {HOST}:{port} ({exc.strerror or exc}): "
                          "give another --port") from None
