"""Rendering of ``dealroom report`` and ``dealroom view``. No logic lives here."""

from __future__ import annotations

from pathlib import Path

from dealroom.cli.display import console, render_facts


def render_written(index: Path) -> None:
    """Where the page is, and its address for a browser, each path on a line of its own."""
    render_facts([], [("wrote", index), ("open", index.resolve().as_uri())])


def render_serving(address: tuple) -> None:
    host, port = address[:2]
    console.print(f"serving on http://{host}:{port}/ (Ctrl-C stops)")


def render_exported(logs: list[Path], out: Path) -> None:
    """Each log written, then how to open them."""
    for log in logs:
        console.print(f"wrote {log}", soft_wrap=True, highlight=False)
    console.print(f"open: inspect view --log-dir {out}", soft_wrap=True, highlight=False)
