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
    ``pip install "dealroom[local]"`` or ``[models.NAME]`` is printed, not taken for markup,
    and the secrets the process knows redacted (an endpoint's error may echo the key)."""
    from rich.markup import escape

    from dealroom.runs import redact

    err_console.print(f"[bold red]error:[/] {escape(redact(str(exc)))}", highlight=False,
                      soft_wrap=True)


def render_warning(message: object) -> None:
    """One yellow line: ``warning: <message>``, escaped and redacted as :func:`render_error`
    does."""
    from rich.markup import escape

    from dealroom.runs import redact

    err_console.print(f"[bold yellow]warning:[/] {escape(redact(str(message)))}",
                      highlight=False, soft_wrap=True)


def render_run_result(result) -> None:  # type: ignore[no-untyped-def]
    """The end-of-run summary: status, turns, sub-calls, tokens, cost, coverage, paths."""
    m = result.metrics
    usage = m.get("usage", {}).get("total", {})
    beh = m.get("behaviour", {})
    cov = (m.get("coverage") or {}).get("coverage")
    style = {"degraded": "yellow", "error": "red", "errors": "red"}.get(result.status, "")
    status = f"[{style}]{result.status}[/]" if style else result.status
    rows = [("status", f"{status} ({escape(result.reason)})"), ("turns", str(result.turns))]
    failed = beh.get("sub_calls_failed", 0)
    rows.append(("sub-calls", f"{beh.get('sub_calls', 0)}"
                 + (f" ([red]{failed} failed at the provider[/])" if failed else "")))
    if beh.get("non_findings"):
        rows.append(("non-findings", f"{beh['non_findings']} sub-agent replies held no finding "
                     "in the asked format (nothing of them written)"))
    rows.append(("tokens", f"{usage.get('input_tokens', 0):,} in / "
                 f"{usage.get('output_tokens', 0):,} out"))
    if guessed := m.get("usage", {}).get("usage_estimated_calls"):
        rows.append(("estimated", f"[yellow]usage of {guessed:,} calls is a words-v1 estimate "
                     "(the server reported none and counts none)[/]"))
    rows.append(("cost", f"${usage.get('cost_usd', 0.0):.4f}"))
    rows.append(("coverage", "n/a" if cov is None else f"{cov:.1%}"))
    if m.get("simulators"):
        rows.append(("simulated", f"{', '.join(m['simulators'])}: a simulator answering from "
                     "the answer key, not a model"))
    if beh.get("docs_read") is not None:
        rows.append(("docs read", f"{beh['docs_read']}/{beh.get('room_docs') or '?'}"))
    paths = list(result.deliverables.values()) or [result.memo_path]
    label = "deliverables" if len(paths) > 1 else "memo"
    render_facts(rows, [(label if i == 0 else "", p) for i, p in enumerate(paths)]
                 + [("records", result.run_dir)])


def render_answer(result, as_json: bool = False) -> None:  # type: ignore[no-untyped-def]
    """``dealroom ask``'s answer: the text, then status, turns, cost, citations, paths."""
    if as_json:
        render_json(result.to_dict(), indent=2)
        return
    from rich.markdown import Markdown

    if result.answer is not None:
        console.print(Markdown(result.answer))
    bad = [c for c in result.citations if not c["ok"]]
    rows = [("ask", str(result.number)), ("status", f"{result.status} ({escape(result.reason)})"),
            ("turns", str(result.turns)),
            ("cost", f"${result.usage.get('cost_usd', 0.0):.4f}"),
            ("citations", f"{len(result.citations) - len(bad)} of {len(result.citations)} "
                          "name a document and page of the room")]
    rows += [("", f"[yellow]{escape(c['doc'])} p.{c['page']}: {escape(c['why'])}[/]")
             for c in bad]
    if result.revised:
        rows.append(("memo", "revised: the run's memo is now the one this answer left"))
    render_facts(rows, [("records", result.folder)])


def render_facts(rows: list[tuple[str, str]], paths: list[tuple[str, object]],
                 where: Console | None = None) -> None:
    """Label-value ``rows`` (values in markup) as a table, then ``paths`` in the same columns,
    each on a line of its own that is never wrapped or cut (a path stays whole at 80
    columns and can be copied)."""
    from rich.table import Table
    from rich.text import Text

    where = where or console
    width = max(len(label) for label, _ in [*rows, *paths])
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(min_width=width, no_wrap=True)
    table.add_column()
    for label, value in rows:
        table.add_row(label, value)
    if rows:
        where.print(table)
    for label, path in paths:
        where.print(Text(f"  {label:<{width}}    {path}"), soft_wrap=True)


def render_commands(commands: list[str], where: Console | None = None) -> None:
    """Shell commands, one to a line, indented; never wrapped, so each can be copied whole."""
    from rich.text import Text

    for command in commands:
        (where or console).print(Text(f"  {command}"), soft_wrap=True)


def render_demo(result) -> None:  # type: ignore[no-untyped-def]
    """What the demo did, where it wrote everything, and the commands to look at it."""
    from shlex import quote

    render_run_result(result.run)
    s = result.scores
    console.print(f"\n[bold]reference judge:[/] {s.n_passed} of {s.n_criteria} criteria passed "
                  f"({s.pass_rate:.1%})")
    render_facts([], [("scores", result.run.run_dir / "scores.json"), ("room", result.room)])
    console.print(
        "[dim]The embedded 135M model proves the plumbing, not the diligence: point --sub "
        "at a real endpoint (MODEL@http://host:port/v1) for real findings.[/]"
    )
    console.print("\n[bold]wrote the room, the run and its scores to[/]")
    render_commands([str(result.folder)])
    console.print("[bold]next[/] (the trace in a browser, the room, a model as judge):")
    run, room = quote(str(result.run.run_dir)), quote(str(result.room))
    render_commands([f"dealroom view {run}", f"dealroom inspect {room}",
                     f"dealroom judge {run} --judge MODEL@http://host:port/v1"])


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


def render_outline(info: dict[str, Any]) -> None:
    """``dealroom inspect``'s outline: each category, then its folders, with documents,
    tokens, pages and megabytes first and the name last, whole (never wrapped or cut;
    control characters escaped)."""
    from dealroom.models import visible_controls

    console.print(f"\n{'docs':>7}{'tokens':>13}{'pages':>9}{'MB':>9}  folder", style="bold",
                  highlight=False)
    for category in info["outline"]:
        name = visible_controls(category["category"]) or "(top)"
        console.print(f"{_outline_sizes(category)}  [bold]{escape(name)}/[/]", soft_wrap=True,
                      highlight=False)
        for folder in category["folders"]:
            name = visible_controls(folder["folder"])
            console.print(f"{_outline_sizes(folder)}    {escape(name)}/", soft_wrap=True,
                          highlight=False)


def _outline_sizes(row: dict[str, Any]) -> str:
    return (f"{row['docs']:>7,}{row['tokens']:>13,}{row['pages']:>9,}"
            f"{row['bytes'] / 1e6:>9,.2f}")


def render_problems(problems: list[Problem], path: Path | str) -> None:
    """Every problem ``dealroom validate`` found, then a one-line verdict."""
    for p in problems:
        style = "red" if p.level == "error" else "yellow"
        console.print(f"[{style}]{p.level}[/] {p.where}: {p.message}", soft_wrap=True)
    errors = sum(p.level == "error" for p in problems)
    warnings = len(problems) - errors
    if errors:
        console.print(f"[bold red]invalid[/] {path}: {errors} error(s), {warnings} warning(s)",
                      soft_wrap=True)
    else:
        console.print(f"[bold green]valid[/] {path}: {warnings} warning(s)", soft_wrap=True)


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
