"""Reading a run folder: ``config.json`` and ``trajectory.jsonl`` (see docs/architecture.md)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dealroom._util.files import read_json, read_jsonl
from dealroom.errors import ConfigError

CONFIG = "config.json"
TRAJECTORY = "trajectory.jsonl"
METRICS = "metrics.json"
SCORES = "scores.json"


def read_config(run_dir: Path) -> dict[str, Any]:
    """The run's ``config.json``; raise :class:`ConfigError` if ``run_dir`` is not a run folder."""
    missing = f"{run_dir} is not a run folder: {CONFIG} is missing"
    return read_json(Path(run_dir) / CONFIG, ConfigError, missing)


def read_events(run_dir: Path) -> list[dict[str, Any]]:
    """The trajectory events in ``seq`` order (empty when the run wrote none yet)."""
    path = Path(run_dir) / TRAJECTORY
    if not path.is_file():
        return []
    events = list(read_jsonl(path))
    events.sort(key=lambda e: e.get("seq", 0))
    return events


def read_json_if_exists(path: Path) -> dict[str, Any] | None:
    """A JSON file's content, or ``None`` when the file does not exist."""
    return read_json(path, ConfigError, "") if Path(path).is_file() else None


def ratio(num: float, den: float) -> float:
    """``num / den``, or NaN when ``den`` is 0 (a share of nothing is undefined, not 0).

    >>> ratio(1, 4), math.isnan(ratio(0, 0))
    (0.25, True)
    """
    return num / den if den else math.nan


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by ``None`` so it is valid JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def room_of_run(run_dir: Path, config: dict[str, Any] | None = None) -> Path:
    """The room folder a run used: its config's ``room``, as given or relative to the run."""
    config = config if config is not None else read_config(run_dir)
    room = config.get("room")
    if not room:
        raise ConfigError(f"{Path(run_dir) / CONFIG} names no room; pass the room explicitly")
    for candidate in (Path(room), Path(run_dir) / room):
        if (candidate / "room.json").is_file():
            return candidate
    raise ConfigError(f"the room of run {run_dir} ({room}) is not found; pass it explicitly")
