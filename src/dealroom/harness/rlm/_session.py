"""``dealroom repl``: the root's sandboxed REPL, for a person."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dealroom._util.heap import quiet_collector
from dealroom.harness._common import RunEvents, run_config
from dealroom.harness._common._budget import BudgetTracker
from dealroom.harness._deliver import Deliverables
from dealroom.harness.rlm._engine import Episode, RunContext
from dealroom.harness.rlm._replay import Replay
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.sandbox import make_scratch
from dealroom.runs import RunFolder, RunRecorder

if TYPE_CHECKING:
    from dealroom.harness.sandbox import Sandbox
    from dealroom.models import ModelClient


@dataclass
class CellOutput:
    """What one cell printed, and its traceback when it raised."""

    text: str
    error: str | None
    timed_out: bool = False


class ReplSession:
    """The same sandbox and REPL names the root gets; sub-calls go through the host.

    Use as ``async with ReplSession(room_dir, sub) as repl: out = await repl.run(code)``.
    Events go to ``out`` when given (a new run folder), else to a temporary one.
    """

    def __init__(self, room_dir: Path, sub: ModelClient, settings: RLMSettings | None = None,
                 out: Path | None = None) -> None:
        self.room_dir = Path(room_dir)
        self.sub = sub
        self.settings = settings or RLMSettings(max_turns=10_000, output_limit=1_000_000)
        self.out = out
        self._tmp: Path | None = None
        self._turn = 0

    async def __aenter__(self) -> ReplSession:
        from dealroom.measure import CoverageProbe
        from dealroom.room import Room

        room = Room.open(self.room_dir)
        self._tmp = make_scratch("repl")
        out = self.out or self._tmp / "run"
        folder = RunFolder.create(out, run_config("repl", self.room_dir, self.settings,
                                                  sub=self.sub))
        events = RunEvents(RunRecorder(folder), CoverageProbe(room))
        ctx = RunContext(
            room=room, room_dir=self.room_dir, root=self.sub, sub=self.sub,
            settings=self.settings, events=events, replay=Replay(), scratch=self._tmp,
            instructions="", sandbox_factory=_factory, deliverables=Deliverables(folder),
        )
        tracker = BudgetTracker(self.settings.budget())
        self.episode = Episode(ctx, agent="repl", depth=0, tracker=tracker)
        self.sandbox = await self.episode.open_sandbox()
        return self

    async def run(self, code: str) -> CellOutput:
        """Run one cell. After a timeout or a crash the worker restarts and the cells that
        succeeded run again, so what they defined is back; the error ends with a note saying so.
        The cyclic collector is kept off its sub-call waves, as in a run (``quiet_collector``)."""
        self._turn += 1
        with quiet_collector():
            result, note = await self.episode.execute_cell(self.sandbox, self._turn, code)
        error = "\n".join(x for x in (result.error, note) if x) or None
        return CellOutput(result.stdout, error, result.timed_out)

    async def __aexit__(self, *exc: object) -> None:
        await self.sandbox.close()
        self.episode.ctx.events.recorder.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


@contextlib.asynccontextmanager
async def open_repl(room_dir: Path, sub: str | ModelClient, *, settings: RLMSettings | None = None,
                    models_file: Path | None = None, concurrency: int | None = None,
                    out: Path | None = None) -> AsyncIterator[ReplSession]:
    """A :class:`ReplSession` whose sub-agent (a spec, or an open client) starts on the first
    ``llm``/``llm_batch``/``rlm`` call, never before: a session that calls none needs none."""
    from dealroom.models import lazy_model

    client = lazy_model(sub, models_file=models_file, concurrency=concurrency) \
        if isinstance(sub, str) else sub
    try:
        async with ReplSession(room_dir, client, settings, out) as session:
            yield session
    finally:
        if isinstance(sub, str):
            await client.aclose()


def _factory(episode: Episode) -> Sandbox:
    from dealroom.harness.rlm._boot import make_sandbox

    return make_sandbox(episode)
