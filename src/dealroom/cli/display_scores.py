"""Rendering of ``dealroom judge`` (scores) and ``dealroom summary`` (runs and totals)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from rich.console import Console

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
    kind = "positive criteria" if data.get("headline_kind") == "positive" else "criteria"
    console.print(
        f"[bold]{_pct(data.get('headline', data['pass_rate']))}[/] {kind} pass rate (headline; "
        f"total {_pct(data['pass_rate'])}) — {data['summary']}"
        f"  [dim]judge: {name}[/]"
    )
    table = Table("type", "criteria", "passed", "errors", "pass rate", box=None)
    for kind, row in data["pass_rate_by_type"].items():
        table.add_row(
            kind, str(row["n"]), str(row["passed"]), str(row["errors"]), _pct(row["pass_rate"])
        )
    console.print(table)
    evidence = data.get("evidence")
    if evidence:
        console.print(evidence_line(dict(evidence)))
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
        console.print(f"[dim]→ {written}[/]", soft_wrap=True)


def evidence_line(e: dict[str, Any]) -> str:
    """``evidence F1 0.94: recall 7/7 gold citations, precision 8/9 citations``."""
    return (f"evidence F1 {_num(e.get('f1'))}: recall {_num(e.get('recall'))} "
            f"({e.get('n_gold_cited')}/{e.get('n_gold')} gold citations, "
            f"{e.get('n_findings_cited')}/{e.get('n_findings')} findings), precision "
            f"{_num(e.get('precision'))} ({e.get('n_citations_correct')}/"
            f"{e.get('n_citations')} citations on evidence)")


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
                  f"{result['run']}[/]", soft_wrap=True)


SUMMARY_COLUMNS = ("status", "headline", "total", "evidence F1", "coverage", "cost",
                   "tokens in/out",
                   "root share in/out", "sub-calls", "turns")
"""``dealroom summary``'s figures per run, in the order of its table's columns."""


def render_summary(result: dict[str, Any], where: Console | None = None) -> None:
    """The runs table with a totals row, and the delegation/room-size correlation. Where the
    table does not fit the width (80 columns, a pipe), a block per run instead: nothing is
    cut or abbreviated."""
    from rich.table import Table

    where = where or console
    t = result["totals"]
    rows = [(_run_name(r) + (" [yellow](simulated sub)[/]" if r.get("simulated") else ""),
             _run_cells(r)) for r in result["runs"]]
    totals = (f"{t['runs']} runs", ["", f"{_pct(t.get('headline_mean'))} mean",
                                    f"{_pct(t['pass_rate_mean'])} mean",
                                    f"{_num(t.get('evidence_f1_mean'))} mean",
                                    f"{_pct(t['coverage_mean'])} mean", f"${t['cost_usd']:.2f}",
                                    _tokens(t), _shares(t), str(t["sub_calls"]),
                                    str(t["turns"])])
    table = Table("run", *SUMMARY_COLUMNS, show_footer=False)
    for name, cells in rows:
        table.add_row(name, *cells)
    table.add_section()
    table.add_row(*[totals[0], *totals[1]])
    natural = where.measure(table, options=where.options.update_width(10_000)).maximum
    if natural <= where.width:
        where.print(table)
    else:
        _render_blocks([*rows, (f"totals of {totals[0]}", totals[1])], where)
    _print_endpoints(result["runs"], where)
    _print_split(result["runs"], where)
    if t.get("headline_positive_runs"):
        where.print(f"headline: pass rate on positive criteria for the "
                    f"{t['headline_positive_runs']} runs whose rubric has negative criteria, "
                    "else on all; total: on all criteria")
    if any(r.get("simulated") for r in result["runs"]):
        where.print("[yellow]simulated sub: answered from the room's answer key (the oracle "
                    "simulator), an upper bound on reading, not a model[/]")
    where.print(
        f"sub-calls vs room size: Pearson r = {_num(t['corr_sub_calls_room_tokens'])}"
        + (f"; judge cost ${t['judge_cost_usd']:.2f}" if t["judge_cost_usd"] else "")
        + (f"; {t['unpriced_calls']} unpriced calls" if t["unpriced_calls"] else "")
    )


def _print_split(runs: list[dict[str, Any]], where: Console) -> None:
    """Where each run's tokens and dollars went (root, each sub-agent model, children), for
    runs with named sub-agent models or children."""
    shown = [r for r in runs if set(r.get("split") or {}) - {"root", "sub.default"}]
    for r in shown:
        parts = [f"{key.removeprefix('sub.')} {_pct(p['share'])} of tokens, "
                 f"${p['cost_usd']:.4f}" for key, p in r["split"].items()]
        where.print(f"{_run_name(r)}: " + "; ".join(parts), soft_wrap=True)


def _run_cells(r: dict[str, Any]) -> list[str]:
    headline = r.get("headline", r["pass_rate"])
    return [r["status"], _pct(headline), _pct(r["pass_rate"]), _num(r.get("evidence_f1")),
            _pct(r["coverage"]), f"${r['cost_usd']:.2f}", _tokens(r), _shares(r),
            str(r["sub_calls"]), str(r["turns"])]


def _render_blocks(rows: list[tuple[str, list[str]]], where: Console) -> None:
    """Each run's name on a line of its own (never wrapped), then its figures as label-value
    pairs, two pairs to a line (about 70 columns)."""
    from rich.table import Table

    for name, cells in rows:
        where.print(name, soft_wrap=True)
        pairs = [(label, value) for label, value in zip(SUMMARY_COLUMNS, cells, strict=True)
                 if value]
        grid = Table(show_header=False, box=None, padding=(0, 1), pad_edge=False)
        for _ in range(4):
            grid.add_column()
        for i in range(0, len(pairs), 2):
            (a, x), (b, y) = pairs[i], (pairs[i + 1] if i + 1 < len(pairs) else ("", ""))
            grid.add_row(f"  {a}", x, f"  {b}", y)
        where.print(grid)


def _print_endpoints(rows: list[dict[str, Any]], where: Console) -> None:
    """Each distinct model of the runs, by role: its spec name, the model id sent, where."""
    from rich.markup import escape

    seen: dict[str, None] = {}
    for row in rows:
        for role, e in (row.get("endpoints") or {}).items():
            url = f" @ {e['base_url']}" if e.get("base_url") else ""
            served = (f" (served: {e['served']})" if e.get("served")
                      and e["served"] != e.get("model") else "")
            model = f" = {e['model']}" if e.get("model") and e["model"] != e["name"] else ""
            seen[f"{role}: {e['name']}{model}{url}{served}"] = None
    for line in seen:
        where.print(escape(line), soft_wrap=True)


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
