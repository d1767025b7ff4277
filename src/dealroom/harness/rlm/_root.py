"""The root's reply as the loop uses it: the answer its code is read from, the reasoning kept
in the records, and what the root is told when a reply ran nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dealroom.harness.rlm._prompt import NO_CODE, REASONING_CUT


@dataclass(frozen=True)
class RootReply:
    """One reply of the root (or a child's root)."""

    answer: str
    reasoning: str | None = None
    shape: str | None = None
    """How the reasoning came (``dealroom._util.reasoning``); None without reasoning."""
    finish_reason: str = "stop"

    @classmethod
    def from_result(cls, result: Any) -> RootReply:
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
    """What the root is told when its reply had no code to run."""
    if reply.reasoning is not None and not reply.answer.strip():
        return REASONING_CUT
    return NO_CODE
