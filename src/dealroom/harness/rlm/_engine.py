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
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealroom.errors import DealroomError
from dealroom.harness.rlm._budget import BudgetTracker
from dealroom.harness.rlm._prompt import (
    FIRST_USER,
    NEXT_USER,
    NO_CODE,
    RLM_LINE,
    ROOT_SYSTEM,
    SUB_SYSTEM,
    extract_code,
    truncate,
    turn_line,
)
from dealroom.harness.rlm._replay import Replay
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.rlm._slices import build_sub_input
from dealroom.room import count_tokens
from dealroom.types import Budget, Usage

ROOT_OUTPUT_RESERVE = 1024
"""Completion tokens held back for each root call when a token or cost budget is set."""
_NO_BUDGET = "\x00no budget"

CHILD_FIRST = """\
You are a child agent of a due diligence review. Your task:
{task}
{docs_line}Work in the REPL as described, then call submit(answer) with your answer as a string
(findings with citations such as [D00042 p.3]). {turn_line}."""


@dataclass
class EpisodeResult:
    """How an episode ended and what it delivered."""

    status: str
    """submitted | budget_exhausted | max_turns | error"""
    reason: str
    memo: str
    answer: str | None
    turns: int


@dataclass
class RunContext:
    """What every episode of one run shares."""

    room: Any
    room_dir: Path
    root: Any
    sub: Any
    settings: RLMSettings
    events: Any
    """The run's :class:`~dealroom.harness.RunEvents`: recorder, coverage probe, listeners."""
    replay: Replay
    scratch: Path
    instructions: str
    sandbox_factory: Any
    waves: int = 0

    def emit(self, type: str, agent: str, depth: int, **fields: Any) -> None:
        self.events.emit(type, agent, depth, **fields)


