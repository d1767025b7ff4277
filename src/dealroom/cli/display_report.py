"""Rendering of ``dealroom report`` and ``dealroom view``. No logic lives here."""

from __future__ import annotations

from pathlib import Path

from dealroom.cli.display import console


def render_written(index: Path) -> None:
    console.print(f"wrote {index} (open it in a browser: {index.resolve().as_uri()})")


def render_serving(address: tuple) -> None:
    host, port = address[:2]
    console.print(f"serving on http://{host}:{port}/ (Ctrl-C stops)")
