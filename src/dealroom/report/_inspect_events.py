"""A run's trajectory as inspect_ai events and messages (see ``_inspect``).

    trajectory event             inspect_ai
    model_call (root, child)     ModelEvent, role ``root`` / ``child_root``: the messages the
                                 harness added for that call, the reply, usage, latency
    model_call (sub)             ModelEvent, role ``sub``: the prompt, free text and the
                                 slices it was sent (document, pages, characters)
    cell                         ToolEvent ``python`` (code → output, error)
    tool (tool loop)             ToolEvent named as the tool
    child_start … child_end      SpanBeginEvent … SpanEndEvent (type ``agent``): the child's
                                 events carry its span
    compaction                   CompactionEvent
    wave, memo, run_start, …     InfoEvent (``source``: the event's type)

The sample's messages are the root's conversation as it saw it
(:func:`dealroom.runs.agent_conversation`), each reply carrying its turn's cell as a
``python`` tool call followed by the cell's output as the tool's message.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from dealroom.runs import agent_conversation

if TYPE_CHECKING:
    from inspect_ai.event import Event
    from inspect_ai.model import ChatMessage, ModelUsage

PYTHON = "python"
"""The tool name a cell is shown under (inspect's own name for a Python REPL tool)."""
INFO = ("run_start", "sandbox", "wave", "memo", "resumed", "run_end")


def usage_of(usage: dict[str, Any] | None) -> ModelUsage:
    """A dealroom usage record (``input_tokens``, ``cached_input_tokens``, ``output_tokens``,
    ``cost_usd``) as inspect's ModelUsage."""
    from inspect_ai.model import ModelUsage

    u = usage or {}
    inp, out = int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0)
    return ModelUsage(input_tokens=inp, output_tokens=out, total_tokens=inp + out,
                      input_tokens_cache_read=u.get("cached_input_tokens") or None,
                      total_cost=u.get("cost_usd"))


def chat_message(role: str, content: str) -> ChatMessage:
    """One chat message of a dealroom conversation (``system``, ``user``, ``assistant``)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "assistant":
        return ChatMessageAssistant(content=content)
    return ChatMessageUser(content=content)


def sample_messages(events: list[dict[str, Any]]) -> list[ChatMessage]:
    """The root's conversation, each reply with its cell as a tool call and the cell's output
    as the tool message after it."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
    from inspect_ai.tool import ToolCall

    conversation = agent_conversation(events, "root")
    cells = {e.get("turn"): e for e in events
             if e.get("type") == "cell" and e.get("agent", "root") == "root"}
    turns = iter([c.get("turn") for c in conversation.calls])
    out: list[ChatMessage] = []
    for m in conversation.messages:
        if m["role"] != "assistant":
            out.append(chat_message(m["role"], m["content"]))
            continue
        turn = next(turns, None)
        cell = cells.pop(turn, None)
        if cell is None:
            out.append(ChatMessageAssistant(content=m["content"]))
            continue
        call_id = f"cell-{turn}"
        out.append(ChatMessageAssistant(content=m["content"], tool_calls=[ToolCall(
            id=call_id, function=PYTHON, arguments={"code": cell.get("code") or ""})]))
        out.append(ChatMessageTool(content=cell.get("output") or "", tool_call_id=call_id,
                                   function=PYTHON, error=_tool_error(cell)))
    return out


def sample_events(events: list[dict[str, Any]], start: datetime,
                  temperature: float | None) -> list[Event]:
    """The trajectory's events as inspect events, in ``seq`` order (see the module table)."""
    spans: dict[str, str] = {}
    out: list[Event] = []
    for e in sorted(events, key=lambda e: e.get("seq", 0)):
        when = start + timedelta(seconds=float(e.get("t") or 0.0))
        kind, agent = e.get("type"), str(e.get("agent", "root"))
        if kind == "child_start":
            out.append(_span_begin(e, agent, spans, when))
            continue
        span = _span_of(agent, spans)
        made = _event(e, when, temperature)
        if made is not None:
            made.span_id = span
            out.append(made)
        key = _span_key(e, agent)
        if kind == "child_end" and key in spans:
            out.append(_span_end(spans.pop(key), when))
    for span_id in reversed(list(spans.values())):  # children the run never saw end
        out.append(_span_end(span_id, out[-1].timestamp if out else start))
    return out


