"""Token and cost accounting by role, model and depth, from trajectory ``model_call`` events.

Tokens come from the providers' usage reports as recorded in each event's ``usage``
(:class:`dealroom.types.Usage`). Cost is the recorded ``cost_usd`` when it is positive (the
provider's figure, or the models layer's own pricing); otherwise it is priced here from the
run's ``config.json`` price table (``models``: spec → prices in US dollars per million
tokens), cache-aware, with :meth:`dealroom.models.Prices.cost`::

    cost = (input - cached) * input_price + cached * cached_input_price + output * output_price

A call that has tokens but neither a recorded cost nor a price is counted in
``unpriced_calls`` instead of being priced at a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from dealroom.measure._behaviour import ratio
from dealroom.models import Prices
from dealroom.runs import RootShare, UsageRecord, UsageSummary
from dealroom.types import Usage

AGENT_ROLES = ("root", "sub", "child_root")
"""Roles whose tokens make up a run's agent total (the judge is accounted apart)."""


def prices_of(entry: Mapping[str, float] | None) -> Prices | None:
    """The :class:`~dealroom.models.Prices` of a price-table entry, or None when it has none.

    Entries are ``Prices`` as a dict (``input``, ``cached_input``, ``output``, as the harnesses
    write ``config.json``) or models-file style (``price_input``, ``price_cached_input``,
    ``price_output``). Cached input without its own price is charged as input.
    """
    if not entry:
        return None
    get = {k.removeprefix("price_"): v for k, v in entry.items()}
    if "input" not in get or "output" not in get:
        return None
    return Prices(
        float(get["input"]), float(get.get("cached_input", get["input"])), float(get["output"])
    )


def price_usage(usage: Usage, entry: Mapping[str, float] | None) -> float | None:
    """Cache-aware cost of ``usage`` under a price-table entry, or None if it is unpriced.

    >>> price_usage(Usage(1_000_000, 400_000, 100_000), {"price_input": 2.0,
    ...     "price_cached_input": 0.5, "price_output": 8.0})
    2.2
    """
    prices = prices_of(entry)
    if prices is None:
        return None
    cached = min(usage.cached_input_tokens, usage.input_tokens)
    return prices.cost(usage.input_tokens, cached, usage.output_tokens)


def call_usage(event: dict[str, Any],
               prices: Mapping[str, Mapping[str, float]]) -> tuple[Usage, bool]:
    """The usage of one ``model_call`` event with its cost filled in; and whether it is priced."""
    usage = Usage.from_dict(event.get("usage") or {})
    usage.calls = 1
    if usage.cost_usd > 0 or not usage.total_tokens:
        return usage, True
    cost = price_usage(usage, prices.get(event.get("model", "")))
    usage.cost_usd = cost or 0.0
    return usage, cost is not None


def account(
    events: Iterable[dict[str, Any]], prices: Mapping[str, Mapping[str, float]] | None = None
) -> UsageSummary:
    """Tokens and cost of every ``model_call`` in ``events``, in total and broken down.

    Returns ``{total, by_role, by_model, by_depth, unpriced_calls, usage_estimated_calls,
    counts_source, root_share}`` where each
    breakdown maps a key to ``Usage.to_dict()`` and ``root_share`` is
    ``{input, output}`` (see :func:`root_share`).
    """
    prices = prices or {}
    total = Usage()
    by_role: dict[str, Usage] = {}
    by_model: dict[str, Usage] = {}
    by_depth: dict[str, Usage] = {}
    unpriced = 0
    sources: dict[str, int] = {}
    for event in events:
        if event.get("type") not in ("model_call", "compaction"):  # a summary call counts
            continue
        usage, priced = call_usage(event, prices)
        unpriced += not priced
        source = usage_source(event)
        if source is not None:
            sources[source] = sources.get(source, 0) + 1
        total += usage
        for table, key in (
            (by_role, event.get("role", "")),
            (by_model, event.get("model", "")),
            (by_depth, str(event.get("depth", 0))),
        ):
            table[key] = table.get(key, Usage()) + usage
    return {
        "total": cast(UsageRecord, total.to_dict()),
        "by_role": _dicts(by_role),
        "by_model": _dicts(by_model),
        "by_depth": _dicts(by_depth),
        "unpriced_calls": unpriced,
        "usage_estimated_calls": sources.get("estimate", 0),
        "counts_source": dict(sorted(sources.items())),
        "root_share": root_share(by_role),
    }


def usage_source(event: dict[str, Any]) -> str | None:
    """Where a call's usage came from: ``usage`` (the provider), a server's own count
    (``tokenize``, ``llama.cpp``, ``extras``) or ``estimate``; None for a call that failed
    or a record older than the field."""
    provider = event.get("provider") or {}
    if event.get("error") is not None or "usage_estimated" not in provider:
        return None
    if provider.get("usage_source"):
        return str(provider["usage_source"])
    return "estimate" if provider["usage_estimated"] else "usage"


def root_share(by_role: dict[str, Usage]) -> RootShare:
    """The root's share of the agents' input and output tokens (NaN when there are none).

    The source reports the root taking 3.8% of input and 1.1% of output tokens with depth-1
    sub-agents. Child roots (depth 2) count with the agents, not with the root.

    >>> root_share({"root": Usage(40, 0, 10), "sub": Usage(960, 0, 890)})
    {'input': 0.04, 'output': 0.011111111111111112}
    """
    agents = sum((by_role.get(r, Usage()) for r in AGENT_ROLES), Usage())
    root = by_role.get("root", Usage())
    return {
        "input": ratio(root.input_tokens, agents.input_tokens),
        "output": ratio(root.output_tokens, agents.output_tokens),
    }


def _dicts(table: dict[str, Usage]) -> dict[str, UsageRecord]:
    return {key: cast(UsageRecord, table[key].to_dict()) for key in sorted(table)}
