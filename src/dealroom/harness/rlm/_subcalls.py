"""An agent's sub-calls (``llm`` / ``llm_batch``): each call sized to its model's window and
budgeted, read and sent a wave at a time within the endpoints' limits, re-cut when refused for
length, sent once more after a time-out, and recorded in the wave's order.

    llm_batch(calls) ─▶ _admit each (replayed answer | refusal | plan + reservation)
                     ─▶ _send the admitted, at most the endpoints' limit at a time
                     ─▶ _resend the timed-out ones in a wave of their own
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dealroom._util.heap import settle
from dealroom.errors import DealroomError
from dealroom.harness._common._calls import (
    InOrder,
    cut_note,
    error_text,
    failed_call_usage,
    provider_record,
    sent_usage,
)
from dealroom.harness.rlm._context import refused_count, refused_for_length
from dealroom.harness.rlm._fair import gate_for
from dealroom.harness.rlm._prompt import SUB_SYSTEM
from dealroom.harness.rlm._replay import SubAnswer, answer_key
from dealroom.harness.rlm._schema import SchemaAsk, typed_plan
from dealroom.harness.rlm._slices import (
    SubPlan,
    calibration_samples,
    plan_sub_input,
    prompt_tokens,
)
from dealroom.harness.rlm._subs import SubModel
from dealroom.harness.rlm._subwindow import MAX_RECUTS, MIN_TOKENS
from dealroom.models import HedgeWave, answer_text, gather_bounded, hedging
from dealroom.types import Usage

if TYPE_CHECKING:
    from dealroom.harness._common._budget import BudgetTracker, Reservation
    from dealroom.harness.rlm._engine import RunContext

MAX_BATCH = 10_000
"""Most sub-calls in one ``llm_batch``; a larger batch is refused before anything is built."""


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


class SubCalls:
    """The sub-calls of an :class:`~dealroom.harness.rlm._engine.Episode`."""

    ctx: RunContext
    agent: str
    depth: int
    sub: str | None
    tracker: BudgetTracker
    _counters: dict[int, int]
    _replaying: bool

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