def _event(e: dict[str, Any], when: datetime, temperature: float | None) -> Event | None:
    from inspect_ai.event import CompactionEvent, InfoEvent

    kind = e.get("type")
    if kind == "model_call":
        return _model_event(e, when, temperature)
    if kind in ("cell", "tool"):
        return _tool_event(e, when)
    if kind == "compaction":
        return CompactionEvent(timestamp=when, type="summary", role=e.get("role"),
                               tokens_before=e.get("tokens_before"),
                               tokens_after=e.get("tokens_after"), source="dealroom",
                               metadata=_rest(e))
    if kind in INFO or kind == "child_end":
        return InfoEvent(timestamp=when, source=str(kind), data=_rest(e))
    return None


def _model_event(e: dict[str, Any], when: datetime, temperature: float | None) -> Event:
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        GenerateConfig,
        ModelOutput,
    )

    model = str(e.get("model") or "")
    latency = float(e.get("latency_s") or 0.0)
    reply = e.get("output")
    choices = [] if reply is None else [ChatCompletionChoice(
        message=ChatMessageAssistant(content=str(reply), model=model), stop_reason="stop")]
    output = ModelOutput(model=model, choices=choices, usage=usage_of(e.get("usage")),
                         time=latency, error=e.get("error"))
    return ModelEvent(
        timestamp=when, completed=when + timedelta(seconds=latency), working_time=latency,
        model=model, role=e.get("role"), input=_model_input(e), tools=[], tool_choice="none",
        config=GenerateConfig(temperature=temperature), output=output, error=e.get("error"),
        metadata={k: e.get(k) for k in ("call_id", "agent", "turn", "wave", "reasoning")
                  if e.get(k) is not None})


def _model_input(e: dict[str, Any]) -> list[ChatMessage]:
    inp = e.get("input") or {}
    if e.get("role") != "sub":
        return [chat_message(str(m.get("role")), str(m.get("content", "")))
                for m in inp.get("messages") or [] if isinstance(m, dict)]
    parts = [str(inp.get("prompt") or "")]
    if inp.get("text"):
        parts.append(str(inp["text"]))
    for d in inp.get("docs") or []:
        if isinstance(d, dict):
            parts.append(f"[slice {d.get('id')} pages {d.get('pages')} chars {d.get('chars')}]")
    return [chat_message("user", "\n\n".join(p for p in parts if p))]


def _tool_event(e: dict[str, Any], when: datetime) -> Event:
    from inspect_ai.event import ToolEvent

    seconds = float(e.get("seconds") or 0.0)
    if e.get("type") == "cell":
        function, arguments, result = PYTHON, {"code": e.get("code") or ""}, e.get("output")
    else:
        function, arguments = str(e.get("name") or "tool"), dict(e.get("arguments") or {})
        result = f"({e.get('output_chars', 0)} characters)"
    return ToolEvent(timestamp=when, completed=when + timedelta(seconds=seconds),
                     working_time=seconds, id=f"{e.get('agent', 'root')}/t{e.get('turn')}",
                     function=function, arguments=arguments, result=result or "",
                     error=_tool_error(e), agent=str(e.get("agent", "root")),
                     metadata={"turn": e.get("turn")})


def _tool_error(e: dict[str, Any]) -> Any:
    from inspect_ai.tool import ToolCallError

    if e.get("timed_out"):
        return ToolCallError("timeout", str(e.get("error") or "the cell timed out"))
    if e.get("error"):
        return ToolCallError("unknown", str(e["error"]))
    return None


def _span_begin(e: dict[str, Any], agent: str, spans: dict[str, str], when: datetime) -> Event:
    from inspect_ai.event import SpanBeginEvent

    key = _span_key(e, agent)
    span_id = key if key not in spans else f"{key}#{e.get('seq')}"
    parent = _span_of(agent.rsplit("/", 1)[0], spans) if "/" in agent else None
    spans[key] = span_id
    task = str(e.get("task") or "")
    return SpanBeginEvent(timestamp=when, id=span_id, parent_id=parent, type="agent",
                          name=f"child {span_id}" + (f": {task[:80]}" if task else ""),
                          span_id=parent, metadata=_rest(e))


def _span_key(e: dict[str, Any], agent: str) -> str:
    """A child's span key: its agent path (a child's events carry it), or the sub-call id
    when its start was recorded under the caller's path."""
    return agent if agent != "root" else f"call:{e.get('call_id')}"


def _span_end(span_id: str, when: datetime) -> Event:
    from inspect_ai.event import SpanEndEvent

    return SpanEndEvent(timestamp=when, id=span_id, span_id=span_id)


def _span_of(agent: str, spans: dict[str, str]) -> str | None:
    """The open span of ``agent`` or of its nearest ancestor that has one."""
    path = agent
    while path:
        if path in spans:
            return spans[path]
        path = path.rsplit("/", 1)[0] if "/" in path else ""
    return None


def _rest(e: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in e.items() if k not in ("type", "t")}
