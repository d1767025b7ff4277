"""Settings of the RLM harness, validated when built."""

from __future__ import annotations

from dataclasses import dataclass

from dealroom._util.checks import check_limits
from dealroom.errors import ConfigError
from dealroom.harness.rlm._memo import MEMO_LIMIT
from dealroom.models import HISTORY_POLICIES
from dealroom.types import Budget


@dataclass
class RLMSettings:
    """How an RLM episode runs. Every field is a CLI flag of ``dealroom run``."""

    depth: int = 1
    """1: sub-agents are plain completions; 2 or more: ``rlm()`` starts child agents."""
    max_turns: int = 30
    """Root turns (each one model reply and its code cell); children inherit it by default."""
    max_tokens: int | None = None
    """Tokens over every model call of the episode, children included."""
    max_cost_usd: float | None = None
    """Dollars over every model call of the episode, children included."""
    max_seconds: float | None = None
    """Wall-clock seconds for the episode."""
    cell_timeout: float = 120.0
    """Seconds one REPL cell may run before the worker is killed and rebuilt."""
    output_limit: int = 4000
    """Characters of printed output the root sees per cell (head and tail kept)."""
    sub_max_output: int = 512
    """Completion tokens a sub-agent may write per call."""
    slice_tokens: int | None = None
    """Most tokens of room text the root should put in one sub-call (``llm.context_tokens`` in
    the REPL); default: all that the sub-agent's context window leaves room for."""
    temperature: float = 0.0
    """Sampling temperature of the root and sub-agents."""
    budget_visible: bool = True
    """Tell the root its turn budget ("Turn k of T", and ``budget``'s turns left); false: only
    "Turn k" (the truncation setting of Pass@(K,T))."""
    max_errors: int = 8
    """End the episode (status ``errors``) after this many root turns in a row that ran no
    code or raised an error; 0: never."""
    compact_at: float = 0.85
    """Compact the root's history (older turns replaced by a summary it writes) before its
    prompt passes this share of its context window less the reply's reserve; 0: never
    (``--compact off``)."""
    memo_limit: int = MEMO_LIMIT
    """Characters the root's memo (with its deliverables' own texts) may hold; a write past
    it fails in the REPL and changes nothing (default 10 MiB)."""
    reasoning_history: str = "drop"
    """What the root's history keeps of its earlier replies' reasoning: ``drop`` (the answer
    alone, what Qwen3's and GLM's chat templates do) or ``keep`` (the whole reply)."""

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ConfigError("depth must be at least 1 (1: sub-agents are plain completions)")
        if self.max_turns < 1:
            raise ConfigError("max_turns must be at least 1")
        if not 0 < self.cell_timeout <= 3600:
            raise ConfigError("cell_timeout must be between 0 and 3600 seconds")
        if self.output_limit < 200:
            raise ConfigError("output_limit below 200 characters leaves the root blind")
        if self.slice_tokens is not None and self.slice_tokens < 64:
            raise ConfigError("slice_tokens must be at least 64 (or omitted)")
        if self.sub_max_output < 16:
            raise ConfigError("sub_max_output must be at least 16 tokens")
        if isinstance(self.memo_limit, bool) or not isinstance(self.memo_limit, int) \
                or self.memo_limit < 1000:
            raise ConfigError(f"memo_limit must be an integer of at least 1000 characters, "
                              f"not {self.memo_limit!r}")
        if self.max_errors < 0:
            raise ConfigError("max_errors must be 0 (never) or more")
        if not 0 <= self.compact_at < 1:
            raise ConfigError("compact_at must be a share of the window, 0 < X < 1 (0: off)")
        if self.reasoning_history not in HISTORY_POLICIES:
            raise ConfigError(f"reasoning_history must be one of {', '.join(HISTORY_POLICIES)}"
                              f", not {self.reasoning_history!r}")
        check_limits(self)

    def budget(self) -> Budget:
        return Budget(self.max_turns, self.max_tokens, self.max_cost_usd, self.max_seconds)
