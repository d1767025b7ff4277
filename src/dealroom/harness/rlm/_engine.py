"""One RLM agent's episode: the root loop over a sandboxed REPL, sub-calls and children.

    host (this process)                                  sandboxed worker
    ───────────────────                                  ────────────────
    root model ──reply──▶ extract ```python ──exec────▶  cell runs with room, llm, memo, ...
                                                ◀─request─ llm_batch([...])  /  rlm(task)
    build slices, reserve budget, fan out ──────response─▶ results as variables
                                                ◀─done──── printed output, memo snapshot
    truncate output ──"turn k of T"──▶ root model

A child (``rlm(...)``, depth ≥ 2) is another :class:`Episode` with its own worker and a budget
carved out of its parent's. Every step is appended to the run's trajectory as it happens;
:class:`Replay` answers calls that an earlier, interrupted attempt already completed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.errors import DealroomError
from dealroom.harness._common._budget import BudgetTracker
from dealroom.harness._common._calls import error_text
from dealroom.harness._common._clock import off_loop
from dealroom.harness._subs import sub_models
from dealroom.harness.rlm._children import child_agent, child_answer, run_children
from dealroom.harness.rlm._context import RootContext
from dealroom.harness.rlm._fair import FairGate
from dealroom.harness.rlm._followup import FollowUp
from dealroom.harness.rlm._memo import checked_memo
from dealroom.harness.rlm._prompt import (
    FIRST_USER,
    NEXT_USER,
    RLM_LINE,
    ROOT_SYSTEM,
    extract_code,
    truncate,
    turn_line,
)
from dealroom.harness.rlm._replay import Replay, SubAnswer
from dealroom.harness.rlm._root import RootCalls, no_code_note
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.rlm._starting import StartingSandbox
from dealroom.harness.rlm._subcalls import SubCalls
from dealroom.harness.rlm._subs import SubPool
from dealroom.harness.rlm._subwindow import SubWindow
from dealroom.harness.rlm._tools import ToolBox
from dealroom.models import HedgeWave, history_content
from dealroom.types import Budget

if TYPE_CHECKING:
    from dealroom.harness._common import RunEvents
    from dealroom.harness._deliver import Deliverables
    from dealroom.harness.sandbox import (
        CellResult,
        RequestHandler,
        Sandbox,
        SubcallRequest,
        SubcallResult,
    )
    from dealroom.models import ModelClient
    from dealroom.room import Room

DEGRADED_SHARE = 0.10
"""A run whose sub-calls failed for more than this share ends ``degraded``."""

CHILD_FIRST = """\
You are a child agent of a due diligence review. Your task:
{task}
{docs_line}Work in the REPL as described, then call submit(answer) with your answer as a string
(findings with citations such as [D00042 p.3]). {turn_line}."""


@dataclass
class EpisodeResult:
    """How an episode ended and what it delivered."""

    status: str
    """submitted | budget_exhausted | max_turns | errors (``max_errors`` failed turns in a
    row) | error | degraded (more than
    :data:`DEGRADED_SHARE` of the sub-calls failed; the reason says how it ended)"""
    reason: str
    memo: str
    answer: str | None
    turns: int
    ended: str = ""
    """How the agent itself ended (``status`` before a run is marked ``degraded``)."""


@dataclass
class RunContext:
    """What every episode of one run shares."""

    room: Room
    room_dir: Path
    root: ModelClient
    sub: ModelClient | None
    settings: RLMSettings
    events: RunEvents
    """The run's :class:`~dealroom.harness.RunEvents`: recorder, coverage probe, listeners."""
    replay: Replay
    scratch: Path
    instructions: str
    sandbox_factory: Callable[[Episode], Sandbox]
    deliverables: Deliverables
    """The run's :class:`~dealroom.harness.Deliverables`: the root's memo is written there."""
    waves: int = 0
    hedges: dict[int, HedgeWave] = field(default_factory=dict)
    """Per wave number: the latencies its stragglers are hedged against."""
    sub_failed: set[str] = field(default_factory=set)
    """Call ids of sub-calls whose provider failed live (a later success in ``replay`` wins);
    failures recorded before a resume or fork are in ``replay.subs``."""
    inherited_subs: set[str] = field(default_factory=set)
    """Call ids of sub-calls a fork copied from its source (not counted for ``degraded``)."""
    sub_window: SubWindow | None = None
    """How many words-v1 tokens of input fit one sub-call, in the sub model's own count."""
    promised: int = 0
    """The most words-v1 tokens of input a sub-call was promised when an agent was told
    ``llm.context_tokens``: the host admits that much even after its count grew (a call the
    endpoint then refuses is re-cut, and what was not sent handed back as ``unsent``)."""
    gates: dict[str, FairGate] = field(default_factory=dict)
    """Per sub model: the slots of every agent's sub-calls, taken round robin by agent."""
    warm: dict[str, tuple[Sandbox, asyncio.Future[None]]] = field(default_factory=dict)
    """Agent id → its REPL's start, begun ahead of the child (``rlm_batch``'s next ones)."""
    tools: ToolBox = field(default_factory=ToolBox)
    """The user's sandboxed and host tools (``--tools``, ``--host-tools``)."""
    ask: FollowUp | None = None
    """The follow-up question of ``dealroom ask``, put to the root after the run's last turn."""
    pool: SubPool = field(init=False)
    """The sub-agent models by name (``--sub fast=A --sub strong=B``), the first the default."""

    def __post_init__(self) -> None:
        subs = sub_models(self.sub)
        self.sub = subs.default if subs is not None else None
        if self.sub_window is None and self.sub is not None:
            self.sub_window = SubWindow(self.sub)
        self.pool = SubPool(subs, self.sub_window, self.settings.max_cost_per_model)

    @property
    def sub_client(self) -> ModelClient:
        """The sub-agent's client (sub-calls and children need one)."""
        if self.sub is None:
            raise DealroomError("this run has no sub-agent model: give it one (sub=)")
        return self.sub

    @property
    def window(self) -> SubWindow:
        """The sub-agent's :class:`SubWindow` (made with the run's sub-agent)."""
        if self.sub_window is None:
            raise DealroomError("this run has no sub-agent model: give it one (sub=)")
        return self.sub_window

    def final_status(self, status: str, reason: str) -> tuple[str, str]:
        """``degraded`` when more than :data:`DEGRADED_SHARE` of the sub-calls failed."""
        answers = self.replay.subs  # recorded and live answers, failures replayed as failures
        calls = (self.sub_failed | answers.keys()) - self.inherited_subs
        failed = sum(not answers.get(c, {"ok": False})["ok"] for c in calls)
        total = len(calls)
        if status == "error" or not total or failed / total <= DEGRADED_SHARE:
            return status, reason
        return "degraded", (f"{reason}; {failed} of {total} sub-calls failed "
                            f"({failed / total:.0%}, above the {DEGRADED_SHARE:.0%} threshold)")

    def emit(self, type: str, agent: str, depth: int, **fields: Any) -> None:
        self.events.emit(type, agent, depth, **fields)


