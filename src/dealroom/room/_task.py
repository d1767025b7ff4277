"""What an agent is asked to do: the task's instructions and deliverables, never its rubric."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from dealroom._util.files import nested_too_deep, too_deep
from dealroom.errors import RoomError
from dealroom.room._manifest import TASK
from dealroom.room._task_schema import migrate_task, task_errors
from dealroom.runs import MEMO

DEFAULT_INSTRUCTIONS = (
    "Review the data room and write a full due diligence memo for the buyer: findings with "
    "document citations, quantified exposures, severity, and recommended next steps."
)
"""The request a room without ``task.json`` is reviewed under."""
DEFAULT_DELIVERABLES = {"memo": MEMO}
"""The deliverables of a room without ``task.json`` (or whose task names none)."""


@dataclass(frozen=True)
class Instructions:
    """The part of ``task.json`` an agent may see."""

    text: str
    """The task's ``instructions`` (the default diligence request when it has none)."""
    deliverables: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_DELIVERABLES))
    """Deliverable name → file name in the run's ``output/`` (``{"memo": "memo.md"}``)."""


def load_instructions(room: Path) -> Instructions:
    """The instructions and deliverables of ``room``'s ``task.json``.

    A room without ``task.json`` gets :data:`DEFAULT_INSTRUCTIONS`; a ``task.json`` that cannot
    be read, is not JSON, or holds instructions or deliverables of the wrong type (as
    :class:`~dealroom.room.RoomTask` says) is a :class:`~dealroom.errors.RoomError` naming the
    file and the key. The rubric is not checked here: an agent never sees it.
    """
    path = Path(room) / TASK
    if not path.exists():
        return Instructions(DEFAULT_INSTRUCTIONS)
    try:
        text = path.read_text(encoding="utf-8")
        task = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise RoomError(f"{path} cannot be read: {exc or 'nested too deep'}") from None
    if nested_too_deep(task, text):
        raise too_deep(str(path), RoomError)
    if not isinstance(task, dict):
        raise RoomError(f"{path} must hold a JSON object (a LAB task)")
    task = migrate_task(task, str(path))
    wrong = [line for error, line in task_errors(task) if error["type"] != "missing"
             and error["loc"][:1] in (("instructions",), ("deliverables",))]
    if wrong:
        raise RoomError(f"{path}: {'; '.join(wrong[:3])}")
    return Instructions(task.get("instructions") or DEFAULT_INSTRUCTIONS,
                        dict(task.get("deliverables") or DEFAULT_DELIVERABLES))
