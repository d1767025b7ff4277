"""The trajectory's event records: one TypedDict per event type (see docs/architecture.md).

Every event is one JSON object per line of ``trajectory.jsonl`` with the fields of
:class:`Event` plus those of its type. The records are plain dicts on disk and in memory; these
types say what each holds, and :data:`TrajectoryEvent` (a union discriminated on ``type``)
validates them on read: every field is optional (older folders lack those added later, and
events carry fields of their own), but a field present has its type, with no coercion. The
format's version is the run folder's (``config.json`` ``version``,
:data:`~dealroom.runs.RUN_VERSION`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Required

from pydantic import ConfigDict, Discriminator, Tag, with_config
from typing_extensions import TypedDict

from dealroom._util.records import Record


class Event(TypedDict, total=False):
    """The fields every event has."""

    seq: int
    """Position in the trajectory: 0, 1, 2, ...; a resumed run continues the count."""
    t: float
    """Seconds since the run started; a resumed run continues from its last event's ``t``."""
    type: Required[str]
    """The event type: one of :data:`EVENT_TYPES`."""
    agent: str
    """Call-tree path: ``root``; a child started by the root's second ``rlm()`` call in turn 3
    is ``root/c3-1``, its own children ``root/c3-1/c2-0``, ...; ``repl`` in ``dealroom repl``."""
    depth: int
    """0 for the root; a sub-call is one deeper than the agent that made it."""


class RunStart(Event, total=False):
    """The run began (room name, documents, tokens)."""

    type: Required[Literal["run_start"]]  # type: ignore[misc]  # a TypedDict narrows no field
    room: str
    """The room's name."""
    docs: int
    """Documents in the room."""
    tokens: int
    """Tokens in the room."""
    room_digest: str
    """SHA-256 over the room's documents (id, path, file hash): ``dealroom ask`` refuses a
    room whose documents changed since."""
    counts_source: dict[str, str]
    """Per served model role (``root``, ``sub``): how its server counts prompts
    (``tokenize``, ``llama.cpp``, ``extras``) or ``estimate`` (it counts none)."""
    warnings: list[str]
    """What the run should know from the start: a token or cost budget enforced on
    estimates."""


class RunEnd(Event, total=False):
    """An agent's episode ended, the root's ending the run (``ended``: how the agent itself
    ended, ``status`` without ``degraded``): ``submitted``, ``finished`` (tool loop),
    ``budget_exhausted``, ``max_turns``, ``errors`` (``max_errors`` root turns in a row ran
    no code or raised), ``error``, or ``degraded`` (more than 10% of the sub-calls failed at
    the provider or were cancelled in flight; the reason says how it ended and how many
    failed; ``dealroom run`` exits 3)."""

    type: Required[Literal["run_end"]]  # type: ignore[misc]  # a TypedDict narrows no field
    status: str
    """``submitted``, ``finished`` (tool loop), ``budget_exhausted``, ``max_turns``, ``errors``
    (``max_errors`` turns in a row ran no code or raised), ``error`` or ``degraded`` (more
    than 10% of the sub-calls failed at the provider)."""
    reason: str
    """Why, in words."""
    turns: int
    """Turns the agent took."""
    ended: str
    """How the agent itself ended: ``status`` without ``degraded`` (absent in runs written
    before it was recorded; read ``status`` then)."""


