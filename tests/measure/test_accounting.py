"""Accounting sums that match the trajectory, pricing, root share."""

from __future__ import annotations

import math

import pytest

from dealroom.measure import account, price_usage, root_share
from dealroom.types import Usage

PRICES = {
    "big": {"price_input": 3.0, "price_cached_input": 0.3, "price_output": 15.0},
    "small": {"price_input": 0.2, "price_output": 0.8},
}


def _call(role: str, model: str, depth: int, usage: dict, **extra) -> dict:
    return {
        "type": "model_call",
        "role": role,
        "model": model,
        "depth": depth,
        "usage": usage,
        **extra,
    }


EVENTS = [
    {"type": "run_start"},
    _call(
        "root",
        "big",
        0,
        {"input_tokens": 10_000, "cached_input_tokens": 8_000, "output_tokens": 500},
    ),
    _call("sub", "small", 1, {"input_tokens": 100_000, "output_tokens": 2_000}),
    _call(
        "sub", "small", 1, {"input_tokens": 50_000, "output_tokens": 1_000, "cost_usd": 0.5}
    ),  # provider figure wins
    _call("child_root", "big", 1, {"input_tokens": 4_000, "output_tokens": 100}),
    _call("sub", "small", 2, {"input_tokens": 20_000, "output_tokens": 300}),
    _call("sub", "unknown-model", 1, {"input_tokens": 7, "output_tokens": 3}),
    _call("sub", "small", 1, None, error="timeout"),
    {"type": "cell", "usage": {"input_tokens": 999}},
]


def test_totals_are_the_sum_of_the_trajectory() -> None:
    acc = account(EVENTS, PRICES)
    calls = [e for e in EVENTS if e["type"] == "model_call"]
    for key in ("input_tokens", "cached_input_tokens", "output_tokens"):
        expected = sum((e["usage"] or {}).get(key, 0) for e in calls)
        assert acc["total"][key] == expected
        for table in ("by_role", "by_model", "by_depth"):
            assert sum(u[key] for u in acc[table].values()) == expected
    assert acc["total"]["calls"] == len(calls)
    assert acc["by_role"]["sub"]["calls"] == 5
    assert acc["by_depth"]["2"]["input_tokens"] == 20_000


def test_cost_uses_provider_figure_else_cache_aware_prices() -> None:
    acc = account(EVENTS, PRICES)
    root = (2_000 * 3.0 + 8_000 * 0.3 + 500 * 15.0) / 1e6
    sub1 = (100_000 * 0.2 + 2_000 * 0.8) / 1e6
    child = (4_000 * 3.0 + 100 * 15.0) / 1e6
    sub2 = (20_000 * 0.2 + 300 * 0.8) / 1e6
    assert acc["by_role"]["root"]["cost_usd"] == pytest.approx(root)
    assert acc["by_role"]["child_root"]["cost_usd"] == pytest.approx(child)
    assert acc["by_role"]["sub"]["cost_usd"] == pytest.approx(sub1 + 0.5 + sub2)
    assert acc["total"]["cost_usd"] == pytest.approx(root + sub1 + 0.5 + child + sub2)
    assert acc["unpriced_calls"] == 1  # the unknown model, never guessed


def test_root_share_excludes_nothing_but_the_judge() -> None:
    acc = account(EVENTS, PRICES)
    agents_in = 10_000 + 100_000 + 50_000 + 4_000 + 20_000 + 7
    agents_out = 500 + 2_000 + 1_000 + 100 + 300 + 3
    assert acc["root_share"]["input"] == pytest.approx(10_000 / agents_in)
    assert acc["root_share"]["output"] == pytest.approx(500 / agents_out)
    judged = root_share({"root": Usage(10, 0, 1), "judge": Usage(1000, 0, 1000)})
    assert judged == {"input": 1.0, "output": 1.0}


def test_root_share_undefined_without_tokens() -> None:
    share = root_share({})
    assert math.isnan(share["input"]) and math.isnan(share["output"])


def test_price_usage_refuses_without_a_price() -> None:
    assert price_usage(Usage(10, 0, 10), None) is None
    assert price_usage(Usage(10, 0, 10), {"price_input": 1.0}) is None
    assert price_usage(Usage(1_000_000, 0, 0), {"price_input": 1.0, "price_output": 2.0}) == 1.0
