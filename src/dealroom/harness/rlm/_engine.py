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
from dealroom.harness.rlm._boot import StartingSandbox
from dealroom.harness.rlm._context import RootContext, refused_count, refused_for_length
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
from dealroom.harness.rlm._replay import Replay, SubAnswer, input_key
from dealroom.harness.rlm._root import RootCalls, no_code_note
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.rlm._slices import (
    SubPlan,
    calibration_samples,
    plan_sub_input,
    prompt_tokens,
)
from dealroom.harness.rlm._subwindow import MAX_RECUTS, MIN_TOKENS, SubWindow
from dealroom.models import HedgeWave, answer_text, gather_bounded, hedging, history_content
from dealroom.types import Budget

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
SEND_WINDOW = 64
"""Sub-calls of one batch read and sent at a time when the sub-agent client names no limit."""
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
    """:func:`input_key` of ``plan.record`` (worked out once, again when the call is re-cut)."""
    timed_out: bool = False
    """Its call failed at a time-out: it is sent once more in a later wave."""


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

    def __post_init__(self) -> None:
        if self.sub_window is None and self.sub is not None:
            self.sub_window = SubWindow(self.sub)

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
        task: str | None = None, docs: list[Any] | None = None,
    ) -> None:
        self.ctx = ctx
        self.agent = agent
        self.depth = depth
        self.tracker = tracker
        self.task = task
        self.docs = docs or []
        self.model = ctx.root if depth == 0 else ctx.sub_client
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
                    streak += 1
                    if (why := self._too_many_errors(streak)) is not None:
                        status, reason = "errors", why
                        break
                    messages.append({"role": "user", "content": self._next(turn, note)})
                    continue
                output, state = await self._cell(await sandbox.started(), turn, code)
                context.record_turn(turn, reply, code, output)
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
            rlm_line=rlm_line,
        )
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
                 for k, (_, admitted) in enumerate(pending)], limit=self._window())
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
            plan, out = admitted.plan, self._sub_max_output()
            worst = plan.tokens + out
            cost = self.ctx.sub_client.prices.cost(plan.tokens, 0, worst)
            reservation = self.tracker.reserve(worst, cost)
            if reservation is not None:
                fields = {**admitted.fields, "wave": wave}
                retry.append((i, _Admitted(plan, reservation, fields, admitted.call,
                                           key=admitted.key)))
        order = InOrder()
        try:
            sent = await gather_bounded(
                [functools.partial(self._send, a, k, order) for k, (_, a) in enumerate(retry)],
                limit=self._window())
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
        sub, out = self.ctx.sub_client, self._sub_max_output()
        least = prompt_tokens(SUB_SYSTEM) + prompt_tokens(str(call.get("prompt") or "")) + out
        if not self.tracker.fits(least, sub.prices.cost(least - out, 0, out)):
            return self._refused([])
        try:
            plan = self._plan(call, max(self.ctx.window.context_tokens(out), self.ctx.promised))
        except (DealroomError, KeyError, LookupError) as exc:
            return {"ok": False, "error": f"bad call: {exc}", "notes": []}
        key = input_key(plan.record)
        answered = self.ctx.replay.answered.get(key)
        if answered is not None:  # the same call was answered before (its cell was cut)
            self.ctx.replay.subs[call_id] = answered
            return answered
        worst = plan.tokens + out
        reservation = self.tracker.reserve(worst, sub.prices.cost(plan.tokens, 0, worst))
        if reservation is None:
            return self._refused(plan.notes)
        fields = {"role": "sub", "model": sub.name, "turn": turn, "call_id": call_id,
                  "wave": wave, "input": plan.record, "tokens": None}
        return _Admitted(plan, reservation, fields, call, key)

    def _plan(self, call: dict[str, Any], context_tokens: int) -> SubPlan:
        return plan_sub_input(self.ctx.room, call, system=SUB_SYSTEM,
                              context_tokens=context_tokens)

    async def _calibrate(self, calls: list[Any], ids: list[str]) -> None:
        """Measure the sub model's count on the wave's first live call (once per run)."""
        window = self.ctx.window
        if window.calibrated or not window.counter.can_be_exact():
            return  # before looking for a live call: the batch is not walked once per wave
        live = next((c for c, cid in zip(calls, ids, strict=True)
                     if self.ctx.replay.sub_result(cid) is None), None)
        if live is None:
            return
        try:
            plan = self._plan(live, window.context_tokens(self._sub_max_output()))
        except (DealroomError, KeyError, LookupError):
            return
        await window.calibrate(plan.messages(self.ctx.room), plan.tokens)

    async def _calibrate_room(self) -> None:
        """Measure the sub model's count before the root is told what one call can carry
        (``llm.context_tokens``): on a sample of every document, a few documents a count, the
        densest count deciding (words-v1 is 30% off on number-heavy pages, less on prose)."""
        if self.ctx.sub is None or self.depth:
            return
        window = self.ctx.window
        if window.calibrated or not window.counter.can_be_exact():
            return
        window.calibrated = True
        for messages, planned in calibration_samples(self.ctx.room, SUB_SYSTEM,
                                                     window.sample_tokens()):
            counted = await window.counter.exact(messages)
            if counted is None:
                return
            window.learn(counted, planned)

    def _refused(self, notes: list[str]) -> SubAnswer:
        error = f"budget exhausted: {self.tracker.exhausted() or 'not enough left'}"
        return {"ok": False, "error": error, "notes": notes}

    async def _send(self, admitted: _Admitted, k: int, order: InOrder) -> SubAnswer:
        """Make the ``k``-th call of a wave; its records are written in the wave's order."""
        plan, reservation, fields = admitted.plan, admitted.reservation, admitted.fields
        context = {"context": {"room": str(self.ctx.room_dir), "tokens": plan.tokens,
                               **plan.record}} if getattr(self.ctx.sub, "takes_context",
                                                          False) else {}
        sub: Any = self.ctx.sub_client  # the oracle takes context= beside ModelClient's
        refused: list[dict[str, Any]] = []  # attempts refused for length, re-cut smaller
        out = self._sub_max_output()
        while True:
            try:
                with hedging(self.ctx.hedges[fields["wave"]]):
                    result = await sub.chat(plan.messages(self.ctx.room), max_tokens=out,
                                            temperature=self.ctx.settings.temperature,
                                            **context)
                break
            except Exception as exc:  # noqa: BLE001 - any provider failure is this call's result
                smaller = self._recut(exc, admitted, refused, out)
                if smaller is not None:
                    plan = admitted.plan = smaller
                    fields["input"] = plan.record
                    admitted.key = input_key(plan.record)
                    continue
                admitted.timed_out = getattr(exc, "kind", None) == "timeout"
                return self._failed(admitted, k, order, exc, refused)
            except asyncio.CancelledError as exc:  # the cell's or the run's time ran out
                self._failed(admitted, k, order, exc, refused)
                raise
        self.tracker.settle(reservation, result.usage)
        if not result.usage_estimated:
            self.ctx.window.learn(result.usage.input_tokens, plan.tokens)

        def record() -> None:
            fields["tokens"] = self.ctx.events.recorder.write_tokens(fields["call_id"],
                                                                     result.tokens)
            self.ctx.emit("model_call", self.agent, self.depth + 1, **fields,
                          output=result.text, reasoning=result.reasoning,
                          usage=result.usage.to_dict(), error=None,
                          latency_s=result.latency_s,
                          provider={**provider_record(result),
                                    **({"refused": refused} if refused else {})})

        order.done(k, record)
        answer: SubAnswer = {"ok": True, "text": answer_text(result.text, result.reasoning),
                             "notes": plan.notes + cut_note(result), "unsent": plan.unsent}
        self.ctx.replay.subs[fields["call_id"]] = answer  # a rebuild replays it, never re-asks
        self.ctx.replay.answered[admitted.key] = answer  # and so does a re-send
        return answer

    def _failed(self, admitted: _Admitted, k: int, order: InOrder, exc: BaseException,
                refused: list[dict[str, Any]]) -> SubAnswer:
        """Record a call that failed or was cancelled, with its attempts and an estimate of
        what the endpoint may bill (the prompt, once per request sent); the wave counts it."""
        plan, reservation, fields = admitted.plan, admitted.reservation, admitted.fields
        charged = failed_call_usage(exc, reservation, plan.tokens)
        self.tracker.settle(reservation, charged)
        self.ctx.sub_failed.add(fields["call_id"])
        provider = {**provider_record(exc), **({"refused": refused} if refused else {})}
        provider["usage_estimate"] = sent_usage(provider.get("attempts"), plan.tokens,
                                                self.ctx.sub_client.prices).to_dict()
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
        limit = self.ctx.window.recut(admitted.plan.tokens, counted, out)
        if limit < MIN_TOKENS:
            return None
        try:
            return self._plan(admitted.call, limit)
        except (DealroomError, KeyError, LookupError):
            return None

    def _window(self) -> int:
        """Sub-calls read and sent at a time: the sub-agent endpoint's concurrency."""
        spec = getattr(self.ctx.sub, "spec", None)
        return max(1, getattr(spec, "concurrency", None) or SEND_WINDOW)

    def sub_context_tokens(self) -> int:
        """Tokens of text one sub-call can carry: the context less the prompts and answer."""
        admitted = self.ctx.window.context_tokens(self._sub_max_output())
        fits = max(64, admitted - 600)
        told = min(fits, self.ctx.settings.slice_tokens or fits)
        self.ctx.promised = max(self.ctx.promised, told + admitted - fits)
        return told

    def _sub_max_output(self) -> int:
        return min(self.ctx.settings.sub_max_output, self.ctx.sub_client.context_window // 4)

    async def _child(self, payload: dict[str, Any], turn: int) -> SubAnswer:
        call_id = self._call_id(turn)
        cached = self.ctx.replay.child_result(call_id)
        if cached is not None:
            return cached
        if self.depth + 1 >= self.ctx.settings.depth:
            raise DealroomError(f"rlm() is not available at depth {self.depth}")
        asked = payload.get("budget") or {}
        requested = Budget(
            max_turns=asked.get("max_turns", self.ctx.settings.max_turns),
            max_tokens=asked.get("max_tokens"),
            max_cost_usd=asked.get("max_cost_usd"),
            max_seconds=asked.get("max_seconds"),
        )
        tracker = self.tracker.child(requested)
        agent = f"{self.agent}/c{turn}-{call_id.rsplit('/s', 1)[1]}"
        self.ctx.emit("child_start", agent, self.depth + 1, call_id=call_id,
                      task=payload.get("task"), budget=tracker.budget.to_dict())
        child = Episode(self.ctx, agent=agent, depth=self.depth + 1, tracker=tracker,
                        task=payload.get("task"), docs=payload.get("docs"))
        result = await child.run()
        text = result.answer if result.answer is not None else result.memo
        self.ctx.emit("child_end", agent, self.depth + 1, call_id=call_id,
                      status=result.status, reason=result.reason, text=text,
                      turns=result.turns)
        answer: SubAnswer = {"ok": True, "text": text}
        self.ctx.replay.children[call_id] = answer
        return answer