class ModelCall(Event, total=False):
    """One model call (``role``: ``root``, ``sub``, ``child_root``); a failed or cancelled
    sub-call has ``error`` and ``provider`` ``{kind, status, attempts, served,
    usage_estimate}``."""

    type: Required[Literal["model_call"]]  # type: ignore[misc]  # a TypedDict narrows no field
    role: str
    """``root``, ``sub`` or ``child_root``."""
    model: str
    """The model's spec name (a key of ``config.json`` ``models``)."""
    call_id: str
    """Deterministic id (``root/t3/s17``: the 18th call in the root's turn 3); replays match
    on it."""
    turn: int
    """The turn of the agent that made the call."""
    wave: int | None
    """The ``llm_batch`` round of a sub-call; None for a root call."""
    input: dict[str, Any]
    """Root: ``{messages}``, only those added since its previous call was sent (its reply
    among them; :func:`~dealroom.runs.agent_conversation` joins them), or after a compaction
    ``{messages, replace: true}``: the whole prompt. Sub-call: ``{prompt,
    text, docs: [{id, pages: [first, last], chars: [start, end]}], truncated}``: document
    slices by reference into the room's text layer, free text in full."""
    output: str | None
    """The reply's answer (its reasoning apart); None when the call failed."""
    reasoning: str | None
    """The reply's reasoning (``reasoning_content``, or inline ``<think>…</think>``), apart
    from the answer; None when it had none or the call failed. ``provider.reasoning`` says
    how it came (``dealroom.models.join_reasoning`` gives the whole reply back)."""
    usage: dict[str, Any]
    """``Usage.to_dict()``: tokens and cost."""
    error: str | None
    """Why the call failed; None when it succeeded."""
    latency_s: float | None
    """Seconds the call took; None when it failed."""
    provider: dict[str, Any]
    """How the endpoint answered (``ChatResult.record()``: ``attempts``, ``finish_reason``,
    ``usage_estimated``, ``streamed``, ``structured``, ``cut_bytes``, ``stripped``, ``hedge``,
    ``reasoning``, ``timeouts``: ``{first_byte, deadline, from}``, what the call waited for)
    or failed (``ProviderError.record()``: ``kind``, ``status``, ``attempts``, ``served``)."""
    parsed: Any
    """A sub-call made with ``schema=``: the value its answer held that matched (``output``
    is the raw text), None when none did (``error`` says why); absent without a schema."""
    tokens: dict[str, Any] | None
    """``{file, offset}``: where the call's :class:`~dealroom.runs.TokenRecord` (prompt and
    completion ids, logprobs) is in ``tokens.jsonl``; None when the provider records none
    (only ``hf:`` models do) or the call failed."""


class Compaction(Event, total=False):
    """The agent's history passed ``compact_at`` of its window (or the endpoint refused it as
    too long): turns ``[first, last]`` were replaced by the summary its model wrote (this
    call's usage counts like a ``model_call``'s), the last ``kept`` messages stay verbatim."""

    type: Required[Literal["compaction"]]  # type: ignore[misc]  # a TypedDict narrows no field
    role: str
    """The agent's role (``root``, ``child_root``): its usage counts there."""
    model: str
    """The model that wrote the summary (the agent's own)."""
    call_id: str
    """``root/t9/compact``: made before the agent's call of turn 9."""
    turn: int
    """The turn whose call came next."""
    turns: list[int]
    """``[first, last]``: the turns the summary stands for (from 1 after a second one)."""
    kept: int
    """Messages after the task kept verbatim (the last turns)."""
    reason: str
    """``window`` (the prompt passed ``compact_at``) or ``refused: ...`` (the endpoint refused
    the prompt as too long)."""
    tokens_before: int | None
    """The prompt's tokens before (None after a refusal), in the model's own count."""
    tokens_after: int
    """The prompt's tokens after."""
    summary: str
    """The summary, as the model is shown it from then on."""
    reasoning: str | None
    """The summary call's reasoning, if any."""
    usage: dict[str, Any]
    """``Usage.to_dict()`` of the summary call."""
    error: str | None
    """Why the summary call failed (the turns are then dropped with a note); None."""
    latency_s: float | None
    """Seconds the summary call took."""
    provider: dict[str, Any]
    """How the endpoint answered or failed (as ``model_call``'s)."""


class SandboxStarted(Event, total=False):
    """An agent's REPL started: what confines it, and which parts are weaker than the
    strongest, with the reason (docs/sandbox.md)."""

    type: Required[Literal["sandbox"]]  # type: ignore[misc]  # a TypedDict narrows no field
    isolation: str
    """The isolation level in force."""
    confinement: dict[str, str]
    """What confines the worker, by part (``isolation``, ``memory``, ``filesystem`` — absent in
    runs written before the allow-list —, ``scratch``, ``seccomp``), in words."""
    degraded: list[str]
    """One line per part weaker than the strongest, with the reason (empty: none)."""


