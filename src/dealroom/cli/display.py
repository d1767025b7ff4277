"""Rendering for the CLI: tables and panels with rich. No logic lives here."""

from __future__ import annotations

from rich.console import Console

console = Console(stderr=False, highlight=False)
err_console = Console(stderr=True, highlight=False)
