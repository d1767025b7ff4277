"""``dealroom view --serve``: the viewer's folder over HTTP, on 127.0.0.1 only."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from dealroom.errors import ConfigError

HOST = "127.0.0.1"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Requests are not logged."""


def make_server(folder: Path, port: int = 0) -> ThreadingHTTPServer:
    """A server of ``folder`` bound to 127.0.0.1:``port`` (0: a free port); run it with
    ``serve_forever()``. A port in use is a ConfigError."""
    handler = functools.partial(_Quiet, directory=str(folder))
    try:
        return ThreadingHTTPServer((HOST, port), handler)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {HOST}:{port} ({exc.strerror or exc}): "
                          "give another --port") from None
