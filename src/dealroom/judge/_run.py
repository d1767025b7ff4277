"""Front doors: judge a memo file against a room, or a run folder (writes ``scores.json``).

``ajudge_memo`` / ``ajudge_run`` are the async core; ``judge_memo`` / ``judge_run`` are the sync
wrappers. ``judge`` is a :class:`Judge`, ``"reference"``, or a model spec for the LLM judge
(opened with role ``judge`` and closed afterwards).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from dealroom._util.files import write_json_atomic
from dealroom.errors import ConfigError
from dealroom.judge._agreement import agreement
from dealroom.judge._llm import llm_judge
from dealroom.judge._reference import reference_judge
from dealroom.judge._scores import Judge, Scores
from dealroom.measure._runfiles import SCORES, json_safe, read_json_if_exists, room_of_run
from dealroom.room import load_task

OUTPUT = "output"


@asynccontextmanager
async def open_judge(
    judge: Judge | Any, batch: int = 1, retries: int = 2, models_file: Path | None = None
) -> AsyncIterator[Judge]:
    """A ready :class:`Judge` from a judge, ``"reference"`` or a judge model's spec (a string
    or a :class:`~dealroom.models.ModelSpec`); a model opened here is closed on exit."""
    if judge == "reference":
        yield reference_judge()
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


def load_rubric(room: Path, *judges: Any) -> dict[str, Any]:
    """The room's ``task.json``; refuse the reference judge when no criterion has ``expect``."""
    task = load_task(room)
    wants_reference = any(j == "reference" for j in judges)
    if wants_reference and not any(c.get("expect") for c in task.get("criteria", [])):
        raise ConfigError(
            f"the rubric of {room} has no expect blocks (only generated rooms have them), so "
            "the reference judge cannot score it: pass --judge MODEL for the LLM judge"
        )
    return task


def memo_deliverables(task: dict[str, Any], memo_text: str) -> dict[str, str]:
    """Deliverables for a lone memo: the text under ``memo`` (or the task's first deliverable)."""
    names = list(task.get("deliverables") or {"memo": "memo.md"})
    key = "memo" if "memo" in names else names[0]
    return {name: memo_text if name == key else "" for name in names}


async def ajudge_memo(
    room: Path, memo: str | Path, judge: Judge | str = "reference", **options: Any
) -> Scores:
    """Score a memo against the rubric of ``room``'s ``task.json``.

    ``memo`` is the memo's text, or a :class:`~pathlib.Path` to a memo file.
    """
    task = load_rubric(room, judge)
    memo_text = Path(memo).read_text(encoding="utf-8") if isinstance(memo, Path) else memo
    async with open_judge(judge, **options) as ready:
        scores = await ready(task, memo_deliverables(task, memo_text))
    scores.extra["room"] = str(room)
    return scores


async def ajudge_run(
    run_dir: Path,
    judge: Judge | str = "reference",
    room: Path | None = None,
    compare: Judge | str | None = None,
    out: Path | None = None,
    **options: Any,
) -> Scores:
    """Score a run's deliverables and write ``RUN/scores.json`` (or ``out``).

    The deliverables are read from ``RUN/output/`` under the file names of the task; a file
    that is missing is judged as empty and listed in ``deliverables_missing``. With
    ``compare``, the second judge's scores go to ``scores.<name>.json`` beside it and their
    agreement into both files; without it, an existing ``scores.reference.json`` is compared.
    """
    run_dir = Path(run_dir)
    room = Path(room) if room is not None else room_of_run(run_dir)
    task = load_rubric(room, judge, compare)
    deliverables, missing = read_deliverables(run_dir, task)
    scores = await _score(judge, task, deliverables, options)
    scores.extra.update(run=run_dir.name, room=str(room), deliverables_missing=missing)
    other = None
    if compare is not None:
        other = await _score(compare, task, deliverables, options)
        other.extra.update(run=run_dir.name, room=str(room), deliverables_missing=missing)
    elif scores.judge.get("name") != "reference":
        stored = read_json_if_exists(run_dir / "scores.reference.json")
        other = Scores.from_dict(stored, task) if stored else None
    if other is not None:
        name = other.judge.get("name", "other")
        if name == scores.judge.get("name"):
            raise ConfigError("--compare needs a different judge from --judge")
        scores.extra["agreement"] = {"with": name, **agreement(scores, other)}
        other.extra["agreement"] = {"with": scores.judge.get("name"), **agreement(other, scores)}
        write_scores(run_dir / f"scores.{name}.json", other)
    write_scores(Path(out) if out else run_dir / SCORES, scores)
    return scores


async def _score(
    judge: Judge | str, task: dict[str, Any], deliverables: dict[str, str], options: Any
) -> Scores:
    async with open_judge(judge, **options) as ready:
        return await ready(task, deliverables)


def read_deliverables(run_dir: Path, task: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Text of each deliverable in ``RUN/output/``, and the names of those not written."""
    texts, missing = {}, []
    for name, filename in (task.get("deliverables") or {"memo": "memo.md"}).items():
        path = Path(run_dir) / OUTPUT / filename
        if path.is_file():
            texts[name] = path.read_text(encoding="utf-8", errors="replace")
        else:
            texts[name] = ""
            missing.append(name)
    return texts, missing


def write_scores(path: Path, scores: Scores) -> None:
    """Write ``scores.json`` atomically (NaN written as null)."""
    write_json_atomic(path, json_safe(scores.to_dict()))


def judge_memo(
    room: Path, memo: str | Path, judge: Judge | str = "reference", **options: Any
) -> Scores:
    """Sync front door of :func:`ajudge_memo`."""
    return asyncio.run(ajudge_memo(room, memo, judge, **options))


def judge_run(run_dir: Path, judge: Judge | str = "reference", **options: Any) -> Scores:
    """Sync front door of :func:`ajudge_run`."""
    return asyncio.run(ajudge_run(run_dir, judge, **options))
