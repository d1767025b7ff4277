"""Records validated on read: ``config.json`` (:class:`~dealroom.runs.RunConfig`), trajectory
events (:data:`~dealroom.runs.TrajectoryEvent`), ``scores_by_turn.json`` and the memo history,
each by a pydantic TypeAdapter built once (``metrics.json`` and ``scores.json``: see
:mod:`dealroom.runs._records`). A tampered or damaged run folder is an
:class:`~dealroom.errors.InputError` naming the file and the field, never a crash further on
and never a value that reaches a page unescaped as a number."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Required

from pydantic import with_config
from typing_extensions import TypedDict

from dealroom._util.records import Record, show
from dealroom.runs._config import RunConfig
from dealroom.runs._events import RECORD_CONFIG, TrajectoryEvent


@with_config(RECORD_CONFIG)
class RunSettings(TypedDict, total=False):
    """``config.json`` ``settings``: the harness's settings the readers compute with (None
    where the setting is off)."""

    depth: int | None
    max_turns: int | None
    max_tokens: int | None
    max_cost_usd: float | None
    max_seconds: float | None
    cell_timeout: float | None
    output_limit: int | None
    sub_max_output: int | None
    slice_tokens: int | None
    temperature: float | None
    max_errors: int | None
    compact_at: float | None
    seed: int | None


@with_config(RECORD_CONFIG)
class TurnScores(TypedDict, total=False):
    """One turn's scores (``by_turn``)."""

    pass_rate: float | None
    pass_rate_positive: float | None
    all_pass: bool | None
    turn: int | None
    pass_rate_by_type: dict[str, Any] | None


@with_config(RECORD_CONFIG)
class ScoresByTurn(TypedDict, total=False):
    """``scores_by_turn.json``: the keys the readers compute with."""

    judge: dict[str, Any] | None
    by_turn: list[TurnScores] | None


@with_config(RECORD_CONFIG)
class MemoRecord(TypedDict, total=False):
    """One line of ``memo_history.jsonl``: the memo's edits in a turn."""

    turn: Required[int]
    ops: list[Any] | None
    chars: int | None


CONFIG: Record[RunConfig] = Record(RunConfig)
SETTINGS: Record[RunSettings] = Record(RunSettings)
EVENT: Record[Any] = Record(TrajectoryEvent, tagged=True)
BY_TURN: Record[ScoresByTurn] = Record(ScoresByTurn)
MEMO_RECORD: Record[MemoRecord] = Record(MemoRecord)


def check_config(config: Any, path: Path) -> None:
    """Raise InputError for a ``config.json`` whose fields have the wrong types."""
    CONFIG.read(config, str(path))
    SETTINGS.read(config.get("settings") or {}, f"{path} settings")


def check_by_turn(scores: dict[str, Any], path: Path) -> ScoresByTurn:
    """``scores_by_turn.json`` when its keys and its turns have their kinds."""
    return BY_TURN.read(scores, str(path))


def check_event(event: dict[str, Any], path: Path) -> dict[str, Any]:
    """``event`` when its fields have their kinds; an InputError naming the event if not."""
    EVENT.read(event, f"{path} event seq={show(event.get('seq'))}")
    return event
