"""Rendering of ``dealroom eval``: the sweep's progress bar and result, Pass@(K,T), tables,
comparisons and analyses. No logic lives here."""

from __future__ import annotations

import math
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from dealroom.cli._exit import nonzero_counts
from dealroom.cli.display import console as default_console

if TYPE_CHECKING:
    from dealroom.eval import SweepProgress, SweepResult

SIMULATED = "[yellow]*[/]"
SIMULATED_NOTE = ("[yellow]*[/] simulated sub-agent: the oracle answers from the room's answer "
                  "key (an upper bound on reading), not a model")


class SweepDisplay:
    """A progress bar ``(SweepProgress) -> None``: episodes done, running, failed, pass rate;
    off a terminal (a pipe, a log file) a plain line each time an episode ends instead."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or default_console
        self._bar: Progress | None = None
        if self.console.is_terminal or self.console.is_jupyter:
            self._bar = Progress(
                TextColumn("episodes"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                console=self.console, transient=False)
        self._task: TaskID | None = None
        self._started = time.monotonic()

    def __enter__(self) -> SweepDisplay:
        self._started = time.monotonic()
        if self._bar is not None:
            self._bar.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, exc, tb)

    def __call__(self, state: SweepProgress) -> None:
        status = (f"running {state.running}  failed {state.failed}  "
                  f"pass rate {_pct(state.pass_rate)}")
        if self._bar is None:
            elapsed = int(time.monotonic() - self._started)
            self.console.print(
                f"progress: episodes {state.done + state.failed}/{state.total} "
                f"({state.failed} failed), running {state.running}, pass rate "
                f"{_pct(state.pass_rate)}, elapsed {elapsed // 60}m{elapsed % 60:02d}s",
                markup=False, highlight=False, soft_wrap=True)
            return
        if self._task is None:
            self._task = self._bar.add_task("sweep", total=state.total, status=status)
        self._bar.update(self._task, completed=state.done + state.failed, status=status)


def render_sweep_result(result: SweepResult) -> None:
    console = default_console
    console.print(f"{result.done}/{result.episodes} episodes done ({result.skipped} already "
                  f"done, {result.resumed} resumed), {result.failed} failed, in "
                  f"{result.seconds:.1f} s on {result.workers} {result.backend} workers")
    if result.statuses:
        console.print("ended: " + ", ".join(f"{n} {s}" for s, n in result.statuses.items()))
    bad = nonzero_counts(result.statuses)
    if bad:
        console.print(f"[red]{sum(bad.values())} episode(s) ended with a status that exits "
                      f"non-zero: {', '.join(f'{n} {s}' for s, n in bad.items())}[/]")
    if result.failed:
        console.print("[yellow]failed episodes and their errors are in[/]")
        console.print(str(result.path / "sweep.json"), soft_wrap=True, markup=False)
    console.print(f"[dim]→ {escape(str(result.path))}[/]", soft_wrap=True)


def _pct(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.1%}"


def _policy(row: dict[str, Any]) -> str:
    sub = row.get("sub")
    return f"{row['root']} / {sub}{SIMULATED if row.get('simulated') else ''}" if sub \
        else row["root"]


RATE_NAMES = {"positive": "headline (pass rate on positive criteria)",
              "total": "headline (pass rate on all criteria)",
              "mixed": "headline (positive criteria where a rubric has negatives, else all)"}
"""What a row's ``headline_kind`` says its pass rate is."""


