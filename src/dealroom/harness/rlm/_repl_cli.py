"""Terminal front ends of :class:`ReplSession`: one cell (``-c``) or an interactive loop."""

from __future__ import annotations

import asyncio
import codeop
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from dealroom.harness._api import open_models
from dealroom.harness.rlm._run import HARNESS
from dealroom.harness.rlm._session import CellOutput, ReplSession
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.models import visible_controls

BANNER = """dealroom REPL over {room} (sandbox: {isolation}).
Names: room, llm, llm_batch, rlm, memo, budget, submit. Ctrl-D to leave."""


def _show(out: CellOutput) -> None:
    """Print a cell's output; control characters are shown escaped, never sent raw."""
    for text, stream in ((out.text, sys.stdout), (out.error, sys.stderr)):
        if text:
            text = visible_controls(text)
            stream.write(text if text.endswith("\n") else text + "\n")


@contextlib.asynccontextmanager
async def _session(room: Path, sub: str, settings: RLMSettings, models: Path | None,
                   concurrency: int | None) -> AsyncIterator[ReplSession]:
    async with (
        open_models(HARNESS, "scripted", sub, models_file=models,
                    concurrency=concurrency) as (_, sub_client),
        ReplSession(room, sub_client, settings) as session,
    ):
        yield session


async def one_cell(room: Path, sub: str, code: str, settings: RLMSettings,
                   models: Path | None, concurrency: int | None) -> bool:
    """Run ``code`` as one cell; True when it did not raise."""
    async with _session(room, sub, settings, models, concurrency) as session:
        out = await session.run(code)
    _show(out)
    return out.error is None


async def interact(room: Path, sub: str, settings: RLMSettings, models: Path | None,
                   concurrency: int | None) -> None:
    """A read-eval-print loop with continuation lines, like Python's own."""
    async with _session(room, sub, settings, models, concurrency) as session:
        print(BANNER.format(room=room, isolation=session.sandbox.isolation))
        while (code := await _read_cell()) is not None:
            if code.strip():
                _show(await session.run(code))


async def _read_cell() -> str | None:
    lines: list[str] = []
    while True:
        try:
            line = await asyncio.to_thread(input, "... " if lines else ">>> ")
        except EOFError:
            print()
            return None
        lines.append(line)
        source = "\n".join(lines)
        try:
            if codeop.compile_command(source, "<cell>", "exec") is not None:
                return source
        except SyntaxError:
            return source  # let the REPL report it
