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
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.heap import settle
from dealroom.errors import DealroomError
from dealroom.harness._common._budget import BudgetTracker
from dealroom.harness._common._calls import (
    InOrder,
    cut_note,
    error_text,
    failed_call_usage,
    provider_record,
    sent_usage,
)
from dealroom.harness._common._clock import off_loop
from dealroom.harness._subs import sub_models
from dealroom.harness.rlm._children import child_agent, child_answer, run_children
from dealroom.harness.rlm._context import RootContext, refused_count, refused_for_length
from dealroom.harness.rlm._fair import FairGate, gate_for
from dealroom.harness.rlm._followup import FollowUp
from dealroom.harness.rlm._memo import checked_memo
from dealroom.harness.rlm._prompt import (
    FIRST_USER,
    NEXT_USER,
    RLM_LINE,
    ROOT_SYSTEM,
    SUB_SYSTEM,
    extract_code,
    truncate,
    turn_line,
)
from dealroom.harness.rlm._replay import Replay, SubAnswer, answer_key
from dealroom.harness.rlm._root import RootCalls, no_code_note
from dealroom.harness.rlm._schema import SchemaAsk, typed_plan
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.rlm._slices import (
    SubPlan,
    calibration_samples,
    plan_sub_input,
    prompt_tokens,
)
from dealroom.harness.rlm._starting import StartingSandbox
from dealroom.harness.rlm._subs import SubModel, SubPool
from dealroom.harness.rlm._subwindow import MAX_RECUTS, MIN_TOKENS, SubWindow
from dealroom.harness.rlm._tools import ToolBox
from dealroom.models import HedgeWave, answer_text, gather_bounded, hedging, history_content
from dealroom.types import Budget, Usage

if TYPE_CHECKING:
    from dealroom.harness._common import RunEvents
    from dealroom.harness._common._budget import Reservation
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

MAX_BATCH = 10_000
"""Most sub-calls in one ``llm_batch``; a larger batch is refused before anything is built."""
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
class _Admitted:
    """A sub-call sized and budgeted, waiting for a slot to be read and sent."""

    plan: SubPlan
    reservation: Reservation | None
    fields: dict[str, Any]
    call: dict[str, Any] = field(default_factory=dict)
    key: str = ""
    """:func:`answer_key` of its model and ``plan.record`` (worked out once, again when the
    call is re-cut)."""
    timed_out: bool = False
    """Its call failed at a time-out: it is sent once more in a later wave."""
    model: SubModel | None = None
    """The sub-agent model it goes to (``llm(..., model=NAME)``)."""
    held: float = 0.0
    """Dollars held against its model's cost cap until it ends."""


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


