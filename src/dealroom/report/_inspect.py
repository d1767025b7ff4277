"""``dealroom export inspect RUN... --out DIR``: runs as inspect_ai evaluation logs.

Each run folder (each episode of a sweep) becomes ``DIR/NAME.eval``, written with inspect_ai's
own log types (``inspect_ai.log.write_eval_log``), so ``inspect view --log-dir DIR`` lists
them and ``inspect_ai.log.read_eval_log`` reads them. One log holds one sample:

    EvalSpec      task ``dealroom/<harness>``, the policy as ``task_args`` (root and sub
                  specs, room, depth, T), the room as the dataset, the root's model as
                  the model and the sub-agents' as ``model_roles`` (``sub``, and
                  ``sub.NAME`` for each named one), the run's
                  settings as ``solver_args``, config.json's names under ``metadata``
    sample        id: the run's name; input: the task and the room (the root's first prompt);
                  target: the rubric's criteria (when judged); messages: the root's turns
                  with each cell as a ``python`` tool call and its output; events: see
                  ``_inspect_events``; output: the memo; scores: ``rubric`` (the pass
                  rate, the judge's verdict per criterion in its metadata); model and role
                  usage with cost; total time; the run's end as ``metadata`` (and ``error``
                  when it ended in one); each follow-up question (``dealroom ask``) and
                  its answer after the run's messages, and in full under ``metadata.asks``
    results       the ``rubric`` score's mean (the run's pass rate)

Needs the ``inspect`` extra (``pip install "dealroom[inspect]"``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.files import make_dir
from dealroom.errors import ConfigError, MissingDependency
from dealroom.report._inspect_events import (
    chat_message,
    sample_events,
    sample_messages,
    usage_of,
)
from dealroom.report._listing import run_name, unique_name
from dealroom.report._trace import model_name, trace_summary
from dealroom.runs import RunFolder, find_runs, primary_deliverable

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ModelConfig

SCORE = "rubric"
"""The name of the judge's score in the logs."""
ERRORS = ("error",)
"""Run statuses an inspect log reports as ``error``."""


