"""An agent's conversation as it saw it, rebuilt from the run's ``model_call`` events.

An agent's model calls (the root's, or a child's: ``role`` ``root`` or ``child_root``) record
under ``input.messages`` the messages added to the conversation since its previous call was
sent (the system prompt once; then the previous reply and the next user message), and under
``output`` the reply. In ``seq`` order they join back into the whole conversation::

    call t1: input [system, user "... Turn 1 of T"]                      output reply 1
    call t2: input [reply 1, user "Turn 2 of T. Output: ..."]            output reply 2
    ...      -> [system, user, reply 1, user, reply 2, ...]

A reply is taken from its call's ``output`` (its answer) and then replaced by the form the
next call's input recorded (the answer alone, or the whole reply with a ``keep`` reasoning
history). A call that failed contributes its input and no reply. After a compaction a call
records its whole prompt (``input.replace``) and the conversation starts over from it. A
resumed run replays the replies it already has without calling again, so nothing is counted
twice. Sub-agent calls (``role`` ``sub``) belong to no conversation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dealroom._util.reasoning import join_reasoning


@dataclass
class Conversation:
    """What one agent was shown and what it replied, in order."""

    messages: list[dict[str, str]] = field(default_factory=list)
    """Chat messages (``role``, ``content``): system prompt, user messages and replies."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """The ``model_call`` event behind each reply (each assistant message), in order."""


def agent_conversation(events: Iterable[dict[str, Any]], agent: str = "root") -> Conversation:
    """The conversation of ``agent`` (``root``, or a child's path such as ``root/c3-1``).

    >>> events = [{"type": "model_call", "agent": "root", "role": "root", "seq": 0,
    ...            "input": {"messages": [{"role": "user", "content": "Turn 1 of 2."}]},
    ...            "output": "```python\\nsubmit()\\n```"}]
    >>> [m["role"] for m in agent_conversation(events).messages]
    ['user', 'assistant']
    """
    conversation = Conversation()
    calls = (e for e in events if e.get("type") == "model_call" and e.get("agent") == agent
             and e.get("role") != "sub")
    messages = conversation.messages
    replied = False
    for event in sorted(calls, key=lambda e: e.get("seq", 0)):
        new = _messages(event)
        if (event.get("input") or {}).get("replace"):  # compacted: the prompt starts over
            messages.clear()
            conversation.calls.clear()
            replied = False
        if replied and new and new[0]["role"] == "assistant":
            messages[-1] = new[0]  # the previous reply as its history kept it
            new = new[1:]
        messages.extend(new)
        replied = event.get("error") is None and event.get("output") is not None
        if replied:
            messages.append({"role": "assistant", "content": event["output"]})
            conversation.calls.append(event)
    return conversation


def _messages(event: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": str(m.get("role")), "content": str(m.get("content", ""))}
            for m in (event.get("input") or {}).get("messages") or []]


def whole_reply(event: dict[str, Any]) -> str:
    """A ``model_call``'s reply as the model wrote it: its answer with its reasoning (what an
    ``hf:`` call's sampled ids decode to)."""
    provider = event.get("provider") or {}
    return join_reasoning(event.get("reasoning"), event.get("output") or "",
                          provider.get("reasoning"))


@dataclass
class Segment:
    """A stretch of an agent's calls that one token sequence holds: each call's prompt is the
    one before it, that call's whole reply and the next user message."""

    messages: list[dict[str, str]]
    """The last call's prompt and its whole reply."""
    calls: list[dict[str, Any]]
    """The ``model_call`` events whose replies are the segment's own (trained on), in order."""
    first: int
    """Index among the segment's assistant messages of its first own reply (earlier ones were
    context the model was shown)."""


def agent_segments(events: Iterable[dict[str, Any]], agent: str = "root") -> list[Segment]:
    """The agent's successful calls, cut where a prompt stops extending the one before it with
    the whole reply: where the history dropped a reply's reasoning, or was compacted (an
    ``input`` with ``replace``). A plain conversation is one segment."""
    calls = sorted((e for e in events if e.get("type") == "model_call"
                    and e.get("agent") == agent and e.get("role") != "sub"),
                   key=lambda e: e.get("seq", 0))
    segments: list[Segment] = []
    prompt: list[dict[str, str]] = []
    current: Segment | None = None
    for event in calls:
        new = _messages(event)
        extends = current is not None and not (event.get("input") or {}).get("replace") \
            and (not new or new[0] == current.messages[-1])
        prompt = new if (event.get("input") or {}).get("replace") else prompt + new
        if event.get("error") is not None or event.get("output") is None:
            continue
        whole = {"role": "assistant", "content": whole_reply(event)}
        if extends and current is not None:
            current.messages = [*prompt, whole]
            current.calls.append(event)
        else:
            current = Segment([*prompt, whole], [event],
                              sum(m["role"] == "assistant" for m in prompt))
            segments.append(current)
    return segments
