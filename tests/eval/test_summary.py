"""``summarize_runs`` and ``dealroom summary`` on hand-written run folders."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.eval import summarize_runs


def _room(path: Path, tokens: int) -> Path:
    path.mkdir(parents=True)
    doc = {
        "id": "D00001",
        "path": "documents/a.txt",
        "title": "a",
        "category": "c",
        "folder": "c/f",
        "format": "txt",
        "pages": 1,
        "tokens": tokens,
        "sha256": "",
        "bytes": 0,
    }
    (path / "room.json").write_text(json.dumps({"name": path.name, "documents": [doc]}))
    return path


def _call(role: str, inp: int, out: int, cost: float) -> dict:
    return {
        "type": "model_call",
        "role": role,
        "model": "m",
        "agent": "root",
        "depth": 0,
        "turn": 1,
        "usage": {"input_tokens": inp, "output_tokens": out, "cost_usd": cost},
    }


def _run(path: Path, room: Path, calls: list[dict], scores: dict | None = None) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"room": str(room), "harness": "rlm"}))
    events = [{"type": "run_start"}, *calls, {"type": "run_end", "status": "submitted"}]
    lines = [json.dumps({"seq": i, "t": float(i), **e}) for i, e in enumerate(events)]
    (path / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    if scores is not None:
        (path / "scores.json").write_text(json.dumps(scores))
    return path


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    small, big = _room(tmp_path / "small", 1_000), _room(tmp_path / "big", 9_000)
    a = _run(
        tmp_path / "runs" / "a",
        small,
        [_call("root", 100, 10, 0.5), _call("sub", 900, 90, 1.0)],
        {
            "pass_rate": 0.5,
            "n_criteria": 4,
            "n_passed": 2,
            "n_errors": 0,
            "judge": {"name": "llm"},
            "usage": {"cost_usd": 0.25, "input_tokens": 40, "output_tokens": 4},
        },
    )
    b = _run(
        tmp_path / "runs" / "b",
        big,
        [_call("root", 300, 30, 1.0)] + [_call("sub", 100, 10, 0.1)] * 7,
        {
            "pass_rate": 1.0,
            "n_criteria": 4,
            "n_passed": 4,
            "n_errors": 0,
            "judge": {"name": "reference"},
        },
    )
    c = _run(tmp_path / "runs" / "c", small, [_call("root", 50, 5, 0.0)])
    (c / "metrics.json").write_text(
        json.dumps(
            {  # a stored metrics.json is taken as written
                "status": "max_turns",
                "usage": {
                    "total": {"input_tokens": 50, "output_tokens": 5, "cost_usd": 0.0},
                    "by_role": {"root": {"input_tokens": 50, "output_tokens": 5}},
                    "root_share": {"input": 1.0, "output": 1.0},
                },
                "behaviour": {"sub_calls": 0, "turns": 3},
                "coverage": {"coverage": 0.1, "tokens_total": 1_000},
            }
        )
    )
    return [a, b, c]


def test_rows_and_totals(runs: list[Path]) -> None:
    result = summarize_runs(runs)
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


def test_cli_summary_json_and_table(runs: list[Path]) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["summary", str(runs[0].parent), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert [r["run"] for r in data["runs"]] == ["a", "b", "c"]
    assert data["totals"]["coverage_mean"] == pytest.approx(0.1)
    table = runner.invoke(app, ["summary", *map(str, runs)])
    assert table.exit_code == 0, table.output
    assert f"Pearson r = {np_corr([1, 7, 0], [1_000, 9_000, 1_000]):.2f}" in table.output
    assert "judge cost $0.25" in table.output


def test_single_run_correlation_is_undefined(runs: list[Path]) -> None:
    totals = summarize_runs(runs[:1])["totals"]
    assert totals["corr_sub_calls_room_tokens"] is None  # NaN, written as null
