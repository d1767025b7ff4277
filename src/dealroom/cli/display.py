"""Rendering for the CLI: tables and panels with rich. No logic lives here."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from dealroom.harness.rlm import CellOutput
    from dealroom.room import Problem

console = Console(stderr=False, highlight=False)
err_console = Console(stderr=True, highlight=False)


def render_json(data: Any, indent: int | None = None) -> None:
    """``--json`` output: one JSON document on stdout."""
    print(json.dumps(data, indent=indent))


def render_version(version: str) -> None:
    print(f"dealroom {version}")


def render_interrupted() -> None:
    err_console.print("[yellow]interrupted[/]")


def render_error(exc: BaseException) -> None:
    """One red line: ``error: <message>``, the message escaped so that ``[local]`` in
    ``pip install "dealroom[local]"`` or ``[models.NAME]`` is printed, not taken for markup."""
    from rich.markup import escape

    err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)


def render_warning(message: object) -> None:
    """One yellow line: ``warning: <message>``, escaped as :func:`render_error` does."""
    from rich.markup import escape

    err_console.print(f"[bold yellow]warning:[/] {escape(str(message))}", highlight=False,
                      soft_wrap=True)


def render_run_result(result) -> None:  # type: ignore[no-untyped-def]
    """The end-of-run summary: status, turns, sub-calls, tokens, cost, coverage, paths."""
    from rich.table import Table

    m = result.metrics
    usage = m.get("usage", {}).get("total", {})
    beh = m.get("behaviour", {})
    cov = (m.get("coverage") or {}).get("coverage")
    table = Table(show_header=False, box=None, padding=(0, 2))
    style = {"degraded": "yellow", "error": "red"}.get(result.status, "")
    status = f"[{style}]{result.status}[/]" if style else result.status
    table.add_row("status", f"{status} ({escape(result.reason)})")
    table.add_row("turns", str(result.turns))
    failed = beh.get("sub_calls_failed", 0)
    table.add_row("sub-calls", f"{beh.get('sub_calls', 0)}"
                  + (f" ([red]{failed} failed at the provider[/])" if failed else ""))
    if beh.get("non_findings"):
        table.add_row("non-findings", f"{beh['non_findings']} sub-agent replies held no finding "
                      "in the asked format (nothing of them written)")
    table.add_row("tokens", f"{usage.get('input_tokens', 0):,} in / "
                  f"{usage.get('output_tokens', 0):,} out")
    table.add_row("cost", f"${usage.get('cost_usd', 0.0):.4f}")
    table.add_row("coverage", "n/a" if cov is None else f"{cov:.1%}")
    if m.get("simulators"):
        table.add_row("simulated", f"{', '.join(m['simulators'])}: a simulator answering from "
                      "the answer key, not a model")
    if beh.get("docs_read") is not None:
        table.add_row("docs read", f"{beh['docs_read']}/{beh.get('room_docs') or '?'}")
    paths = list(result.deliverables.values()) or [result.memo_path]
    table.add_row("deliverables" if len(paths) > 1 else "memo", "\n".join(map(str, paths)))
    table.add_row("records", str(result.run_dir))
    console.print(table)


def render_demo(result) -> None:  # type: ignore[no-untyped-def]
    """What the demo did and where everything is."""
    render_run_result(result.run)
    s = result.scores
    console.print(
        f"\n[bold]reference judge:[/] {s.n_passed} of {s.n_criteria} criteria passed "
        f"({s.pass_rate:.1%})  →  {result.run.run_dir / 'scores.json'}"
    )
    console.print(f"room: {result.room}   (inspect it with `dealroom inspect {result.room}`)")
    console.print(
        "[dim]The embedded 135M model proves the plumbing, not the diligence: point --sub "
        "at a real endpoint (MODEL@http://host:port/v1) for real findings.[/]"
    )


# --- the REPL --------------------------------------------------------------------------------

REPL_BANNER = """dealroom REPL over {room} (sandbox: {isolation}).
Names: room, llm, llm_batch, rlm, memo, budget, submit. Ctrl-D to leave."""


def render_repl_banner(room: Path, isolation: str) -> None:
    print(REPL_BANNER.format(room=room, isolation=isolation))


def render_repl_exit() -> None:
    """The newline Python's REPL prints on Ctrl-D."""
    print()


