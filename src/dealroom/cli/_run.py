"""CLI commands (see dealroom.cli)."""

from __future__ import annotations

from dealroom.cli import app  # noqa: F401
