"""The root's context: the messages it is sent, kept inside its model's window by compaction.

Before each root call the prompt is counted in the root model's own tokens
(:class:`~dealroom.models.PromptCounter`). When it would pass ``compact_at`` of the window
less the reply's reserve, older turns are replaced by a summary the root model writes in a
compaction call::

    [system, task, a1, o1, a2, o2, ..., a9, o9]   (a: replies, o: "Turn k. Output: ...")
      ──▶ [system, task + "turns 1-7, compacted: <summary>", a8, o8, a9, o9]

The system prompt, the task and the last turns stay verbatim; the REPL and its variables are
untouched, and the REPL's ``history`` keeps every turn in full. A ``compaction`` event
records the call (its usage counts like any call) and what it kept, so a resumed run, a fork
and ``export sft`` rebuild exactly what the model saw: the root call after a compaction
records its whole prompt (``input.replace``). An endpoint's length refusal of a root call
compacts (keeping fewer turns) and sends again, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dealroom.errors import ModelError
from dealroom.models import PromptCounter, ProviderError, reply_cap

if TYPE_CHECKING:
    from dealroom.harness.rlm._root import RootReply
    from dealroom.models import ModelClient

COMPACT_SYSTEM = """\
You condense the working notes of a due diligence agent that works in a Python REPL, so it can
carry on without the turns you summarize. Keep what it will need: what it learned (document
ids, pages, parties, amounts, dates), which documents and slices were read and which were not,
the REPL variables it defined and what they hold, what is already in the memo, failed attempts
and why, and the plan for what is left. Be specific and brief; write plain text."""

COMPACT_USER = """\
Summarize turns {first} to {last} of the review below in under {words} words.

{transcript}"""

SUMMARY = """\
[Turns {first} to {last} were compacted to fit your context window. Summary:]
{summary}
[The REPL and its variables are unchanged. `history` in the REPL holds every turn in full:
history[i].turn, .code, .output, .reasoning.]"""

KEEP_TURNS = 2
"""Turns kept verbatim after a compaction (fewer when they do not fit)."""
MIN_REPLY = 256
"""The smallest reply cap a root call is lowered to when its prompt leaves less room."""


def reply_reserve(model: ModelClient) -> int:
    """Tokens held back in the window for the root's reply, and the cap its calls are sent
    with: the spec's ``max_output_tokens``, else a quarter of the window, at most 4,096."""
    spec = getattr(model, "spec", None)
    return reply_cap(model.context_window, getattr(spec, "max_output_tokens", None))


