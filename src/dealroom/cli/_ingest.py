"""``dealroom ingest`` and ``dealroom lab import|export``: real rooms and Harvey LAB tasks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from dealroom.cli import app
from dealroom.cli.display import console
from dealroom.room import IngestProgress, IngestReport, IngestSettings
from dealroom.room._ingest import REPORT, ProgressFn

lab_app = typer.Typer(
    help="Harvey LAB tasks: import one as a room, export a room as one.", no_args_is_help=True
)
app.add_typer(lab_app, name="lab")

SHOWN_ENTRIES = 25
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@contextmanager
def _progress_bar(label: str) -> Iterator[ProgressFn]:
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
            what = p.path[-60:] if p.stage == "extract" else "building the index"
            bar.update(task, completed=p.done, total=p.total, description=what)

        yield update


def _printable(path: str) -> str:
    """A path with control characters shown as escapes (``line\\nbreak.txt``)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], path)


def _render(report: IngestReport) -> None:
    counts = report.counts()
    totals = report.manifest.totals()
    console.print(
        f"[bold green]room[/] {report.room}: {counts['ingested']} documents, "
        f"{totals['pages']:,} pages, {totals['tokens']:,} tokens, "
        f"{totals['categories']} categories in {report.seconds:.1f} s"
    )
    console.print(f"index: {report.index}")
    if not report.entries:
        return
    reasons = ", ".join(f"{reason} {n}" for reason, n in counts["by_reason"].items())
    console.print(
        f"{counts['skipped']} skipped, {counts['warnings']} with warnings ({reasons}); "
        f"full list in {report.room / REPORT}"
    )
    table = Table("file", "reason", "action", "detail")
    for e in report.entries[:SHOWN_ENTRIES]:
        table.add_row(_printable(e.path), e.reason, e.action, e.detail)
    console.print(table)
    if len(report.entries) > SHOWN_ENTRIES:
        console.print(f"... and {len(report.entries) - SHOWN_ENTRIES} more in {REPORT}")


def _bytes(megabytes: float) -> int:
    return int(megabytes * 1024 * 1024)


Src = Annotated[Path, typer.Argument(help="Folder tree of documents (PDF, DOCX, XLSX, ...).")]
RoomOut = Annotated[Path, typer.Argument(help="Where to write the room.")]
MaxMb = Annotated[float, typer.Option("--max-mb", help="Skip files larger than this (MB).")]
Workers = Annotated[int, typer.Option(help="Extraction processes.")]
NoIndex = Annotated[bool, typer.Option("--no-index", help="Do not build the index.")]
Force = Annotated[bool, typer.Option("--force", help="Replace an existing room or task at OUT.")]


@app.command()
def ingest(
    src: Src,
    out: RoomOut,
    task: Annotated[
        Path | None,
        typer.Option("--task", help="A LAB task.json whose criteria become the room's rubric."),
    ] = None,
    name: Annotated[str | None, typer.Option(help="Room name (default: the folder's).")] = None,
    max_mb: MaxMb = 100.0,
    workers: Workers = 2,
    file_timeout: Annotated[
        float, typer.Option(help="Seconds one file may take to extract (0: no limit).")
    ] = 300.0,
    include_hidden: Annotated[
        bool, typer.Option(help="Ingest dot-files and system files.")
    ] = False,
    follow_symlinks: Annotated[bool, typer.Option(help="Follow symbolic links.")] = True,
    copy_skipped: Annotated[bool, typer.Option(help="Copy skipped files too.")] = False,
    no_index: NoIndex = False,
    force: Force = False,
) -> None:
    """Turn a folder of documents into a room; list every file left out and why."""
    from dealroom.room import ingest as run_ingest
    from dealroom.room._lab import load_lab_task_file, to_room_task

    settings = IngestSettings(
        name=name,
        max_bytes=_bytes(max_mb),
        workers=workers,
        file_timeout=file_timeout,
        include_hidden=include_hidden,
        follow_symlinks=follow_symlinks,
        copy_skipped=copy_skipped,
        build_index=not no_index,
        overwrite=force,
    )
    rubric = to_room_task(load_lab_task_file(task))[0] if task else None
    with _progress_bar("extracting") as progress:
        report = run_ingest(src, out, settings, task=rubric, progress=progress)
    _render(report)


@lab_app.command("import")
def lab_import(
    task_dir: Annotated[Path, typer.Argument(help="LAB task folder: task.json, documents/.")],
    out: RoomOut,
    max_mb: MaxMb = 100.0,
    workers: Workers = 2,
    no_index: NoIndex = False,
    force: Force = False,
) -> None:
    """Import a Harvey LAB task as a room, rubric included."""
    from dealroom.room import import_lab

    settings = IngestSettings(
        max_bytes=_bytes(max_mb), workers=workers, build_index=not no_index, overwrite=force
    )
    with _progress_bar("importing") as progress:
        report = import_lab(task_dir, out, settings, progress=progress)
    _render(report)


@lab_app.command("export")
def lab_export(
    room: Annotated[Path, typer.Argument(help="A dealroom room folder.")],
    out: Annotated[Path, typer.Argument(help="Where to write the LAB task folder.")],
    force: Force = False,
) -> None:
    """Write a room as a Harvey LAB task (task.json with LAB's fields, and documents/)."""
    from dealroom.room import export_lab

    path = export_lab(room, out, overwrite=force)
    console.print(f"[bold green]LAB task[/] {path.parent}: {path.name} and documents/")
