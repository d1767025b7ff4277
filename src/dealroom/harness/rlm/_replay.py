"""Answers from an earlier attempt of the same run, so a resumed run repeats no model call."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Replay:
    """Completed root replies, sub-call results and child results, keyed by call id."""

    root: dict[tuple[str, int], str] = field(default_factory=dict)
    subs: dict[str, dict[str, Any]] = field(default_factory=dict)
    children: dict[str, dict[str, Any]] = field(default_factory=dict)
    cells: set[tuple[str, int]] = field(default_factory=set)
    """(agent, turn) of cells already recorded: re-running them records nothing new."""
    waves: set[int] = field(default_factory=set)

    @classmethod
    def from_events(cls, events: Iterable[dict[str, Any]]) -> Replay:
        replay = cls()
        for e in events:
            if e["type"] == "model_call" and e.get("error") is None:
                if e["role"] == "sub":
                    replay.subs[e["call_id"]] = {"ok": True, "text": e["output"], "notes": []}
                else:
                    replay.root[(e["agent"], e["turn"])] = e["output"]
            elif e["type"] == "cell":
                replay.cells.add((e["agent"], e["turn"]))
            elif e["type"] == "wave":
                replay.waves.add(e["wave"])
            elif e["type"] == "child_end":
                replay.children[e["call_id"]] = {"ok": True, "text": e["text"]}
        return replay

    def root_reply(self, agent: str, turn: int) -> str | None:
        return self.root.get((agent, turn))

    def sub_result(self, call_id: str) -> dict[str, Any] | None:
        return self.subs.get(call_id)

    def child_result(self, call_id: str) -> dict[str, Any] | None:
        return self.children.get(call_id)