def render_cell(out: CellOutput) -> None:
    """A cell's printed output on stdout and its traceback on stderr, as Python's REPL does;
    control characters are shown escaped (``\\x1b[2J``), never sent to the terminal raw."""
    from dealroom.models import visible_controls

    for text, stream in ((out.text, sys.stdout), (out.error, sys.stderr)):
        if text:
            text = visible_controls(text)
            stream.write(text if text.endswith("\n") else text + "\n")


# --- rooms: generate, inspect, validate ----------------------------------------------------


@contextmanager
def generation_progress(total: int, quiet: bool = False, label: str = "writing documents"
                        ) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr fed by ``progress(done, total)``; refreshed only on updates,
    so no display thread runs while the generator forks its workers."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if quiet or not err_console.is_terminal:
        yield lambda done, total: None
        return
    bar = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=err_console, auto_refresh=False, transient=True)
    with bar:
        task = bar.add_task("", total=total)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)
            bar.refresh()

        yield update


def render_room_summary(info: dict[str, Any], path: Path | str) -> None:
    """What ``dealroom inspect`` (and ``generate``) print: the room's counts."""
    from rich.table import Table

    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_row("room", f"{info['name']}  ({path})")
    table.add_row("documents", f"{info['docs']:,} in {info['folders']} folders, "
                  f"{info['categories']} categories")
    table.add_row("formats", ", ".join(f"{k} {v:,}" for k, v in info["formats"].items()))
    table.add_row("size", f"{info['tokens']:,} tokens ({info['tokenizer']}), "
                  f"{info['pages']:,} pages, {info['bytes'] / 1e6:,.1f} MB")
    if info["findings"] is not None:
        table.add_row("findings", f"{info['findings']} planted ({info['cured_findings']} cured "
                      f"or look-alike, {info['multi_doc_findings']} multi-document, "
                      f"{info['missing_documents']} missing documents)")
    by_type = ", ".join(f"{k} {v}" for k, v in info["criteria_by_type"].items())
    table.add_row("criteria", f"{info['criteria']} ({by_type}; "
                  f"{info['negative_criteria']} negative)")
    console.print(table)


def render_problems(problems: list[Problem], path: Path | str) -> None:
    """Every problem ``dealroom validate`` found, then a one-line verdict."""
    for p in problems:
        style = "red" if p.level == "error" else "yellow"
        console.print(f"[{style}]{p.level}[/] {p.where}: {p.message}", soft_wrap=True)
    errors = sum(p.level == "error" for p in problems)
    warnings = len(problems) - errors
    if errors:
        console.print(f"[bold red]invalid[/] {path}: {errors} error(s), {warnings} warning(s)")
    else:
        console.print(f"[bold green]valid[/] {path}: {warnings} warning(s)")


def render_confinement(confinement: dict[str, str], degraded: list[str]) -> None:
    """``dealroom doctor``: each part of the sandbox's confinement, then what is weaker."""
    from rich.table import Table

    table = Table(show_header=False, box=None, padding=(0, 2))
    for part, value in confinement.items():
        table.add_row(part, value)
    console.print(table)
    render_degraded(degraded, console)
    if not degraded:
        console.print("[bold green]the strongest confinement is in force[/]")


def render_degraded(degraded: list[str], where: Console = err_console) -> None:
    """A warning line per part of the sandbox weaker than the strongest confinement."""
    for weak in degraded:
        where.print(f"[yellow]sandbox weaker than it should be:[/] {weak}", soft_wrap=True)
