"""``dealroom ingest`` and ``dealroom lab import|export``: real rooms and Harvey LAB tasks."""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from dealroom.cli import app
from dealroom.cli.display_ingest import (
    dense_note,
    progress_bar,
    render_cuad_labels,
    render_ingest,
    render_lab_export,
)
from dealroom.errors import InputError
from dealroom.room import OCR_MODES, IngestSettings, OcrLimits

OcrMode = Enum("OcrMode", {mode: mode for mode in OCR_MODES}, type=str)  # type: ignore[misc]

lab_app = typer.Typer(
    help="Harvey LAB tasks: import one as a room, export a room as one.", no_args_is_help=True
)
app.add_typer(lab_app, name="lab")
cuad_app = typer.Typer(
    help="CUAD (expert-labelled real contracts) as a benchmark room.", no_args_is_help=True
)
app.add_typer(cuad_app, name="cuad")


def _bytes(megabytes: float) -> int:
    """``--max-mb`` in bytes; an InputError unless it is a positive, finite number."""
    if not math.isfinite(megabytes) or megabytes <= 0:
        raise InputError(f"--max-mb must be a positive number of MB, got {megabytes}")
    return max(1, int(megabytes * 1024 * 1024))


Src = Annotated[Path, typer.Argument(help="Folder tree of documents (PDF, DOCX, XLSX, ...).")]
RoomOut = Annotated[Path, typer.Argument(help="Where to write the room.")]
MaxMb = Annotated[float, typer.Option("--max-mb", help="Skip files larger than this (MB).")]
Workers = Annotated[int, typer.Option(help="Extraction processes.")]
NoIndex = Annotated[bool, typer.Option("--no-index", help="Do not build the index.")]
Force = Annotated[bool, typer.Option("--force", help="Replace an existing room or task at OUT.")]
Dense = Annotated[bool | None, typer.Option(
    "--dense/--no-dense", show_default=False,
    help="Embed the pages' passages for hybrid search (room.search: bm25 + meaning). Default: "
    "on when the [search] extra is installed. The slow part of a build on a CPU "
    "(docs/benchmarks.md).")]


def search_extra() -> bool:
    """Whether the ``[search]`` extra is installed (the CLI's default for ``--dense``)."""
    from dealroom.room import dense_installed

    return dense_installed()


def dense_choice(flag: bool | None) -> bool:
    """``--dense/--no-dense``, else whether the ``[search]`` extra is installed (a one-line
    note when it is not). ``--dense`` without the extra is a :class:`MissingDependency`
    before anything is written."""
    from dealroom.errors import MissingDependency

    installed = search_extra()
    if flag and not installed:
        raise MissingDependency("sentence-transformers", extra="search",
                                feature="--dense (passage embeddings)")
    if flag is not None:
        return flag
    if not installed:
        dense_note()
    return installed


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
    dense: Dense = None,
    force: Force = False,
    ocr: Annotated[
        OcrMode, typer.Option(help="OCR: auto (pages without a text layer, image files), "
                              "always (every PDF and image page), never.")
    ] = OcrMode.auto,  # type: ignore[attr-defined]  # made by Enum() above
    ocr_max_pages: Annotated[int, typer.Option(
        min=0, help="Pages OCR'd per document; the rest are marked ocr_page_limit (0: no limit).")
    ] = OcrLimits.max_pages,
    ocr_give_up_after: Annotated[int, typer.Option(
        min=0, help="Stop OCR'ing a document whose first this many pages read no text; the "
        "rest are marked ocr_gave_up (0: never).")
    ] = OcrLimits.give_up_after,
    ocr_page_timeout: Annotated[float, typer.Option(
        min=0, help="Seconds Tesseract may spend on one page (0: no limit).")
    ] = OcrLimits.page_timeout,
    ocr_budget: Annotated[float, typer.Option(
        min=0, help="Seconds all OCR of this ingest may take; pages not reached are marked "
        "ocr_budget (0: no limit).")
    ] = OcrLimits.budget,
) -> None:
    """Turn a folder of documents into a room; list every file left out and why.

    Scanned pages and image files (PNG, JPEG, TIFF) are read by OCR (Tesseract) where it is
    installed; `dealroom doctor` says whether it is."""
    from dealroom.room import ingest as run_ingest
    from dealroom.room import load_lab_task_file, to_room_task

    settings = IngestSettings(
        name=name,
        max_bytes=_bytes(max_mb),
        workers=workers,
        file_timeout=file_timeout,
        include_hidden=include_hidden,
        follow_symlinks=follow_symlinks,
        copy_skipped=copy_skipped,
        build_index=not no_index,
        dense=not no_index and dense_choice(dense),
        overwrite=force,
        ocr=ocr.value,
        ocr_limits=OcrLimits(max_pages=ocr_max_pages, give_up_after=ocr_give_up_after,
                             page_timeout=ocr_page_timeout, budget=ocr_budget),
    )
    rubric = to_room_task(load_lab_task_file(task))[0] if task else None
    with progress_bar("extracting") as progress:
        report = run_ingest(src, out, settings, task=rubric, progress=progress)
    render_ingest(report)


