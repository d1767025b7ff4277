"""An agent's REPL started in the background (the host's side of :mod:`._boot`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dealroom.harness.rlm._engine import Episode
    from dealroom.harness.sandbox import Sandbox


class StartingSandbox:
    """An agent's REPL started in the background, so that its start (a fresh interpreter that
    opens the room, about a second) overlaps the root's first model call. The ``sandbox``
    event is written when the first cell needs the REPL (or at the end), so the records keep
    one order whatever finishes first."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        warm = episode.ctx.warm.pop(episode.agent, None)  # started ahead (rlm_batch)
        if warm is None:
            sandbox = episode.ctx.sandbox_factory(episode)
            warm = (sandbox, asyncio.ensure_future(sandbox.start()))
        self.sandbox, self._start = warm
        self._recorded = False

    async def started(self) -> Sandbox:
        await self._start
        if not self._recorded:
            self._recorded = True
            self.episode.record_sandbox(self.sandbox)
        return self.sandbox

    async def close(self) -> None:
        """Stop the REPL, waiting for its start first; a failed start is raised here."""
        try:
            await self.started()
        finally:
            await self.sandbox.close()
