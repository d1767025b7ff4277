"""Harvey LAB compatibility: import a LAB task folder as a room, export a room as a LAB task.

A LAB task is a folder::

    TASK/
      task.json     title, instructions, work_type, deliverables, criteria[{id, title,
                    match_criteria, deliverables, source}], tags (and any other LAB fields):
                    :class:`~dealroom.room.LabTask`
      documents/    the files the agent reads

Import keeps every field of ``task.json`` as it is and adds dealroom's criterion ``type`` (from
:func:`classify_criterion`); a missing ``source`` is filled in as ``expert`` and remembered, so
that export can take it out again. Export writes LAB's fields only: the dealroom extensions
``type`` and ``expect`` are dropped, since ``expect`` holds the answers and a LAB harness may show
the task folder to the agent.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dealroom._util.files import clear_output_dir, parse_json, write_json_atomic
from dealroom._util.schema import explain
from dealroom.errors import ConfigError, InputError, RoomError
from dealroom.room._ingest import IngestReport, IngestSettings, ProgressFn, ingest
from dealroom.room._manifest import DOCUMENTS, TASK, load_manifest, load_task
from dealroom.room._safecopy import folder_inside
from dealroom.room._task_schema import LabTask

CRITERION_EXTENSIONS = ("type", "expect")
"""Criterion keys dealroom adds to LAB's; never exported."""
TASK_EXTENSIONS = ("version", "dealroom", "canary")
"""Top-level task keys that are dealroom's own (``version``: of the room's task.json format;
``canary``: the training watch's); never exported."""

_PASS = re.compile(r"\bFAIL if\b", re.IGNORECASE)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "formatting",
            r"\b(heading|headings|section titled|formatt?(ed|ing)?|bullet|table of"
            r"|executive summary|structured|word limit|length)\b",
        ),
        (
            "monetary",
            r"[$€£¥]\s?\d|\b(USD|EUR|GBP)\s?\d|\d\s?(USD|EUR|GBP)\b"
            r"|\b\d[\d,.]*\s?(million|billion|thousand|bn|mm)\b",
        ),
        (
            "citation",
            r"\bcit(e|es|ed|ing|ation|ations)\b|\bD\d{5}\b|\bsource document\b"
            r"|\.(pdf|docx?|xlsx?|pptx?|eml|msg|csv|html?|md|txt)\b",
        ),
        (
            "recommendation",
            r"\b(recommend\w*|advis(e|es|ing)|next steps?|propos(e|es|ing)"
            r"|suggest\w*|should (seek|obtain|negotiate|require|request))\b",
        ),
        (
            "severity",
            r"\b(severity|high[- ]risk|low[- ]risk|medium[- ]risk|red flag|critical"
            r"|material(ity)? risk|deal[- ]breaker|significant risk)\b",
        ),
        (
            "timeline",
            r"\b(deadline|expir\w*|within \d+ (days|months|years)|notice period"
            r"|(January|February|March|April|May|June|July|August|September|October"
            r"|November|December)\b|\d{4}-\d{2}-\d{2}|by (the )?closing)\b",
        ),
        ("conclusion", r"\b(conclud\w*|determin\w*|assess\w*|analy[sz]\w*|whether)\b"),
    )
)


def classify_criterion(match_criteria: str) -> str:
    """Guess a criterion's dealroom ``type`` from its PASS clause (``fact`` when nothing fits).

    >>> classify_criterion("PASS if the memo states the termination fee of $88.2 million.")
    'monetary'
    >>> classify_criterion("PASS if the memo recommends obtaining consent. FAIL if $5M.")
    'recommendation'
    """
    passing = _PASS.split(match_criteria, maxsplit=1)[0]
    for kind, pattern in _RULES:
        if pattern.search(passing):
            return kind
    return "fact"


def read_lab_task(task_dir: Path) -> dict[str, Any]:
    """Read and check ``TASK/task.json``; raise :class:`ConfigError` saying what is wrong."""
    path = Path(task_dir) / TASK
    if not path.is_file():
        raise ConfigError(f"{task_dir} is not a LAB task: {TASK} is missing")
    return load_lab_task_file(path)


