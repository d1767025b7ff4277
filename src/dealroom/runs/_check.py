"""Types checked on read: the fields of ``config.json`` and of trajectory events that readers
compute with (``seq``, ``turn``, ``max_turns``, ...). A tampered or damaged run folder is an
:class:`~dealroom.errors.InputError` naming the file and the field, never a crash further on
and never a value that reaches a page unescaped as a number."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dealroom.errors import InputError

_INT, _NUM, _STR, _DICT, _LIST = "an integer", "a number", "a string", "an object", "a list"
CONFIG_FIELDS = {"version": _INT, "harness": _STR, "room": _STR, "root": _STR, "sub": _STR,
                 "settings": _DICT, "models": _DICT, "deliverables": _DICT,
                 "concurrency": _INT, "started_at": _STR, "forked_from": _DICT,
                 "budgetmix": _DICT}
"""``config.json`` keys and their kind (None is allowed where the format allows it)."""
SETTINGS_FIELDS = {"depth": _INT, "max_turns": _INT, "max_tokens": _INT, "max_cost_usd": _NUM,
                   "max_seconds": _NUM, "cell_timeout": _NUM, "output_limit": _INT,
                   "sub_max_output": _INT, "slice_tokens": _INT, "temperature": _NUM,
                   "max_errors": _INT, "compact_at": _NUM, "seed": _INT}
EVENT_FIELDS = {"seq": _INT, "t": _NUM, "type": _STR, "agent": _STR, "depth": _INT,
                "turn": _INT, "wave": _INT, "calls": _INT, "ok": _INT, "failed": _INT,
                "role": _STR, "model": _STR, "call_id": _STR}
SCORES_FIELDS = {"pass_rate": _NUM, "n_errors": _INT, "judge": _DICT, "summary": _STR,
                 "pass_rate_by_type": _DICT, "criteria_results": _LIST, "by_turn": _LIST}
"""``scores.json`` (and ``scores_by_turn.json``) keys the readers compute with."""
METRICS_FIELDS = {"coverage": _DICT, "usage": _DICT, "behaviour": _DICT, "wall_s": _NUM}
"""``metrics.json`` keys the readers compute with."""
"""Event fields that every event type holding them gives the same kind (``turns`` is a count
in ``run_end``, a list in ``compaction``: not checked here)."""


def is_kind(value: Any, kind: str | None) -> bool:
    """True when ``value`` is None or of ``kind`` (bool is no number)."""
    if value is None or kind is None:
        return True
    if isinstance(value, bool):
        return False
    if kind == _INT:
        return isinstance(value, int)
    if kind == _NUM:
        return isinstance(value, int | float)
    return isinstance(value, {_STR: str, _LIST: list}.get(kind, dict))


def check_fields(record: Any, kinds: Mapping[str, str | None], where: str) -> None:
    """Raise InputError unless ``record`` is an object whose known fields have their kinds."""
    if not isinstance(record, dict):
        raise InputError(f"{where} holds {type(record).__name__}, not a JSON object")
    for name, kind in kinds.items():
        if not is_kind(record.get(name), kind):
            raise InputError(f"{where}: {name} is {_show(record[name])}, not {kind}: the run "
                             "folder is damaged or was edited")


def check_config(config: Any, path: Path) -> None:
    """Raise InputError for a ``config.json`` whose fields have the wrong types."""
    check_fields(config, CONFIG_FIELDS, str(path))
    check_fields(config.get("settings") or {}, SETTINGS_FIELDS, f"{path} settings")
    deliverables = config.get("deliverables") or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in deliverables.items()):
        raise InputError(f"{path}: deliverables must map names to file names (strings)")


def check_scores(scores: dict[str, Any], path: Path) -> dict[str, Any]:
    """``scores`` when its keys and its criteria and turns have their kinds."""
    check_fields(scores, SCORES_FIELDS, str(path))
    for name in ("criteria_results", "by_turn"):
        for n, item in enumerate(scores.get(name) or []):
            check_fields(item, {"pass_rate": _NUM, "turn": _INT, "verdict": _STR},
                         f"{path} {name}[{n}]")
    return scores


def check_event(event: dict[str, Any], path: Path) -> dict[str, Any]:
    """``event`` when its fields have their kinds; an InputError naming the event if not."""
    check_fields(event, EVENT_FIELDS, f"{path} event seq={_show(event.get('seq'))}")
    return event


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
