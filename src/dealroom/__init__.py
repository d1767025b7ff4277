"""dealroom: run, judge, evaluate and post-train recursive language model agents on data rooms.

The public API, imported lazily so ``import dealroom`` stays fast:

    generate_room   make a synthetic data room with a rubric     (dealroom.room)
    Room            open a room: tree, docs, grep, search         (dealroom.room)
    run_agent       run the RLM or tool-loop harness on a room    (dealroom.harness)
    resume_run      finish an interrupted run                     (dealroom.harness)
    fork_run        continue a run after root turn J, another root (dealroom.harness)
    ask_run         a follow-up question on a finished run        (dealroom.harness)
    judge_run       score a run's memo against the rubric         (dealroom.judge)
    judge_memo      score any memo file against a room's rubric   (dealroom.judge)
    metrics_from_run  coverage, accounting, behaviour of a run    (dealroom.measure)
    run_demo        the main job end to end, offline              (dealroom._demo)
    run_demo_async  its async core; DEMO_DOCS its room's size     (dealroom._demo)
    diagnose        what this machine has for dealroom (doctor)   (dealroom._doctor)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "generate_room": "dealroom.room",
    "Room": "dealroom.room",
    "run_agent": "dealroom.harness",
    "resume_run": "dealroom.harness",
    "judge_run": "dealroom.judge",
    "judge_memo": "dealroom.judge",
    "metrics_from_run": "dealroom.measure",
    "run_demo": "dealroom._demo",
    "run_demo_async": "dealroom._demo",
    "DEMO_DOCS": "dealroom._demo",
    "diagnose": "dealroom._doctor",
    "fork_run": "dealroom.harness",
    "ask_run": "dealroom.harness",
}

if TYPE_CHECKING:  # what type checkers and editors see (a test keeps it to _EXPORTS)
    from dealroom._demo import DEMO_DOCS, run_demo, run_demo_async
    from dealroom._doctor import diagnose
    from dealroom.harness import ask_run, fork_run, resume_run, run_agent
    from dealroom.judge import judge_memo, judge_run
    from dealroom.measure import metrics_from_run
    from dealroom.room import Room, generate_room

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'dealroom' has no attribute {name!r}")
