"""``summarize_runs`` on hand-written run folders (built in tests/conftest.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dealroom.eval import summarize_runs


def test_rows_and_totals(summary_runs: list[Path]) -> None:
    result = summarize_runs(summary_runs)
    a, b, c = result["runs"]
    assert a["pass_rate"] == 0.5 and a["cost_usd"] == pytest.approx(1.5)
    assert a["input_tokens"] == 1_000 and a["root_share_input"] == pytest.approx(0.1)
    assert a["sub_calls"] == 1 and a["turns"] == 1 and a["room_tokens"] == 1_000
    assert a["judge_cost_usd"] == 0.25 and a["status"] == "submitted"
    assert a["judge_input_tokens"] == 40 and a["judge_output_tokens"] == 4
    assert b["sub_calls"] == 7 and b["room_tokens"] == 9_000 and b["coverage"] is None
    assert c["status"] == "max_turns" and c["turns"] == 3 and c["pass_rate"] is None
    t = result["totals"]
    assert t["runs"] == 3 and t["scored_runs"] == 2
    assert t["pass_rate_mean"] == pytest.approx(0.75)
    assert t["coverage_mean"] == pytest.approx(0.1)
    assert t["cost_usd"] == pytest.approx(1.5 + 1.7)
    assert t["input_tokens"] == 1_000 + 1_000 + 50
    assert t["root_share_input"] == pytest.approx((100 + 300 + 50) / 2_050)
    assert t["sub_calls"] == 8
    assert t["judge_input_tokens"] == 40 and t["judge_cost_usd"] == pytest.approx(0.25)
    expected = np_corr([1, 7, 0], [1_000, 9_000, 1_000])
    assert t["corr_sub_calls_room_tokens"] == pytest.approx(expected)


def np_corr(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    vx = sum((x - mx) ** 2 for x in xs)
    vy = sum((y - my) ** 2 for y in ys)
    return cov / math.sqrt(vx * vy)


def test_single_run_correlation_is_undefined(summary_runs: list[Path]) -> None:
    totals = summarize_runs(summary_runs[:1])["totals"]
    assert totals["corr_sub_calls_room_tokens"] is None  # NaN, written as null
