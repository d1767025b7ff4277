"""Running an RLM episode on a room into a run folder, and resuming an interrupted one."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.heap import quiet_collector
from dealroom.harness._common import OpenRun, RunResult, open_run, reopen_run
from dealroom.harness._common._budget import BudgetTracker
from dealroom.harness._common._clock import STOPPED, run_within
from dealroom.harness._protocol import Listener
from dealroom.harness.rlm._engine import Episode, EpisodeResult, RunContext
from dealroom.harness.rlm._followup import FollowUp
from dealroom.harness.rlm._prompt import with_deliverables
from dealroom.harness.rlm._replay import Replay
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.rlm._tools import ToolBox, open_toolbox
from dealroom.harness.sandbox import make_scratch

if TYPE_CHECKING:
    from dealroom.harness.sandbox import Sandbox
    from dealroom.measure import CoverageProbe
    from dealroom.models import ModelClient


async def run_rlm(
    room_dir: Path,
    out: Path,
    *,
    root: ModelClient,
    sub: ModelClient | None,
    settings: RLMSettings | None = None,
    listeners: tuple[Listener, ...] = (),
    concurrency: int | None = None,
) -> RunResult:
    """Run the RLM harness with open model clients ``root`` and ``sub``; write ``out``."""
    settings = settings or RLMSettings()
    tools = open_toolbox(settings)  # a bad tools file stops the run before its folder
    run = await open_run("rlm", room_dir, out, root=root, sub=sub, settings=settings,
                         listeners=listeners, concurrency=concurrency)
    tools.keep(Path(run.folder.path))
    return await _episode(run, root, sub, settings, Replay(), tools)


async def resume_rlm(
    run_dir: Path, *, root: ModelClient, sub: ModelClient | None,
    listeners: tuple[Listener, ...] = (),
) -> RunResult:
    """Finish an interrupted run, replaying every completed model call from its records."""
    run = await reopen_run(run_dir, listeners=listeners)
    settings = run.settings(RLMSettings)
    tools = open_toolbox(settings, Path(run.folder.path))
    tools.keep(Path(run.folder.path))  # a fork's folder has none yet
    return await _episode(run, root, sub, settings, Replay.from_events(run.previous), tools)


async def ask_rlm(
    ask_dir: Path, *, root: ModelClient, sub: ModelClient | None, follow_up: dict[str, Any],
    listeners: tuple[Listener, ...] = (),
) -> tuple[RunResult, str | None]:
    """Play an ask folder (a run's records up to its last turn, see ``dealroom.ask_run``):
    turns 1..J replayed, then the question (``follow_up``: the fields of
    :class:`FollowUp`); the result and the root's answer."""
    run = await reopen_run(ask_dir, listeners=listeners)
    settings = run.settings(RLMSettings)
    tools = open_toolbox(settings, Path(run.folder.path))
    answers: list[str | None] = []
    result = await _episode(run, root, sub, settings, Replay.from_events(run.previous), tools,
                            FollowUp(**follow_up), answers)
    return result, answers[0] if answers else None


async def _episode(run: OpenRun, root: ModelClient, sub: ModelClient | None, settings: RLMSettings,
                   replay: Replay, tools: ToolBox, ask: FollowUp | None = None,
                   answers: list[str | None] | None = None) -> RunResult:
    loading = asyncio.ensure_future(_load(run.events.probe))  # read while the sandbox starts
    scratch = make_scratch("scratch")
    ctx = RunContext(
        room=run.room, room_dir=Path(run.room.path), root=root, sub=sub, settings=settings,
        events=run.events, replay=replay, scratch=scratch,
        instructions=with_deliverables(run.instructions.text, run.deliverables.files),
        sandbox_factory=_sandbox_factory, deliverables=run.deliverables,
        inherited_subs=run.inherited_subs(),
        tools=tools, ask=ask,
    )
    tracker = BudgetTracker(settings.budget())
    tracker.carry(*run.spent())
    ctx.pool.carry(run.previous)  # each model's cost cap counts what it spent before
    try:
        episode = Episode(ctx, agent="root", depth=0, tracker=tracker)
        with quiet_collector():
            result = await run_within(tracker, episode.run()) or _stopped(ctx, episode)
        ctx.emit("run_end", "root", 0, status=result.status, reason=result.reason,
                 turns=result.turns, ended=result.ended)
        if answers is not None:
            answers.append(result.answer)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        await loading
    return run.finish(result.status, result.reason, result.turns)


def _stopped(ctx: RunContext, episode: Episode) -> EpisodeResult:
    """The result of a root episode the run's clock stopped (:func:`run_within`)."""
    status, reason = ctx.final_status("budget_exhausted", STOPPED)
    return EpisodeResult(status, reason, episode.memo, None, episode.tracker.turns,
                         "budget_exhausted")


async def _load(probe: CoverageProbe) -> None:
    """Read the probe's coverage index in a thread; a failure is raised again where the probe
    is first used."""
    with contextlib.suppress(Exception):
        await asyncio.to_thread(probe.load)


def _sandbox_factory(episode: Episode) -> Sandbox:
    from dealroom.harness.rlm._boot import make_sandbox

    return make_sandbox(episode)


class _RLMHarness:
    """The RLM harness as registered under ``rlm``."""

    name = "rlm"
    uses_sub = True
    settings = RLMSettings

    @staticmethod
    def scripted_root(**options: str) -> ModelClient:
        from dealroom.harness.rlm._scripted import scripted_root

        return scripted_root(**options)

    run = staticmethod(run_rlm)
    resume = staticmethod(resume_rlm)
    ask = staticmethod(ask_rlm)


HARNESS = _RLMHarness()
