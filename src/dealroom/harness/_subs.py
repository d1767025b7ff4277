"""Several sub-agent models by name: ``--sub fast=MODEL --sub strong=MODEL``.

A run has one or more sub-agent models, each under a name; the first is the default (a bare
``--sub MODEL`` is the one model ``default``). The harnesses get them as one client,
:class:`SubModels`, that stands for the default (a harness that knows one sub-agent uses it
unchanged) and lists the others under ``clients``::

    --sub fast=oracle:recall=0.6 --sub strong=qwen@http://...   →  {"fast": ..., "strong": ...}
    --sub local                                                 →  "local" (named ``default``)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError

if TYPE_CHECKING:
    from dealroom.models import ModelClient

DEFAULT = "default"
"""The name of a run's one sub-agent model when it is given bare (``--sub MODEL``)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,31}")


def sub_specs(values: Sequence[str] | str | None) -> str | dict[str, str] | None:
    """The ``--sub`` values as ``run_agent``'s ``sub``: one bare spec, or name → spec.

    >>> sub_specs(["local"])
    'local'
    >>> sub_specs(["fast=oracle:recall=0.5", "strong=oracle"])
    {'fast': 'oracle:recall=0.5', 'strong': 'oracle'}
    """
    if values is None or isinstance(values, str):
        return values
    values = list(values)
    named = [_split(v) for v in values]
    if not values:
        return None
    if all(n is None for n in named):
        if len(values) > 1:
            raise ConfigError(f"several --sub models ({', '.join(values)}) need names: give "
                              "--sub NAME=MODEL for each, e.g. --sub fast=A --sub strong=B")
        return values[0]
    if any(n is None for n in named):
        bare = next(v for v, n in zip(values, named, strict=True) if n is None)
        raise ConfigError(f"--sub {bare} has no name beside named ones: write --sub NAME={bare}")
    out: dict[str, str] = {}
    for name, spec in (n for n in named if n is not None):
        if name in out:
            raise ConfigError(f"--sub {name}= is given twice: each name once")
        out[name] = spec
    return out


def subs_label(value: object) -> object:
    """A spec file's named sub-agents (a table ``{fast = "A", strong = "B"}``) as one label,
    ``"fast=A strong=B"`` (what sweeps and GRPO record and group by; :func:`sub_specs` of its
    words gives ``run_agent``'s ``sub``); any other value as it is.

    >>> subs_label({"fast": "oracle:recall=0.5", "strong": "oracle"})
    'fast=oracle:recall=0.5 strong=oracle'
    """
    if not isinstance(value, Mapping):
        return value
    if not value:
        raise ConfigError("a table of sub-agent models is empty: give NAME = \"MODEL\" pairs")
    check_names(list(value))
    for name, spec in value.items():
        if not isinstance(spec, str) or not spec.strip() or " " in spec.strip():
            raise ConfigError(f"sub-agent {name} = {spec!r}: give a model spec (a string "
                              "without spaces)")
    return " ".join(f"{name}={str(spec).strip()}" for name, spec in value.items())


def label_specs(label: str) -> list[str]:
    """The model specs of a sub-agent label (one bare spec, or each ``NAME=SPEC``'s spec).

    >>> label_specs("fast=oracle:recall=0.5 strong=oracle"), label_specs("local")
    (['oracle:recall=0.5', 'oracle'], ['local'])
    """
    subs = sub_specs(label.split())
    return list(subs.values()) if isinstance(subs, dict) else [str(subs)]


def _split(value: str) -> tuple[str, str] | None:
    """``(name, spec)`` of ``NAME=SPEC``; None for a bare spec (``oracle:recall=0.5``,
    ``m@http://h/v1#price_input=1`` have no bare name before their first ``=``)."""
    name, eq, spec = value.partition("=")
    if not eq or not _NAME.fullmatch(name.strip()):
        return None
    if not spec.strip():
        raise ConfigError(f"--sub {value}: give the model after '=' (--sub {name}=MODEL)")
    return name.strip(), spec.strip()


def check_names(names: Sequence[str]) -> None:
    """Refuse a sub-agent name that is not a short identifier."""
    for name in names:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigError(f"sub-agent name {name!r}: use letters, digits, _ or - "
                              "(at most 32, not starting with a digit), e.g. fast, strong")


class SubModels:
    """The run's sub-agent clients by name, standing for the default (the first).

    Attribute reads go to the default client, so harnesses and helpers that know one
    sub-agent model see it; the RLM harness routes by name through :attr:`clients`."""

    def __init__(self, clients: Mapping[str, ModelClient]) -> None:
        if not clients:
            raise ConfigError("a run's sub-agent models need at least one model")
        check_names(list(clients))
        self.clients: dict[str, ModelClient] = dict(clients)
        self.default_name = next(iter(self.clients))

    @property
    def default(self) -> ModelClient:
        return self.clients[self.default_name]

    @property
    def named(self) -> bool:
        """Whether the run names its models (more than the one ``default``)."""
        return list(self.clients) != [DEFAULT]

    def specs(self) -> dict[str, str]:
        """Name → the spec name of its model."""
        return {name: client.name for name, client in self.clients.items()}

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr in ("clients", "default_name"):
            raise AttributeError(attr)
        return getattr(self.default, attr)

    async def chat(self, *args: Any, **kwargs: Any) -> Any:
        return await self.default.chat(*args, **kwargs)

    async def aclose(self) -> None:
        for client in self.clients.values():
            await client.aclose()


def sub_models(sub: Any) -> SubModels | None:
    """``sub`` as :class:`SubModels` (None without one)."""
    if sub is None or isinstance(sub, SubModels):
        return sub
    return SubModels({DEFAULT: sub})


def named_specs(sub: Any) -> dict[str, str] | None:
    """``config.json`` ``subs``: name → spec name when the run names its sub-agents."""
    if isinstance(sub, SubModels) and sub.named:
        return sub.specs()
    return None


def sub_roles(sub: Any) -> dict[str, ModelClient]:
    """``config.json`` ``models`` roles of the sub-agents: ``sub`` (the default) and
    ``sub.NAME`` for each named one."""
    subs = sub_models(sub)
    if subs is None:
        return {}
    roles = {"sub": subs.default}
    if subs.named:
        roles.update({f"sub.{name}": client for name, client in subs.clients.items()})
    return roles


def cost_caps(values: Sequence[str] | None) -> dict[str, float] | None:
    """``--max-cost-per-model NAME=USD`` values as ``max_cost_per_model``.

    >>> cost_caps(["strong=5", "fast=0.5"])
    {'strong': 5.0, 'fast': 0.5}
    """
    if not values:
        return None
    out: dict[str, float] = {}
    for value in values:
        name, eq, amount = value.partition("=")
        try:
            out[name.strip()] = float(amount) if eq and name.strip() else float("nan")
        except ValueError:
            out[name.strip()] = float("nan")
        if not out[name.strip()] >= 0 or name.strip() in list(out)[:-1]:
            raise ConfigError(f"--max-cost-per-model {value!r}: write NAME=USD once per named "
                              "sub-agent model, e.g. --max-cost-per-model strong=5")
    return out
