"""Run folders: the one definition of their format, read and written only through here.

:class:`RunFolder` (open, create, config, events, deliverables, memo history, metrics, scores,
room), :class:`RunRecorder` (events and the memo history appended as the run goes), the typed
records of ``config.json`` (:class:`RunConfig`) and of every trajectory event
(:data:`EVENT_TYPES`), and :func:`find_runs`. This package imports nothing of dealroom but
``_util`` and ``errors``, so harnesses, measurement, judges, evaluation and training all stand
on it. See docs/architecture.md, "Run folder".
"""

from dealroom.runs._config import RUN_VERSION, RunConfig
from dealroom.runs._events import (
    EVENT_TYPES,
    Cell,
    ChildEnd,
    ChildStart,
    Event,
    MemoChanged,
    ModelCall,
    Resumed,
    RunEnd,
    RunStart,
    SandboxStarted,
    Tool,
    Wave,
    event_fields,
)
from dealroom.runs._find import EPISODES, find_runs
from dealroom.runs._folder import (
    CONFIG,
    MEMO,
    METRICS,
    OUTPUT,
    SCORES,
    SCORES_BY_TURN,
    TRAJECTORY,
    RunFolder,
)
from dealroom.runs._jsonl import append_jsonl, read_jsonl
from dealroom.runs._memohistory import MEMO_HISTORY, apply_delta, memo_delta
from dealroom.runs._recorder import RunRecorder

__all__ = [
    "CONFIG",
    "EPISODES",
    "EVENT_TYPES",
    "MEMO",
    "MEMO_HISTORY",
    "METRICS",
    "OUTPUT",
    "RUN_VERSION",
    "SCORES",
    "SCORES_BY_TURN",
    "TRAJECTORY",
    "Cell",
    "ChildEnd",
    "ChildStart",
    "Event",
    "MemoChanged",
    "ModelCall",
    "Resumed",
    "RunConfig",
    "RunEnd",
    "RunFolder",
    "RunRecorder",
    "RunStart",
    "SandboxStarted",
    "Tool",
    "Wave",
    "append_jsonl",
    "apply_delta",
    "event_fields",
    "find_runs",
    "memo_delta",
    "read_jsonl",
]
