"""Front doors: judge a memo file against a room, or a run folder (writes ``scores.json``).

``ajudge_memo`` / ``ajudge_run`` are the async core; ``judge_memo`` / ``judge_run`` are the sync
wrappers; :func:`judge_files` takes ``dealroom judge``'s choices (a run folder, or a room and a
memo file) and writes the scores. ``judge`` is a :class:`Judge`, a registered judge's name
(``reference``), or a model spec for the LLM judge (opened with role ``judge`` and closed
afterwards).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from dealroom._util.files import json_safe, write_json_atomic
from dealroom.errors import ConfigError, InputError
from dealroom.judge._agreement import agreement
from dealroom.judge._evidence import room_evidence
from dealroom.judge._llm import llm_judge
from dealroom.judge._registry import BASELINE, registered_judge
from dealroom.judge._scores import Judge, Scores
from dealroom.room import DEFAULT_DELIVERABLES, deliverable_text, load_task
from dealroom.runs import OUTPUT, RunFolder, ScoresRecord, primary_deliverable

if TYPE_CHECKING:
    from dealroom.models import ModelSpec


class JudgeOptions(TypedDict, total=False):
    """How a judge model is opened and asked (``dealroom judge``'s flags)."""

    batch: int
    """Criteria per judge call (``--batch``)."""
    retries: int
    """Re-asks of a call whose verdicts did not parse (``--retries``)."""
    models_file: Path | None
    """The models file the judge model's name is looked up in (``--models``)."""


def check_judge_options(batch: object = 1, retries: object = 2) -> None:
    """Raise InputError unless ``batch`` (criteria per judge call) is at least 1 and
    ``retries`` at least 0, both integers: any judge may be given them, even one that needs
    no model (``reference``)."""
    for name, value, least in (("batch", batch, 1), ("retries", retries, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise InputError(f"--{name} must be an integer of at least {least}, got {value!r}")


@asynccontextmanager
async def open_judge(
    judge: Judge | str | ModelSpec, batch: int = 1, retries: int = 2,
    models_file: Path | None = None,
) -> AsyncIterator[Judge]:
    """A ready :class:`Judge` from a judge, a registered judge's name or a judge model's spec
    (a string or a :class:`~dealroom.models.ModelSpec`); a model opened here is closed on exit."""
    named = registered_judge(judge)
    if named is not None:
        yield named
        return
    if callable(judge):
        yield judge
        return
    from dealroom.models import check, open_model

    model = open_model(judge, models_file=models_file, role="judge")
    try:
        await check(model)
        yield llm_judge(model, batch=batch, retries=retries)
    finally:
        await model.aclose()


def _ready(judge: Judge | str, task: dict[str, Any], room: Path) -> Judge | str:
    """``judge`` built when it is a registered name, after its ``check_task`` accepted ``task``."""
    judge = registered_judge(judge) or judge
    check = getattr(judge, "check_task", None)
    if check is not None:
        check(task, str(room))
    return judge


def memo_deliverables(task: dict[str, Any], memo_text: str) -> dict[str, str]:
    """Deliverables for a lone memo: the text under ``memo`` (or the task's first deliverable)."""
    names = task.get("deliverables") or DEFAULT_DELIVERABLES
    key = primary_deliverable(names)
    return {name: memo_text if name == key else "" for name in names}


async def ajudge_memo(
    room: Path, memo: str | Path, judge: Judge | str = "reference",
    **options: Unpack[JudgeOptions],
) -> Scores:
    """Score a memo against the rubric of ``room``'s ``task.json``.

    ``memo`` is the memo's text, or a :class:`~pathlib.Path` to a memo file (Markdown or text
    as written, ``.docx`` and ``.pdf`` through :func:`~dealroom.room.deliverable_text`).
    """
    task = load_task(room)
    judge = _ready(judge, task, Path(room))
    memo_text = deliverable_text(memo) if isinstance(memo, Path) else memo
    deliverables = memo_deliverables(task, memo_text)
    async with open_judge(judge, **options) as ready:
        scores = await ready(task, deliverables)
    scores.evidence = room_evidence(Path(room), task, deliverables)
    scores.extra["room"] = str(room)
    return scores


async def ajudge_run(
    run_dir: Path,
    judge: Judge | str = "reference",
    room: Path | None = None,
    compare: Judge | str | None = None,
    out: Path | None = None,
    **options: Unpack[JudgeOptions],
) -> Scores:
    """Score a run's deliverables and write ``RUN/scores.json`` (or ``out``).

    The deliverables are read from ``RUN/output/`` under the file names of the task (see
    :func:`read_deliverables`); a file that is missing is judged as empty and listed in
    ``deliverables_missing``. With
    ``compare``, the second judge's scores go to ``scores.<name>.json`` beside it and their
    agreement into both files; without it, an existing ``scores.reference.json`` is compared.
    ``room`` defaults to the room the run used.
    """
    folder = RunFolder(run_dir) if room is not None else RunFolder.open(run_dir)
    room = Path(room) if room is not None else folder.room
    task = load_task(room)
    judge = _ready(judge, task, room)
    compare = _ready(compare, task, room) if compare is not None else None
    deliverables, missing = read_deliverables(folder.path, task)
    evidence = room_evidence(room, task, deliverables)
    scores = await _score(judge, task, deliverables, options)
    scores.evidence = evidence
    scores.extra.update(run=folder.name, room=str(room), deliverables_missing=missing)
    other = None
    if compare is not None:
        other = await _score(compare, task, deliverables, options)
        other.evidence = evidence
        other.extra.update(run=folder.name, room=str(room), deliverables_missing=missing)
    elif scores.judge.get("name") != BASELINE:
        stored = folder.scores(BASELINE)
        other = Scores.from_dict(stored, task) if stored else None
    if other is not None:
        name = other.judge.get("name", "other")
        if name == scores.judge.get("name"):
            raise ConfigError("--compare needs a different judge from --judge")
        scores.extra["agreement"] = {"with": name, **agreement(scores, other)}
        other.extra["agreement"] = {"with": scores.judge.get("name"), **agreement(other, scores)}
        write_scores(folder.scores_path(name), other)
    write_scores(Path(out) if out else folder.scores_path(), scores)
    return scores


async def _score(
    judge: Judge | str, task: dict[str, Any], deliverables: dict[str, str],
    options: JudgeOptions,
) -> Scores:
    async with open_judge(judge, **options) as ready:
        return await ready(task, deliverables)


def read_deliverables(run_dir: Path, task: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Text of each of the task's deliverables in ``RUN/output/``, and the names of those not
    written.

    A deliverable is read under the file name the run recorded for it (``config.json``'s
    ``deliverables``), else the task's, with :func:`~dealroom.room.deliverable_text`: Markdown
    and text as written, ``.docx`` and ``.pdf`` through the documents' extraction.
    """
    folder = RunFolder(run_dir)
    try:
        recorded = folder.deliverables
    except ConfigError:  # output/ without config.json, judged against an explicit room
        recorded = {}
    texts, missing = {}, []
    for name, filename in (task.get("deliverables") or DEFAULT_DELIVERABLES).items():
        path = folder.path / OUTPUT / recorded.get(name, filename)
        texts[name] = deliverable_text(path) if path.is_file() else ""
        if not path.is_file():
            missing.append(name)
    return texts, missing


def write_scores(path: Path, scores: Scores) -> None:
    """Write ``scores.json`` atomically (NaN written as null)."""
    write_json_atomic(path, json_safe(scores.to_dict()))


@dataclass
class Judged:
    """What :func:`judge_files` did: the scores, and the file they were written to."""

    scores: Scores
    written: Path | None

    def to_dict(self) -> ScoresRecord:
        """``scores.json`` as written (NaN as None)."""
        return json_safe(self.scores.to_dict())


async def ajudge_files(
    run: Path | None = None, *, room: Path | None = None, memo: Path | None = None,
    judge: str = "reference", compare: str | None = None, out: Path | None = None,
    batch: int = 1, retries: int = 2, models_file: Path | None = None,
) -> Judged:
    """``dealroom judge``: a run folder (``scores.json`` written into it, or to ``out``), or a
    ``memo`` file against ``room``'s rubric (written to ``out`` when given)."""
    check_judge_options(batch, retries)
    options: JudgeOptions = {"batch": batch, "retries": retries, "models_file": models_file}
    if (run is None) == (memo is None) or (memo is not None and room is None):
        raise ConfigError("give a run folder, or --room ROOM --memo FILE (not both)")
    if run is not None:
        scores = await ajudge_run(run, judge, compare=compare, out=out, **options)
        return Judged(scores, Path(out) if out else RunFolder(run).scores_path())
    if compare is not None:
        raise ConfigError("--compare works on run folders; judge the memo twice instead")
    assert memo is not None and room is not None  # checked above
    if not Path(memo).is_file():
        raise ConfigError(f"{memo} is not a file")
    scores = await ajudge_memo(room, Path(memo), judge, **options)
    if out is not None:
        write_scores(out, scores)
    return Judged(scores, out)


def judge_files(
    run: Path | None = None, *, room: Path | None = None, memo: Path | None = None,
    judge: str = "reference", compare: str | None = None, out: Path | None = None,
    batch: int = 1, retries: int = 2, models_file: Path | None = None,
) -> Judged:
    """Sync front door of :func:`ajudge_files`."""
    return asyncio.run(ajudge_files(run, room=room, memo=memo, judge=judge, compare=compare,
                                    out=out, batch=batch, retries=retries,
                                    models_file=models_file))


def judge_memo(
    room: Path, memo: str | Path, judge: Judge | str = "reference",
    **options: Unpack[JudgeOptions],
) -> Scores:
    """Sync front door of :func:`ajudge_memo`."""
    return asyncio.run(ajudge_memo(room, memo, judge, **options))


def judge_run(run_dir: Path, judge: Judge | str = "reference", room: Path | None = None,
              compare: Judge | str | None = None, out: Path | None = None,
              **options: Unpack[JudgeOptions]) -> Scores:
    """Sync front door of :func:`ajudge_run`."""
    return asyncio.run(ajudge_run(run_dir, judge, room, compare, out, **options))