@dataclass
class RootContext:
    """What one agent's model is sent, and the full history of its turns."""

    model: ModelClient
    compact_at: float
    """Share of the window (less the reply's reserve) the prompt may fill; 0: never compact."""
    messages: list[dict[str, str]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    """Every turn in full: ``{turn, code, output, reasoning, reply}`` (the REPL's ``history``)."""
    compacted: int = 0
    """Turns replaced by summaries so far."""
    summary: str = ""
    task: str = ""
    """The first user message as the task gave it (kept verbatim)."""
    sent: int = 0
    replace: bool = False
    """The next call records its whole prompt (the history was compacted)."""
    counted: int | None = None
    """The prompt's tokens when last counted (before a call, after a compaction)."""

    def __post_init__(self) -> None:
        self.counter = PromptCounter(self.model)
        if len(self.messages) > 1:
            self.task = self.messages[1]["content"]

    @property
    def limit(self) -> int:
        """Prompt tokens that fit beside the reply's reserve."""
        return max(256, self.model.context_window - reply_reserve(self.model))

    def new_input(self) -> dict[str, Any]:
        """What the next call's ``model_call`` records: the messages added since the last
        call, or the whole prompt after a compaction."""
        if self.replace:
            self.replace = False
            self.sent = len(self.messages)
            return {"messages": list(self.messages), "replace": True}
        new, self.sent = self.messages[self.sent:], len(self.messages)
        return {"messages": new}

    async def over(self) -> int | None:
        """The prompt's tokens when it is past the compaction point; None when it fits."""
        if not self.compact_at:
            return None
        tokens = self.counted = await self.counter.count(self.messages)
        return tokens if tokens > self.compact_at * self.limit else None

    def reply_cap(self) -> int:
        """The next call's reply cap: the reserve, lowered to what the counted prompt leaves
        of the window (at least :data:`MIN_REPLY`), so a prompt past the compaction point that
        could not be compacted is not refused for the cap alone."""
        reserve = reply_reserve(self.model)
        if self.counted is None:
            return reserve
        room = self.model.context_window - self.counted
        return max(min(reserve, room), min(reserve, MIN_REPLY))

    def learn(self, usage: dict[str, Any], estimated: bool) -> None:
        """Correct the count from the prompt tokens a reply reports."""
        if not estimated:
            self.counter.learn(self.messages, usage.get("input_tokens"))

    # -- compaction -------------------------------------------------------------------------
    def plan(self, fewer: bool = False) -> tuple[int, int, int]:
        """(first turn, last turn, messages kept) of the next compaction."""
        body = len(self.messages) - 2
        kept = min(body, 2 * KEEP_TURNS if not fewer else 1)
        summarized = (body - kept + 1) // 2
        return self.compacted + 1, self.compacted + summarized, kept

    def transcript(self, kept: int) -> str:
        """The turns to summarize, as the model saw them, after the summary so far."""
        old = self.messages[2:len(self.messages) - kept]
        parts = [f"Earlier summary:\n{self.summary}"] if self.summary else []
        for m in old:
            who = "Your reply" if m["role"] == "assistant" else "Then"
            parts.append(f"{who}:\n{m['content']}")
        return "\n\n".join(parts)

    def request(self, kept: int, first: int, last: int) -> list[dict[str, str]]:
        """The compaction call's messages."""
        words = max(100, min(600, self.limit // 8))
        return [{"role": "system", "content": COMPACT_SYSTEM},
                {"role": "user", "content": COMPACT_USER.format(
                    first=first, last=last, words=words, transcript=self.transcript(kept))}]

    def apply(self, summary: str, first: int, last: int, kept: int) -> None:
        """Replace the turns before the last ``kept`` messages by ``summary``."""
        tail = self.messages[len(self.messages) - kept:] if kept else []
        note = SUMMARY.format(first=1 if self.summary else first, last=last, summary=summary)
        head = f"{self.task}\n\n{note}"
        if tail and tail[0]["role"] == "user":  # no two user messages in a row
            head, tail = f"{head}\n\n{tail[0]['content']}", tail[1:]
        self.messages[:] = [self.messages[0], {"role": "user", "content": head}, *tail]
        self.summary, self.compacted, self.replace = summary, last, True

    def record_turn(self, turn: int, reply: RootReply, code: str | None, output: str) -> None:
        """Add a finished turn to ``history``."""
        self.history.append({"turn": turn, "reply": reply.answer, "reasoning": reply.reasoning,
                             "code": code, "output": output})


_HF_OVERFLOW = re.compile(r"the prompt has ([\d,]+) tokens, the context window")
"""How an in-process (``hf:``) model refuses a prompt longer than its window."""


def refused_for_length(exc: BaseException) -> bool:
    """Whether a call failed because the model found the prompt too long for its window."""
    if isinstance(exc, ProviderError):
        return exc.kind == "context_length"
    return isinstance(exc, ModelError) and _HF_OVERFLOW.search(str(exc)) is not None


def refused_count(exc: BaseException) -> int | None:
    """The prompt tokens the refusal names, when it names them."""
    if isinstance(exc, ProviderError):
        return exc.prompt_tokens
    found = _HF_OVERFLOW.search(str(exc))
    return int(found.group(1).replace(",", "")) if found else None
