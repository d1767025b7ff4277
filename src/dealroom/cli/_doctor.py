"""``dealroom doctor``: what confines the REPL sandbox on this machine."""

from __future__ import annotations

import asyncio

import typer

from dealroom.cli import app


@app.command()
def doctor(
    isolation: str = typer.Option(
        "auto", help="Isolation level to try: auto, namespaces+uid, userns, rlimits."),
) -> None:
    """Start a throwaway sandbox and show what is in force here and what is weaker."""
    from dealroom.cli.display import render_confinement
    from dealroom.harness.sandbox import check_confinement

    render_confinement(*asyncio.run(check_confinement(isolation)))
