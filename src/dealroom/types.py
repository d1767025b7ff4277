"""Records shared across subpackages: token usage and budgets."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

ROLES = ("root", "sub", "child_root", "judge")
"""Who made a model call: the root agent, a depth-1 sub-agent, a child RLM's root, the judge."""


@dataclass
class Usage:
    """Tokens and cost of one or more model calls."""

    input_tokens: int = 0
    """Prompt tokens, including cached ones."""
    cached_input_tokens: int = 0
    """The part of ``input_tokens`` served from the provider's prompt cache."""
    output_tokens: int = 0
    """Completion tokens."""
    cost_usd: float = 0.0
    """Cost in US dollars: the provider's figure when reported, else the models file's prices."""
    calls: int = 0
    """Number of model calls summed here."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
            self.calls + other.calls,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "calls": self.calls,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(**{k: data.get(k, 0) for k in cls.__dataclass_fields__})


@dataclass
class Budget:
    """Limits for one episode; ``None`` means unlimited."""

    max_turns: int | None = 50
    """Root turns (one model reply plus its code cell each)."""
    max_tokens: int | None = None
    """Input plus output tokens over every model call of the episode, children included."""
    max_cost_usd: float | None = None
    """Dollars over every model call of the episode, children included."""
    max_seconds: float | None = None
    """Wall-clock seconds for the episode."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
