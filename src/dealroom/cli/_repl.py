"""``dealroom repl``'s terminal front ends over a ReplSession: one cell (``-c``) or a loop."""

from __future__ import annotations

import asyncio
import codeop
from pathlib import Path

from dealroom.cli.display import (
    render_cell,
    render_degraded,
    render_repl_banner,
    render_repl_exit,
)
from dealroom.harness.rlm import RLMSettings, open_repl


async def one_cell(room: Path, sub: str, code: str, settings: RLMSettings,
                   models: Path | None, concurrency: int | None) -> bool:
    """Run ``code`` as one cell; True when it did not raise."""
    async with open_repl(room, sub, settings=settings, models_file=models,
                         concurrency=concurrency) as session:
        render_degraded(session.sandbox.degraded)
        out = await session.run(code)
    render_cell(out)
    return out.error is None


async def interact(room: Path, sub: str, settings: RLMSettings, models: Path | None,
                   concurrency: int | None) -> None:
    """A read-eval-print loop with continuation lines, like Python's own."""
    async with open_repl(room, sub, settings=settings, models_file=models,
                         concurrency=concurrency) as session:
        render_repl_banner(room, session.sandbox.isolation)
        render_degraded(session.sandbox.degraded)
        while (code := await _read_cell()) is not None:
            if code.strip():
                render_cell(await session.run(code))


async def _read_cell() -> str | None:
    lines: list[str] = []
    while True:
        try:
            line = await asyncio.to_thread(input, "... " if lines else ">>> ")
        except EOFError:
            render_repl_exit()
            return None
        lines.append(line)
        source = "\n".join(lines)
        try:
            if codeop.compile_command(source, "<cell>", "exec") is not None:
                return source
        except SyntaxError:
            return source  # let the REPL report it
