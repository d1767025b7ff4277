"""The run's sub-agent models by name, as the RLM engine routes to them.

Each named model (``--sub fast=A --sub strong=B``; a bare ``--sub A`` is ``default``) has its
own :class:`SubModel`: its window in its own tokens (:class:`SubWindow`, its own tokenizer),
its reply cap, the slice size the root is told, its hedge waves, and its cost cap
(``max_cost_per_model``). A call names its model (``llm(..., model="strong")``, a batch item's
``model`` key); without one it goes to its agent's default (the run's first, or the ``sub=``
a child was started with). An unknown name, or a model past its cost cap, fails that call
alone with a message that lists the names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError
from dealroom.harness._subs import sub_models
from dealroom.harness.rlm._subwindow import SubWindow
from dealroom.models import HedgeWave, schema_via

if TYPE_CHECKING:
    from dealroom.harness.rlm._settings import RLMSettings
    from dealroom.models import ModelClient
    from dealroom.types import Usage

SEND_WINDOW = 64
"""Sub-calls of one model read and sent at a time when its client names no limit."""
CHILD_SUBS = ', rlm(..., sub=NAME) and rlm_batch items with a "sub" key'
"""How the root's prompt tells a child's named model (depth > 1 only)."""
PROMPT_ROOM = 600
"""Tokens of a call's prompt and template the root's slice size leaves free."""


@dataclass
class SubModel:
    """One named sub-agent model and what the engine keeps about it."""

    name: str
    client: ModelClient
    window: SubWindow
    cap: float | None = None
    """Most dollars its calls may cost in the run (``max_cost_per_model``)."""
    spent: float = 0.0
    """Dollars its settled calls cost (a resumed run's earlier ones included)."""
    held: float = 0.0
    """Dollars reserved for its calls in flight."""
    promised: int = 0
    """Most words-v1 tokens of input a call was promised (``llm.models[name].slice_tokens``)."""
    hedges: dict[int, HedgeWave] = field(default_factory=dict)

    def max_output(self, settings: RLMSettings) -> int:
        """Completion tokens one call may ask of it."""
        return min(settings.sub_max_output, self.client.context_window // 4)

    def slice_tokens(self, settings: RLMSettings) -> int:
        """Tokens of text one call can carry: its window less the prompts and answer (the
        root is told this; the host then admits at least as much)."""
        admitted = self.window.context_tokens(self.max_output(settings))
        fits = max(64, admitted - PROMPT_ROOM)
        told = min(fits, settings.slice_tokens or fits)
        self.promised = max(self.promised, told + admitted - fits)
        return told

    def admitted_tokens(self, settings: RLMSettings) -> int:
        """Words-v1 tokens of input the host admits in one call."""
        return max(self.window.context_tokens(self.max_output(settings)), self.promised)

    @property
    def concurrency(self) -> int:
        spec = getattr(self.client, "spec", None)
        return max(1, getattr(spec, "concurrency", None) or SEND_WINDOW)

    def hedge(self, wave: int) -> HedgeWave:
        """The latencies this model's stragglers in ``wave`` are hedged against."""
        return self.hedges.setdefault(wave, HedgeWave())

    def refuse(self, cost: float) -> str | None:
        """Why a call whose worst case costs ``cost`` may not go (its cap); else hold it."""
        if self.cap is not None and self.spent + self.held + cost > self.cap + 1e-12:
            return (f"model {self.name!r} is at its cost cap: ${self.spent + self.held:.4f} "
                    f"spent or in flight of ${self.cap:g} (max_cost_per_model), and this call "
                    f"may cost up to ${cost:.4f}")
        self.held += cost
        return None

    def settle(self, held: float, usage: Usage) -> None:
        """A call that held ``held`` dollars ended having cost ``usage``."""
        self.held = max(0.0, self.held - held)
        self.spent += usage.cost_usd

    def describe(self, settings: RLMSettings, default: bool) -> dict[str, Any]:
        """What ``llm.models[name]`` tells the agent."""
        prices = self.client.prices
        return {"name": self.name, "model": self.client.name, "default": default,
                "context_window": self.client.context_window,
                "price_input": prices.input, "price_output": prices.output,
                "slice_tokens": self.slice_tokens(settings),
                "max_cost_usd": self.cap, "schema_via": schema_via(self.client)}


class SubPool:
    """Every sub-agent model of a run, the first the default."""

    def __init__(self, sub: Any, default_window: SubWindow | None = None,
                 caps: Mapping[str, float] | None = None) -> None:
        subs = sub_models(sub)
        self.models: dict[str, SubModel] = {}
        self.default = ""
        self.named = False
        if subs is None:
            if caps:
                raise ConfigError("max_cost_per_model needs sub-agent models: give --sub")
            return
        self.default, self.named = subs.default_name, subs.named
        for name, client in subs.clients.items():
            window = default_window if name == self.default and default_window else \
                SubWindow(client)
            self.models[name] = SubModel(name, client, window)
        for name, cap in (caps or {}).items():
            if name not in self.models:
                raise ConfigError(f"max_cost_per_model names {name!r}, which is not a sub-agent "
                                  f"model of this run (its models: {self.names()})")
            self.models[name].cap = float(cap)

    def names(self) -> str:
        return ", ".join(self.models)

    def get(self, name: Any, default: str | None = None) -> SubModel | str:
        """The model a call asked for (``None``: ``default``, else the run's), or why not."""
        if name is None:
            name = default or self.default
        model = self.models.get(name) if isinstance(name, str) else None
        if model is None:
            return (f"unknown model {name!r}: this run's sub-agent models are {self.names()} "
                    "(llm.models)")
        return model

    def used(self, names: Iterable[Any], default: str | None = None) -> list[SubModel]:
        """The distinct models that ``names`` (calls' ``model`` keys) reach, known ones only."""
        out: dict[str, SubModel] = {}
        for name in names:
            model = self.get(name, default)
            if isinstance(model, SubModel):
                out.setdefault(model.name, model)
        return list(out.values())

    def describe(self, settings: RLMSettings, default: str | None = None) -> dict[str, Any]:
        """``llm.models``: name → what the agent can know of it."""
        default = default or self.default
        return {name: m.describe(settings, name == default) for name, m in self.models.items()}

    def prompt_block(self, settings: RLMSettings, default: str | None = None) -> str:
        """The lines of the root's system prompt on its sub-agent models: none when the run
        has only the one ``default`` (its prompt is as it was)."""
        if not self.named:
            return ""
        default = default or self.default
        lines = [f"Sub-agent models: llm(..., model=NAME), llm_batch items with a \"model\" key"
                 f"{CHILD_SUBS if settings.depth > 1 else ''}; without one, "
                 f"{default}. llm.models has the details; an unknown name fails that call."]
        for name, info in self.describe(settings, default).items():
            cap = f", at most ${info['max_cost_usd']:g} in all" if info["max_cost_usd"] else ""
            lines.append(f"  {name:<10} ${info['price_input']:g} in / ${info['price_output']:g} "
                         f"out per 1M tokens; slices up to {info['slice_tokens']:,} tokens{cap}")
        return "\n".join(lines) + "\n"

    def carry(self, previous: Iterable[dict[str, Any]]) -> None:
        """Count what an earlier attempt's sub-calls cost against each model's cap (its
        ``model_call`` events, matched by spec name; the first name of a spec wins)."""
        by_spec: dict[str, SubModel] = {}
        for model in self.models.values():
            by_spec.setdefault(model.client.name, model)
        for event in previous:
            found = by_spec.get(str(event.get("model")))
            if event.get("type") == "model_call" and event.get("role") == "sub" and found:
                found.spent += float((event.get("usage") or {}).get("cost_usd") or 0.0)

    def limit(self, models: list[SubModel]) -> int:
        """Calls of one batch read and sent at a time: the sum of its models' limits (each
        client holds its own endpoint to its own)."""
        return max(1, sum(m.concurrency for m in models))
