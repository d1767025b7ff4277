"""``dealroom judge`` and ``dealroom summary``: parse flags, call the API, render with rich."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer

from dealroom.cli import app
from dealroom.cli._live import _si
from dealroom.cli.display import console
from dealroom.errors import ConfigError

MODELS_HELP = "Models file (TOML) naming models; default ./models.toml or ~/.config/dealroom."


@app.command()
def judge(
    run: Path = typer.Argument(
        None, help="A run folder: judges RUN/output, writes RUN/scores.json."
    ),
    judge_: str = typer.Option("reference", "--judge", help="`reference` or a judge model spec."),
    batch: int = typer.Option(1, "--batch", help="Criteria per judge call (1: one per criterion)."),
    retries: int = typer.Option(2, "--retries", help="Re-asks for unparsable or missing verdicts."),
    compare: str = typer.Option(None, "--compare", help="A second judge; reports agreement."),
    room: Path = typer.Option(None, "--room", help="Judge --memo against this room's rubric."),
    memo: Path = typer.Option(None, "--memo", help="Any memo file (with --room)."),
    out: Path = typer.Option(None, "--out", help="Where to write scores.json."),
    models: Path = typer.Option(None, "--models", help=MODELS_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print scores.json instead of tables."),
) -> None:
    """Score a memo against the room's rubric (criteria pass rate, by type, judge errors)."""
    from dealroom.judge import judge_memo, judge_run, write_scores

    options = {"batch": batch, "retries": retries, "models_file": models}
    if (run is None) == (memo is None) or (memo is not None and room is None):
        raise ConfigError("give a run folder, or --room ROOM --memo FILE (not both)")
    if run is not None:
        scores = judge_run(run, judge_, compare=compare, out=out, **options)
        written = out or run / "scores.json"
    else:
        if compare is not None:
            raise ConfigError("--compare works on run folders; judge the memo twice instead")
        if not memo.is_file():
            raise ConfigError(f"{memo} is not a file")
        scores = judge_memo(room, memo, judge_, **options)
        written = out
        if out is not None:
            write_scores(out, scores)
    if as_json:
        from dealroom.measure._runfiles import json_safe

        console.print_json(json.dumps(json_safe(scores.to_dict())))
        return
    render_scores(scores.to_dict(), written)


@app.command()
def summary(
    runs: list[Path] = typer.Argument(..., help="Run folders (or folders holding run folders)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: runs and totals."),
) -> None:
    """One row per run (pass rate, coverage, cost, tokens, root share, sub-calls, turns)."""
    from dealroom.eval import summarize_runs

    result = summarize_runs(find_runs(runs))
    if as_json:
        print(json.dumps(result, indent=2))
        return
    render_summary(result)


def find_runs(paths: list[Path]) -> list[Path]:
    """The run folders named, a folder without ``config.json`` standing for its run folders."""
    found: list[Path] = []
    for path in paths:
        if (path / "config.json").is_file():
            found.append(path)
        elif path.is_dir():
            found += sorted(p for p in path.iterdir() if (p / "config.json").is_file())
        else:
            raise ConfigError(f"{path} is not a run folder")
    if not found:
        raise ConfigError("no run folders found (a run folder holds config.json)")
    return found


# -- rendering ----------------------------------------------------------------------------------


def render_scores(data: dict[str, Any], written: Path | None) -> None:
    """Headline pass rate, the table by criterion type, failures, errors and agreement."""
    from rich.table import Table

    judge = data.get("judge", {})
    name = judge.get("name", "?") + (f" ({judge['model']})" if judge.get("model") else "")
    if judge.get("structured_output"):
        forms = ", ".join(f"{k} {v}" for k, v in judge["structured_output"].items())
        name += f", replies by shape: {forms}"
    console.print(
        f"[bold]{_pct(data['pass_rate'])}[/] criteria pass rate — {data['summary']}"
        f"  [dim]judge: {name}[/]"
    )
    table = Table("type", "criteria", "passed", "errors", "pass rate", box=None)
    for kind, row in data["pass_rate_by_type"].items():
        table.add_row(
            kind, str(row["n"]), str(row["passed"]), str(row["errors"]), _pct(row["pass_rate"])
        )
    console.print(table)
    for r in data["criteria_results"]:
        if r["verdict"] != "pass":
            style = "red" if r["verdict"] == "fail" else "yellow"
            console.print(
                f"  [{style}]{r['verdict']:5}[/] {r['id']} {r['title']}: "
                f"[dim]{r['reasoning'][:160]}[/]"
            )
    if "agreement" in data:
        a = data["agreement"]
        console.print(
            f"agreement with {a['with']}: {_pct(a['agreement'])} of {a['n']} criteria, "
            f"Cohen's kappa {_num(a['kappa'])}"
        )
    if written is not None:
        console.print(f"[dim]→ {written}[/]")


def render_summary(result: dict[str, Any]) -> None:
    """The runs table with a totals row, and the delegation/room-size correlation."""
    from rich.table import Table

    table = Table(
        "run",
        "status",
        "pass rate",
        "coverage",
        "cost",
        "tokens in/out",
        "root share in/out",
        "sub-calls",
        "turns",
        show_footer=False,
    )
    for r in result["runs"]:
        table.add_row(
            r["run"],
            r["status"],
            _pct(r["pass_rate"]),
            _pct(r["coverage"]),
            f"${r['cost_usd']:.2f}",
            _tokens(r),
            _shares(r),
            str(r["sub_calls"]),
            str(r["turns"]),
        )
    t = result["totals"]
    table.add_section()
    table.add_row(
        f"{t['runs']} runs",
        "",
        f"{_pct(t['pass_rate_mean'])} mean",
        f"{_pct(t['coverage_mean'])} mean",
        f"${t['cost_usd']:.2f}",
        _tokens(t),
        _shares(t),
        str(t["sub_calls"]),
        str(t["turns"]),
    )
    console.print(table)
    console.print(
        f"sub-calls vs room size: Pearson r = {_num(t['corr_sub_calls_room_tokens'])}"
        + (f"; judge cost ${t['judge_cost_usd']:.2f}" if t["judge_cost_usd"] else "")
        + (f"; {t['unpriced_calls']} unpriced calls" if t["unpriced_calls"] else "")
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.1%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.2f}"


def _tokens(row: dict[str, Any]) -> str:
    return f"{_si(row['input_tokens'])} / {_si(row['output_tokens'])}"


def _shares(row: dict[str, Any]) -> str:
    return f"{_pct(row['root_share_input'])} / {_pct(row['root_share_output'])}"
