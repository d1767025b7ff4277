"""``metrics.json``: everything measured about one run, computed from its records alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.measure._accounting import account
from dealroom.measure._behaviour import behaviour
from dealroom.measure._costs import cost_split
from dealroom.measure._coverage import CoverageProbe
from dealroom.runs import METRICS_VERSION, CoverageSummary, Metrics, RunFolder, model_prices

if TYPE_CHECKING:
    from dealroom.measure._coverage import RoomSource


def metrics_from_run(run_dir: Path, room: RoomSource | CoverageProbe | None = None,
                     coverage: bool = True) -> Metrics:
    """The metrics of a run folder: status, wall time, accounting, behaviour and coverage.

    Pure: reads ``config.json`` and ``trajectory.jsonl`` and returns a dict (the harnesses
    write it to ``metrics.json``). ``room`` (a room folder, an open ``Room``, a
    :class:`~dealroom.measure.CoverageIndex` or a :class:`~dealroom.measure.CoverageProbe` that
    already saw the run) defaults to the run's room; ``coverage=False`` skips coverage (then
    ``coverage`` is None). Every key is defined in docs/measurement.md.
    """
    folder = RunFolder.open(run_dir)
    if coverage and room is None:
        room = folder.room
    return run_metrics(dict(folder.config), folder.events(), run=folder.name,
                       room=room if coverage else None)


def run_metrics(config: dict[str, Any], events: Sequence[dict[str, Any]], *, run: str,
                room: RoomSource | CoverageProbe | None = None) -> Metrics:
    """:func:`metrics_from_run` from a run's config and events held in memory; ``room`` as
    there, None for no coverage. The record (:class:`~dealroom.runs.Metrics`) every key of
    which is in docs/measurement.md."""
    end: dict[str, Any] = next((e for e in reversed(events) if e.get("type") == "run_end"), {})
    return {
        "version": METRICS_VERSION,
        "run": run,
        "room": str(config.get("room", "")),
        "harness": config.get("harness", ""),
        "root_model": config.get("root", ""),
        "sub_model": config.get("sub", ""),
        "simulators": list(config.get("simulators") or []),
        "status": end.get("status", "running" if events else "not_started"),
        "wall_s": float(events[-1].get("t", 0.0)) if events else 0.0,
        "events": len(events),
        "usage": {**account(events, model_prices(config)),
                  **cost_split(events, config, model_prices(config))},
        "behaviour": behaviour(events),
        "coverage": None if room is None else _coverage(events, room),
    }


def _coverage(events: Sequence[dict[str, Any]],
              room: RoomSource | CoverageProbe) -> CoverageSummary:
    if isinstance(room, CoverageProbe):
        return room.summary()
    probe = CoverageProbe(room)
    probe.observe_events(events)
    return probe.summary()