@lab_app.command("import")
def lab_import(
    task_dir: Annotated[Path, typer.Argument(
        metavar="TASK", help="LAB task folder: task.json, documents/.")],
    out: RoomOut,
    max_mb: MaxMb = 100.0,
    workers: Workers = 2,
    no_index: NoIndex = False,
    dense: Dense = None,
    force: Force = False,
) -> None:
    """Import a Harvey LAB task as a room, rubric included."""
    from dealroom.room import import_lab

    settings = IngestSettings(
        max_bytes=_bytes(max_mb), workers=workers, build_index=not no_index, overwrite=force,
        dense=not no_index and dense_choice(dense),
    )
    with progress_bar("importing") as progress:
        report = import_lab(task_dir, out, settings, progress=progress)
    render_ingest(report)


@lab_app.command("export")
def lab_export(
    room: Annotated[Path, typer.Argument(help="A dealroom room folder.")],
    out: Annotated[Path, typer.Argument(help="Where to write the LAB task folder.")],
    force: Force = False,
) -> None:
    """Write a room as a Harvey LAB task (task.json with LAB's fields, and documents/)."""
    from dealroom.room import export_lab

    path = export_lab(room, out, overwrite=force)
    render_lab_export(path)


def _listed(values: list[str] | None) -> tuple[str, ...]:
    """Repeated options and comma-separated lists alike."""
    return tuple(v.strip() for value in values or [] for v in value.split(",") if v.strip())


@cuad_app.command("import")
def cuad_import(
    cuad_dir: Annotated[Path, typer.Argument(
        help="Your copy of CUAD v1: CUAD_v1.json and/or master_clauses.csv, "
        "full_contract_txt/, full_contract_pdf/.")],
    out: RoomOut,
    contracts: Annotated[int | None, typer.Option(
        help="Import this many contracts, picked at random with --seed (default: all).")] = None,
    ids: Annotated[list[str] | None, typer.Option(
        "--ids", help="Contract titles to import (repeat, or comma-separated).")] = None,
    categories: Annotated[list[str] | None, typer.Option(
        "--categories", help="CUAD categories to judge (repeat, or comma-separated; default: "
        "the 15 diligence ones).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random pick.")] = 0,
    max_mb: Annotated[float, typer.Option("--max-mb", help=(
        "Refuse a contract larger than this (MB): its text in CUAD_v1.json, its PDF or text "
        "file."))] = 20.0,
    labels: Annotated[str, typer.Option(
        "--labels", help="Labels from CUAD_v1.json (json), master_clauses.csv (csv), or auto: "
        "the JSON where both exist.")] = "auto",
    workers: Workers = 2,
    dense: Dense = None,
    force: Force = False,
) -> None:
    """Build a room and a rubric from CUAD's expert labels (see docs/environment.md)."""
    from dealroom.room import CuadSettings, import_cuad

    settings = CuadSettings(contracts=contracts, ids=_listed(ids),
                            categories=_listed(categories), seed=seed, workers=workers,
                            overwrite=force, max_bytes=_bytes(max_mb), labels=labels,
                            dense=dense_choice(dense))
    with progress_bar("importing") as progress:
        report = import_cuad(cuad_dir, out, settings, progress=progress)
    render_ingest(report)
    render_cuad_labels(report.manifest.meta.get("cuad") or {})
