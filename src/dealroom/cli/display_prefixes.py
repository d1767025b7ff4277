"""Rendering of ``dealroom eval prefixes`` and ``eval recover``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dealroom.cli.display import console, err_console


def render_pool(info: dict[str, Any], n: int, path: Path) -> None:
    """How many prefixes of each kind were pooled from how many runs, and where."""
    counts = ", ".join(f"{kind} {count}" for kind, count in info["counts"].items())
    console.print(f"[bold]{n} prefixes[/] from {info['runs']} runs ({counts})  →  {path}",
                  soft_wrap=True)


@contextmanager
def continuation_progress(quiet: bool = False) -> Iterator[Callable[[int, int, int], None]]:
    """A progress bar on stderr fed by ``progress(done, failed, total)``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if quiet or not err_console.is_terminal:
        yield lambda done, failed, total: None
        return
    bar = Progress(TextColumn("[bold]continuations"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(),
                   console=err_console, transient=True)
    with bar:
        task = bar.add_task("", total=None, failed=0)

        def update(done: int, failed: int, total: int) -> None:
            bar.update(task, completed=done, total=total, failed=failed)

        yield update


def render_recovery(report: dict[str, Any], path: Path) -> None:
    """Per policy and kind, then each pair of policies on the same prefixes."""
    from rich.table import Table

    k = str(report["k"])
    table = Table("policy", "kind", "prefixes", "runs", "next step", "recovery",
                  f"pass rate >= {report['tau']:g}", "beat original", f"Pass@{k}", "pass rate",
                  "turns", box=None)
    for r in report["by_policy"]:
        nothing = r["original_passed_nothing"]
        table.add_row(r["root"], r["kind"], str(r["prefixes"]), str(r["continuations"]),
                      _pct(r["next_step"]),
                      _pct(r["recovery"]) + (f" [yellow]({nothing} vacuous)[/]" if nothing
                                             else ""),
                      _pct(r["success"]), _pct(r["beat_original"]), _pct(r["pass_at_k"][k]),
                      _pct(r["pass_rate"]), _num(r["turns"]))
    console.print(table)
    if report["original_passed_nothing"]:
        console.print(f"[yellow]{len(report['original_passed_nothing'])} prefixes come from runs "
                      "that passed no criterion: any continuation would \"recover\" them, so "
                      "recovery leaves them out; read success and beat original there[/]")
    if report["paired"]:
        pairs = Table("B vs A", "kind", "pairs", "pass rate B-A", "recovery B-A",
                      "wins/losses/ties", "sign test p", box=None)
        for p in report["paired"]:
            pairs.add_row(f"{p['b']} vs {p['a']}", p["kind"], str(p["pairs"]),
                          _pts(p["mean_diff"]), _pts(p["recovery_diff"]),
                          f"{p['wins']}/{p['losses']}/{p['ties']}", _num(p["p_value"], 3))
        console.print(pairs)
    for failed in report["failed"]:
        console.print(f"[red]failed[/] {failed['id']} ({failed['root']}): {failed['error']}",
                      soft_wrap=True)
    console.print(f"{report['continuations']} continuations of {report['prefixes']} prefixes, "
                  f"judged by {report['judge']}  →  {path / 'report.json'}")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _pts(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:+.1f} pts"


def _num(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"
