"""Rendering of ``dealroom ingest`` and ``lab import``: the progress bar and the report."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from dealroom.cli.display import console, err_console
from dealroom.room import INGEST_REPORT, IngestProgress, IngestReport

SHOWN_ENTRIES = 25
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[IngestProgress], None]]:
    """A rich progress bar fed by the ingest progress callback (quiet when not a terminal)."""
    columns = (
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.description}", style="dim"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("", total=None)

        def update(p: IngestProgress) -> None:
            what = {"extract": p.path[-60:], "ocr": f"OCR: {p.path[-55:]}",
                    "embed": "embedding passages"}.get(p.stage, "building the index")
            bar.update(task, completed=p.done, total=p.total, description=what)

        yield update


def dense_note() -> None:
    """Said once when a room is built without passage embeddings for want of the extra."""
    err_console.print('note: no passage embeddings (the [search] extra is not installed): '
                      'room.search will rank by words only; pip install "dealroom[search]"',
                      markup=False, highlight=False)


def _printable(path: str) -> str:
    """A path with control characters shown as escapes (``line\\nbreak.txt``)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], path)


def render_ingest(report: IngestReport) -> None:
    """The room's totals, then every file left out or warned about (the first few)."""
    counts = report.counts()
    totals = report.manifest.totals()
    console.print(
        f"[bold green]room[/] {report.room}: {counts['ingested']} documents, "
        f"{totals['pages']:,} pages, {totals['tokens']:,} tokens, "
        f"{totals['categories']} categories in {report.seconds:.1f} s"
    )
    console.print(f"index: {report.index}", soft_wrap=True)
    if not report.entries:
        return
    reasons = ", ".join(f"{reason} {n}" for reason, n in counts["by_reason"].items())
    console.print(
        f"{counts['skipped']} skipped, {counts['warnings']} with warnings ({reasons}); "
        f"full list in {report.room / INGEST_REPORT}", soft_wrap=True
    )
    if counts["pages_by_reason"]:
        pages = ", ".join(f"{reason} {n:,}" for reason, n in counts["pages_by_reason"].items())
        console.print(f"pages by reason: {pages}")
    table = Table("file", "reason", "action", "detail")
    for e in report.entries[:SHOWN_ENTRIES]:
        table.add_row(_printable(e.path), e.reason, e.action, e.detail)
    console.print(table)
    if len(report.entries) > SHOWN_ENTRIES:
        console.print(f"... and {len(report.entries) - SHOWN_ENTRIES} more in {INGEST_REPORT}")


def render_cuad_labels(cuad: dict) -> None:
    """Which of CUAD's label files ``cuad import`` used (``meta.cuad``)."""
    used, also = cuad.get("labels"), cuad.get("labels_also") or []
    if not used:
        return
    line = f"labels: {used}"
    if also:
        flag = "csv" if also[0].endswith(".csv") else "json"
        line += f" ({also[0]} is there too: --labels {flag} uses it)"
    console.print(line)


def render_lab_export(task_json: Path) -> None:
    """Where ``dealroom lab export`` wrote the task."""
    console.print(f"[bold green]LAB task[/] {task_json.parent}: {task_json.name} and documents/",
                  soft_wrap=True)