class Episode:
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
        self.model = ctx.root if depth == 0 else ctx.sub
        self.role = "root" if depth == 0 else "child_root"
        self._cells: list[tuple[int, str]] = []
        self._counters: dict[int, int] = {}
        self._replaying = False
        self._memo = ""
        self._sent = 0

    # -- the loop ---------------------------------------------------------------------------
    async def run(self) -> EpisodeResult:
        sandbox = await self.open_sandbox()
        messages = self._opening()
        status, reason, state = "max_turns", "turn budget used up", {}
        try:
            while True:
                if (spent := self.tracker.exhausted()) is not None:
                    status = "max_turns" if spent == "turns" else "budget_exhausted"
                    reason = f"{spent} budget used up"
                    break
                self.tracker.turns += 1
                turn = self.tracker.turns
                reply = await self._root_reply(messages, turn)
                if reply is None:
                    status, reason = "error", "the root model failed (see the model_call event)"
                    break
                if reply is _NO_BUDGET:
                    status, reason = "budget_exhausted", "no budget left for the root's next call"
                    break
                messages.append({"role": "assistant", "content": reply})
                code = extract_code(reply)
                if code is None:
                    messages.append({"role": "user", "content": self._next(turn, NO_CODE)})
                    continue
                output, state = await self._cell(sandbox, turn, code)
                if state.get("submitted"):
                    status, reason = "submitted", "the agent called submit()"
                    break
                messages.append({"role": "user", "content": self._next(turn, output)})
        finally:
            await sandbox.close()
        return EpisodeResult(status, reason, self._memo, state.get("answer"), self.tracker.turns)

    async def open_sandbox(self) -> Any:
        """This agent's REPL, started; the confinement in force goes into the records."""
        sandbox = self.ctx.sandbox_factory(self)
        await sandbox.start()
        self.ctx.emit("sandbox", self.agent, self.depth, isolation=sandbox.isolation,
                      confinement=sandbox.confinement, degraded=sandbox.degraded)
        return sandbox

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

    # -- the root's model call --------------------------------------------------------------
    async def _root_reply(self, messages: list[dict[str, str]], turn: int) -> str | None:
        cached = self.ctx.replay.root_reply(self.agent, turn)
        if cached is not None:
            self._sent = len(messages)
            return cached
        prompt = sum(count_tokens(m["content"]) for m in messages)
        worst = prompt + ROOT_OUTPUT_RESERVE
        reservation = self.tracker.reserve(worst, self.model.prices.cost(prompt, 0, worst))
        if reservation is None:
            return _NO_BUDGET
        new = messages[self._sent:]
        self._sent = len(messages)
        fields: dict[str, Any] = {"role": self.role, "model": self.model.name, "turn": turn,
                                  "call_id": f"{self.agent}/t{turn}", "wave": None,
                                  "input": {"messages": new}}
        try:
            result = await self.model.chat(messages, temperature=self.ctx.settings.temperature)
        except (TimeoutError, DealroomError, OSError) as exc:
            self.tracker.settle(reservation, Usage())
            self.ctx.emit("model_call", self.agent, self.depth, **fields, output=None,
                          usage=Usage().to_dict(), error=str(exc), latency_s=None)
            return None
        self.tracker.settle(reservation, result.usage)
        self.ctx.emit("model_call", self.agent, self.depth, **fields, output=result.text,
                      usage=result.usage.to_dict(), error=None, latency_s=result.latency_s)
        return result.text

    # -- cells ------------------------------------------------------------------------------
    async def _cell(self, sandbox: Any, turn: int, code: str) -> tuple[str, dict[str, Any]]:
        result, note = await self.execute_cell(sandbox, turn, code)
        output = result.stdout
        if result.error:
            output = f"{output}\n{result.error}" if output else result.error
        if note:
            output += f"\n{note}"
        shown = truncate(output.strip() or "(no output)", self.ctx.settings.output_limit)
        state = result.state or {}
        if (self.agent, turn) in self.ctx.replay.cells:
            self._memo_changed(state, turn, record=False)
            return shown, state
        self.ctx.emit("cell", self.agent, self.depth, turn=turn, code=code, output=shown,
                      error=result.error, timed_out=result.timed_out, crashed=result.crashed,
                      seconds=round(result.seconds, 3))
        self._memo_changed(state, turn)
        return shown, state

    async def execute_cell(self, sandbox: Any, turn: int, code: str) -> tuple[Any, str]:
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

    async def _run(self, sandbox: Any, turn: int, code: str) -> Any:
        self._counters[turn] = 0
        left = self.tracker.seconds_left()
        return await sandbox.execute(
            code, timeout=self.ctx.settings.cell_timeout,
            wall_timeout=None if left == float("inf") else max(left, 0.01),
            on_request=self.request_handler(turn))

    async def _rebuild(self, sandbox: Any) -> list[int]:
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

    def _memo_changed(self, state: dict[str, Any], turn: int, record: bool = True) -> None:
        markdown = state.get("markdown")
        if markdown is None or markdown == self._memo:
            return
        self._memo = markdown
        if self.depth == 0:
            self.ctx.events.recorder.write_memo(markdown)
            self.ctx.events.recorder.memo_turn(turn, markdown)
        if record:
            self.ctx.emit("memo", self.agent, self.depth,
                          sections=len(state.get("sections", [])), chars=len(markdown))

    # -- requests from the REPL -------------------------------------------------------------
    def request_handler(self, turn: int):  # type: ignore[no-untyped-def]
        async def handle(request: Any) -> Any:
            from dealroom.harness.sandbox import SubcallResult

            try:
                payload = await self._dispatch(request.kind, request.payload, turn)
                return SubcallResult(ok=True, payload=payload)
            except DealroomError as exc:
                return SubcallResult(ok=False, error=str(exc))

        return handle

    async def _dispatch(self, kind: str, payload: dict[str, Any], turn: int) -> dict[str, Any]:
        if kind == "llm":
            return await self._llm_batch(payload.get("calls") or [], turn)
        if kind == "rlm":
            return await self._child(payload, turn)
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
        ids = [self._call_id(turn) for _ in calls]
        self.ctx.waves += 1
        wave = self.ctx.waves
        started = time.monotonic()
        results = await asyncio.gather(
            *(self._sub_call(c, cid, turn, wave) for c, cid in zip(calls, ids, strict=True))
        )
        if not self._replaying and wave not in self.ctx.replay.waves:
            ok = sum(r["ok"] for r in results)
            self.ctx.emit("wave", self.agent, self.depth, wave=wave, calls=len(calls), ok=ok,
                          failed=len(calls) - ok, seconds=round(time.monotonic() - started, 3))
        return {"results": results}

    async def _sub_call(self, call: dict, call_id: str, turn: int, wave: int) -> dict[str, Any]:
        cached = self.ctx.replay.sub_result(call_id)
        if cached is not None:
            return cached
        sub = self.ctx.sub
        try:
            built = build_sub_input(self.ctx.room, call, system=SUB_SYSTEM,
                                    context_tokens=sub.context_window - self._sub_max_output())
        except (DealroomError, KeyError, LookupError) as exc:
            return {"ok": False, "error": f"bad call: {exc}", "notes": []}
        worst = built.tokens + self._sub_max_output()
        reservation = self.tracker.reserve(worst, sub.prices.cost(built.tokens, 0, worst))
        fields = {"role": "sub", "model": sub.name, "turn": turn, "call_id": call_id,
                  "wave": wave, "input": built.record}
        if reservation is None:
            error = f"budget exhausted: {self.tracker.exhausted() or 'not enough left'}"
            return {"ok": False, "error": error, "notes": built.notes}
        context = {"context": {"room": str(self.ctx.room_dir), "tokens": built.tokens,
                               **built.record}} if getattr(sub, "takes_context", False) else {}
        try:
            result = await sub.chat(built.messages, max_tokens=self._sub_max_output(),
                                    temperature=self.ctx.settings.temperature, **context)
        except (TimeoutError, DealroomError, OSError) as exc:
            self.tracker.settle(reservation, Usage())
            self.ctx.emit("model_call", self.agent, self.depth + 1, **fields, output=None,
                          usage=Usage().to_dict(), error=str(exc), latency_s=None)
            return {"ok": False, "error": str(exc), "notes": built.notes}
        self.tracker.settle(reservation, result.usage)
        self.ctx.emit("model_call", self.agent, self.depth + 1, **fields, output=result.text,
                      usage=result.usage.to_dict(), error=None, latency_s=result.latency_s)
        answer = {"ok": True, "text": result.text, "notes": built.notes}
        self.ctx.replay.subs[call_id] = answer  # a worker rebuild replays it, never re-asks
        return answer

    def sub_context_tokens(self) -> int:
        """Tokens of text one sub-call can carry: the context less the prompts and answer."""
        fits = max(64, self.ctx.sub.context_window - self._sub_max_output() - 600)
        return min(fits, self.ctx.settings.slice_tokens or fits)

    def _sub_max_output(self) -> int:
        return min(self.ctx.settings.sub_max_output, self.ctx.sub.context_window // 4)

    async def _child(self, payload: dict[str, Any], turn: int) -> dict[str, Any]:
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
        answer = {"ok": True, "text": text}
        self.ctx.replay.children[call_id] = answer
        return answer
