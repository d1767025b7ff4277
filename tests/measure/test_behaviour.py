"""Behaviour statistics and the across-run correlation."""

from __future__ import annotations

import doctest
import math
from pathlib import Path

import pytest

import dealroom.measure._accounting
import dealroom.measure._behaviour
import dealroom.measure._coverage
from dealroom.measure import behaviour, correlation, memo_incremental, metrics_from_run
from dealroom.room import count_tokens


def _sub(doc: str, wave: int, error: str | None = None) -> dict:
    return {
        "type": "model_call",
        "role": "sub",
        "agent": "root",
        "depth": 1,
        "wave": wave,
        "input": {"prompt": "Read.", "docs": [{"id": doc, "chars": [0, 40]}]},
        "usage": {"input_tokens": 100, "output_tokens": 10},
        "error": error,
    }


TRAJECTORY = [
    {"type": "run_start", "config": {}},
    {
        "type": "model_call",
        "role": "root",
        "turn": 1,
        "model": "big",
        "input": {"messages": [{"role": "user", "content": "Review the room."}]},
        "usage": {"input_tokens": 1_000, "output_tokens": 100},
    },
    _sub("D00001", 1),
    _sub("D00002", 1),
    _sub("D00002", 1, error="timeout"),
    {"type": "wave", "wave": 1, "calls": 3, "ok": 2, "failed": 1, "seconds": 2.0},
    {"type": "memo", "sections": 2, "chars": 800},
    {
        "type": "model_call",
        "role": "root",
        "turn": 2,
        "model": "big",
        "input": {"messages": [{"role": "user", "content": "ok"}]},
        "usage": {"input_tokens": 1_200, "output_tokens": 80},
    },
    {"type": "child_start", "agent": "root/c1", "depth": 1, "task": "leases", "budget": {}},
    _sub("D00003", 1) | {"agent": "root/c1", "depth": 2},
    {"type": "wave", "wave": 1, "calls": 1, "ok": 1, "failed": 0, "agent": "root/c1", "depth": 1},
    {"type": "child_end", "agent": "root/c1", "depth": 1, "status": "submitted"},
    _sub("D00003", 2),
    {"type": "wave", "wave": 2, "calls": 1, "ok": 1, "failed": 0, "seconds": 1.0},
    {"type": "memo", "sections": 5, "chars": 3000},
    {"type": "run_end", "status": "submitted", "reason": ""},
]


def test_behaviour_counts() -> None:
    stats = behaviour(TRAJECTORY)
    assert stats == {
        "sub_calls": 5,
        "sub_calls_failed": 1,
        "children": 1,
        "waves": 2,
        "max_wave": 3,
        "docs_delegated": 3,
        "turns": 2,
        "memo_incremental": True,
        "memo_sections": 5,
        "memo_chars": 3000,
        "docs_read": None,
        "room_docs": None,
        "non_findings": None,
    }


def test_documents_read_with_the_read_tool_out_of_the_room() -> None:
    def tool(name, doc=None):
        return {"type": "tool", "name": name, "doc": doc}

    events = [{"type": "run_start", "docs": 60}, tool("list"), tool("read", "D00001"),
              tool("read", "D00002"), tool("read", "D00001"), tool("read")]
    stats = behaviour(events)
    assert (stats["docs_read"], stats["room_docs"]) == (2, 60)
    assert behaviour([{"type": "run_start", "docs": 60}, tool("list")])["docs_read"] == 0


def test_memo_written_only_at_the_end_is_not_incremental() -> None:
    events = [
        {"seq": 0, "type": "memo", "agent": "root", "sections": 0, "chars": 10},
        {"seq": 1, "type": "wave", "agent": "root"},
        {"seq": 2, "type": "memo", "agent": "root", "sections": 4, "chars": 900},
    ]
    assert memo_incremental(events) is False
    assert memo_incremental([e for e in events if e["type"] == "memo"]) is None


def test_correlation() -> None:
    assert correlation([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert correlation([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(correlation([1], [2]))
    assert math.isnan(correlation([2, 2, 2], [1, 2, 3]))
    with pytest.raises(ValueError):
        correlation([1, 2], [1, 2, 3])


def test_metrics_from_run(room_dir: Path, tmp_path: Path, mini_docs: dict, run_writer) -> None:
    run = run_writer(
        tmp_path / "run",
        TRAJECTORY,
        {
            "room": str(room_dir),
            "harness": "rlm",
            "root": "big",
            "models": {"big": {"price_input": 1.0, "price_output": 2.0}},
        },
    )
    metrics = metrics_from_run(run)
    assert metrics["status"] == "submitted"
    assert metrics["wall_s"] == float(len(TRAJECTORY) - 1)
    assert metrics["usage"]["total"]["input_tokens"] == 2_200 + 5 * 100
    assert metrics["usage"]["by_role"]["root"]["cost_usd"] == pytest.approx(
        (2_200 * 1.0 + 180 * 2.0) / 1e6
    )
    assert metrics["usage"]["unpriced_calls"] == 5  # sub model "" has no price
    assert metrics["behaviour"]["sub_calls"] == 5
    covered = sum(count_tokens(mini_docs[d][2][:40]) for d in ("D00001", "D00003"))
    covered += count_tokens(mini_docs["D00002"][2][:40])  # the failed call still had usage
    assert metrics["coverage"]["tokens_covered"] == covered
    assert metrics_from_run(run, coverage=False)["coverage"] is None


@pytest.mark.parametrize(
    "module",
    [
        dealroom.measure._accounting,
        dealroom.measure._behaviour,
        dealroom.measure._coverage,
    ],
)
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
