"""The tool-loop baseline: one model, one context, tools, a turn cap, no compaction.

The model calls tools by replying with one or more ```tool blocks, each a JSON object
``{"name": "grep", "arguments": {"pattern": "change of control"}}``; results come back in the
next user message. As in LAB there is no finish tool: the episode ends when a reply calls no
tool, at the turn cap, when a budget runs out, or when the model fails (for example because the
context overflowed, which this baseline does nothing to prevent).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError, DealroomError
from dealroom.eval import RunRecorder
from dealroom.harness._common import RunResult, finish_run, instructions_of, run_config
from dealroom.harness.rlm._budget import BudgetTracker
from dealroom.harness.toolloop._tools import ToolBox, tools_prompt
from dealroom.types import Budget

SYSTEM = """\
You are an M&A associate reviewing a virtual data room to write a due diligence memo
(memo.md). You have these tools (JSON, one per line):
{tools}
Call tools by replying with one or more blocks of the form
```tool
{{"name": "read", "arguments": {{"doc": "D00042", "page": 1}}}}
```
Results come back in the next message. Cite documents as [D00042 p.3]. Write the memo with the
write tool. When you reply without a tool block, the review ends."""

_BLOCK = re.compile(r"```tool[ \t]*\n(.*?)```", re.S)


@dataclass
class ToolLoopSettings:
    """How a tool-loop episode runs."""

    max_turns: int = 200
    """Model replies before the episode is stopped (LAB's default is 200)."""
    max_tokens: int | None = None
    """Tokens over every model call of the episode."""
    max_cost_usd: float | None = None
    """Dollars over every model call of the episode."""
    max_seconds: float | None = None
    """Wall-clock seconds for the episode."""
    temperature: float = 0.0
    """Sampling temperature."""

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ConfigError("max_turns must be at least 1")


def parse_tool_calls(reply: str) -> list[tuple[str, dict[str, Any]] | str]:
    """The tool calls of a reply, in order; a malformed block becomes an error string.

    >>> parse_tool_calls('```tool\\n{"name": "list", "arguments": {}}\\n```')
    [('list', {})]
    """
    calls: list[tuple[str, dict[str, Any]] | str] = []
    for block in _BLOCK.findall(reply):
        try:
            data = json.loads(block)
            name, args = data["name"], data.get("arguments") or {}
            if not isinstance(name, str) or not isinstance(args, dict):
                raise TypeError("name must be a string and arguments an object")
            calls.append((name, args))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            calls.append(f"error: malformed tool block ({exc}); send JSON with name, arguments")
    return calls


async def run_toolloop(
    room_dir: Path, out: Path, *, model: Any, settings: ToolLoopSettings | None = None,
    listeners: tuple[Any, ...] = (),
) -> RunResult:
    """Run the tool-loop baseline on ``room_dir`` with the open client ``model``; write ``out``."""
    from dealroom.measure import CoverageProbe
    from dealroom.room import Room

    settings = settings or ToolLoopSettings()
    room = Room.open(room_dir)
    recorder = RunRecorder.create(out, run_config("toolloop", room_dir, [model], settings))
    probe = CoverageProbe(room)

    def emit(type: str, **fields: Any) -> None:
        event = recorder.event(type, **fields)
        probe.observe_event(event)
        for listener in listeners:
            listener(event, probe)

    emit("run_start", room=room.name, docs=room.totals["docs"], tokens=room.totals["tokens"])
    tracker = BudgetTracker(Budget(settings.max_turns, settings.max_tokens,
                                   settings.max_cost_usd, settings.max_seconds))
    box = ToolBox(room)
    status, reason = await _loop(model, box, tracker, settings, emit, recorder,
                                 instructions_of(room_dir))
    emit("run_end", status=status, reason=reason, turns=tracker.turns)
    return finish_run(recorder, probe, status, reason, tracker.turns)


async def _loop(model: Any, box: ToolBox, tracker: BudgetTracker, settings: ToolLoopSettings,
                emit: Any, recorder: RunRecorder, instructions: str) -> tuple[str, str]:
    messages = [
        {"role": "system", "content": SYSTEM.format(tools=tools_prompt())},
        {"role": "user", "content": f"{instructions}\n\nTurn 1 of {settings.max_turns}."},
    ]
    sent = 0
    while (spent := tracker.exhausted()) is None:
        tracker.turns += 1
        turn = tracker.turns
        fields = {"role": "root", "model": model.name, "turn": turn, "call_id": f"root/t{turn}",
                  "wave": None, "input": {"messages": messages[sent:]}}
        sent = len(messages)
        try:
            result = await model.chat(messages, temperature=settings.temperature)
        except (DealroomError, OSError, TimeoutError) as exc:
            emit("model_call", **fields, output=None, usage={}, error=str(exc), latency_s=None)
            return "error", f"the model failed: {exc}"
        tracker.settle(None, result.usage)
        emit("model_call", **fields, output=result.text, usage=result.usage.to_dict(),
             error=None, latency_s=result.latency_s)
        calls = parse_tool_calls(result.text)
        if not calls:
            return "finished", "the model stopped calling tools"
        outputs = [_run_tool(box, call, turn, emit) for call in calls]
        if box.memo:
            recorder.write_memo(box.memo)
        messages.append({"role": "assistant", "content": result.text})
        body = "\n\n".join(outputs)
        messages.append({"role": "user",
                         "content": f"Turn {turn + 1} of {settings.max_turns}.\n{body}"})
    status = "max_turns" if spent == "turns" else "budget_exhausted"
    return status, f"{spent} budget used up"


def _run_tool(box: ToolBox, call: tuple[str, dict[str, Any]] | str, turn: int, emit: Any) -> str:
    if isinstance(call, str):
        emit("tool", turn=turn, name=None, arguments=None, error=call, output_chars=0)
        return call
    name, args = call
    output = box.call(name, args)
    error = output if output.startswith("error:") else None
    emit("tool", turn=turn, name=name, arguments=args, error=error, output_chars=len(output))
    if name == "write" and error is None:
        emit("memo", sections=box.memo.count("\n## "), chars=len(box.memo))
    return f"[{name}]\n{output}"


class _ToolLoopHarness:
    """The tool-loop baseline as registered under ``toolloop``."""

    name = "toolloop"
    uses_sub = False
    settings = ToolLoopSettings

    @staticmethod
    def scripted_root() -> Any:
        from dealroom.harness.toolloop._scripted import scripted_toolloop

        return scripted_toolloop()

    @staticmethod
    async def run(room_dir: Path, out: Path, *, root: Any, sub: Any,
                  settings: ToolLoopSettings, listeners: tuple[Any, ...] = ()) -> RunResult:
        return await run_toolloop(room_dir, out, model=root, settings=settings,
                                  listeners=listeners)


HARNESS = _ToolLoopHarness()
