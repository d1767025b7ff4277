"""``dealroom repl``'s session: its sub-call waves run as a run's do."""

import asyncio
import gc
from pathlib import Path

from dealroom._util.heap import YOUNG_THRESHOLD
from dealroom.harness.rlm._session import ReplSession
from dealroom.models import ScriptedModel


def collector_state(_messages: list) -> str:
    """What the collector looks like while a sub-call is answered."""
    return f"{gc.get_threshold()[0]} {gc.get_freeze_count() > 0}"


def test_a_cells_waves_keep_the_collector_off_and_the_session_hands_it_back(
        small_room: Path) -> None:
    """Issue 40 item 5: a fan-out through the REPL paid the cyclic collector's passes over the
    open room's heap on every few hundred sub-calls; a run keeps it quiet (raised young
    threshold, the heap frozen between waves), and now a REPL cell does too."""
    before = gc.get_threshold()
    sub = ScriptedModel([collector_state], cycle=True)

    async def go() -> tuple[str, tuple[int, ...], int]:
        async with ReplSession(small_room, sub) as repl:
            out = await repl.run("print(set(llm_batch(['a', 'b', 'c'])))")
            return out.text, gc.get_threshold(), gc.get_freeze_count()

    text, after_cell, frozen_after = asyncio.run(go())
    assert text.strip() == repr({f"{max(YOUNG_THRESHOLD, before[0])} True"})
    assert (after_cell, frozen_after) == (before, 0), "handed back as it was after the cell"
    assert gc.get_threshold() == before
