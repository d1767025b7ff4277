"""Answers from an earlier attempt of the same run, so a resumed run repeats no model call.

A replayed turn is what it was: the root's reply, each sub-call's result (a failed call fails
again, with its recorded error), each child's answer, and the output the root was shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict


class SubAnswer(TypedDict):
    """A sub-call's (or child's) answer as the REPL gets it: ``text`` (and ``value``, with a
    schema) when ``ok``, else
    ``error``; ``notes`` on how its input was cut or why it was refused; ``unsent``: the
    ``[id, from page, to page]`` slices asked for but not sent."""

    ok: bool
    text: NotRequired[str]
    error: NotRequired[str]
    notes: NotRequired[list[str]]
    unsent: NotRequired[list[list[Any]]]
    value: NotRequired[Any]
    """A call made with ``schema=``: the value its answer held that matched."""


@dataclass
class Replay:
    """Completed root replies, sub-call results and child results, keyed by call id."""

    root: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    """(agent, turn) → the recorded ``model_call`` event of that turn's reply."""
    subs: dict[str, SubAnswer] = field(default_factory=dict)
    children: dict[str, SubAnswer] = field(default_factory=dict)
    cells: dict[tuple[str, int], str] = field(default_factory=dict)
    """(agent, turn) of cells already recorded → the output the agent was shown: re-running
    them records nothing new and shows that output again."""
    cell_errors: dict[tuple[str, int], str | None] = field(default_factory=dict)
    """(agent, turn) of cells already recorded → the error the cell raised then (or None)."""
    waves: set[int] = field(default_factory=set)
    answered: dict[str, SubAnswer] = field(default_factory=dict)
    """:func:`answer_key` of a sub-call's model and input → its answer: a call sent again to
    the same model with the same prompt and slices (after its cell was cut, say) is answered
    from the records."""
    compactions: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    """(agent, turn) → the ``compaction`` events made before that turn's call, in order."""
    started: set[str] = field(default_factory=set)
    """Call ids of the children whose ``child_start`` is recorded (a resumed one goes on)."""
    host_tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Call id of a host tool call → its answer (``ok`` with ``result``, or ``error``)."""

    @classmethod
    def from_events(cls, events: Iterable[dict[str, Any]]) -> Replay:
        replay = cls()
        for e in events:
            if e["type"] == "model_call" and e["role"] == "sub":
                replay.subs[e["call_id"]] = _sub_result(e)
                if e.get("error") is None:
                    key = answer_key(str(e.get("model") or ""), e["input"])
                    replay.answered[key] = replay.subs[e["call_id"]]
            elif e["type"] == "model_call" and e.get("error") is None:
                replay.root[(e["agent"], e["turn"])] = e
            elif e["type"] == "cell":
                replay.cells[(e["agent"], e["turn"])] = e["output"]
                replay.cell_errors[(e["agent"], e["turn"])] = e.get("error")
            elif e["type"] == "compaction":
                replay.compactions.setdefault((e["agent"], e["turn"]), []).append(e)
            elif e["type"] == "wave":
                replay.waves.add(e["wave"])
            elif e["type"] == "child_start":
                replay.started.add(e["call_id"])
            elif e["type"] == "child_end":
                replay.children[e["call_id"]] = (
                    {"ok": False, "error": e["error"]} if e.get("error") is not None
                    else {"ok": True, "text": e["text"]})
            elif e["type"] == "host_tool":
                replay.host_tools[e["call_id"]] = (
                    {"ok": True, "result": e.get("result")} if e.get("error") is None
                    else {"ok": False, "error": e["error"]})
        return replay

    def cell_output(self, agent: str, turn: int) -> str | None:
        """What the agent was shown after its recorded cell of ``turn``; None if unrecorded."""
        return self.cells.get((agent, turn))

    def root_reply(self, agent: str, turn: int) -> dict[str, Any] | None:
        return self.root.get((agent, turn))

    def sub_result(self, call_id: str) -> SubAnswer | None:
        return self.subs.get(call_id)

    def child_result(self, call_id: str) -> SubAnswer | None:
        return self.children.get(call_id)


_KEY = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
"""``json.dumps(..., sort_keys=True, ensure_ascii=False)``, its encoder made once."""


def input_key(record: dict[str, Any]) -> str:
    """A sub-call's input record (prompt, text, slices by reference) as a key."""
    return _KEY.encode(record)


def answer_key(model: str, record: dict[str, Any]) -> str:
    """The key of a sub-call's answer: its model's spec name and its input (the same input
    sent to two named models is two calls)."""
    return f"{model}\n{_KEY.encode(record)}"


def _sub_result(event: dict[str, Any]) -> SubAnswer:
    if event.get("error") is None:
        from dealroom.models import answer_text

        answer: SubAnswer = {"ok": True,
                             "text": answer_text(event["output"], event.get("reasoning")),
                             "notes": [],
                             "unsent": list((event.get("input") or {}).get("unsent") or [])}
        if "parsed" in event:
            answer["value"] = event["parsed"]
        return answer
    return {"ok": False, "error": event["error"], "notes": []}
