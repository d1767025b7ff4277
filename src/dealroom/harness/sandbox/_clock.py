"""A cell's two clocks: its own time, and a wall-clock ceiling that never stops.

    no request in flight       the cell's own time runs with the wall clock
    requests in flight         it runs with the worker's CPU time: threads that spin while
                               others wait for a model are charged, the model's latency is not
    always                     the wall-clock ceiling runs (the caller's deadline included)

The CPU time comes from the worker's cgroup when it has one, else from ``/proc`` (the worker's
process tree).
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

POLL = 0.25
"""Seconds between CPU readings while the cell waits for the host."""


class CellClock:
    """When a cell must be interrupted: ``own`` seconds of its own time or ``wall`` in all."""

    def __init__(self, own: float, wall: float, cpu: Callable[[], float | None]) -> None:
        now = time.monotonic()
        self.own = own
        self.used = 0.0
        """The cell's own seconds so far."""
        self.wall_deadline = now + wall
        self._cpu = cpu
        self._mark = now
        self._cpu_mark: float | None = None
        self._on_host = False

    def waiting(self, on_host: bool) -> None:
        """Tell the clock whether the cell now waits for the host (requests in flight)."""
        self._account()
        if on_host and not self._on_host:
            self._cpu_mark = self._cpu()
        self._on_host = on_host

    def _account(self) -> None:
        now = time.monotonic()
        if not self._on_host:
            self.used += now - self._mark
        elif self._cpu_mark is not None and (cpu := self._cpu()) is not None:
            self.used += max(0.0, cpu - self._cpu_mark)
            self._cpu_mark = max(self._cpu_mark, cpu)
        self._mark = now

    def left(self) -> float:
        """Seconds to wait before looking again; 0 once a limit is reached."""
        self._account()
        own = self.own - self.used
        wall = self.wall_deadline - time.monotonic()
        if own <= 0 or wall <= 0:
            return 0.0
        return min(wall, min(own, POLL) if self._on_host else own)

    def expired(self) -> str | None:
        """``"own"`` or ``"wall"``: which limit is reached, if any."""
        self._account()
        if self.used >= self.own:
            return "own"
        return "wall" if time.monotonic() >= self.wall_deadline else None

    def grace(self, seconds: float) -> None:
        """After an interrupt: a plain wall-clock deadline ``seconds`` from now."""
        self.own = float("inf")
        self.wall_deadline = time.monotonic() + seconds


def tree_cpu(root: int) -> float | None:
    """CPU seconds of process ``root`` and its descendants (reaped children included)."""
    children: dict[int, list[int]] = defaultdict(list)
    ticks: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        pid = int(stat.parent.name)
        children[int(fields[1])].append(pid)
        ticks[pid] = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    if root not in ticks:
        return None
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo += children.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")
