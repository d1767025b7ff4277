"""Run folders: the one definition of their format, read and written only through here.

:class:`RunFolder` (open, create, config, events, deliverables by name, memo history, metrics,
scores, room), :class:`RunRecorder` (events and the memo history appended as the run goes,
each event checked against its type's record), the typed records of ``config.json``
(:class:`RunConfig`, brought to the current version by :func:`migrate_config`), of every
trajectory event (:data:`EVENT_TYPES`, validated on read as :data:`TrajectoryEvent`), of
``metrics.json`` (:class:`Metrics`) and ``scores.json`` (:class:`ScoresRecord`, checked on
write by :func:`check_scores_written`), each versioned with its migration table, and of the
token-exact side file (:class:`TokenRecord` in ``tokens.jsonl``), an agent's conversation
rebuilt from its events (:func:`agent_conversation`), forks of a run at a root turn
(:func:`fork_run_folder`), and :func:`find_runs`. Every record is written without the
secrets the process knows (:func:`add_secret` adds one; :func:`redact` applies them to any
text). This package imports nothing of dealroom
but ``_util`` and ``errors``, so harnesses, measurement, judges, evaluation and training all
stand on it. See docs/architecture.md, "Run folder".
"""

from dealroom._util.redact import add_secret, redact
from dealroom.runs._config import (
    RUN_VERSION,
    BudgetMixLabel,
    ForkedFrom,
    ModelRecord,
    RunConfig,
    migrate_config,
    model_prices,
)
from dealroom.runs._conversation import (
    Conversation,
    Segment,
    agent_conversation,
    agent_segments,
    whole_reply,
)
from dealroom.runs._events import (
    EVENT_TYPES,
    Cell,
    ChildEnd,
    ChildStart,
    Compaction,
    Event,
    MemoChanged,
    ModelCall,
    Resumed,
    RunEnd,
    RunStart,
    SandboxStarted,
    Tool,
    TrajectoryEvent,
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
    deliverable_key,
    primary_deliverable,
)
from dealroom.runs._fork import check_fork_copied, fork_point, fork_run_folder, root_replies
from dealroom.runs._jsonl import append_jsonl, read_jsonl
from dealroom.runs._memohistory import MEMO_HISTORY, apply_delta, memo_delta
from dealroom.runs._recorder import RunRecorder
from dealroom.runs._records import (
    METRICS_MIGRATIONS,
    METRICS_VERSION,
    SCORES_MIGRATIONS,
    SCORES_VERSION,
    Behaviour,
    CoverageGroup,
    CoverageSummary,
    EvidenceRecord,
    Metrics,
    RootShare,
    ScoresRecord,
    UsageRecord,
    UsageSummary,
    check_scores_written,
)
from dealroom.runs._tokens import TOKENS, TokenRecord, read_all_tokens, read_tokens, write_tokens

__all__ = [
    "CONFIG",
    "EPISODES",
    "EVENT_TYPES",
    "MEMO",
    "MEMO_HISTORY",
    "METRICS",
    "METRICS_MIGRATIONS",
    "METRICS_VERSION",
    "OUTPUT",
    "RUN_VERSION",
    "ModelRecord",
    "SCORES",
    "SCORES_MIGRATIONS",
    "SCORES_VERSION",
    "SCORES_BY_TURN",
    "TOKENS",
    "TRAJECTORY",
    "Behaviour",
    "BudgetMixLabel",
    "Cell",
    "ChildEnd",
    "ChildStart",
    "Compaction",
    "Conversation",
    "CoverageGroup",
    "CoverageSummary",
    "Event",
    "EvidenceRecord",
    "ForkedFrom",
    "MemoChanged",
    "Metrics",
    "ModelCall",
    "Resumed",
    "RootShare",
    "RunConfig",
    "RunEnd",
    "RunFolder",
    "RunRecorder",
    "RunStart",
    "SandboxStarted",
    "ScoresRecord",
    "Segment",
    "TokenRecord",
    "Tool",
    "TrajectoryEvent",
    "UsageRecord",
    "UsageSummary",
    "Wave",
    "add_secret",
    "agent_conversation",
    "agent_segments",
    "append_jsonl",
    "apply_delta",
    "check_fork_copied",
    "check_scores_written",
    "deliverable_key",
    "event_fields",
    "find_runs",
    "fork_point",
    "fork_run_folder",
    "memo_delta",
    "migrate_config",
    "model_prices",
    "primary_deliverable",
    "read_all_tokens",
    "read_jsonl",
    "read_tokens",
    "redact",
    "root_replies",
    "whole_reply",
    "write_tokens",
]