class Episode(RootCalls):
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

    def _call_id(self, turn: int) -> str:
        """Deterministic id of the next call made in ``turn``: replays match on it."""
        n = self._counters.get(turn, 0)
        self._counters[turn] = n + 1
        return f"{self.agent}/t{turn}/s{n}"

    def host_call_id(self, turn: int) -> str:
        """Deterministic id of the next host tool call made in ``turn`` (see :meth:`_call_id`)."""
        head, n = self._call_id(turn).rsplit("/s", 1)
        return f"{head}/h{n}"

    async def _llm_batch(self, calls: list[dict[str, Any]], turn: int) -> dict[str, Any]:
        """Size and budget every call in order (reading no text), then read and send the
        admitted ones, at most the sub-agent endpoint's limit at a time."""
        if len(calls) > MAX_BATCH:
            raise DealroomError(
                f"llm_batch got {len(calls):,} calls; one batch takes at most {MAX_BATCH:,}: "
                f"split the list into batches, e.g. results = [r for i in range(0, "
                f"len(calls), {MAX_BATCH}) for r in llm_batch(calls[i:i + {MAX_BATCH}])]")
        ids = [self._call_id(turn) for _ in calls]
        await self._calibrate(calls, ids)
        settle()  # what exists before the wave is not rescanned during it
        self.ctx.waves += 1
        wave = self.ctx.waves
        self.ctx.hedges.setdefault(wave, HedgeWave())  # once per wave, not per call
        started = time.monotonic()
        results: list[_Admitted | SubAnswer] = [self._admit(c, cid, turn, wave)
                                                for c, cid in zip(calls, ids, strict=True)]
        pending = [(i, r) for i, r in enumerate(results) if isinstance(r, _Admitted)]
        order = InOrder()
        try:
            sent = await gather_bounded(
                [functools.partial(self._send, admitted, k, order)
                 for k, (_, admitted) in enumerate(pending)],
                limit=self._window(self._batch_models(calls)))
        finally:
            order.flush()
        for (i, _), result in zip(pending, sent, strict=True):
            if isinstance(result, BaseException):
                raise result
            results[i] = result
        answers = [r for r in results if not isinstance(r, _Admitted)]  # every one by now
        self._wave_done(wave, answers, started)
        again = [(i, a) for i, a in pending if a.timed_out]
        if again:
            answers = await self._resend(again, answers)
        return {"results": answers}

    def _wave_done(self, wave: int, answers: list[SubAnswer], started: float) -> None:
        if not self._replaying and wave not in self.ctx.replay.waves:
            ok = sum(r["ok"] for r in answers)
            self.ctx.emit("wave", self.agent, self.depth, wave=wave, calls=len(answers), ok=ok,
                          failed=len(answers) - ok, seconds=round(time.monotonic() - started, 3))

    async def _resend(self, again: list[tuple[int, _Admitted]],
                      answers: list[SubAnswer]) -> list[SubAnswer]:
        """Send the calls that timed out once more, in a wave of their own after the rest
        (a single-slot server is free by then), under the same call ids: a success there
        replaces the failure, in the run's records and in a replay."""
        self.ctx.waves += 1
        wave, started, retry = self.ctx.waves, time.monotonic(), []
        self.ctx.hedges.setdefault(wave, HedgeWave())
        for i, admitted in again:
            model = admitted.model or self._sub_model(None)
            plan, out = admitted.plan, model.max_output(self.ctx.settings)
            worst = plan.tokens + out
            cost = model.client.prices.cost(plan.tokens, 0, worst)
            if model.refuse(cost) is not None:
                continue
            reservation = self.tracker.reserve(worst, cost)
            if reservation is not None:
                fields = {**admitted.fields, "wave": wave}
                retry.append((i, _Admitted(plan, reservation, fields, admitted.call,
                                           key=admitted.key, model=model, held=cost)))
            else:
                model.settle(cost, Usage())
        order = InOrder()
        try:
            sent = await gather_bounded(
                [functools.partial(self._send, a, k, order) for k, (_, a) in enumerate(retry)],
                limit=self._window([a.model for _, a in retry if a.model]))
        finally:
            order.flush()
        answers = list(answers)
        for (i, _), result in zip(retry, sent, strict=True):
            if isinstance(result, BaseException):
                raise result
            answers[i] = result
        self._wave_done(wave, [answers[i] for i, _ in retry], started)
        return answers

    def _admit(self, call: dict[str, Any], call_id: str, turn: int,
               wave: int) -> _Admitted | SubAnswer:
        """A replayed answer, a refusal, or the sized call with its budget reserved."""
        cached = self.ctx.replay.sub_result(call_id)
        if cached is not None:
            return cached
        model = self._sub_model(call.get("model"))
        if isinstance(model, str):  # an unknown name: this call fails, with the names
            return {"ok": False, "error": model, "notes": []}
        sub, out = model.client, model.max_output(self.ctx.settings)
        least = prompt_tokens(SUB_SYSTEM) + prompt_tokens(str(call.get("prompt") or "")) + out
        if not self.tracker.fits(least, sub.prices.cost(least - out, 0, out)):
            return self._refused([])
        try:
            plan = self._plan(call, model.admitted_tokens(self.ctx.settings), sub)
        except (DealroomError, KeyError, LookupError) as exc:
            return {"ok": False, "error": f"bad call: {exc}", "notes": []}
        key = answer_key(sub.name, plan.record)
        answered = self.ctx.replay.answered.get(key)
        if answered is not None:  # the same call was answered before (its cell was cut)
            self.ctx.replay.subs[call_id] = answered
            return answered
        worst = plan.tokens + out
        cost = sub.prices.cost(plan.tokens, 0, worst)
        if (capped := model.refuse(cost)) is not None:
            return {"ok": False, "error": capped, "notes": plan.notes}
        reservation = self.tracker.reserve(worst, cost)
        if reservation is None:
            model.settle(cost, Usage())
            return self._refused(plan.notes)
        fields = {"role": "sub", "model": sub.name, "turn": turn, "call_id": call_id,
                  "wave": wave, "input": plan.record, "tokens": None}
        return _Admitted(plan, reservation, fields, call, key, model=model, held=cost)

    def _plan(self, call: dict[str, Any], context_tokens: int, sub: Any) -> SubPlan:
        """The call sized to ``context_tokens``; with a schema, asked as ``sub`` takes it."""
        if "schema" in call:
            return typed_plan(self.ctx.room, call, sub, system=SUB_SYSTEM,
                              context_tokens=context_tokens)
        return plan_sub_input(self.ctx.room, call, system=SUB_SYSTEM,
                              context_tokens=context_tokens)

    async def _calibrate(self, calls: list[Any], ids: list[str]) -> None:
        """Measure each sub model's count on the wave's first live call to it (once per run)."""
        for model in self._batch_models(calls):
            window = model.window
            if window.calibrated or not window.counter.can_be_exact():
                continue  # before looking for a live call: the batch is not walked each wave
            live = next((c for c, cid in zip(calls, ids, strict=True)
                         if self.ctx.replay.sub_result(cid) is None
                         and self._sub_model(c.get("model")) is model), None)
            if live is None:
                continue
            try:
                plan = self._plan(live, window.context_tokens(model.max_output(self.ctx.settings)),
                                  model.client)
            except (DealroomError, KeyError, LookupError):
                continue
            await window.calibrate(plan.messages(self.ctx.room), plan.tokens)

    async def _calibrate_room(self) -> None:
        """Measure the sub model's count before the root is told what one call can carry
        (``llm.context_tokens``): on a sample of every document, a few documents a count, the
        densest count deciding (words-v1 is 30% off on number-heavy pages, less on prose)."""
        if self.ctx.sub is None or self.depth:
            return
        for window in (m.window for m in self.ctx.pool.models.values()):  # each its own count
            if window.calibrated or not window.counter.can_be_exact():
                continue
            window.calibrated = True
            for messages, planned in calibration_samples(self.ctx.room, SUB_SYSTEM,
                                                         window.sample_tokens()):
                counted = await window.counter.exact(messages)
                if counted is None:
                    break
                window.learn(counted, planned)

    def _refused(self, notes: list[str]) -> SubAnswer:
        error = f"budget exhausted: {self.tracker.exhausted() or 'not enough left'}"
        return {"ok": False, "error": error, "notes": notes}

    async def _send(self, admitted: _Admitted, k: int, order: InOrder) -> SubAnswer:
        """Make the ``k``-th call of a wave; its records are written in the wave's order."""
        plan, reservation, fields = admitted.plan, admitted.reservation, admitted.fields
        model = admitted.model or self._sub_model(None)
        sub: Any = model.client  # the oracle takes context= beside ModelClient's
        context = {"context": {"room": str(self.ctx.room_dir), "tokens": plan.tokens,
                               **plan.record}} if getattr(sub, "takes_context", False) else {}
        refused: list[dict[str, Any]] = []  # attempts refused for length, re-cut smaller
        out = model.max_output(self.ctx.settings)
        wave = fields["wave"]
        hedges = self.ctx.hedges[wave] if model.name == self.ctx.pool.default else \
            model.hedge(wave)  # each model's stragglers against its own latencies
        typed = SchemaAsk.of(admitted.call, sub) if "schema" in admitted.call else None
        while True:
            try:
                with hedging(hedges):
                    if typed is None:
                        call = sub.chat(plan.messages(self.ctx.room), max_tokens=out,
                                        temperature=self.ctx.settings.temperature, **context)
                    else:
                        call = typed.ask(sub.chat, plan.messages(self.ctx.room), self.tracker,
                                         model, out, temperature=self.ctx.settings.temperature,
                                         **context)
                    result = await gate_for(self.ctx.gates, model).run(self.agent, call)
                break
            except Exception as exc:  # noqa: BLE001 - any provider failure is this call's result
                smaller = self._recut(exc, admitted, refused, out)
                if smaller is not None:
                    plan = admitted.plan = smaller
                    fields["input"] = plan.record
                    admitted.key = answer_key(sub.name, plan.record)
                    continue
                admitted.timed_out = getattr(exc, "kind", None) == "timeout"
                return self._failed(admitted, k, order, exc, refused)
            except asyncio.CancelledError as exc:  # the cell's or the run's time ran out
                self._failed(admitted, k, order, exc, refused)
                raise
        self.tracker.settle(reservation, result.usage)
        model.settle(admitted.held, result.usage)
        if not result.usage_estimated:
            model.window.learn(result.usage.input_tokens, plan.tokens)

        def record() -> None:
            fields["tokens"] = self.ctx.events.recorder.write_tokens(fields["call_id"],
                                                                     result.tokens)
            self.ctx.emit("model_call", self.agent, self.depth + 1, **fields,
                          output=result.text, reasoning=result.reasoning,
                          usage=result.usage.to_dict(), latency_s=result.latency_s,
                          provider={**provider_record(result),
                                    **({"refused": refused} if refused else {}),
                                    **(typed.provider() if typed else {})},
                          **(typed.fields() if typed else {"error": None}))

        order.done(k, record)
        answer: SubAnswer = {"ok": True, "text": answer_text(result.text, result.reasoning),
                             "notes": plan.notes + cut_note(result), "unsent": plan.unsent}
        if typed is not None:
            answer = typed.answer(answer)
        self.ctx.replay.subs[fields["call_id"]] = answer  # a rebuild replays it, never re-asks
        if answer["ok"]:
            self.ctx.replay.answered[admitted.key] = answer  # and so does a re-send
        return answer

    def _failed(self, admitted: _Admitted, k: int, order: InOrder, exc: BaseException,
                refused: list[dict[str, Any]]) -> SubAnswer:
        """Record a call that failed or was cancelled, with its attempts and an estimate of
        what the endpoint may bill (the prompt, once per request sent); the wave counts it."""
        plan, reservation, fields = admitted.plan, admitted.reservation, admitted.fields
        charged = failed_call_usage(exc, reservation, plan.tokens)
        self.tracker.settle(reservation, charged)
        model = admitted.model or self._sub_model(None)
        model.settle(admitted.held, charged)
        self.ctx.sub_failed.add(fields["call_id"])
        provider = {**provider_record(exc), **({"refused": refused} if refused else {})}
        provider["usage_estimate"] = sent_usage(provider.get("attempts"), plan.tokens,
                                                model.client.prices).to_dict()
        order.done(k, functools.partial(
            self.ctx.emit, "model_call", self.agent, self.depth + 1, **fields, output=None,
            reasoning=None, usage=charged.to_dict(), error=error_text(exc), latency_s=None,
            provider=provider))
        return {"ok": False, "error": error_text(exc), "notes": plan.notes}

    def _recut(self, exc: BaseException, admitted: _Admitted, refused: list[dict[str, Any]],
               out: int) -> SubPlan | None:
        """The call cut smaller after the endpoint refused it for length; None when it was
        another failure, or the smallest cut was refused already."""
        if not refused_for_length(exc) or len(refused) >= MAX_RECUTS:
            return None
        counted = refused_count(exc)
        refused.append({"tokens": admitted.plan.tokens, "prompt_tokens": counted,
                        "error": error_text(exc)})
        model = admitted.model or self._sub_model(None)
        limit = model.window.recut(admitted.plan.tokens, counted, out)
        if limit < MIN_TOKENS:
            return None
        try:
            return self._plan(admitted.call, limit, model.client)
        except (DealroomError, KeyError, LookupError):
            return None

    def _window(self, models: list[SubModel] | None = None) -> int:
        """Sub-calls read and sent at a time: the sub-agent endpoints' concurrency."""
        return self.ctx.pool.limit(models or [self._sub_model(None)])

    def sub_context_tokens(self) -> int:
        """Tokens of text one sub-call can carry: the context less the prompts and answer."""
        return self._sub_model(None).slice_tokens(self.ctx.settings)

    def _sub_model(self, name: Any) -> Any:
        """The :class:`SubModel` a call's ``model`` names (None: this agent's default), or
        the reason it has none (a str)."""
        if self.ctx.sub is None:
            raise DealroomError("this run has no sub-agent model: give it one (sub=)")
        return self.ctx.pool.get(name, self.sub)

    def _batch_models(self, calls: list[Any]) -> list[SubModel]:
        return self.ctx.pool.used((c.get("model") if isinstance(c, dict) else None
                                   for c in calls), self.sub)

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
