"""Whole events of each type, as the harnesses write them, for tests that record by hand
(``RunRecorder.event`` refuses an event that lacks a field of its type)."""

from __future__ import annotations

from typing import Any

FIELDS: dict[str, dict[str, Any]] = {
    "run_start": {"room": "r", "docs": 1, "tokens": 9},
    "run_end": {"status": "submitted", "reason": "done", "turns": 1, "ended": "submitted"},
    "model_call": {"role": "root", "model": "scripted", "call_id": "root/t1", "turn": 1,
                   "wave": None, "input": {"messages": []}, "output": "", "reasoning": None,
                   "usage": {}, "error": None, "latency_s": 0.1, "provider": {},
                   "tokens": None},
    "cell": {"turn": 1, "code": "print(1)", "output": "1\n", "error": None, "timed_out": False,
             "crashed": False, "seconds": 0.1},
    "memo": {"sections": 0, "chars": 0},
    "resumed": {"previous_events": 0},
}
"""Event type → a value for each of its fields."""


def fields(kind: str, **changes: Any) -> dict[str, Any]:
    """Every field of a ``kind`` event (beyond seq, t, type, agent, depth), with ``changes``."""
    return {**FIELDS[kind], **changes}