class Cell(Event, total=False):
    """One REPL cell; ``output`` is what the root was shown."""

    type: Required[Literal["cell"]]  # type: ignore[misc]  # a TypedDict narrows no field
    turn: int
    """The root turn whose reply held the code."""
    code: str
    """The code run."""
    output: str
    """What the root was shown (printed output and error, truncated)."""
    error: str | None
    """The traceback when the cell raised."""
    timed_out: bool
    """The cell ran past ``cell_timeout`` and the worker was rebuilt."""
    crashed: bool
    """The cell killed the worker, which was rebuilt."""
    seconds: float
    """Seconds the cell ran."""


class Wave(Event, total=False):
    """One ``llm_batch`` (or single ``llm``) round."""

    type: Required[Literal["wave"]]  # type: ignore[misc]  # a TypedDict narrows no field
    wave: int
    """1, 2, ... over the run."""
    calls: int
    """Sub-calls in the round."""
    ok: int
    """Sub-calls that succeeded."""
    failed: int
    """Sub-calls that failed (model error, bad call, budget)."""
    seconds: float
    """Seconds the round took."""


class ChildStart(Event, total=False):
    """``rlm(task)`` started a child with a budget carved from its parent's."""

    type: Required[Literal["child_start"]]  # type: ignore[misc]  # a TypedDict narrows no field
    call_id: str
    """The call id of the ``rlm()`` call."""
    task: str | None
    """The task the child was given."""
    budget: dict[str, Any]
    """The child's budget (``Budget.to_dict()``), carved from what its parent had left."""
    parent: str
    """The agent id of the child's parent (the agent whose ``rlm()``/``rlm_batch()`` started
    it)."""


class ChildEnd(Event, total=False):
    """The child finished; ``text`` is its answer."""

    type: Required[Literal["child_end"]]  # type: ignore[misc]  # a TypedDict narrows no field
    call_id: str
    """The call id of the ``rlm()`` call."""
    status: str
    """How the child's episode ended (as ``run_end``'s ``status``)."""
    reason: str
    """Why, in words."""
    text: str
    """The child's answer (its memo when it submitted none)."""
    turns: int
    """Turns the child took."""
    error: str | None
    """Why the child failed (its model failed, or it raised): its caller got a
    ``SubcallError``; null when it delivered."""


class MemoChanged(Event, total=False):
    """The memo changed."""

    type: Required[Literal["memo"]]  # type: ignore[misc]  # a TypedDict narrows no field
    sections: int
    """Sections in the memo."""
    chars: int
    """Characters of its Markdown."""


class Tool(Event, total=False):
    """A tool call of the tool-loop harness (``doc``: the document a ``read`` opened)."""

    type: Required[Literal["tool"]]  # type: ignore[misc]  # a TypedDict narrows no field
    turn: int
    """The turn whose reply made the call."""
    name: str | None
    """The tool; None when the block was malformed."""
    arguments: dict[str, Any] | None
    """Its arguments; None when the block was malformed."""
    error: str | None
    """The error the model was shown, if any."""
    output_chars: int
    """Characters of the tool's output."""
    doc: str | None
    """The document a ``read`` opened (its id); None for other calls and failed reads."""


class HostTool(Event, total=False):
    """A call from the REPL to one of the user's host tools (``--host-tools``)."""

    type: Required[Literal["host_tool"]]  # type: ignore[misc]  # a TypedDict narrows no field
    turn: int
    """The turn whose cell made the call."""
    call_id: str
    """``AGENT/tTURN/hN``: a resumed run answers the same call from this record."""
    name: str
    """The tool."""
    arguments: dict[str, Any]
    """``{"args": [...], "kwargs": {...}}`` as the REPL sent them (JSON)."""
    result: Any
    """What the tool returned (JSON); None when it failed."""
    result_chars: int
    """Characters of the result's JSON."""
    seconds: float
    """Seconds the call took."""
    error: str | None
    """Why the call failed (raised in the REPL as ``ToolError``); None when it succeeded."""


class Resumed(Event, total=False):
    """``dealroom resume`` continued the run from here."""

    type: Required[Literal["resumed"]]  # type: ignore[misc]  # a TypedDict narrows no field
    previous_events: int
    """Events the run held before this one."""


