"""Room commands: ``generate``, ``inspect`` and ``validate`` (see dealroom.cli)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dealroom.cli import app, display
from dealroom.cli._ingest import Dense, dense_choice


@app.command()
def generate(
    out: Annotated[Path, typer.Argument(help="New or empty folder to write the room to.")],
    docs: Annotated[int, typer.Option("--docs", "-n", help="Number of documents.")] = 20,
    seed: Annotated[
        int, typer.Option(help="Random seed; same arguments and --secret, same bytes.")
    ] = 0,
    profile: Annotated[str, typer.Option(help="bank, software or manufacturer.")] = "bank",
    tokens: Annotated[
        str | None, typer.Option(help="Total tokens, e.g. 31M or 500k (default 13,600 a doc).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="Worker processes (default: CPUs, at most 4).")
    ] = None,
    secret: Annotated[
        str | None,
        typer.Option(envvar="DEALROOM_ROOM_SECRET", show_envvar=True,
                     help="The room's secret (default: a fresh one, kept in "
                     "answer_key/generation.json); give it back to regenerate the same bytes."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary.")] = False,
    dense: Dense = None,
) -> None:
    """Generate a synthetic diligence data room with an expert-style rubric."""
    from dealroom.room import GenerateSettings, build_index, generate_room, inspect_room

    settings = GenerateSettings.model_validate({  # tokens: 31M, 500k, ... (parse_count)
        "docs": docs, "seed": seed, "profile": profile, "tokens": tokens or None,
        "workers": workers, "secret": secret})
    with display.generation_progress(settings.docs, quiet=as_json) as progress:
        generate_room(out, settings.docs, settings.seed, settings.profile, settings.tokens,
                      secret=settings.secret, workers=settings.workers, progress=progress)
    if dense_choice(dense):  # the index with its embeddings now (else built on first open)
        with display.generation_progress(1, quiet=as_json, label="indexing") as progress:
            build_index(out, progress=lambda stage, done, total: progress(done, total),
                        dense=True)
    info = inspect_room(out)
    if as_json:
        display.render_json(info)
    else:
        display.render_room_summary(info, out)


@app.command("inspect")
def inspect_command(
    room: Annotated[Path, typer.Argument(help="Room folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """What a room holds: its outline (each category and folder with its documents, tokens,
    pages and size), formats, findings and criteria by type."""
    from dealroom.room import inspect_room

    info = inspect_room(room)
    if as_json:
        display.render_json(info)
    else:
        display.render_room_summary(info, room)
        display.render_outline(info)


@app.command()
def validate(
    room: Annotated[Path, typer.Argument(help="Room folder (generated or hand-made).")],
    deep: Annotated[
        bool, typer.Option(help="Also open every document: pages, tokens, evidence facts.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Check a room against the room format; exit status 1 if it is invalid."""
    from dealroom.room import validate_room

    problems = validate_room(room, deep=deep)
    valid = not any(p.level == "error" for p in problems)
    if as_json:
        display.render_json({"room": str(room), "valid": valid,
                             "problems": [p.to_dict() for p in problems]})
    else:
        display.render_problems(problems, room)
    if not valid:
        raise typer.Exit(1)
