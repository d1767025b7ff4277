"""Run folders, written as the run goes (see docs/architecture.md, "Run folder").

``config.json`` is written atomically once; ``trajectory.jsonl`` gets one event per line,
flushed as it happens, so a run killed at any point (SIGKILL included) leaves a readable record
that :mod:`dealroom.eval._resume` can continue from.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealroom._util.files import read_json, read_jsonl, write_json_atomic
from dealroom.errors import ConfigError

RUNLOG_VERSION = 1
CONFIG = "config.json"
TRAJECTORY = "trajectory.jsonl"
METRICS = "metrics.json"
MEMO = "output/memo.md"


@dataclass
class RunLog:
    """A run folder as read back: its config and its events."""

    path: Path
    """The run folder."""
    config: dict[str, Any]
    """Contents of ``config.json``."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Every event of ``trajectory.jsonl``, in order."""
    version: int = RUNLOG_VERSION
    """Format version of the run folder."""

    @classmethod
    def read(cls, path: Path) -> RunLog:
        path = Path(path)
        missing = f"{path} is not a run folder: {CONFIG} is missing"
        config = read_json(path / CONFIG, ConfigError, missing)
        traj = path / TRAJECTORY
        events = list(read_jsonl(traj)) if traj.is_file() else []
        return cls(path, config, events, config.get("version", RUNLOG_VERSION))

    @property
    def ended(self) -> bool:
        return any(e["type"] == "run_end" and e.get("agent") == "root" for e in self.events)


class RunRecorder:
    """Appends events to a run folder; thread-safe, one instance per run."""

    def __init__(self, path: Path, *, next_seq: int = 0, t_offset: float = 0.0) -> None:
        self.path = Path(path)
        self._seq = next_seq
        self._t0 = time.monotonic() - t_offset
        self._lock = threading.Lock()
        self._fh = open(self.path / TRAJECTORY, "a", encoding="utf-8")  # noqa: SIM115

    @classmethod
    def create(cls, path: Path, config: dict[str, Any]) -> RunRecorder:
        """Start a new run folder; refuse one that already holds files."""
        path = Path(path)
        refuse_used_run_dir(path)
        (path / "output").mkdir(parents=True, exist_ok=True)
        write_json_atomic(path / CONFIG, {"version": RUNLOG_VERSION, **config})
        return cls(path)

    @classmethod
    def reopen(cls, log: RunLog) -> RunRecorder:
        """Continue appending to an interrupted run."""
        last_t = log.events[-1]["t"] if log.events else 0.0
        _drop_torn_tail(log.path / TRAJECTORY)
        return cls(log.path, next_seq=len(log.events), t_offset=last_t)

    def event(self, type: str, agent: str = "root", depth: int = 0, **fields: Any) -> dict:
        """Append one event and return it."""
        with self._lock:
            record = {
                "seq": self._seq,
                "t": round(time.monotonic() - self._t0, 4),
                "type": type,
                "agent": agent,
                "depth": depth,
                **fields,
            }
            # flushed to the kernel per event: survives SIGKILL of this process
            self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._fh.flush()
            self._seq += 1
        return record

    def write_memo(self, markdown: str) -> None:
        path = self.path / MEMO
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".md.tmp")
        tmp.write_text(markdown, encoding="utf-8")
        tmp.replace(path)

    def close(self) -> None:
        self._fh.close()

    def write_metrics(self, metrics: dict[str, Any]) -> None:
        write_json_atomic(self.path / METRICS, metrics)


def refuse_used_run_dir(path: Path) -> None:
    """Raise :class:`ConfigError` when ``path`` already holds files (a run is never overwritten)."""
    if path.exists() and any(path.iterdir()):
        raise ConfigError(
            f"{path} already holds files: choose a new --out folder, "
            f"or continue that run with `dealroom resume {path}`"
        )


def _drop_torn_tail(path: Path) -> None:
    """Cut a half-written last line (left by a kill mid-write) so appends stay valid JSONL."""
    if not path.is_file():
        return
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with open(path, "r+b") as fh:
            fh.truncate(end)