EVENT_TYPES: dict[str, type] = {
    "run_start": RunStart,
    "run_end": RunEnd,
    "model_call": ModelCall,
    "compaction": Compaction,
    "sandbox": SandboxStarted,
    "cell": Cell,
    "wave": Wave,
    "child_start": ChildStart,
    "child_end": ChildEnd,
    "memo": MemoChanged,
    "tool": Tool,
    "host_tool": HostTool,
    "resumed": Resumed,
}
"""Event type → its record."""

RECORD_CONFIG = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)
"""How the run folder's records validate: fields they do not name are kept, those they name
have their type (``"3"`` is no integer, ``true`` no number)."""
for _record in (Event, *EVENT_TYPES.values()):
    with_config(RECORD_CONFIG)(_record)


def _event_tag(event: Any) -> str:
    """The record an event validates as: its type's, or :class:`Event` for a type this
    dealroom does not know."""
    kind = event.get("type") if isinstance(event, dict) else None
    return kind if isinstance(kind, str) and kind in EVENT_TYPES else "event"


TrajectoryEvent = Annotated[
    Annotated[RunStart, Tag("run_start")] | Annotated[RunEnd, Tag("run_end")]
    | Annotated[ModelCall, Tag("model_call")] | Annotated[Compaction, Tag("compaction")]
    | Annotated[SandboxStarted, Tag("sandbox")] | Annotated[Cell, Tag("cell")]
    | Annotated[Wave, Tag("wave")] | Annotated[ChildStart, Tag("child_start")]
    | Annotated[ChildEnd, Tag("child_end")] | Annotated[MemoChanged, Tag("memo")]
    | Annotated[Tool, Tag("tool")] | Annotated[HostTool, Tag("host_tool")]
    | Annotated[Resumed, Tag("resumed")]
    | Annotated[Event, Tag("event")],
    Discriminator(_event_tag),
]
"""One line of ``trajectory.jsonl``: the record of its ``type`` (:data:`EVENT_TYPES`),
chosen by that field; ``TypeAdapter(TrajectoryEvent)`` validates one."""


def event_fields(type: str) -> tuple[str, ...]:
    """The fields of an event type beyond those of :class:`Event`.

    >>> event_fields("resumed")
    ('previous_events',)
    """
    return tuple(k for k in EVENT_TYPES[type].__annotations__ if k not in Event.__annotations__)


OPTIONAL_ON_WRITE: dict[str, tuple[str, ...]] = {"run_end": ("ended",),
                                                  "run_start": ("counts_source", "warnings",
                                                                "room_digest"),
                                                  "model_call": ("parsed",)}
"""Fields a writer may leave out, by event type: a harness of its own that never degrades
writes ``run_end`` without ``ended`` (readers take ``status`` then); one with no served model
writes ``run_start`` without ``counts_source`` and ``warnings`` (and ``room_digest``, which
only ``dealroom ask`` reads); a ``model_call`` made without a schema has no ``parsed``."""

_WRITERS: dict[str, tuple[Record[Any], tuple[str, ...], str]] = {}
"""Event type → its record's check, the fields a write needs and its fields in words, built
on first use."""


def check_written(record: dict[str, Any]) -> None:
    """Raise ValueError unless ``record`` is a whole event of a known type as this dealroom
    writes it: every field of its type present, no field its type does not name, each of its
    type (no coercion). Reading stays lenient (older folders lack fields); writing does not.

    >>> check_written({"seq": 0, "t": 0.0, "type": "resumed", "agent": "root", "depth": 0,
    ...                "previous_events": "3"})
    Traceback (most recent call last):
    ...
    ValueError: a 'resumed' event written with previous_events '3', not an integer
    """
    kind = record.get("type")
    if kind not in EVENT_TYPES:
        raise ValueError(f"an event of type {kind!r} written: the types are "
                         f"{', '.join(EVENT_TYPES)} (add a record to EVENT_TYPES first)")
    if kind not in _WRITERS:
        optional = OPTIONAL_ON_WRITE.get(kind, ())
        _WRITERS[kind] = (Record(EVENT_TYPES[kind]), tuple(
            k for k in EVENT_TYPES[kind].__annotations__ if k not in optional),
            f"its fields are {', '.join(event_fields(kind))}")
    check, required, fields = _WRITERS[kind]
    check.check_written(record, f"a {kind!r} event", required, keys=fields)
