"""Run folders: the one definition of their format, read and written only through here.

:class:`RunFolder` (open, create, config, events, deliverables by name, metrics, scores, room),
:class:`RunRecorder` (events appended as the run goes), the typed records of ``config.json``
(:class:`RunConfig`) and of every trajectory event (:data:`EVENT_TYPES`), and
:func:`find_runs`; forks of a run at a root turn (:func:`fork_run_folder`). This package
imports nothing of dealroom but ``_util`` and ``errors``, so harnesses, measurement, judges,
evaluation and training all stand on it. See
docs/architecture.md, "Run folder".
"""

from dealroom.runs._config import RUN_VERSION, BudgetMixLabel, ForkedFrom, RunConfig
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
    TRAJECTORY,
    RunFolder,
    deliverable_key,
    primary_deliverable,
)
from dealroom.runs._fork import check_fork_copied, fork_point, fork_run_folder, root_replies
from dealroom.runs._jsonl import append_jsonl, read_jsonl
from dealroom.runs._recorder import RunRecorder

__all__ = [
    "CONFIG",
    "EPISODES",
    "EVENT_TYPES",
    "MEMO",
    "METRICS",
    "OUTPUT",
    "RUN_VERSION",
    "SCORES",
    "TRAJECTORY",
    "BudgetMixLabel",
    "Cell",
    "ChildEnd",
    "ChildStart",
    "Event",
    "ForkedFrom",
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
    "check_fork_copied",
    "deliverable_key",
    "event_fields",
    "find_runs",
    "fork_point",
    "fork_run_folder",
    "primary_deliverable",
    "read_jsonl",
    "root_replies",
]
