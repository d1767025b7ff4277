"""``metrics.json``: everything measured about one run, computed from its files alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dealroom.measure._accounting import account
from dealroom.measure._behaviour import behaviour
from dealroom.measure._coverage import CoverageProbe
from dealroom.measure._runfiles import read_config, read_events, room_of_run

METRICS_VERSION = 1


def metrics_from_run(run_dir: Path, room: Any = None, coverage: bool = True) -> dict[str, Any]:
    """The metrics of a run folder: status, wall time, accounting, behaviour and coverage.

    Pure: reads ``config.json`` and ``trajectory.jsonl`` and returns a dict (the engine writes
    it to ``metrics.json``). ``room`` (a room folder, an open ``Room``, a
    :class:`~dealroom.measure.CoverageIndex` or a :class:`~dealroom.measure.CoverageProbe` that
    already saw the run) defaults to the config's ``room``; ``coverage=False`` skips coverage
    (then ``coverage`` is None). Every key is defined in docs/measurement.md.
    """
    config = read_config(run_dir)
    events = read_events(run_dir)
    end = next((e for e in reversed(events) if e.get("type") == "run_end"), {})
    out: dict[str, Any] = {
        "version": METRICS_VERSION,
        "run": Path(run_dir).name,
        "room": str(config.get("room", "")),
        "harness": config.get("harness", ""),
        "root_model": config.get("root", ""),
        "status": end.get("status", "running" if events else "not_started"),
        "wall_s": float(events[-1].get("t", 0.0)) if events else 0.0,
        "events": len(events),
    }
    out["usage"] = account(events, config.get("models") or {})
    out["behaviour"] = behaviour(events)
    if coverage:
        out["coverage"] = _coverage(events, room if room is not None else room_of_run(run_dir))
    else:
        out["coverage"] = None
    return out


def _coverage(events: list[dict[str, Any]], room: Any) -> dict[str, Any]:
    if isinstance(room, CoverageProbe):
        return room.summary()
    probe = CoverageProbe(room)
    probe.observe_events(events)
    return probe.summary()
