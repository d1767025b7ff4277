"""Running an RLM episode on a room into a run folder, and resuming an interrupted one."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError
from dealroom.eval import RunLog, RunRecorder
from dealroom.harness._common import RunResult, finish_run, instructions_of, run_config
from dealroom.harness.rlm._budget import BudgetTracker
from dealroom.harness.rlm._engine import Episode, EpisodeResult, RunContext
from dealroom.harness.rlm._replay import Replay
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.sandbox import make_scratch

Listener = Callable[[dict[str, Any], Any], None]
"""Told of every event with the run's live CoverageProbe: ``listener(event, probe)``."""


async def run_rlm(
    room_dir: Path,
    out: Path,
    *,
    root: Any,
    sub: Any,
    settings: RLMSettings | None = None,
    listeners: tuple[Listener, ...] = (),
    config_extra: dict[str, Any] | None = None,
) -> RunResult:
    """Run the RLM harness with open model clients ``root`` and ``sub``; write ``out``."""
    from dealroom.room import Room

    settings = settings or RLMSettings()
    room = Room.open(room_dir)
    config = run_config("rlm", room_dir, [root, sub], settings, **(config_extra or {}))
    recorder = RunRecorder.create(out, config)
    instructions = instructions_of(room_dir)
    recorder.event("run_start", room=room.name, docs=room.totals["docs"],
                   tokens=room.totals["tokens"])
    return await _episode(room, recorder, root, sub, settings, Replay(), instructions, listeners)


async def resume_rlm(
    run_dir: Path, *, root: Any, sub: Any, listeners: tuple[Listener, ...] = ()
) -> RunResult:
    """Finish an interrupted run, replaying every completed model call from its records."""
    from dealroom.room import Room

    log = RunLog.read(run_dir)
    if log.ended:
        raise ConfigError(f"{run_dir} already finished; start a new run instead")
    settings = RLMSettings(**log.config.get("settings", {}))
    room_dir = Path(log.config["room"])
    room = Room.open(room_dir)
    recorder = RunRecorder.reopen(log)
    recorder.event("resumed", previous_events=len(log.events))
    instructions = instructions_of(room_dir)
    replay = Replay.from_events(log.events)
    return await _episode(room, recorder, root, sub, settings, replay, instructions, listeners,
                          previous=log.events)


async def _episode(room: Any, recorder: RunRecorder, root: Any, sub: Any,
                   settings: RLMSettings, replay: Replay, instructions: str,
                   listeners: tuple[Listener, ...], previous: list[dict] = ()) -> RunResult:
    from dealroom.measure import CoverageProbe

    probe = await asyncio.to_thread(CoverageProbe, room)  # seconds on a large room
    probe.observe_events(previous)
    scratch = make_scratch("scratch")
    ctx = RunContext(
        room=room, room_dir=Path(room.path), root=root, sub=sub, settings=settings,
        recorder=recorder, replay=replay, scratch=scratch, instructions=instructions,
        sandbox_factory=_sandbox_factory, probe=probe, listeners=list(listeners),
    )
    tracker = BudgetTracker(settings.budget())
    try:
        result: EpisodeResult = await Episode(ctx, agent="root", depth=0, tracker=tracker).run()
        ctx.emit("run_end", "root", 0, status=result.status, reason=result.reason,
                 turns=result.turns)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return finish_run(recorder, probe, result.status, result.reason, result.turns)


def _sandbox_factory(episode: Episode) -> Any:
    from dealroom.harness.rlm._boot import make_sandbox

    return make_sandbox(episode)


class _RLMHarness:
    """The RLM harness as registered under ``rlm``."""

    name = "rlm"
    uses_sub = True
    settings = RLMSettings

    @staticmethod
    def scripted_root() -> Any:
        from dealroom.harness.rlm._scripted import scripted_root

        return scripted_root()

    @staticmethod
    async def run(room_dir: Path, out: Path, *, root: Any, sub: Any, settings: RLMSettings,
                  listeners: tuple[Listener, ...] = ()) -> RunResult:
        return await run_rlm(room_dir, out, root=root, sub=sub, settings=settings,
                             listeners=listeners)

    resume = staticmethod(resume_rlm)


HARNESS = _RLMHarness()
