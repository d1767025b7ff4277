"""``task.json`` as typed records: LAB's public task shape and dealroom's, with its extensions.

:class:`LabTask` is what Harvey LAB ships (``lab import`` reads it, ``lab export`` writes it);
:class:`RoomTask` is a room's ``task.json``: LAB's fields plus dealroom's ``version``, the
criterion extensions ``type``, ``finding``, ``expect`` (:class:`Expect`) and the top-level
``dealroom`` and ``canary`` keys. Loading checks every key's type (a RoomError names the file,
the key such as ``criteria[3].expect.severity``, what is allowed and what it holds); what a
schema cannot say (criterion ids like ``C-001``, "PASS if", a deliverable that is a file name,
documents and findings that exist in the room) is ``dealroom validate``'s
(:mod:`dealroom.room._validate`).

Both allow keys they do not name, at the top and in each criterion, while :class:`Expect`
refuses them: LAB's task files carry fields beyond the common ones (``language``,
``jurisdiction``, a criterion's ``sources``, ...) that import keeps and export gives back in
their order, whereas ``expect`` is dealroom's own format and an unknown key there is a typo the
reference judge would not check.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from dealroom._util.records import Migration, migrate
from dealroom._util.schema import error_lines, explain
from dealroom.errors import RoomError
from dealroom.room._manifest import TASK
from dealroom.room._room_schema import JsonRecord

TASK_VERSION = 1
"""Format version of a room's ``task.json``; a file without ``version`` (every one written so
far, and LAB's) is 1."""
TASK_MIGRATIONS: dict[int, Migration] = {}
"""Version N → the function that turns a ``task.json`` of version N into one of N + 1; none
yet. The next format change adds ``TASK_MIGRATIONS[1]`` and raises :data:`TASK_VERSION` (and
the ``Literal`` of ``RoomTask.version``)."""
CriterionType = Literal["fact", "conclusion", "citation", "severity", "recommendation",
                        "timeline", "monetary", "formatting"]
Severity = Literal["high", "medium", "low"]
_FILES = 'it maps deliverable names to file names, e.g. {"memo": "memo.md"}'


class Amount(JsonRecord):
    """An amount the deliverable must state, in USD."""

    value: float
    """The amount."""
    tolerance: float = Field(0, ge=0)
    """How far a stated amount may be from ``value`` and still match (absolute)."""


class Expect(JsonRecord):
    """What the reference judge checks for a criterion (every key optional; unknown keys are
    refused). A positive criterion passes when one paragraph states all of its elements
    together; see docs/judging.md."""

    cite: list[str] = []
    """Documents the deliverable must cite: ids (``D00042``) or paths in the room
    (``documents/03 Contracts/msa.pdf``, or ``03 Contracts/msa.pdf``), read as the ids they
    name."""
    pages: dict[str, list[int]] = {}
    """Document (id or path) → the pages (1-based) a citation of it must name."""
    amounts: list[Amount] = []
    """Amounts the deliverable must state, each ``{value, tolerance}`` in USD (the tolerance
    absolute, at least 0)."""
    dates: list[str] = []
    """ISO dates (``2026-03-31`` or ``2026-03``) the deliverable must state."""
    terms: list[list[str]] = Field([], json_schema_extra={"items": {"anyOf": [
        {"type": "string"}, {"type": "array", "items": {"type": "string"}}]}})
    """Key phrases, each a list of acceptable synonyms matched as whole words (a phrase alone
    stands for a list of one)."""
    severity: Severity | None = None
    """The severity the deliverable must give the finding: ``high``, ``medium`` or ``low``."""
    negative: bool = False
    """True: the deliverable must not make the claim that ``cite`` and ``terms`` describe."""
    sections: list[str] = []
    """Headings the deliverable must have."""
    reviewed: list[str] = []
    """For a negative criterion: documents (ids or paths) the deliverable must cite somewhere
    (the claim left out counts only where the document was reviewed)."""
    contrary: list[str] = []
    """Phrases stating the opposite polarity: a context stating one does not pass."""
    llm_only: bool = False
    """True: the terms cannot tell the polarity; the reference judge leaves it to the LLM
    judge."""

    @field_validator("terms", mode="before")
    @classmethod
    def _phrase_is_a_group(cls, value: Any) -> Any:
        return [[t] if isinstance(t, str) else t for t in value] if isinstance(value, list) \
            else value