def render_passk(rows: list[dict[str, Any]]) -> None:
    """Pass@(K,T): a row per (policy, T), a column per k."""
    from rich.table import Table

    console = default_console
    if not rows:
        console.print("no judged episodes")
        return
    ks = sorted({r["k"] for r in rows})
    table = Table("policy (root / sub)", "depth", "T", *[f"pass@{k}" for k in ks], "rooms",
                  box=None)
    cells: dict[tuple, dict[int, dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((_policy(r), r["depth"], r["max_turns"]), {})[r["k"]] = r
    for (policy, depth, turns), by_k in cells.items():
        table.add_row(policy, str(depth), str(turns),
                      *[_pct(by_k[k]["pass_at_k"]) if k in by_k else "" for k in ks],
                      str(by_k[ks[0]]["rooms"]))
    console.print(table)
    first = rows[0]
    kind = first.get("headline_kind", first.get("headline", "total"))
    rate = RATE_NAMES.get(kind, "pass rate")
    success = "all criteria passed" if first["tau"] is None else f"{rate} >= {first['tau']}"
    console.print(f"[dim]setting: {first['setting']} · success: {success} · pass@k: mean over "
                  "rooms of the unbiased estimate[/]")
    if first["tau"] is not None:
        other = "total" if kind != "total" else "positive"
        top = {(_policy(r), r["depth"], r["max_turns"]): r for r in rows if r["k"] == ks[-1]}
        beside = " · ".join(f"{p} T={t}: {_pct(r.get(f'pass_at_k_{other}'))}"
                            for (p, _, t), r in top.items())
        where = "on all criteria" if other == "total" else "on positive criteria alone"
        console.print(f"[dim]{where}, pass@{ks[-1]}: {beside}[/]")
    if any(r.get("simulated") for r in rows):
        console.print(SIMULATED_NOTE)


def render_table(rows: list[dict[str, Any]], groups: list[str]) -> None:
    """``eval table``: a row per group (pass rate and its interval over rooms, all-pass,
    coverage, cost and sub-calls per run)."""
    from rich.table import Table

    console = default_console
    flag = rows[0].get("headline", "headline") if rows else "headline"
    other = "positive" if flag == "total" else "total"
    table = Table(" · ".join(groups), "runs", "rooms", "pass" if flag == "total" else
                  "headline", "95% CI", other, "all-pass", "evid", "cover", "cost", "subs",
                  box=None)
    for r in rows:
        keys = [str(r[g]) + (SIMULATED if g == "sub" and r.get("simulated") else "")
                for g in groups]
        table.add_row(" · ".join(keys), str(r["episodes"]), str(r["rooms"]),
                      _pct(r["pass_rate"]), _span(r["ci_low"], r["ci_high"], _pct),
                      _pct(r.get(f"pass_rate_{other}")),
                      _pct(r["all_pass"]), _num(r.get("evidence_f1"), 2), _pct(r["coverage"]),
                      _usd(r["cost_usd"]),
                      _num(r["sub_calls"], 1))
    console.print(table)
    if rows and flag == "headline":
        kind = RATE_NAMES.get(rows[0].get("headline_kind", "total"), "pass rate")
        console.print(f"[dim]{kind}; total: pass rate on all criteria; evid: evidence F1[/]")
    if any(r.get("simulated") for r in rows):
        console.print(SIMULATED_NOTE)


def render_compare(result: dict[str, Any]) -> None:
    from rich.table import Table

    console = default_console
    console.print(f"A: {result['a']['source']} ({result['a']['episodes']} episodes)\n"
                  f"B: {result['b']['source']} ({result['b']['episodes']} episodes)",
                  soft_wrap=True)
    console.print(f"[bold]A - B: {_points(result['mean_diff'])}[/] "
                  f"{RATE_NAMES.get(result.get('headline_kind', 'total'), 'pass rate')} "
                  f"(total {_points(result.get('mean_diff_total'))}), 95% CI "
                  f"{_span(result['ci_low'], result['ci_high'], _points)}, sign test "
                  f"p = {_num(result['p_value'], 3)} · {result['pairs']} pairs on "
                  f"{result['rooms']} rooms (paired on {', '.join(result['paired_on'])}; A "
                  f"better {result['a_better']}, B better {result['b_better']}, "
                  f"ties {result['ties']})")
    table = Table("criterion type", "pairs", "A - B", "95% CI", "p", box=None)
    for kind, d in result["by_type"].items():
        table.add_row(kind, str(d["pairs"]), _points(d["mean_diff"]),
                      _span(d["ci_low"], d["ci_high"], _points), _num(d["p_value"], 3))
    console.print(table)
    if result["cells"]:
        cells = Table("T", "k", "Pass@k A", "Pass@k B", "A - B", "95% CI", "p", box=None)
        for c in result["cells"]:
            cells.add_row(str(c["max_turns"]), str(c["k"]), _pct(c["a"]), _pct(c["b"]),
                          _points(c["mean_diff"]), _span(c["ci_low"], c["ci_high"], _points),
                          _num(c["p_value"], 3))
        console.print(cells)
    if result["a"]["simulated"] or result["b"]["simulated"]:
        console.print(SIMULATED_NOTE)


def render_analysis(result: dict[str, Any]) -> None:
    console = default_console
    cov, cost, dele = result["coverage_pass"], result["cost_pass"], result["delegation"]
    share, memo = result["root_share"], result["memo"]
    console.print(f"{result['episodes']} judged episodes")
    console.print(f"coverage vs pass rate: Spearman {_num(cov['spearman'])} (n = {cov['n']}), "
                  f"Pearson on log coverage {_num(cov['pearson_log'])} (n = {cov['n_log']}); "
                  f"{cov['zero_coverage']} runs with zero coverage, {cov['unmeasured']} "
                  f"unmeasured; included: {cov['included']}")
    console.print(f"cost vs pass rate: Spearman {_num(cost['spearman'])}, Pearson "
                  f"{_num(cost['pearson'])} (n = {cost['n']})")
    console.print(f"sub-calls vs room size: Pearson {_num(dele['pearson_sub_calls_docs'])} "
                  f"(n = {dele['n']}); by root: "
                  + ", ".join(f"{k} {_num(v)}" for k, v in dele["by_root"].items())
                  + "; by root and T: " + ", ".join(
                      f"{k} T={t} {_num(v)}" for k, ts in dele["by_root_max_turns"].items()
                      for t, v in ts.items()))
    console.print(f"root share of tokens: {_pct(share['input'])} of input, "
                  f"{_pct(share['output'])} of output")
    console.print(f"memo: incremental in {_pct(memo['incremental_rate'])} of "
                  f"{memo['runs_with_waves']} runs with waves; first written at turn "
                  f"{_num(memo['first_write_turn_mean'], 1)} on average (median "
                  f"{_num(memo['first_write_turn_median'], 1)}); never in {memo['never_written']}")
    if result["depth"]:
        d = result["depth"]
        console.print(f"depth 2 vs depth 1 over {d['pairs']} (room, policy) pairs: better "
                      f"{d['better']}, worse {d['worse']} ({d['worse_without_memo']} of them "
                      f"with no memo written), same {d['same']}")
    if result["grid"]:
        render_grid(result["grid"])
    if result["simulated"]:
        console.print(SIMULATED_NOTE)


def render_grid(grid: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table("root \\ sub", *grid["subs"], box=None,
                  title=f"pass rate at T = {grid['max_turns']}, depth {grid['depth']}")
    for root, rates in zip(grid["roots"], grid["pass_rate"], strict=True):
        table.add_row(root, *[_pct(v) for v in rates])
    default_console.print(table)
    default_console.print(f"root gap {_num(grid['root_gap_points'], 1)} points, sub gap "
                          f"{_num(grid['sub_gap_points'], 1)} points")


def _span(low: float | None, high: float | None, fmt: Any) -> str:
    """An interval as "low to high" (n/a when undefined, e.g. with one room)."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "n/a"
    return f"{fmt(low)} to {fmt(high)}"


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _points(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{100 * value:+.1f} pts"


def _usd(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"${value:.2f}"
