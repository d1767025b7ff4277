"""What every harness's run shares: its config record, its instructions and its finish."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

DEFAULT_INSTRUCTIONS = (
    "Review the data room and write a full due diligence memo for the buyer: findings with "
    "document citations, quantified exposures, severity, and recommended next steps."
)


@dataclass
class RunResult:
    """Where a run is and how it ended."""

    run_dir: Path
    status: str
    reason: str
    turns: int
    memo_path: Path
    metrics: dict[str, Any]


def run_config(harness: str, room_dir: Path, models: list[Any], settings: Any,
               **extra: Any) -> dict[str, Any]:
    """The ``config.json`` record: enough to rebuild the run (models by spec, prices, settings)."""
    roles = dict(zip(("root", "sub"), models, strict=False))
    return {
        "harness": harness,
        "room": str(Path(room_dir).resolve()),
        **{role: m.name for role, m in roles.items()},
        "settings": asdict(settings),
        "models": {m.name: asdict(m.prices) for m in models},
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        **extra,
    }


def instructions_of(room_dir: Path) -> str:
    """The task's instructions from ``task.json``, or the default diligence request."""
    from dealroom.room import load_task

    try:
        return load_task(room_dir).get("instructions") or DEFAULT_INSTRUCTIONS
    except Exception:  # a room without task.json still gets reviewed
        return DEFAULT_INSTRUCTIONS


def finish_run(recorder: Any, probe: Any, status: str, reason: str, turns: int) -> RunResult:
    """Close the trajectory, compute and write ``metrics.json``."""
    from dealroom.measure import metrics_from_run

    recorder.close()
    memo = recorder.path / "output" / "memo.md"
    if not memo.exists():
        recorder.write_memo("")
    metrics = metrics_from_run(recorder.path, room=probe)
    recorder.write_metrics(metrics)
    return RunResult(recorder.path, status, reason, turns, memo, metrics)
