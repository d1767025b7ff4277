"""``dealroom demo``: generate a small room, review it with the RLM harness, judge the memo."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dealroom.harness import Listener, RunResult
    from dealroom.judge import Scores
    from dealroom.models import ModelClient

DEMO_DOCS = 12
DEMO_TOKENS = 4_000
DEMO_SETTINGS: dict[str, Any] = {"max_turns": 12, "slice_tokens": 900, "sub_max_output": 128}
"""Small enough that the embedded 135M model reads every slice in about a minute on 2 cores."""


@dataclass
class DemoResult:
    """Where the demo put things, and how the memo scored."""

    folder: Path
    room: Path
    run: RunResult
    scores: Scores


def free_folder(base: Path) -> Path:
    """``base`` if it is missing or empty, else the first free ``base-2``, ``base-3``, ..."""
    candidate, n = base, 1
    while candidate.exists() and any(candidate.iterdir()):
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


async def run_demo_async(out: Path, *, sub: str | ModelClient = "local", docs: int = DEMO_DOCS,
                         tokens: int = DEMO_TOKENS, seed: int = 7,
                         listeners: tuple[Listener, ...] = ()) -> DemoResult:
    """Generate a room under ``out``, run the scripted root with ``sub``, judge with the key."""
    from dealroom.harness import run_agent_async
    from dealroom.judge import ajudge_run, reference_judge
    from dealroom.room import generate_room

    folder = free_folder(Path(out))
    room = folder / "room"
    await asyncio.to_thread(generate_room, room, docs=docs, seed=seed, profile="bank",
                            tokens=tokens)
    run = await run_agent_async(room, folder / "run", harness="rlm", root="scripted", sub=sub,
                                listeners=listeners, **DEMO_SETTINGS)
    scores = await ajudge_run(folder / "run", judge=reference_judge())
    return DemoResult(folder, room, run, scores)


def run_demo(out: Path = Path("dealroom-demo"), *, sub: str | ModelClient = "local",
             docs: int = DEMO_DOCS, tokens: int = DEMO_TOKENS, seed: int = 7,
             listeners: tuple[Listener, ...] = ()) -> DemoResult:
    """The sync front door of :func:`run_demo_async`."""
    return asyncio.run(run_demo_async(out, sub=sub, docs=docs, tokens=tokens, seed=seed,
                                      listeners=listeners))
