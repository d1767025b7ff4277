"""The root's model calls: its reply as the loop uses it (the answer its code is read from,
the reasoning kept in the records), what the root is told when a reply ran nothing, and the
compactions that keep its prompt inside its window (see ``_context``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dealroom.harness._common._calls import error_text, failed_call_usage, provider_record
from dealroom.harness.rlm._context import refused_count, refused_for_length
from dealroom.harness.rlm._prompt import ANSWER_CUT, NO_CODE, REASONING_CUT, REASONING_ONLY
from dealroom.harness.rlm._slices import prompt_tokens
from dealroom.models import ChatResult, answer_text
from dealroom.types import Usage

if TYPE_CHECKING:
    from dealroom.harness._common._budget import BudgetTracker
    from dealroom.harness.rlm._context import RootContext
    from dealroom.harness.rlm._engine import RunContext
    from dealroom.models import ModelClient


@dataclass(frozen=True)
class RootReply:
    """One reply of the root (or a child's root)."""

    answer: str
    reasoning: str | None = None
    shape: str | None = None
    """How the reasoning came (``dealroom._util.reasoning``); None without reasoning."""
    finish_reason: str = "stop"

    @classmethod
    def from_result(cls, result: ChatResult) -> RootReply:
        """From a live ``ChatResult``."""
        return cls(result.text, getattr(result, "reasoning", None),
                   getattr(result, "reasoning_shape", None), result.finish_reason)

    @classmethod
    def from_event(cls, event: dict[str, Any]) -> RootReply:
        """From a recorded ``model_call`` event (a resumed or forked run)."""
        provider = event.get("provider") or {}
        return cls(event["output"], event.get("reasoning"), provider.get("reasoning"),
                   provider.get("finish_reason") or "stop")


def no_code_note(reply: RootReply) -> str:
    """What the root is told when its reply had no code to run: why, when it was cut at its
    cap (inside its reasoning or its answer) or never left its reasoning."""
    cut = reply.finish_reason == "length"
    if reply.reasoning is not None and not reply.answer.strip():
        return REASONING_CUT if cut else REASONING_ONLY
    return ANSWER_CUT if cut else NO_CODE


_NO_BUDGET = "\x00no budget"
ROOT_OUTPUT_RESERVE = 1024
"""Completion tokens held back for each root call when a token or cost budget is set."""


class RootCalls:
    """The root's model calls of an :class:`~dealroom.harness.rlm._engine.Episode`: its
    replies, and the compactions that keep its prompt inside its window."""

    ctx: RunContext
    agent: str
    depth: int
    role: str
    model: ModelClient
    tracker: BudgetTracker
    context: RootContext | None
    failure: str | None = None
    """Why the agent's latest model call failed (a failed child tells its parent)."""

    @property
    def _context(self) -> RootContext:
        assert self.context is not None, "run() opens the episode's context first"
        return self.context

    async def _root_reply(self, turn: int, retried: bool = False) -> RootReply | str | None:
        context = self._context
        if not retried:
            await self._fit(turn)
        cached = self.ctx.replay.root_reply(self.agent, turn)
        if cached is not None:
            context.new_input()  # as the live call did
            context.learn(cached.get("usage") or {},
                          (cached.get("provider") or {}).get("usage_estimated", True))
            return RootReply.from_event(cached)
        messages = context.messages
        prompt = sum(prompt_tokens(m["content"]) for m in messages)  # each counted once
        worst = prompt + ROOT_OUTPUT_RESERVE
        reservation = self.tracker.reserve(worst, self.model.prices.cost(prompt, 0, worst))
        if reservation is None:
            return _NO_BUDGET
        fields: dict[str, Any] = {"role": self.role, "model": self.model.name, "turn": turn,
                                  "call_id": f"{self.agent}/t{turn}", "wave": None,
                                  "input": context.new_input(), "tokens": None}
        try:
            result = await self.model.chat(messages, max_tokens=context.reply_cap(),
                                           temperature=self.ctx.settings.temperature)
        except Exception as exc:  # noqa: BLE001 - any provider failure is this call's result
            charged = failed_call_usage(exc, reservation, prompt)
            self.tracker.settle(reservation, charged)
            if refused_for_length(exc) and not retried and context.compact_at:
                context.counter.learn(messages, refused_count(exc))
                if await self._compact(turn, None, f"refused: {error_text(exc)}", fewer=True):
                    return await self._root_reply(turn, retried=True)
            self.failure = error_text(exc)
            self.ctx.emit("model_call", self.agent, self.depth, **fields, output=None,
                          reasoning=None, usage=charged.to_dict(), error=self.failure,
                          latency_s=None, provider=provider_record(exc))
            return None
        self.tracker.settle(reservation, result.usage)
        context.learn(result.usage.to_dict(), result.usage_estimated)
        fields["tokens"] = self.ctx.events.recorder.write_tokens(fields["call_id"], result.tokens)
        self.ctx.emit("model_call", self.agent, self.depth, **fields, output=result.text,
                      reasoning=result.reasoning, usage=result.usage.to_dict(), error=None,
                      latency_s=result.latency_s, provider=provider_record(result))
        return RootReply.from_result(result)

    async def _fit(self, turn: int) -> None:
        """Compact before the call when the prompt would pass the compaction point; a turn
        replayed from the records compacts exactly as it did."""
        recorded = self.ctx.replay.compactions.get((self.agent, turn))
        if recorded is not None:
            for event in recorded:
                first, last = event["turns"]
                self._context.apply(event["summary"], first, last, event["kept"])
            return
        if self.ctx.replay.root_reply(self.agent, turn) is not None:
            return
        tokens = await self._context.over()
        if tokens is not None:
            await self._compact(turn, tokens, "window")

    async def _compact(self, turn: int, before: int | None, reason: str,
                       fewer: bool = False) -> bool:
        """Replace older turns by a summary the model writes; False when there is nothing
        left to compact."""
        context = self._context
        first, last, kept = context.plan(fewer)
        if last < first:
            return False
        messages = context.request(kept, first, last)
        out = max(256, min(2048, context.limit // 4))
        prompt = sum(prompt_tokens(m["content"]) for m in messages)
        reservation = self.tracker.reserve(prompt + out,
                                           self.model.prices.cost(prompt, 0, prompt + out))
        result, error, usage, failure = None, None, Usage(), None
        if reservation is None:
            error = "no budget left for a summary"
        else:
            try:
                result = await self.model.chat(messages, max_tokens=out,
                                               temperature=self.ctx.settings.temperature)
                usage = result.usage
            except Exception as exc:  # noqa: BLE001 - the turns are then dropped unsummarized
                error, usage = error_text(exc), failed_call_usage(exc, reservation, prompt)
                failure = exc
            self.tracker.settle(reservation, usage)
        summary = answer_text(result.text, result.reasoning).strip() if result else ""
        context.apply(summary or f"(no summary: {error or 'the reply was empty'})",
                      first, last, kept)
        self.ctx.emit("compaction", self.agent, self.depth, role=self.role,
                      model=self.model.name, call_id=f"{self.agent}/t{turn}/compact", turn=turn,
                      turns=[first, last], kept=kept, reason=reason, tokens_before=before,
                      tokens_after=await self._recount(),
                      summary=context.summary, reasoning=result.reasoning if result else None,
                      usage=usage.to_dict(), error=error,
                      latency_s=result.latency_s if result else None,
                      provider=provider_record(result if result else failure))
        return True

    async def _recount(self) -> int:
        """The prompt's tokens after a compaction (the next call's reply cap starts there)."""
        context = self._context
        context.counted = await context.counter.count(context.messages)
        return context.counted
