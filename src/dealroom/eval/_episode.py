"""One sweep episode, as a worker (a pool process or a Ray task) runs it.

An episode's state is read from its run folder, never assumed: judged (``scores.json``) — done;
ended but not judged — judge it; started but not ended (its process was killed) — resume it
with the harness's resume; not started — run it. A lock file held while the worker works
means an episode is never run by two processes at once (a worker left over by a killed sweep
finishes or dies first), so none is run twice.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dealroom.eval._executor import job_lock
from dealroom.eval._sweep_record import EpisodeEntry
from dealroom.runs import CONFIG, EPISODES, RunFolder


def episode_dir(sweep: Path, episode: Mapping[str, Any]) -> Path:
    return Path(sweep) / EPISODES / str(episode["id"])


def episode_state(run_dir: Path, by_turn: bool) -> str:
    """``done``, ``judge`` (ended, not judged), ``resume`` (started, not ended) or ``run``."""
    if not (run_dir / CONFIG).is_file():
        return "run"
    folder = RunFolder(run_dir)
    if not RunFolder.ended(folder.events()):
        return "resume"
    if folder.scores() is None or (by_turn and folder.scores_by_turn() is None):
        return "judge"
    return "done"


def outcome(run_dir: Path) -> EpisodeEntry:
    """What a finished episode gives the sweep's index: run status, pass rate, all-pass."""
    folder = RunFolder(run_dir)
    scores = folder.scores() or {}
    metrics = folder.metrics() or {}
    return {"status": "done", "run_status": metrics.get("status"),
            "pass_rate": scores.get("pass_rate"), "all_pass": scores.get("all_pass"),
            "error": None, "models": dict(folder.config.get("models") or {})}


def run_episode(episode: dict[str, Any], sweep: str, judge: str, models: str | None,
                harness: str, concurrency: int | None) -> dict[str, Any]:
    """Bring one episode to ``done`` and report it; any failure is the episode's result."""
    started = time.monotonic()
    run_dir = episode_dir(Path(sweep), episode)
    timing: dict[str, float] = {}
    try:
        with job_lock(Path(sweep), episode["id"]):
            state = episode_state(run_dir, episode["by_turn"])
            _advance(state, run_dir, episode, judge, models, harness, concurrency, timing)
            result = {**outcome(run_dir), "did": state}
    except Exception as exc:  # noqa: BLE001 - a failing episode is recorded, the sweep goes on
        result = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "did": "failed"}
    return {"id": episode["id"], **result, "seconds": round(time.monotonic() - started, 3),
            "timing": timing}


def _advance(state: str, run_dir: Path, episode: dict[str, Any], judge: str,
             models: str | None, harness: str, concurrency: int | None,
             timing: dict[str, float]) -> None:
    from dealroom.harness import resume_run, run_agent, sub_specs
    from dealroom.judge import judge_by_turn, judge_run

    models_file = Path(models) if models else None
    clock = time.monotonic()
    if state == "run":
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        sub: dict[str, Any] = {"sub": sub_specs(episode["sub_spec"].split())} \
            if episode["sub_spec"] else {}
        run_agent(Path(episode["room_path"]), run_dir, harness=harness,
                  root=episode["root_spec"], models_file=models_file, concurrency=concurrency,
                  **sub, **episode["options"])
    elif state == "resume":
        resume_run(run_dir, models_file=models_file)
    timing["run_s"] = round(time.monotonic() - clock, 3)
    clock = time.monotonic()
    folder = RunFolder(run_dir)
    if state != "done" and folder.scores() is None:
        judge_run(run_dir, judge, models_file=models_file)
    if state != "done" and episode["by_turn"] and folder.scores_by_turn() is None:
        judge_by_turn(run_dir, judge, models_file=models_file)
    timing["judge_s"] = round(time.monotonic() - clock, 3)
