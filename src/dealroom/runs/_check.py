"""Records validated on read: ``config.json`` (:class:`~dealroom.runs.RunConfig`), trajectory
events (:data:`~dealroom.runs.TrajectoryEvent`), ``metrics.json``, ``scores.json`` and the memo
history, each by a pydantic TypeAdapter built once. A tampered or damaged run folder is an
:class:`~dealroom.errors.InputError` naming the file and the field, never a crash further on
and never a value that reaches a page unescaped as a number."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Required

from pydantic import TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from dealroom.errors import InputError
from dealroom.runs._config import RunConfig
from dealroom.runs._events import RECORD_CONFIG, TrajectoryEvent

_NOUNS = {"int_type": "an integer", "float_type": "a number", "string_type": "a string",
          "dict_type": "an object", "typed_dict_type": "an object", "list_type": "a list",
          "bool_type": "true or false"}
"""pydantic's error type → the kind it asked for, in words."""


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
class Judged(TypedDict, total=False):
    """One criterion's result (``criteria_results``) or one turn's scores (``by_turn``)."""

    pass_rate: float | None
    turn: int | None
    verdict: str | None


@with_config(RECORD_CONFIG)
class Scores(TypedDict, total=False):
    """``scores.json`` and ``scores_by_turn.json``: the keys the readers compute with."""

    pass_rate: float | None
    n_errors: int | None
    judge: dict[str, Any] | None
    summary: str | None
    pass_rate_by_type: dict[str, Any] | None
    criteria_results: list[Judged] | None
    by_turn: list[Judged] | None


@with_config(RECORD_CONFIG)
class Metrics(TypedDict, total=False):
    """``metrics.json``: the keys the readers compute with."""

    coverage: dict[str, Any] | None
    usage: dict[str, Any] | None
    behaviour: dict[str, Any] | None
    wall_s: float | None


@with_config(RECORD_CONFIG)
class MemoRecord(TypedDict, total=False):
    """One line of ``memo_history.jsonl``: the memo's edits in a turn."""

    turn: Required[int]
    ops: list[Any] | None
    chars: int | None


class Reader:
    """Validates records of one type with a TypeAdapter built on first use (and only once:
    a trajectory of thousands of events reads through the same one)."""

    def __init__(self, kind: Any, *, tagged: bool = False) -> None:
        self.kind, self.tagged = kind, tagged
        self._adapter: TypeAdapter[Any] | None = None

    def check(self, record: Any, where: str) -> None:
        """Raise InputError unless ``record`` is a JSON object that validates (``tagged``: a
        discriminated union, whose tag leads each error's location)."""
        if not isinstance(record, dict):
            raise InputError(f"{where} holds {type(record).__name__}, not a JSON object")
        if self._adapter is None:
            self._adapter = TypeAdapter(self.kind)
        try:
            self._adapter.validate_python(record)
        except ValidationError as exc:
            raise InputError(explain(exc, where, skip=1 if self.tagged else 0)) from None


CONFIG, SETTINGS, EVENT = Reader(RunConfig), Reader(RunSettings), Reader(TrajectoryEvent,
                                                                          tagged=True)
SCORES, METRICS, MEMO_RECORD = Reader(Scores), Reader(Metrics), Reader(MemoRecord)


def explain(exc: ValidationError, where: str, skip: int = 0) -> str:
    """``where: turn is 'x', not an integer: ...``: the first problem of ``exc`` in words."""
    error = exc.errors()[0]
    loc = error["loc"][skip:]
    name = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    tail = "the run folder is damaged or was edited"
    if error["type"] == "missing":
        return f"{where}: {name or 'a key'} is missing: {tail}"
    noun = _NOUNS.get(error["type"])
    if noun is None:
        return f"{where}: {name}: {error['msg']}: {tail}"
    return f"{where}: {name} is {_show(error['input'])}, not {noun}: {tail}"


def check_config(config: Any, path: Path) -> None:
    """Raise InputError for a ``config.json`` whose fields have the wrong types."""
    CONFIG.check(config, str(path))
    SETTINGS.check(config.get("settings") or {}, f"{path} settings")


def check_scores(scores: dict[str, Any], path: Path) -> dict[str, Any]:
    """``scores`` when its keys and its criteria and turns have their kinds."""
    SCORES.check(scores, str(path))
    return scores


def check_metrics(metrics: dict[str, Any], path: Path) -> dict[str, Any]:
    """``metrics`` when the keys the readers compute with have their kinds."""
    METRICS.check(metrics, str(path))
    return metrics


def check_event(event: dict[str, Any], path: Path) -> dict[str, Any]:
    """``event`` when its fields have their kinds; an InputError naming the event if not."""
    EVENT.check(event, f"{path} event seq={_show(event.get('seq'))}")
    return event


def check_fields(record: Any, kinds: Mapping[str, str | None], where: str) -> None:
    """Raise InputError unless ``record`` is an object whose named fields are None or of
    their kind (``an integer``, ``a number``, ``a string``, ``a list``, ``an object``): for
    records outside the run folder (``sweep.json`` episodes, selection filters)."""
    if not isinstance(record, dict):
        raise InputError(f"{where} holds {type(record).__name__}, not a JSON object")
    for name, kind in kinds.items():
        if not is_kind(record.get(name), kind):
            raise InputError(f"{where}: {name} is {_show(record[name])}, not {kind}: the run "
                             "folder is damaged or was edited")


def is_kind(value: Any, kind: str | None) -> bool:
    """True when ``value`` is None or of ``kind`` (bool is no number)."""
    if value is None or kind is None:
        return True
    if isinstance(value, bool):
        return False
    if kind == "an integer":
        return isinstance(value, int)
    if kind == "a number":
        return isinstance(value, int | float)
    return isinstance(value, {"a string": str, "a list": list}.get(kind, dict))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
