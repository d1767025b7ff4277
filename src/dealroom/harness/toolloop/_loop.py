"""The tool-loop baseline: one model, one context, tools, a turn cap, no compaction.

The model calls tools by replying with one or more ```tool blocks, each a JSON object
``{"name": "grep", "arguments": {"pattern": "change of control"}}``; results come back in the
next user message. As in LAB there is no finish tool: the episode ends when a reply calls no
tool, at the turn cap, when a budget runs out, or when the model fails (for example because the
context overflowed, which this baseline does nothing to prevent). A reply cut at its cap
(``finish_reason`` ``length``) or that never left its reasoning calls no tool but does not end
the episode: the next message tells the model why nothing ran.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from dealroom._util.checks import Limit, Temperature, TokenLimit
from dealroom._util.files import MAX_JSON_DEPTH, nested_too_deep
from dealroom._util.schema import schema_dataclass
from dealroom.errors import ConfigError
from dealroom.harness._common import OpenRun, RunResult, open_run, reopen_run
from dealroom.harness._common._budget import BudgetTracker
from dealroom.harness._common._calls import error_text, provider_record
from dealroom.harness._common._clock import STOPPED, off_loop, run_within
from dealroom.harness._protocol import Listener
from dealroom.harness.toolloop._tools import ToolBox, tools_prompt
from dealroom.runs import primary_deliverable
from dealroom.types import Budget

if TYPE_CHECKING:
    from dealroom.models import ModelClient

SYSTEM = """\
You are an M&A associate reviewing a virtual data room. Your workspace holds documents/ (the
data room, read-only) and output/ (your deliverables: {deliverables}). You have these tools
(JSON, one per line):
{tools}
Call tools by replying with one or more blocks of the form
```tool
{{"name": "read", "arguments": {{"doc": "D00042", "page": 1}}}}
```
Results come back in the next message. Cite documents as [D00042 p.3]. Write each deliverable
in Markdown with the write tool. When you reply without a tool block, the review ends."""

_BLOCK = re.compile(r"```tool[ \t]*\n(.*?)```", re.S)

REASONING_CUT = ("Your reply ended inside its reasoning (it was cut off at the output limit) "
                 "before any answer, so no tool ran. Think more briefly, then call a tool.")
REASONING_ONLY = ("Your reply was all reasoning: it never closed its </think> block, so it had "
                  "no answer and no tool ran. Close your reasoning with </think>, then call a "
                  "tool.")
ANSWER_CUT = ("Your reply was cut off at the output limit before it held a complete ```tool "
              "block, so no tool ran. Reply more briefly.")


@dataclass(frozen=True)
class Said:
    """One reply of the model as the loop uses it."""

    text: str
    """The answer (tool blocks are read from it only)."""
    finish_reason: str = "stop"
    reasoning: bool = False
    """The reply had reasoning apart from its answer."""

    def unfinished(self) -> str | None:
        """Why a reply without tool calls did not end the review (it was cut, or never left
        its reasoning): what the model is told; None when it simply called no tool."""
        cut = self.finish_reason == "length"
        if self.reasoning and not self.text.strip():
            return REASONING_CUT if cut else REASONING_ONLY
        return ANSWER_CUT if cut else None


@schema_dataclass
class ToolLoopSettings:
    """How a tool-loop episode runs."""

    max_turns: Annotated[int, Field(ge=1)] = 200
    """Model replies before the episode is stopped (LAB's default is 200)."""
    max_tokens: TokenLimit | None = None
    """Tokens over every model call of the episode."""
    max_cost_usd: Limit | None = None
    """Dollars over every model call of the episode."""
    max_seconds: Limit | None = None
    """Wall-clock seconds for the episode."""
    temperature: Temperature = 0.0
    """Sampling temperature."""


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
            if nested_too_deep(data, block):  # recorded as-is: a run's records stay readable
                raise TypeError(f"lists and objects nest more than {MAX_JSON_DEPTH} deep")
            calls.append((name, args))
        except (json.JSONDecodeError, KeyError, TypeError, RecursionError) as exc:
            calls.append(f"error: malformed tool block ({exc}); send JSON with name, arguments")
    return calls


async def run_toolloop(
    room_dir: Path, out: Path, *, model: ModelClient,
    settings: ToolLoopSettings | None = None,
    listeners: tuple[Listener, ...] = (), concurrency: int | None = None,
) -> RunResult:
    """Run the tool-loop baseline on ``room_dir`` with the open client ``model``; write ``out``."""
    settings = settings or ToolLoopSettings()
    run = await open_run("toolloop", room_dir, out, root=model, settings=settings,
                         listeners=listeners, concurrency=concurrency)
    return await _episode(run, model, settings, {})


async def resume_toolloop(run_dir: Path, *, model: ModelClient,
                          listeners: tuple[Listener, ...] = ()) -> RunResult:
    """Finish an interrupted tool-loop run: the model's recorded replies are replayed (no call
    is repeated), the tools run again over the room, and the loop goes on from there."""
    run = await reopen_run(run_dir, listeners=listeners)
    settings = run.settings(ToolLoopSettings)
    return await _episode(run, model, settings, _replies(run.previous))


def _replies(events: list[dict[str, Any]]) -> dict[int, tuple[Said, int]]:
    """Turn → (the model's recorded reply, how many tool and memo events of that turn were
    recorded after it)."""
    replies: dict[int, tuple[Said, int]] = {}
    turn = None
    for e in events:
        if e["type"] == "model_call" and e.get("error") is None:
            turn = e["turn"]
            finish = (e.get("provider") or {}).get("finish_reason") or "stop"
            replies[turn] = (Said(e["output"], finish, e.get("reasoning") is not None), 0)
        elif e["type"] in ("tool", "memo") and turn is not None:
            reply, n = replies[turn]
            replies[turn] = (reply, n + 1)
    return replies


async def _episode(run: OpenRun, model: ModelClient, settings: ToolLoopSettings,
                   replies: dict[int, tuple[Said, int]]) -> RunResult:
    tracker = BudgetTracker(Budget(settings.max_turns, settings.max_tokens,
                                   settings.max_cost_usd, settings.max_seconds))
    tracker.carry(*run.spent())
    loop = _Loop(model, ToolBox(run.room, run.deliverables.files), tracker, settings, run,
                 replies)
    status, reason = await run_within(tracker, loop.play()) or ("budget_exhausted", STOPPED)
    run.events.emit("run_end", status=status, reason=reason, turns=tracker.turns, ended=status)
    return run.finish(status, reason, tracker.turns)


class _Loop:
    """One tool-loop episode; turns in ``replies`` are replayed from the records."""

    def __init__(self, model: ModelClient, box: ToolBox, tracker: BudgetTracker,
                 settings: ToolLoopSettings, run: OpenRun,
                 replies: dict[int, tuple[Said, int]]) -> None:
        self.model, self.box, self.tracker, self.settings = model, box, tracker, settings
        self.run = run
        self.replies = replies
        self.failure = ""
        self.recorded = 0
        """Tool and memo events of the turn being replayed that are already recorded."""

    def emit(self, type: str, **fields: Any) -> None:
        if type in ("tool", "memo") and self.recorded:
            self.recorded -= 1
            return
        self.run.events.emit(type, **fields)

    async def play(self) -> tuple[str, str]:
        """Turns until the model stops calling tools, fails, or a budget runs out."""
        settings, tracker = self.settings, self.tracker
        files = ", ".join(f"output/{f}" for f in self.box.deliverables.values())
        messages = [
            {"role": "system", "content": SYSTEM.format(tools=tools_prompt(), deliverables=files)},
            {"role": "user", "content": f"{self.run.instructions.text}\n\n"
                                        f"Turn 1 of {settings.max_turns}."},
        ]
        sent = 0
        while (spent := tracker.exhausted()) is None:
            tracker.turns += 1
            turn = tracker.turns
            reply = await self._reply(messages[sent:], messages, turn)
            sent = len(messages)
            if reply is None:
                return "error", self.failure
            calls = parse_tool_calls(reply.text)
            if not calls:
                if (why := reply.unfinished()) is None:
                    return "finished", "the model stopped calling tools"
                messages.append({"role": "assistant", "content": reply.text})
                messages.append({"role": "user",
                                 "content": f"Turn {turn + 1} of {settings.max_turns}.\n{why}"})
                continue
            self.recorded = self.replies.get(turn, ("", 0))[1]
            outputs = [_run_tool(self.box, call, turn, self.emit) for call in calls]
            self.recorded = 0
            if self.box.outputs:  # rendering and the history's delta: off the loop
                await off_loop(self._save, turn, dict(self.box.outputs))
            messages.append({"role": "assistant", "content": reply.text})
            body = "\n\n".join(outputs)
            messages.append({"role": "user",
                             "content": f"Turn {turn + 1} of {settings.max_turns}.\n{body}"})
        status = "max_turns" if spent == "turns" else "budget_exhausted"
        return status, f"{spent} budget used up"

    def _save(self, turn: int, outputs: dict[str, str]) -> None:
        """Write the deliverables and the memo history (in a thread: :func:`off_loop`)."""
        for key, text in outputs.items():
            self.run.deliverables.write(key, text)
        primary = primary_deliverable(self.box.deliverables)
        if primary in outputs:
            self.run.events.recorder.memo_turn(turn, outputs[primary])

    async def _reply(self, new: list[dict[str, Any]], messages: list[dict[str, Any]],
                     turn: int) -> Said | None:
        if turn in self.replies:
            return self.replies[turn][0]
        call_id = f"root/t{turn}"
        fields = {"role": "root", "model": self.model.name, "turn": turn,
                  "call_id": call_id, "wave": None, "input": {"messages": new},
                  "tokens": None}
        try:
            result = await self.model.chat(messages, temperature=self.settings.temperature)
        except Exception as exc:  # noqa: BLE001 - any provider failure is this call's result
            self.emit("model_call", **fields, output=None, reasoning=None, usage={},
                      error=error_text(exc), latency_s=None, provider=provider_record(exc))
            self.failure = f"the model failed: {error_text(exc)}"
            return None
        self.tracker.settle(None, result.usage)
        fields["tokens"] = self.run.events.recorder.write_tokens(call_id, result.tokens)
        self.emit("model_call", **fields, output=result.text, reasoning=result.reasoning,
                  usage=result.usage.to_dict(), error=None, latency_s=result.latency_s,
                  provider=provider_record(result))
        return Said(result.text, result.finish_reason, result.reasoning is not None)


def _run_tool(box: ToolBox, call: tuple[str, dict[str, Any]] | str, turn: int,
              emit: Callable[..., None]) -> str:
    if isinstance(call, str):
        emit("tool", turn=turn, name=None, arguments=None, error=call, output_chars=0,
             doc=None)
        return call
    name, args = call
    output = box.call(name, args)
    error = output if output.startswith("error:") else None
    emit("tool", turn=turn, name=name, arguments=args, error=error, output_chars=len(output),
         doc=box.opened)
    if box.written is not None:
        text = box.outputs[box.written]
        emit("memo", sections=text.count("\n## "), chars=len(text))
    return f"[{name}]\n{output}"


class _ToolLoopHarness:
    """The tool-loop baseline as registered under ``toolloop``."""

    name = "toolloop"
    uses_sub = False
    settings = ToolLoopSettings

    @staticmethod
    def scripted_root(**options: str) -> ModelClient:
        from dealroom.harness.toolloop._scripted import scripted_toolloop

        if options:
            raise ConfigError(f"the tool loop's scripted root takes no options (got "
                              f"{', '.join(options)}): use --root scripted")
        return scripted_toolloop()

    @staticmethod
    async def run(room_dir: Path, out: Path, *, root: ModelClient, sub: ModelClient | None,
                  settings: ToolLoopSettings, listeners: tuple[Listener, ...] = (),
                  concurrency: int | None = None) -> RunResult:
        return await run_toolloop(room_dir, out, model=root, settings=settings,
                                  listeners=listeners, concurrency=concurrency)

    @staticmethod
    async def resume(run_dir: Path, *, root: ModelClient, sub: ModelClient | None,
                     listeners: tuple[Listener, ...] = ()) -> RunResult:
        return await resume_toolloop(run_dir, model=root, listeners=listeners)


HARNESS = _ToolLoopHarness()