def export_inspect(sources: Iterable[Path], out: Path, *,
                   progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Write each run folder ``sources`` name (run folders, sweeps, folders of them) as an
    inspect_ai log ``out/NAME.eval``; the files written, in order. A log of the same name is
    replaced; other files in ``out`` are refused (a ConfigError) before anything is written."""
    _require()
    sources = [Path(s) for s in sources]
    named = [(run, name) for source in sources for run, name in _names(source)]
    if not named:
        raise ConfigError("give at least one run folder or sweep to export")
    out = Path(out)
    _check_out(out)
    written: list[Path] = []
    taken: set[str] = set()
    for n, (run, name) in enumerate(named):
        name = unique_name(name, taken)
        taken.add(name)
        written.append(write_inspect_log(run, out / f"{name}.eval"))
        if progress:
            progress(n + 1, len(named))
    return written


def write_inspect_log(run: Path, path: Path) -> Path:
    """Write the run folder ``run`` as the inspect_ai log ``path`` (``.eval`` or ``.json``)."""
    from inspect_ai.log import write_eval_log

    write_eval_log(eval_log(run), str(path))
    return path


def eval_log(run: Path) -> EvalLog:
    """The run folder ``run`` as an inspect_ai ``EvalLog`` of one sample (see the module)."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalError, EvalLog, EvalSpec, EvalStats

    _require()
    folder = RunFolder.open(Path(run))
    events = folder.events()
    config: dict[str, Any] = dict(folder.config)
    summary = trace_summary(folder, events, [])
    start = _started(config, folder.path)
    sample = _sample(folder, events, summary, start)
    settings: dict[str, Any] = dict(config.get("settings") or {})
    status = _status(summary)
    ident = hashlib.sha256(str(folder.path.resolve()).encode()).hexdigest()[:22]
    spec = EvalSpec(
        eval_id=ident, run_id=ident, task_id=ident, created=start.isoformat(),
        task=f"dealroom/{config.get('harness') or 'rlm'}",
        task_display_name=f"{summary['room']}: {folder.name}",
        dataset=EvalDataset(name=summary["room"], location=str(config.get("room") or ""),
                            samples=1, sample_ids=[sample.id]),
        task_args=_policy(config, summary["room"]),
        model=_model(config, "root"), model_roles=_roles(config),
        solver=str(config.get("harness") or "rlm"), solver_args=settings,
        config=EvalConfig(epochs=1), packages=_packages(),
        metadata={"run": str(folder.path), "root": config.get("root"),
                  "sub": config.get("sub"), "subs": config.get("subs"),
                  "room": config.get("room"),
                  "started_at": config.get("started_at")})
    end = sample.completed_at or start.isoformat()
    return EvalLog(
        status=status, eval=spec, samples=[sample], results=_results(sample),
        stats=EvalStats(started_at=start.isoformat(), completed_at=end,
                        model_usage=sample.model_usage, role_usage=sample.role_usage),
        error=EvalError(message=summary.get("reason") or "the run failed", traceback="",
                        traceback_ansi="") if status == "error" else None)


def _sample(folder: RunFolder, events: list[dict[str, Any]], summary: dict[str, Any],
            start: datetime) -> EvalSample:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput

    settings: dict[str, Any] = dict(folder.config.get("settings") or {})
    asks = _asks(folder.path)
    messages = sample_messages(events) + [m for a in asks for m in _ask_messages(a)]
    memo = folder.read_deliverable(primary_deliverable(folder.deliverables)) or ""
    usage = summary.get("usage") or {}
    scores = folder.scores()
    criteria = [str(c.get("title") or c.get("id")) for c in
                (scores or {}).get("criteria_results") or []]
    wall = summary.get("wall_s")
    ended = start.timestamp() + float(wall) if wall is not None else None
    return EvalSample(
        id=folder.name, epoch=1, input=_input(messages, summary, folder),
        target=criteria or "", messages=messages,
        output=ModelOutput.from_content(model=_model(folder.config, "root"), content=memo),
        scores=_scores(dict(scores) if scores else None),
        events=sample_events(events, start, settings.get("temperature")),
        model_usage={k: usage_of(v) for k, v in (usage.get("by_model") or {}).items()},
        role_usage={k: usage_of(v) for k, v in (usage.get("by_role") or {}).items()},
        started_at=start.isoformat(), total_time=wall, working_time=wall,
        completed_at=datetime.fromtimestamp(ended, UTC).isoformat() if ended else None,
        turn_count=summary.get("turns"),
        metadata={"run": folder.name, "room": summary["room"], "harness": summary["harness"],
                  "root": summary["root_model"], "sub": summary["sub_model"],
                  "status": summary["status"], "reason": summary["reason"],
                  "turns": summary["turns"], "cost_usd": (usage.get("total") or {}).get(
                      "cost_usd"), "coverage": summary["coverage"].get("coverage"),
                  "behaviour": summary["behaviour"], "fork": summary["fork"],
                  "asks": asks})


def _asks(run: Path) -> list[dict[str, Any]]:
    """The run's answered follow-up questions (``dealroom ask``), as ``answer.json`` keeps them:
    number, question, answer, status, citations checked, turns and usage."""
    from dealroom.harness import read_answers

    keep = ("number", "question", "answer", "status", "reason", "citations", "turns", "usage")
    return [{k: a.get(k) for k in keep} for a in read_answers(run)]


def _ask_messages(ask: dict[str, Any]) -> list[Any]:
    """A follow-up question and its answer, after the run's own messages."""
    answer = ask.get("answer")
    if answer is None:
        why = f": {ask['reason']}" if ask.get("reason") else ""
        answer = f"(no answer: the ask ended {ask.get('status')}{why})"
    return [chat_message("user", f"Follow-up question {ask.get('number')}: "
                                 f"{ask.get('question')}"),
            chat_message("assistant", str(answer))]


def _input(messages: list[Any], summary: dict[str, Any], folder: RunFolder) -> Any:
    """The task and the room: the root's user messages before its first reply (the system
    prompt stays in ``messages``), or (a run with no model call) a line naming the room."""
    first: list[Any] = []
    for m in messages:
        if m.role == "assistant":
            break
        if m.role == "user":
            first.append(m)
    return first or f"Review the data room {summary['room']} ({folder.config.get('room')})."


def _scores(scores: dict[str, Any] | None) -> dict[str, Any] | None:
    """The judge's verdicts as the ``rubric`` score: the pass rate, and per criterion its
    verdict and the judge's reasoning in the metadata (an unscored run: no score)."""
    from inspect_ai.scorer import Score

    if not scores or scores.get("pass_rate") is None:
        return None
    criteria = [{k: c.get(k) for k in ("id", "title", "type", "verdict", "reasoning",
                                       "negative") if k in c}
                for c in scores.get("criteria_results") or []]
    return {SCORE: Score(
        value=float(scores["pass_rate"]), explanation=scores.get("summary"),
        metadata={"judge": (scores.get("judge") or {}).get("name"),
                  "all_pass": scores.get("all_pass"), "headline": scores.get("headline"),
                  "headline_kind": scores.get("headline_kind"),
                  "pass_rate_by_type": scores.get("pass_rate_by_type") or {},
                  "n_errors": scores.get("n_errors"), "criteria": criteria})}


def _results(sample: EvalSample) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    if not sample.scores:
        return None
    value = sample.scores[SCORE].as_float()
    return EvalResults(total_samples=1, completed_samples=1, scores=[EvalScore(
        name=SCORE, scorer=SCORE, metrics={"mean": EvalMetric(name="mean", value=value)})])


def _status(summary: dict[str, Any]) -> Any:
    if summary["status"] == "running":
        return "started"
    return "error" if summary["status"] in ERRORS else "success"


def _model(config: Any, role: str) -> str:
    """The model that played ``role`` (config.json's record, else the spec's name)."""
    record = (config.get("models") or {}).get(role)
    if isinstance(record, dict) and record.get("model"):
        return str(record["model"])
    return model_name(config.get(role)) or ""


def _policy(config: Any, room: str) -> dict[str, Any]:
    """What sets runs of one task apart, as the eval's ``task_args`` (``inspect view`` lists
    them beside each log): the root's and sub-agents' specs (without endpoints or prices),
    the room, the depth and the turn budget."""
    settings = config.get("settings") or {}
    named = config.get("subs")
    sub = ({n: model_name(spec) for n, spec in named.items()} if isinstance(named, dict)
           and named else model_name(config.get("sub")))
    policy = {"root": model_name(config.get("root")), "sub": sub, "room": room,
              "depth": settings.get("depth"), "max_turns": settings.get("max_turns")}
    return {k: v for k, v in policy.items() if v is not None}


def _roles(config: Any) -> dict[str, ModelConfig | list[ModelConfig]] | None:
    """Every role but the root's as inspect's ``model_roles``: ``sub`` (the default
    sub-agent) and ``sub.NAME`` for each named one (config.json's ``models``)."""
    from inspect_ai.model import ModelConfig

    names = [r for r in config.get("models") or {} if r != "root"]
    if config.get("sub") and "sub" not in names:
        names.insert(0, "sub")
    roles: dict[str, ModelConfig | list[ModelConfig]] = {
        r: ModelConfig(model=m) for r in names if (m := _model(config, r))}
    return roles or None


def _started(config: Any, run: Path) -> datetime:
    """The run's start (config.json's ``started_at``; else when its folder was written)."""
    raw = config.get("started_at")
    try:
        when = datetime.fromisoformat(str(raw).replace("Z", "+00:00")) if raw else None
    except ValueError:
        when = None
    if when is None:
        when = datetime.fromtimestamp((run / "config.json").stat().st_mtime, UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _packages() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return {"dealroom": version("dealroom")}
    except PackageNotFoundError:
        return {}


def _names(source: Path) -> list[tuple[Path, str]]:
    """The run folders ``source`` names, each with a file name (see :func:`run_name`)."""
    return [(run, run_name(run, source)) for run in find_runs([source])]


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file: give --out a folder")
    if out.is_dir():
        other = [p.name for p in out.iterdir() if p.suffix not in (".eval", ".json")]
        if other:
            raise ConfigError(f"{out} holds other files ({', '.join(sorted(other)[:3])}): "
                              "give --out a new folder or one of inspect logs")
    make_dir(out, "the inspect logs' folder")


def _require() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise MissingDependency("inspect-ai", extra="inspect",
                                feature="dealroom export inspect") from None
