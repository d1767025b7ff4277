"""A test double of the process sandbox: runs cells with exec() in a thread, no isolation.

It has the same surface as ``dealroom.harness.sandbox.Sandbox`` so the engine's logic can be
unit-tested quickly; the real sandbox is exercised end to end in test_rlm_run.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
import traceback
from types import SimpleNamespace
from typing import Any

from dealroom.harness.rlm._repl_api import build_namespace


class InProcessSandbox:
    isolation = "none (test double)"
    confinement = {"isolation": "none (test double)"}
    degraded = ["isolation: none (test double)"]

    def __init__(self, episode: Any) -> None:
        self.episode = episode
        self.ns: dict[str, Any] = {}
        self.restarts = 0

    async def start(self) -> None:
        self.ns = {}

    async def restart(self) -> None:
        self.restarts += 1
        await self.start()

    async def close(self) -> None:
        self.ns = {}

    async def execute(self, code: str, *, timeout: float | None = None,
                      wall_timeout: float | None = None, on_request=None):
        loop = asyncio.get_running_loop()
        self._on_request = on_request

        def request(kind: str, payload: dict) -> dict:
            req = SimpleNamespace(kind=kind, payload=payload)
            fut = asyncio.run_coroutine_threadsafe(self._on_request(req), loop)
            result = fut.result()
            if not result.ok:
                raise RuntimeError(result.error)
            return result.payload

        if not self.ns:
            ep = self.episode
            self.ns = build_namespace(request, room=ep.ctx.room, depth=ep.depth,
                                      max_depth=ep.ctx.settings.depth,
                                      context_tokens=ep.sub_context_tokens(),
                                      deliverables=ep.ctx.deliverables.files,
                                      memo_limit=ep.ctx.settings.memo_limit,
                                      models=ep.ctx.pool.describe(ep.ctx.settings, ep.sub))
        started = time.monotonic()

        def run() -> tuple[str, str | None]:
            buf = io.StringIO()
            error = None
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                try:
                    exec(compile(code, "<cell>", "exec"), self.ns)
                except BaseException:
                    error = traceback.format_exc(limit=-1)
            return buf.getvalue(), error

        stdout, error = await asyncio.to_thread(run)
        return SimpleNamespace(stdout=stdout, error=error, timed_out=False, crashed=False,
                               seconds=time.monotonic() - started, state=self.ns["__state__"]())
