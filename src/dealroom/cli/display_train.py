"""Rendering for ``dealroom train``: the step progress bar and the end-of-training summary."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from dealroom.cli.display import console, err_console


@contextmanager
def training_progress() -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr fed by ``progress(step, total)``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if not err_console.is_terminal:
        yield lambda step, total: None
        return
    bar = Progress(TextColumn("[bold]training steps"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn(), console=err_console,
                   transient=True)
    with bar:
        task = bar.add_task("", total=None)

        def update(step: int, total: int) -> None:
            bar.update(task, completed=step, total=total)

        yield update


def render_sft_result(result: Any) -> None:
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
