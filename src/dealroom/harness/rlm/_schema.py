"""Sub-calls with ``schema=``: asked for as the sub model takes it, read back, asked once more.

    call {prompt, docs, schema} ──> typed_plan: the schema checked (a bad one: "bad call"),
        in the prompt unless the model takes ``response_format``; ``input.schema`` records it
    SchemaAsk.ask ──> reply (reasoning apart) ──read_structured──> value ──> answer["value"]
                          │ no value that matches
                          ▼
        the same call once more, the validator's message in its prompt (its own reservation)
                          │ still none
                          ▼
        the item fails alone: {"ok": False, "error": "answer does not match the schema: ..."}

The record keeps the raw text (``output``), the value (``parsed``) and, under
``provider.schema``, how it was asked (``via``) and each rejected answer with its reason; its
usage and cost count both attempts. Calls without a schema never come here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dealroom.harness._common._calls import error_text, failed_call_usage
from dealroom.harness.rlm._replay import SubAnswer
from dealroom.harness.rlm._slices import SubPlan, plan_sub_input, prompt_tokens
from dealroom.models import (
    answer_text,
    check_schema,
    read_structured,
    retry_note,
    schema_format,
    schema_prompt,
    schema_via,
)
from dealroom.types import Usage

if TYPE_CHECKING:
    from dealroom.harness._common._budget import BudgetTracker
    from dealroom.harness.rlm._subs import SubModel
    from dealroom.models import ChatResult, ModelClient
    from dealroom.room import Room

FAILED = "answer does not match the schema"


def typed_plan(room: Room, call: dict[str, Any], sub: ModelClient, *, system: str,
               context_tokens: int) -> SubPlan:
    """The plan of a call with a schema: the schema checked, in the prompt when the model
    does not take ``response_format``, and in the input record."""
    schema = call["schema"]
    check_schema(schema)
    if schema_via(sub) == "prompt":
        call = {**call, "prompt": str(call.get("prompt") or "") + schema_prompt(schema)}
    plan = plan_sub_input(room, call, system=system, context_tokens=context_tokens)
    plan.record["schema"] = schema
    return plan


@dataclass
class SchemaAsk:
    """One sub-call's schema: asks (twice at most) and says what came of it."""

    schema: dict[str, Any]
    via: str
    value: Any = None
    error: str | None = None
    rejected: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, call: dict[str, Any], sub: ModelClient) -> SchemaAsk | None:
        """The call's schema ask; None for a call without one."""
        schema = call.get("schema")
        return None if schema is None else cls(schema, schema_via(sub))

    async def ask(self, chat: Any, messages: list[dict[str, Any]], tracker: BudgetTracker,
                  model: SubModel, max_tokens: int, **options: Any) -> ChatResult:
        """``chat`` (``model``'s) once, and once more with the validator's message when the
        answer does not match (reserved in the budget and ``model``'s cost cap as any call);
        the result's usage and latency count both."""
        self.rejected.clear()
        if self.via == "response_format":
            options["response_format"] = schema_format(self.schema)
        validator = check_schema(self.schema)
        first = await chat(messages, max_tokens=max_tokens, **options)
        self.value, self.error = read_structured(answer_text(first.text, first.reasoning),
                                                 validator, cut=first.finish_reason == "length")
        if self.error is None:
            return first
        self.rejected.append({"output": first.text, "error": self.error})
        again = _with_note(messages, retry_note(self.error, self.schema))
        tokens = sum(prompt_tokens(str(m.get("content") or "")) for m in again) + max_tokens
        cost = model.client.prices.cost(tokens - max_tokens, 0, max_tokens)
        capped = model.refuse(cost)
        reservation = None if capped else tracker.reserve(tokens, cost)
        if reservation is None:
            if capped is None:
                model.settle(cost, Usage())
            why = capped or "no budget left to ask again"
            self.error = f"{FAILED}: {self.error}; {why}"
            return first
        try:
            second = await chat(again, max_tokens=max_tokens, **options)
        except Exception as exc:  # noqa: BLE001 - the re-ask's failure is this call's result
            charged = failed_call_usage(exc, reservation, tokens)
            tracker.settle(reservation, Usage())  # charged with the first's, by the caller
            model.settle(cost, Usage())
            self.error = f"{FAILED}: {self.error}; asking again failed: {error_text(exc)}"
            return dataclasses.replace(first, usage=first.usage + charged)
        tracker.settle(reservation, Usage())  # charged with the first's, by the caller
        model.settle(cost, Usage())
        self.value, error = read_structured(answer_text(second.text, second.reasoning),
                                            validator, cut=second.finish_reason == "length")
        if error is not None:
            self.rejected.append({"output": second.text, "error": error})
            self.error = f"{FAILED} after asking again: {error}"
        else:
            self.error = None
        return dataclasses.replace(second, usage=first.usage + second.usage,
                                   latency_s=first.latency_s + second.latency_s)

    def answer(self, answer: SubAnswer) -> SubAnswer:
        """The REPL's answer: the value beside the text, or this item's failure."""
        if self.error is not None:
            return {"ok": False, "error": self.error, "notes": answer.get("notes") or []}
        return {**answer, "value": self.value}

    def fields(self) -> dict[str, Any]:
        """What the ``model_call`` record adds: ``parsed`` and ``error``."""
        return {"parsed": self.value if self.error is None else None, "error": self.error}

    def provider(self) -> dict[str, Any]:
        """``provider.schema``: how it was asked and the answers rejected."""
        return {"schema": {"via": self.via, "rejected": list(self.rejected)}}


def _with_note(messages: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """``messages`` with ``note`` added to the last user message."""
    out = [dict(m) for m in messages]
    last = next(i for i in range(len(out) - 1, -1, -1) if out[i].get("role") == "user")
    out[last]["content"] = str(out[last].get("content") or "") + note
    return out