class Episode(RootCalls, SubCalls):
    """One agent (the root, or a child at depth ≥ 1) working until it submits or runs out."""

    def __init__(
        self, ctx: RunContext, *, agent: str, depth: int, tracker: BudgetTracker,
        task: str | None = None, docs: list[Any] | None = None, sub: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.agent = agent
        self.depth = depth
        self.tracker = tracker
        self.task = task
        self.docs = docs or []
        self.sub = sub
        """The name of this agent's default sub-agent model (None: the run's)."""
        self.model = ctx.root if depth == 0 else self._sub_model(None).client
        self.role = "root" if depth == 0 else "child_root"
        self._cells: list[tuple[int, str]] = []
        self._counters: dict[int, int] = {}
        self._replaying = False
        self._memo = ""
        self._own: dict[str, str] = {}
        self.context: RootContext | None = None
        self._cell_failed = False

    @property
    def memo(self) -> str:
        """The memo as the agent last wrote it."""
        return self._memo

    # -- the loop ---------------------------------------------------------------------------
    async def run(self) -> EpisodeResult:
        await self._calibrate_room()  # llm.context_tokens is then what the host will admit
        sandbox = StartingSandbox(self)  # the root's first call goes out while it starts
        self.context = context = RootContext(self.model, self.ctx.settings.compact_at,
                                             self._opening())
        messages = context.messages
        status, reason = "max_turns", "turn budget used up"
        state: dict[str, Any] = {}
        streak = 0  # turns in a row that ran no code or raised
        try:
            while True:
                if (spent := self.tracker.exhausted()) is not None:
                    status = "max_turns" if spent == "turns" else "budget_exhausted"
                    reason = f"{spent} budget used up"
                    break
                self.tracker.turns += 1
                turn = self.tracker.turns
                reply = await self._root_reply(turn)
                if reply is None:
                    status, reason = "error", "the root model failed (see the model_call event)"
                    break
                if isinstance(reply, str):  # _NO_BUDGET
                    status, reason = "budget_exhausted", "no budget left for the root's next call"
                    break
                messages.append({"role": "assistant", "content": history_content(
                    reply.answer, reasoning=reply.reasoning, shape=reply.shape,
                    policy=self.ctx.settings.reasoning_history)})
                code = extract_code(reply.answer)  # never from the reasoning
                if code is None:
                    note = no_code_note(reply)
                    context.record_turn(turn, reply, None, note)
                    if (question := await self._follow_up(turn, sandbox)) is not None:
                        messages.append({"role": "user", "content": question})
                        continue
                    streak += 1
                    if (why := self._too_many_errors(streak)) is not None:
                        status, reason = "errors", why
                        break
                    messages.append({"role": "user", "content": self._next(turn, note)})
                    continue
                output, state = await self._cell(await sandbox.started(), turn, code)
                context.record_turn(turn, reply, code, output)
                if (question := await self._follow_up(turn, sandbox)) is not None:
                    state, streak = {}, 0
                    messages.append({"role": "user", "content": question})
                    continue
                if state.get("submitted"):
                    status, reason = "submitted", "the agent called submit()"
                    break
                streak = streak + 1 if self._cell_failed else 0
                if (why := self._too_many_errors(streak)) is not None:
                    status, reason = "errors", why
                    break
                messages.append({"role": "user", "content": self._next(turn, output)})
        finally:
            await sandbox.close()
        ended = status
        if self.depth == 0:
            status, reason = self.ctx.final_status(status, reason)
        return EpisodeResult(status, reason, self._memo, state.get("answer"), self.tracker.turns,
                             ended)

    async def open_sandbox(self) -> Sandbox:
        """This agent's REPL, started; the confinement in force goes into the records."""
        sandbox = self.ctx.sandbox_factory(self)
        await sandbox.start()
        self.record_sandbox(sandbox)
        return sandbox

    def record_sandbox(self, sandbox: Sandbox) -> None:
        self.ctx.emit("sandbox", self.agent, self.depth, isolation=sandbox.isolation,
                      confinement=sandbox.confinement, degraded=sandbox.degraded)

    def _opening(self) -> list[dict[str, str]]:
        s = self.ctx.settings
        rlm_line = RLM_LINE if self.depth + 1 < s.depth else ""
        system = ROOT_SYSTEM.format(
            output_limit=s.output_limit, sub_context=self.sub_context_tokens(),
            rlm_line=self.ctx.pool.prompt_block(s, self.sub) + rlm_line,
        ) + self.ctx.tools.prompt
        first = self._turn_line(1)
        if self.depth == 0:
            totals = self.ctx.room.totals
            user = FIRST_USER.format(
                instructions=self.ctx.instructions, name=self.ctx.room.name,
                docs=totals["docs"], tokens=f"{totals['tokens']:,}",
                categories=totals["categories"], turn_line=first,
            )
        else:
            docs_line = f"Documents to start from: {self.docs}\n" if self.docs else ""
            user = CHILD_FIRST.format(task=self.task, docs_line=docs_line, turn_line=first)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    async def _follow_up(self, turn: int, starting: StartingSandbox) -> str | None:
        """After the run's last turn, in ``dealroom ask``: the REPL reopened (``submit()``
        cleared, ``answers`` set; kept for a rebuild) and the question; else None."""
        ask = self.ctx.ask
        if ask is None or self.depth or turn != ask.after_turn:
            return None
        sandbox = await starting.started()
        code = ask.prime_code()
        result = await self._run(sandbox, turn, code)
        if result.error:
            raise DealroomError(f"reopening the REPL for the question failed: {result.error}")
        self._cells.append((turn, code))
        return ask.message(self._turn_line(turn + 1))

    def _next(self, turn: int, output: str) -> str:
        return NEXT_USER.format(turn_line=self._turn_line(turn + 1), output=output)

    def _turn_line(self, turn: int) -> str:
        return turn_line(turn, self.tracker.budget.max_turns, self.ctx.settings.budget_visible)

    # -- cells ------------------------------------------------------------------------------
    def _too_many_errors(self, streak: int) -> str | None:
        """Why the episode ends after ``streak`` failed turns in a row (``max_errors``)."""
        limit = self.ctx.settings.max_errors
        if not limit or streak < limit:
            return None
        return (f"{streak} turns in a row ran no code or raised an error (max_errors "
                f"{limit}): the episode was stopped instead of spending the rest of its budget")

    async def _cell(self, sandbox: Sandbox, turn: int, code: str) -> tuple[str, dict[str, Any]]:
        result, note = await self.execute_cell(sandbox, turn, code)
        self._cell_failed = bool(result.error or result.timed_out or result.crashed)
        output = result.stdout
        if result.error:
            output = f"{output}\n{result.error}" if output else result.error
        if note:
            output += f"\n{note}"
        state = result.state or {}
        if (refused := checked_memo(state, self.ctx.settings.memo_limit)) is not None:
            output += f"\n{refused}"
        shown = truncate(output.strip() or "(no output)", self.ctx.settings.output_limit)
        recorded = self.ctx.replay.cell_output(self.agent, turn)
        if recorded is not None and self.ctx.ask is not None and not self.depth:
            self.ctx.ask.check_replay(turn, self.ctx.replay.cell_errors.get((self.agent, turn)),
                                      result.error)
        if recorded is not None:  # replayed: the agent sees what it saw then
            await self._memo_changed(state, turn, record=False)
            return recorded, state
        self.ctx.emit("cell", self.agent, self.depth, turn=turn, code=code, output=shown,
                      error=result.error, timed_out=result.timed_out, crashed=result.crashed,
                      seconds=round(result.seconds, 3))
        await self._memo_changed(state, turn)
        return shown, state

    async def execute_cell(self, sandbox: Sandbox, turn: int, code: str) -> tuple[CellResult, str]:
        """Run ``code`` as turn ``turn``'s cell, within what is left of the episode's time.

        After a timeout or a crash the worker is restarted and the cells that succeeded are
        run again (their sub-calls answered from the records): the note says what became of
        the REPL's state ("" when the cell ended normally).
        """
        result = await self._run(sandbox, turn, code)
        if not (result.timed_out or result.crashed):
            self._cells.append((turn, code))
            return result, ""
        what = "timed out" if result.timed_out else "crashed the REPL"
        if self.tracker.seconds_left() <= 0:
            return result, f"[the cell {what}: the episode's time is up]"
        failed = await self._rebuild(sandbox)
        if not failed:
            n = len(self._cells)
            how = {0: "", 1: " by re-running the cell that succeeded"}.get(
                n, f" by re-running the {n} cells that succeeded")
            return result, f"[the cell {what}; the REPL was restarted and its state rebuilt{how}]"
        lost = ", ".join(str(t) for t in failed)
        return result, (f"[the cell {what}; the REPL was restarted, but re-running the cells of "
                        f"turns {lost} failed: what they defined is lost]")

    async def _run(self, sandbox: Sandbox, turn: int, code: str) -> CellResult:
        self._counters[turn] = 0
        left = self.tracker.seconds_left()
        return await sandbox.execute(
            code, timeout=self.ctx.settings.cell_timeout,
            wall_timeout=None if left == float("inf") else max(left, 0.01),
            on_request=self.request_handler(turn))

    async def _rebuild(self, sandbox: Sandbox) -> list[int]:
        """Restart the worker and re-run the cells that succeeded, answering from the cache;
        the turns whose cell failed this time (all, when one timed out or crashed)."""
        await sandbox.restart()
        self._replaying = True
        failed: list[int] = []
        try:
            for turn, code in self._cells:
                result = await self._run(sandbox, turn, code)
                if result.timed_out or result.crashed:
                    await sandbox.restart()
                    return [t for t, _ in self._cells]
                if result.error:
                    failed.append(turn)
        finally:
            self._replaying = False
        return failed

    async def _memo_changed(self, state: dict[str, Any], turn: int,
                            record: bool = True) -> None:
        markdown, own = state.get("markdown"), state.get("documents") or {}
        if markdown is None or (markdown, own) == (self._memo, self._own):
            return
        self._memo, self._own = markdown, own
        if self.depth == 0:  # rendering and the history's delta: off the loop, within the clock
            await off_loop(self._save_memo, turn, markdown, own)
        if record:
            self.ctx.emit("memo", self.agent, self.depth,
                          sections=len(state.get("sections", [])), chars=len(markdown))

    def _save_memo(self, turn: int, markdown: str, own: dict[str, str]) -> None:
        self.ctx.deliverables.write_memo(markdown, own)
        self.ctx.events.recorder.memo_turn(turn, markdown)

    # -- requests from the REPL -------------------------------------------------------------
    def request_handler(self, turn: int) -> RequestHandler:
        async def handle(request: SubcallRequest) -> SubcallResult:
            from dealroom.harness.sandbox import SubcallResult

            try:
                payload = await self._dispatch(request.kind, request.payload, turn)
                return SubcallResult(ok=True, payload=payload)
            except DealroomError as exc:
                return SubcallResult(ok=False, error=str(exc))

        return handle

    async def _dispatch(self, kind: str, payload: dict[str, Any],
                        turn: int) -> dict[str, Any] | SubAnswer:
        if kind == "llm":
            return await self._llm_batch(payload.get("calls") or [], turn)
        if kind == "rlm":
            return await self._child(payload, turn)
        if kind == "search":  # room.search's dense half: the model lives here, not in the REPL
            pages = await off_loop(self.ctx.room.dense_pages, str(payload.get("query", "")),
                                   int(payload.get("n", 0)),
                                   [tuple(r) for r in payload.get("ranges") or []] or None)
            return {"pages": [list(p) for p in pages]}
        if kind == "rlm_batch":
            return await run_children(self, payload.get("children") or [], turn)
        if kind == "host_tool":
            return await self.ctx.tools.answer(self, payload, turn)
        if kind == "history":
            return {"turns": self.context.history if self.context else []}
        if kind == "budget":
            snapshot = self.tracker.snapshot()
            if not self.ctx.settings.budget_visible:  # the turn budget stays hidden
                snapshot.update(turns_left=None, max_turns=None)
            return snapshot
        raise DealroomError(f"unknown request {kind!r}")

    def host_call_id(self, turn: int) -> str:
        """Deterministic id of the next host tool call made in ``turn`` (see :meth:`_call_id`)."""
        head, n = self._call_id(turn).rsplit("/s", 1)
        return f"{head}/h{n}"

    async def _child(self, payload: dict[str, Any], turn: int,
                     call_id: str | None = None) -> SubAnswer:
        call_id = call_id or self._call_id(turn)
        cached = self.ctx.replay.child_result(call_id)
        if cached is not None:
            return cached
        if self.depth + 1 >= self.ctx.settings.depth:
            raise DealroomError(f"rlm() is not available at depth {self.depth}")
        sub = payload.get("sub") or self.sub  # the child's own default sub-agent model
        if isinstance(unknown := self.ctx.pool.get(sub), str):
            raise DealroomError(unknown)
        asked = payload.get("budget") or {}
        requested = Budget(
            max_turns=asked.get("max_turns", self.ctx.settings.max_turns),
            max_tokens=asked.get("max_tokens"),
            max_cost_usd=asked.get("max_cost_usd"),
            max_seconds=asked.get("max_seconds"),
        )
        tracker = self.tracker.child(requested)
        agent = child_agent(self.agent, turn, call_id)
        if call_id not in self.ctx.replay.started:  # a resumed child started once
            self.ctx.emit("child_start", agent, self.depth + 1, call_id=call_id,
                          task=payload.get("task"), budget=tracker.budget.to_dict(),
                          parent=self.agent)
        child = Episode(self.ctx, agent=agent, depth=self.depth + 1, tracker=tracker,
                        task=payload.get("task"), docs=payload.get("docs"), sub=sub)
        try:
            result = await child.run()
        except Exception as exc:  # noqa: BLE001 - a child that raised is its call's failure
            result = EpisodeResult("error", error_text(exc), child.memo, None,
                                   tracker.turns)
        text = result.answer if result.answer is not None else result.memo
        answer = child_answer(result.status, result.reason, text, child.failure)
        self.ctx.emit("child_end", agent, self.depth + 1, call_id=call_id,
                      status=result.status, reason=result.reason, text=text,
                      turns=result.turns, error=answer.get("error"))
        self.ctx.replay.children[call_id] = answer
        return answer
