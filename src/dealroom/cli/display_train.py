"""Rendering for ``dealroom train`` and ``dealroom export``: progress bars and summaries."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from dealroom.cli.display import console, err_console

if TYPE_CHECKING:
    from dealroom.train import DistillResult, ExportResult, GRPOResult, SFTResult, Sign


@contextmanager
def training_progress() -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr fed by ``progress(step, total)``."""
    with work_progress("training steps") as update:
        yield update


@contextmanager
def work_progress(what: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr, labelled ``what``, fed by ``progress(done, total)``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if not err_console.is_terminal:
        yield lambda done, total: None
        return
    bar = Progress(TextColumn(f"[bold]{what}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn(), console=err_console,
                   transient=True)
    with bar:
        task = bar.add_task("", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def render_sft_result(result: SFTResult) -> None:
    """Steps, last loss, wall time and where the adapter (and merged model) went."""
    from rich.table import Table

    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("steps", f"{result.steps} on {result.rows:,} rows")
    table.add_row("last loss", "n/a" if result.loss is None else f"{result.loss:.4f}")
    table.add_row("time", f"{result.seconds:,.1f} s")
    table.add_row("adapter", f"{result.out}   (run it: --root hf:{result.out})")
    if result.merged is not None:
        table.add_row("merged", str(result.merged))
    table.add_row("log", str(result.out / "log.jsonl"))
    console.print(table)


NOT_TERMS = ("reward_mean", "reward_std", "reward_gap")
"""Keys of a GRPO log row that start with ``reward_`` and are not a reward term's mean."""


def render_grpo_result(result: GRPOResult) -> None:
    """Steps, the first and last step's reward and loss, and where the adapter went."""
    from rich.table import Table

    def number(value: float | None, form: str) -> str:
        return "n/a" if value is None else format(value, form)

    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("steps", str(result.steps))
    if result.log:
        first, last = result.log[0], result.log[-1]
        table.add_row("reward", f"{number(first['reward_mean'], '.3f')} (step {first['step']})"
                                f" -> {number(last['reward_mean'], '.3f')} (step {last['step']})")
        for key in (k for k in last if k.startswith("reward_") and k not in NOT_TERMS):
            table.add_row(f"  {key.removeprefix('reward_')}",
                          f"{number(first.get(key), '.3f')} -> {number(last[key], '.3f')}")
        table.add_row("last loss", number(last["loss"], ".4f"))
        table.add_row("last step", f"{last['step_s']:,.1f} s ({last['rollout_s']:,.1f} s "
                                   f"rollouts, {last['train_s']:,.1f} s training)")
    table.add_row("time", f"{result.seconds:,.1f} s")
    table.add_row("adapter", f"{result.out}   (run it: --root hf:{result.out})")
    table.add_row("log", f"{result.out / 'log.jsonl'}   rollouts: {result.out / 'rollouts'}")
    console.print(table)


def render_watch_sign(sign: Sign) -> None:
    """One line on stderr for a sign the training watch saw."""
    from rich.markup import escape

    where = f" ({sign.run})" if sign.run else ""
    err_console.print(f"[yellow]watch, step {sign.step}: {sign.kind}:[/] "
                      f"{escape(sign.detail + where)}")


def render_export_result(result: ExportResult) -> None:
    """Runs kept and left out (by reason), rows and tokens, and where the dataset went."""
    from rich.table import Table

    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    left = sum(result.left_out.values())
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(result.left_out.items()))
    table.add_row("selection", result.rule)
    table.add_row("kept", f"{result.kept} runs")
    table.add_row("left out", f"{left} runs" + (f" ({reasons})" if reasons else ""))
    if result.tokenizer:
        share = result.trained_tokens / result.tokens if result.tokens else 0.0
        table.add_row("rows", f"{result.rows:,} rows, {result.tokens:,} tokens, "
                              f"{share:.1%} trained (mask 1)")
        if result.train_subs:
            table.add_row("sub-agents", f"{result.child_rows:,} children's rows, "
                                        f"{result.sub_rows:,} sub-call rows, "
                                        f"{result.subs_left_out:,} sub-calls left out")
        if result.skipped_replies:
            table.add_row("skipped", f"{result.skipped_replies} replies too long for a row")
    else:
        table.add_row("rows", "no --tokenizer: tokenized.jsonl not written")
    table.add_row("time", f"{result.seconds:,.1f} s")
    table.add_row("dataset", f"{result.out}   (why each run: {result.out / 'manifest.json'})")
    console.print(table)
    if result.simulated:
        err_console.print(
            f"[bold red]WARNING:[/] {len(result.simulated)} of the {result.kept} kept runs ran "
            "with a simulator (root `scripted` or sub `oracle`): they teach a script's or the "
            "answer key's moves, not a model's. Train on them only to test the pipeline "
            f"(listed under kept[].simulated in {result.out / 'manifest.json'}).",
            soft_wrap=True)


@contextmanager
def distill_progress() -> Iterator[Callable[[str, int, int], None]]:
    """A progress bar on stderr whose label follows the loop (``round 2 train``)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    if not err_console.is_terminal:
        yield lambda what, done, total: None
        return
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=err_console, transient=True)
    with bar:
        task = bar.add_task("self-distill", total=None)

        def update(what: str, done: int, total: int) -> None:
            bar.update(task, description=what, completed=done, total=total)

        yield update


def render_distill_result(result: DistillResult) -> None:
    """The pass rate per round, with what each round kept and trained."""
    from rich import box
    from rich.table import Table

    def share(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    table = Table(title=f"self-distillation: {result.out}", box=box.SIMPLE_HEAD,
                  pad_edge=False, collapse_padding=True, padding=(0, 1))
    for name in ("round", "root", "runs", "pass rate", "coverage", "subs", "kept", "rows",
                 "steps", "loss"):
        table.add_column(name, justify="left" if name == "root" else "right", no_wrap=True)
    for row in result.rounds:
        adapter = row.get("adapter_from")
        table.add_row(
            str(row["round"]), "base" if not adapter else "start" if row["round"] == 1
            else f"round {row['round'] - 1}",
            f"{row.get('judged', 0)}/{row.get('episodes', 0)}", share(row.get("pass_rate")),
            share(row.get("coverage")),
            "n/a" if row.get("sub_calls") is None else f"{row['sub_calls']:.1f}",
            str(row.get("kept", "-")), str(row.get("rows", "-")), str(row.get("steps", "-")),
            "-" if row.get("loss") is None else f"{row['loss']:.4f}")
    console.print(table)
    if result.stopped:
        console.print(f"[yellow]stopped:[/] {result.stopped}")
    console.print(f"rounds: {result.out / 'rounds.json'}   ({result.seconds:,.1f} s)",
                  soft_wrap=True)
