"""An agent's conversation as it saw it, rebuilt from the run's ``model_call`` events.

An agent's model calls (the root's, or a child's: ``role`` ``root`` or ``child_root``) record
under ``input.messages`` the messages added to the conversation since its previous call was
sent (the system prompt once; then the previous reply and the next user message), and under
``output`` the reply. In ``seq`` order they join back into the whole conversation::

    call t1: input [system, user "... Turn 1 of T"]                      output reply 1
    call t2: input [reply 1, user "Turn 2 of T. Output: ..."]            output reply 2
    ...      -> [system, user, reply 1, user, reply 2, ...]

A reply is taken from its call's ``output`` and not again from the next call's input. A call
that failed contributes its input and no reply. A resumed run replays the replies it already
has without calling again, so nothing is counted twice. Sub-agent calls (``role`` ``sub``)
belong to no conversation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


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
        new = [{"role": str(m.get("role")), "content": str(m.get("content", ""))}
               for m in (event.get("input") or {}).get("messages") or []]
        if replied and new and new[0] == messages[-1]:
            new = new[1:]  # the previous reply, already taken from its call's output
        messages.extend(new)
        replied = event.get("error") is None and event.get("output") is not None
        if replied:
            messages.append({"role": "assistant", "content": event["output"]})
            conversation.calls.append(event)
    return conversation
