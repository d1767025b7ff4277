"""Where a run's tokens and dollars went: per named sub-agent model, per child (its subtree),
and the split into the root's own calls, each sub-agent model's calls made by the root, and
the children.

The split is a partition of ``usage.total``::

    root            the root's own calls (its replies and compactions; a REPL session's)
    sub.NAME        sub-calls the root made to the model named NAME (``default`` for one model)
    children        every call made in a child's subtree (its root turns, its sub-calls, its
                    own children)

A child's entry in ``by_child`` counts its whole subtree, so a parent's figures include its
children's. Calls are priced as :func:`dealroom.measure.account` prices them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from dealroom.measure._accounting import call_usage
from dealroom.runs import UsageRecord, UsageSummary
from dealroom.types import Usage

ROOT = "root"


def sub_names(config: Mapping[str, Any]) -> dict[str, str]:
    """Spec name → sub-agent name: ``config.json`` ``subs``, or ``default`` for its one ``sub``
    (the first name of a spec wins)."""
    named = config.get("subs") or ({"default": config["sub"]} if config.get("sub") else {})
    out: dict[str, str] = {}
    for name, spec in named.items():
        out.setdefault(str(spec), str(name))
    return out


def cost_split(events: Iterable[dict[str, Any]], config: Mapping[str, Any],
               prices: Mapping[str, Mapping[str, float]] | None = None) -> UsageSummary:
    """``{by_sub, by_child, split, root_cost_share}`` of a run's events (see the module).

    ``by_sub``: sub-agent name → usage of the calls to it (sub-calls, and child roots running
    on it), any depth; ``by_child``: child agent id → usage of its subtree;
    ``root_cost_share``: the root's own calls' dollars over all (None when nothing cost).
    """
    prices = prices or {}
    names = sub_names(config)
    by_sub: dict[str, Usage] = {}
    by_child: dict[str, Usage] = {}
    split: dict[str, Usage] = {}
    children: list[str] = []
    total = Usage()
    for event in events:
        kind = event.get("type")
        if kind == "child_start":
            children.append(str(event.get("agent")))
        if kind not in ("model_call", "compaction"):
            continue
        usage, _ = call_usage(event, prices)
        total += usage
        agent, role = str(event.get("agent", ROOT)), event.get("role")
        if role in ("sub", "child_root"):
            name = names.get(str(event.get("model")), str(event.get("model")))
            by_sub[name] = by_sub.get(name, Usage()) + usage
        for child in _ancestors(agent):
            by_child[child] = by_child.get(child, Usage()) + usage
        part = "children" if "/" in agent else ROOT if role != "sub" else \
            f"sub.{names.get(str(event.get('model')), str(event.get('model')))}"
        split[part] = split.get(part, Usage()) + usage
    for child in children:  # a child that made no call is listed with zeros
        by_child.setdefault(child, Usage())
    root = split.get(ROOT, Usage())
    return {
        "by_sub": _records(by_sub),
        "by_child": _records(by_child),
        "split": _records(split),
        "root_cost_share": root.cost_usd / total.cost_usd if total.cost_usd > 0 else None,
    }


def _ancestors(agent: str) -> list[str]:
    """The child ids an event of ``agent`` counts towards: itself and every child above it.

    >>> _ancestors("root/c3-1/c2-0")
    ['root/c3-1', 'root/c3-1/c2-0']
    """
    parts = agent.split("/")
    return ["/".join(parts[:i]) for i in range(2, len(parts) + 1)]


def _records(table: dict[str, Usage]) -> dict[str, UsageRecord]:
    return {key: cast(UsageRecord, table[key].to_dict()) for key in sorted(table)}
