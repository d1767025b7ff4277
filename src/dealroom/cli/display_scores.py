"""Rendering of ``dealroom judge`` (scores) and ``dealroom summary`` (runs and totals)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dealroom.cli.display import console
from dealroom.cli.display_live import si
from dealroom.runs import ScoresRecord


def render_scores_json(data: ScoresRecord) -> None:
    """``dealroom judge --json``: scores.json, pretty-printed."""
    console.print_json(json.dumps(data))


def render_scores(data: ScoresRecord, written: Path | None) -> None:
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


def render_by_turn(result: dict[str, Any]) -> None:
    """``dealroom judge --by-turn``: pass rate of the memo as of each turn."""
    from rich.table import Table

    table = Table("turn", "pass rate", "passed", "all pass", "memo chars", box=None)
    last = None
    for row in result["by_turn"]:
        state = (row["n_passed"], row["memo_chars"])
        style = "dim" if state == last else ""
        last = state
        table.add_row(str(row["turn"]), _pct(row["pass_rate"]),
                      f"{row['n_passed']}/{row['n_criteria']}", "yes" if row["all_pass"] else "",
                      f"{row['memo_chars']:,}", style=style)
    console.print(table)
    console.print(f"[dim]judge: {result['judge'].get('name')} · {result['turns']} turns · "
                  f"{result['run']}[/]")


def render_summary(result: dict[str, Any]) -> None:
    """The runs table with a totals row, and the delegation/room-size correlation."""
    from rich.table import Table

    table = Table(
        "run",
        "status",
        "pass rate",
        "positive",
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
            _run_name(r) + (" [yellow](simulated sub)[/]" if r.get("simulated") else ""),
            r["status"],
            _pct(r["pass_rate"]),
            _pct(r.get("pass_rate_positive")),
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
        f"{_pct(t.get('pass_rate_positive_mean'))} mean",
        f"{_pct(t['coverage_mean'])} mean",
        f"${t['cost_usd']:.2f}",
        _tokens(t),
        _shares(t),
        str(t["sub_calls"]),
        str(t["turns"]),
    )
    console.print(table)
    _print_endpoints(result["runs"])
    if any(r.get("simulated") for r in result["runs"]):
        console.print("[yellow]simulated sub: answered from the room's answer key (the oracle "
                      "simulator), an upper bound on reading, not a model[/]")
    console.print(
        f"sub-calls vs room size: Pearson r = {_num(t['corr_sub_calls_room_tokens'])}"
        + (f"; judge cost ${t['judge_cost_usd']:.2f}" if t["judge_cost_usd"] else "")
        + (f"; {t['unpriced_calls']} unpriced calls" if t["unpriced_calls"] else "")
    )


def _print_endpoints(rows: list[dict[str, Any]]) -> None:
    """Each distinct model of the runs, by role: its spec name, the model id sent, where."""
    from rich.markup import escape

    seen: dict[str, None] = {}
    for row in rows:
        for role, e in (row.get("endpoints") or {}).items():
            where = f" @ {e['base_url']}" if e.get("base_url") else ""
            served = (f" (served: {e['served']})" if e.get("served")
                      and e["served"] != e.get("model") else "")
            model = f" = {e['model']}" if e.get("model") and e["model"] != e["name"] else ""
            seen[f"{role}: {e['name']}{model}{where}{served}"] = None
    for line in seen:
        console.print(escape(line), soft_wrap=True)


def _run_name(row: dict[str, Any]) -> str:
    """``room · policy · run`` (``g20 · scripted / oracle · d1-T16-s0``), escaped."""
    from rich.markup import escape

    parts = (Path(row["room"]).name if row.get("room") else "", row.get("policy"), row["run"])
    return escape(" · ".join(p for p in parts if p))


def _pct(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.1%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.2f}"


def _tokens(row: dict[str, Any]) -> str:
    return f"{si(row['input_tokens'])} / {si(row['output_tokens'])}"


def _shares(row: dict[str, Any]) -> str:
    return f"{_pct(row['root_share_input'])} / {_pct(row['root_share_output'])}"
