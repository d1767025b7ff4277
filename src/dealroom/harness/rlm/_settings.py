"""Settings of the RLM harness, validated when built (a schema dataclass: a bad value is an
InputError naming the key, what is allowed and what was given)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from dealroom._util.checks import Limit, Temperature, TokenLimit
from dealroom._util.schema import schema_dataclass
from dealroom.harness.rlm._memo import MEMO_LIMIT
from dealroom.types import Budget


@schema_dataclass
class RLMSettings:
    """How an RLM episode runs. Every field is a CLI flag of ``dealroom run``."""

    depth: Annotated[int, Field(ge=1, json_schema_extra={
        "why": "with 1, sub-agents are plain completions"})] = 1
    """1: sub-agents are plain completions; 2 or more: ``rlm()`` starts child agents."""
    max_turns: Annotated[int, Field(ge=1)] = 30
    """Root turns (each one model reply and its code cell); children inherit it by default."""
    max_tokens: TokenLimit | None = None
    """Tokens over every model call of the episode, children included."""
    max_cost_usd: Limit | None = None
    """Dollars over every model call of the episode, children included."""
    max_seconds: Limit | None = None
    """Wall-clock seconds for the episode."""
    cell_timeout: Annotated[float, Field(gt=0, le=3600, json_schema_extra={"why": "seconds"})] \
        = 120.0
    """Seconds one REPL cell may run before the worker is killed and rebuilt."""
    output_limit: Annotated[int, Field(ge=200, json_schema_extra={
        "why": "characters; fewer leave the root blind"})] = 4000
    """Characters of printed output the root sees per cell (head and tail kept)."""
    sub_max_output: Annotated[int, Field(ge=16, json_schema_extra={"why": "tokens"})] = 512
    """Completion tokens a sub-agent may write per call."""
    slice_tokens: Annotated[int, Field(ge=64, json_schema_extra={
        "why": "tokens, or omitted"})] | None = None
    """Most tokens of room text the root should put in one sub-call (``llm.context_tokens`` in
    the REPL); default: all that the sub-agent's context window leaves room for."""
    max_cost_per_model: dict[str, Limit] | None = None
    """Dollars each named sub-agent model may cost in the episode (``{"strong": 5}``); a call
    past its model's cap fails in the REPL with the reason (``--max-cost`` holds over all)."""
    temperature: Temperature = 0.0
    """Sampling temperature of the root and sub-agents."""
    budget_visible: bool = True
    """Tell the root its turn budget ("Turn k of T", and ``budget``'s turns left); false: only
    "Turn k" (the truncation setting of Pass@(K,T))."""
    max_errors: Annotated[int, Field(ge=0, json_schema_extra={"why": "0: never"})] = 8
    """End the episode (status ``errors``) after this many root turns in a row that ran no
    code or raised an error; 0: never."""
    compact_at: Annotated[float, Field(ge=0, lt=1, json_schema_extra={
        "why": "a share of the context window; 0: off"})] = 0.85
    """Compact the root's history (older turns replaced by a summary it writes) before its
    prompt passes this share of its context window less the reply's reserve; 0: never
    (``--compact off``)."""
    memo_limit: Annotated[int, Field(ge=1000, json_schema_extra={"why": "characters"})] \
        = MEMO_LIMIT
    """Characters the root's memo (with its deliverables' own texts) may hold; a write past
    it fails in the REPL and changes nothing (default 10 MiB)."""
    reasoning_history: Literal["drop", "keep"] = "drop"
    """What the root's history keeps of its earlier replies' reasoning: ``drop`` (the answer
    alone, what Qwen3's and GLM's chat templates do) or ``keep`` (the whole reply)."""

    tools: list[str] = Field(default_factory=list)
    """Python files whose public functions the REPL holds, run inside the sandbox
    (``--tools``, repeatable)."""
    host_tools: list[str] = Field(default_factory=list)
    """Python files whose public functions run on the host, reached from the REPL with JSON
    arguments and results, each call recorded (``--host-tools``, repeatable)."""
    host_tool_timeout: Annotated[float, Field(gt=0, le=3600, json_schema_extra={
        "why": "seconds"})] = 60.0
    """Seconds one host tool call may take before it fails in the REPL."""
    max_host_tool_calls: Annotated[int, Field(ge=0)] = 1000
    """Host tool calls per run; past it a call fails in the REPL."""

    child_concurrency: Annotated[int, Field(ge=1, le=256, json_schema_extra={
        "why": "children at a time"})] = 4
    """Children of one ``rlm_batch([...])`` that run at a time (each its own REPL and
    sandbox); the rest start as these finish."""

    def budget(self) -> Budget:
        return Budget(self.max_turns, self.max_tokens, self.max_cost_usd, self.max_seconds)