class LabCriterion(JsonRecord):
    """One criterion of a LAB task: graded pass or fail by a judge, all weighing the same."""

    model_config = ConfigDict(extra="allow")

    id: str
    """Unique within the task, like ``C-001``."""
    title: str
    """A short name of what it checks."""
    match_criteria: str
    """The rule: ``PASS if ... [FAIL if ...]``."""
    deliverables: list[str] | None = None
    """The deliverables it grades, by name or file name; absent: every deliverable."""
    source: str | None = None
    """Who wrote it: ``expert`` or ``oracle`` in LAB, ``generator`` in a generated room."""


class Criterion(LabCriterion):
    """A criterion of a room's task: LAB's keys plus dealroom's extensions (``lab export``
    drops ``type`` and ``expect``)."""

    type: CriterionType | None = None
    """What kind of point it checks: ``fact``, ``conclusion``, ``citation``, ``severity``,
    ``recommendation``, ``timeline``, ``monetary`` or ``formatting``; absent: not counted by
    type (a warning of ``dealroom validate``)."""
    finding: str | None = None
    """The answer-key finding it belongs to (``F-001``; null for formatting criteria)."""
    expect: Expect | None = None
    """What the reference judge checks; absent: only the LLM judge can score it."""
    negative: bool = False
    """True: the deliverable must not make the claim (as ``expect.negative``)."""
    llm_only: bool = False
    """True: the reference judge leaves it to the LLM judge (as ``expect.llm_only``)."""


class _Task(JsonRecord):
    model_config = ConfigDict(extra="allow")

    title: str
    """The task's title."""
    instructions: str
    """The request the agent is given (with the deliverables' names), a partner-style
    paragraph."""
    work_type: str | None = None
    """LAB's kind of work: ``review``, ``due_diligence_memo``, ..."""
    deliverables: dict[str, str] | None = Field(None, json_schema_extra={"why": _FILES})
    """Deliverable name → the file name it is written to in the run's ``output/``; absent:
    ``{"memo": "memo.md"}`` (``dealroom validate`` asks for it in a room)."""
    tags: list[str] | None = None
    """LAB's tags."""


class LabTask(_Task):
    """LAB's public ``task.json`` (what ``lab import`` reads and ``lab export`` writes): its
    keys beyond these are kept as they are."""

    criteria: list[LabCriterion]
    """The rubric."""


class RoomTask(_Task):
    """A room's ``task.json``: LAB's task plus dealroom's extensions, its keys beyond these kept
    as they are. Checked on load after migration to the current version."""

    version: Literal[1] = 1
    """Format version (:data:`TASK_VERSION`); absent means 1, as in every file written so far
    and in LAB's."""
    criteria: list[Criterion]
    """The rubric (empty in an ingested room until one is written)."""
    dealroom: dict[str, Any] | None = None
    """Free-form notes of dealroom's (never exported to LAB)."""
    canary: str | None = None
    """The training watch's canary (``DEALROOM-CANARY-...``; never exported to LAB)."""


def migrate_task(data: dict[str, Any], where: str = TASK) -> dict[str, Any]:
    """``data`` (a task.json's content) as the current version reads it: unchanged when it is
    current, without adding ``version`` (so LAB's keys round-trip as written)."""
    if data.get("version", 1) == TASK_VERSION:
        return data
    return migrate(data, TASK_VERSION, TASK_MIGRATIONS, where, RoomError)


def check_room_task(data: Any, where: str = TASK) -> dict[str, Any]:
    """``data`` migrated and checked against :class:`RoomTask`, as written; a RoomError names
    ``where``, the key, what is allowed and what came (the first three problems)."""
    if not isinstance(data, dict):
        raise RoomError(f"{where} must hold a JSON object (a LAB task)")
    data = migrate_task(data, where)
    try:
        RoomTask.model_validate(data)
    except ValidationError as exc:
        raise RoomError(f"{where}: {explain(exc, RoomTask, limit=3)} (dealroom validate ROOM "
                        "lists every problem)") from None
    return data


def task_errors(data: dict[str, Any]) -> list[tuple[ErrorDetails, str]]:
    """Every problem :class:`RoomTask` finds in ``data`` (migrated), as (pydantic's details,
    its line)."""
    try:
        RoomTask.model_validate(data)
    except ValidationError as exc:
        return error_lines(exc, RoomTask)
    return []
