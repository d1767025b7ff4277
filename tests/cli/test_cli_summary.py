"""``dealroom summary`` over run folders and folders of them."""

from __future__ import annotations

import json
import math
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
