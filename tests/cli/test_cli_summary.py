"""``dealroom summary`` over run folders and folders of them."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dealroom.cli import app


def np_corr(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    vx = sum((x - mx) ** 2 for x in xs)
    vy = sum((y - my) ** 2 for y in ys)
    return cov / math.sqrt(vx * vy)


def test_cli_summary_json_and_table(summary_runs: list[Path]) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["summary", str(summary_runs[0].parent), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert [r["run"] for r in data["runs"]] == ["a", "b", "c"]
    assert data["totals"]["coverage_mean"] == pytest.approx(0.1)
    table = runner.invoke(app, ["summary", *map(str, summary_runs)])
    assert table.exit_code == 0, table.output
    assert f"Pearson r = {np_corr([1, 7, 0], [1_000, 9_000, 1_000]):.2f}" in table.output
    assert "judge cost $0.25" in table.output


def test_summary_names_each_run_by_room_and_policy(tmp_path: Path) -> None:
    from dealroom.eval import summarize_runs
    from dealroom.runs import find_runs

    sweep = tmp_path / "sweep" / "episodes" / "g20"
    for policy in ("scripted__oracle", "scripted_coverage=0.3__oracle"):
        run = sweep / policy / "d1-T16-s0"
        run.mkdir(parents=True)
        root = policy.split("__")[0].replace("_", ":", 1)
        (run / "config.json").write_text(json.dumps(
            {"room": str(tmp_path / "rooms" / "g20"), "harness": "rlm", "root": root,
             "sub": "oracle"}))
        (run / "trajectory.jsonl").write_text(json.dumps(
            {"seq": 0, "t": 0.0, "type": "run_end", "agent": "root", "status": "submitted"})
            + "\n")
    rows = summarize_runs(find_runs([tmp_path / "sweep"]))["runs"]
    assert [r["policy"] for r in rows] == ["scripted / oracle", "scripted:coverage=0.3 / oracle"]
    table = subprocess.run([sys.executable, "-m", "dealroom", "summary", str(tmp_path / "sweep")],
                           capture_output=True, text=True, timeout=60,
                           env={**os.environ, "COLUMNS": "240"})
    assert table.returncode == 0, table.stderr
    assert "g20 · scripted / oracle · d1-T16-s0" in table.stdout
    assert "g20 · scripted:coverage=0.3 / oracle · d1-T16-s0" in table.stdout
