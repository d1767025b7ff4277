"""LoopbackServer: an aiohttp app on 127.0.0.1 that tests start and stop, the base of the
loopback stand-ins for model servers (``MockOpenAIServer``, ``dealroom.testing.LoraServer``).

A subclass adds its handlers in :meth:`LoopbackServer.routes`. Sync code uses ``with server``
(the app runs on its own event loop in a background thread); async code uses ``async with``
(the app runs on the caller's loop).
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from abc import ABC, abstractmethod
from typing import Self

from aiohttp import web


class LoopbackServer(ABC):
    """Serve :meth:`routes` on ``127.0.0.1:port`` (0: a free port, known once started), over
    TLS when given an ``ssl_context`` (a server-side one, e.g. requiring client certificates)."""

    thread_name = "loopback-server"

    def __init__(self, port: int = 0, ssl_context: ssl.SSLContext | None = None) -> None:
        self.port = port
        self.ssl_context = ssl_context
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:PORT/v1`` (``https`` over TLS)."""
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    @abstractmethod
    def routes(self, app: web.Application) -> None:
        """Add the server's handlers to ``app``."""

    async def astart(self) -> Self:
        """Start serving on the running event loop."""
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=4096,
                           ssl_context=self.ssl_context)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def astop(self) -> None:
        """Stop a server started with :meth:`astart`."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    def start(self) -> Self:
        """Start serving from a background thread with its own event loop; a failure to
        start is raised here."""
        started = threading.Event()
        failure: list[BaseException] = []
        loop = self._loop = asyncio.new_event_loop()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.astart())
            except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
                failure.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self.astop())
            loop.close()

        self._thread = threading.Thread(target=serve, name=self.thread_name, daemon=True)
        self._thread.start()
        if not started.wait(30):
            raise RuntimeError(f"{type(self).__name__} did not start within 30 s")
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        """Stop a server started with :meth:`start`."""
        thread, self._thread = self._thread, None
        if thread is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            thread.join(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await self.astart()

    async def __aexit__(self, *exc: object) -> None:
        await self.astop()
