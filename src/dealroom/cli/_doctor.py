"""``dealroom doctor``: what this machine has for dealroom, and the fix for what it lacks."""

from __future__ import annotations

from pathlib import Path

import typer

from dealroom.cli import app


@app.command()
def doctor(
    isolation: str = typer.Option(
        "auto", help="Isolation level to try: auto, namespaces+uid, userns, rlimits."),
    models: Path = typer.Option(
        None, "--models", help="Models file whose models to check (default: the one found)."),
    start_local: bool = typer.Option(
        True, "--start-local/--no-start-local",
        help="Start the embedded model's server for a moment (not only find its GGUF)."),
    as_json: bool = typer.Option(False, "--json", help="Print every check as one JSON object."),
    strict: bool = typer.Option(
        False, "--strict", help="Exit 1 on any warn line too (pin drift, a weaker sandbox, the "
                                "embedded model or a model of the default models file not "
                                "reachable)."),
) -> None:
    """Python and packages (drift from the pins), extras, the sandbox's confinement, the
    embedded model, the models file's models, Ray, torch and GPUs, free disk. Each problem
    comes with its fix.

    Exits 1 when something needed is missing (a fail line): a core package, a sandbox that
    does not start, under 1 GiB of free disk, or with --models FILE a model FILE names that is
    not reachable (a model of the models file found by default is a warn line); with --strict
    also on any warn line; else 0.
    """
    from dealroom import diagnose
    from dealroom.cli.display import render_json
    from dealroom.cli.display_doctor import render_diagnosis

    result = diagnose(isolation=isolation, models_file=models, start_local=start_local)
    data = result.to_dict()
    warned = any(c.status == "warn" for c in result.checks)
    if as_json:
        render_json(data, indent=2)
    else:
        render_diagnosis(data, strict=strict)
    raise typer.Exit(0 if result.ok and not (strict and warned) else 1)