def load_lab_task_file(path: Path) -> dict[str, Any]:
    """Read and check a LAB ``task.json`` file (see :func:`check_lab_task`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    task = parse_json(text, str(path), ConfigError)
    check_lab_task(task, str(path))
    return task


def check_lab_task(task: Any, where: str = TASK) -> None:
    """Check ``task`` against LAB's public shape (:class:`~dealroom.room.LabTask`), then what
    the shape cannot say: unique criterion ids, a non-blank id and rule, deliverables that are
    plain file names. Raises :class:`InputError` (a ConfigError) naming the key."""
    if not isinstance(task, dict):
        raise InputError(f"{where} must hold a JSON object (a LAB task)")
    try:
        lab = LabTask.model_validate(task)
    except ValidationError as exc:
        raise InputError(f"{where}: {explain(exc, LabTask, limit=3)}") from None
    ids: set[str] = set()
    for n, criterion in enumerate(lab.criteria):
        if not criterion.id.strip():
            raise InputError(f"{where}: criteria[{n}].id is empty: LAB ids look like C-001")
        if not criterion.match_criteria.strip():
            raise InputError(f"{where}: criteria[{n}].match_criteria is empty: give the rule, "
                             "'PASS if ... [FAIL if ...]'")
        if criterion.id in ids:
            raise ConfigError(f"{where}: criterion id {criterion.id} appears twice")
        ids.add(criterion.id)
    _check_deliverable_names(where, lab.deliverables or {})


def _check_deliverable_names(where: str, deliverables: dict[str, str]) -> None:
    """Refuse deliverables that are no plain file names (``../x.md``, ``/etc/x.md``, NUL, a
    name too long): they would be written outside the run's ``output/`` folder, or not at
    all."""
    from dealroom.room._names import file_name_problem

    for name, filename in deliverables.items():
        problem = file_name_problem(filename)
        if problem:
            raise InputError(f"{where}: deliverable {name!r} names {str(filename)[:80]!r}, "
                             f"{problem}: give a file name such as memo.md")


def to_room_task(lab_task: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The room's ``task.json`` for a LAB task, and the ids whose ``source`` was filled in."""
    added: list[str] = []
    criteria = []
    for criterion in lab_task["criteria"]:
        room_criterion = dict(criterion)
        if "source" not in room_criterion:
            room_criterion["source"] = "expert"
            added.append(criterion["id"])
        room_criterion.setdefault("type", classify_criterion(criterion["match_criteria"]))
        criteria.append(room_criterion)
    return {**lab_task, "criteria": criteria}, added


def to_lab_task(room_task: dict[str, Any], added_source: Sequence[str] = ()) -> dict[str, Any]:
    """LAB's ``task.json`` for a room's task: dealroom's extensions taken out."""
    drop_source = set(added_source)
    criteria = []
    for criterion in room_task.get("criteria", []):
        lab_criterion = {k: v for k, v in criterion.items() if k not in CRITERION_EXTENSIONS}
        if criterion.get("id") in drop_source:
            lab_criterion.pop("source", None)
        criteria.append(lab_criterion)
    task = {k: v for k, v in room_task.items() if k not in TASK_EXTENSIONS}
    task["criteria"] = criteria
    return task


def import_lab(
    task_dir: Path,
    out: Path,
    settings: IngestSettings | None = None,
    *,
    progress: ProgressFn | None = None,
) -> IngestReport:
    """Turn a LAB task folder into a room at ``out``, rubric included; return the ingest report.

    Every file of ``documents/`` is copied, also those that cannot be read as text (they are
    listed in the report as ``copied``), so an export gives LAB back the same folder. A task
    that ``dealroom validate`` would reject (criterion ids, PASS clauses, a deliverable named by
    a description instead of a file name, ...) raises :class:`ConfigError` listing what to
    change, before anything is written.
    """
    task_dir = Path(task_dir)
    lab_task = read_lab_task(task_dir)
    documents = task_dir / DOCUMENTS
    if not documents.is_dir():
        raise ConfigError(f"{task_dir} is not a LAB task: {DOCUMENTS}/ is missing")
    folder_inside(documents, task_dir, f"a LAB task's {DOCUMENTS}/")
    room_task, added = to_room_task(lab_task)
    _refuse_invalid(room_task, task_dir / TASK)
    base = settings or IngestSettings()
    settings = replace(base, copy_skipped=True, name=base.name or task_dir.resolve().name)
    meta = {"lab": {"task_dir": str(task_dir.resolve()), "added_source": added}}
    return ingest(documents, out, settings, task=room_task, meta=meta, progress=progress)


def _refuse_invalid(room_task: dict[str, Any], path: Path) -> None:
    """Raise :class:`ConfigError` listing what ``dealroom validate`` would reject in the task,
    before anything is written."""
    from dealroom.room._validate import task_problems

    errors = [p for p in task_problems(room_task) if p.level == "error"]
    if errors:
        shown = "\n".join(f"  {p.where}: {p.message}" for p in errors[:20])
        more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
        raise ConfigError(f"{path} has {len(errors)} problem(s) `dealroom validate` would "
                          f"reject; change the task and import again:\n{shown}{more}")


def export_lab(room: Path, out: Path, *, overwrite: bool = False) -> Path:
    """Write the room as a LAB task folder at ``out`` (``task.json`` + ``documents/``).

    The answer key and the index stay behind. Returns the path of the written ``task.json``.
    """
    room, out = Path(room), Path(out)
    task = load_task(room)
    added = load_manifest(room).meta.get("lab", {}).get("added_source", [])
    if not (room / DOCUMENTS).is_dir():
        raise RoomError(f"{room} has no {DOCUMENTS}/ folder")
    clear_output_dir(out, marker=TASK, kind="LAB task", overwrite=overwrite)
    shutil.copytree(room / DOCUMENTS, out / DOCUMENTS, symlinks=False)
    write_json_atomic(out / TASK, to_lab_task(task, added))
    return out / TASK


