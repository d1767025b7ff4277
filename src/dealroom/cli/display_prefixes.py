"""Rendering of ``dealroom eval prefixes`` and ``eval recover``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dealroom.cli.display import console


def render_pool(info: dict[str, Any], n: int, path: Path) -> None:
    """How many prefixes of each kind were pooled from how many runs, and where."""
    counts = ", ".join(f"{kind} {count}" for kind, count in info["counts"].items())
    console.print(f"[bold]{n} prefixes[/] from {info['runs']} runs ({counts})  →  {path}")
