"""Inside the worker: the protocol channel and :class:`Host`, the object a bootstrap receives.

A reader thread takes every host message off the protocol fd: ``exec`` and ``exit`` go to the
main thread's queue, each ``response`` to the thread waiting in ``host.request`` (so threads
may have requests in flight at once). Messages: :mod:`dealroom.harness.sandbox._base`.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dealroom.harness.sandbox._base import RemoteError

MAIN_PID = os.getpid()
"""The REPL's own process; set again after the worker forks into its pid namespace."""


class _Channel:
    """JSON lines to and from the host over the worker's private protocol fds."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out
        self.commands: queue.Queue[dict[str, Any]] = queue.Queue()
        self._pending: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._ids = itertools.count(1)
        self._wlock = threading.Lock()

    def send(self, msg: dict[str, Any]) -> None:
        if os.getpid() != MAIN_PID:  # a forked copy of the worker must stay silent
            raise RuntimeError("only the REPL's own process can talk to the host")
        data = memoryview((json.dumps(msg, ensure_ascii=False) + "\n").encode("utf-8"))
        with self._wlock:
            while data:
                data = data[os.write(self.fd_out, data):]

    def read_forever(self) -> None:
        """Reader thread: dispatch host messages; the host gone means the worker is done."""
        with os.fdopen(self.fd_in, "rb", closefd=False) as stream:
            for line in stream:
                try:
                    msg = json.loads(line)
                except ValueError:
                    print(f"sandbox: bad message from host: {line[:200]!r}", file=sys.__stderr__)
                    os._exit(3)
                if msg.get("op") == "response":
                    waiter = self._pending.pop(int(msg.get("id", 0)), None)
                    if waiter is not None:
                        waiter[1].append(msg)
                        waiter[0].set()
                else:
                    self.commands.put(msg)
        os._exit(0)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        rid = next(self._ids)
        waiter: tuple[threading.Event, list[dict[str, Any]]] = (threading.Event(), [])
        self._pending[rid] = waiter
        try:
            self.send({"op": "request", "id": rid, **message})
            waiter[0].wait()
        finally:
            self._pending.pop(rid, None)
        return waiter[1][0]


class Host:
    """What a bootstrap gets: the host's side of the sandbox, seen from inside.

    ``request(kind, payload)`` blocks until the host answers and returns its payload, or raises
    :class:`RemoteError`. Thread-safe: requests from several threads run concurrently.
    """

    def __init__(self, channel: _Channel, cfg: dict[str, Any]) -> None:
        self._channel = channel
        self.room_dir: Path | None = Path(cfg["room_dir"]) if cfg.get("room_dir") else None
        self.scratch_dir = Path(cfg["scratch_dir"])
        self.depth: int = cfg.get("depth", 0)
        self.options: dict[str, Any] = cfg.get("options") or {}
        """Free-form settings the host passed for the bootstrap."""
        self.isolation: str = cfg.get("isolation", "")
        self.budget: dict[str, Any] | None = None
        """The budget the host reported with its latest response."""
        self.state_hook: Callable[[], dict[str, Any]] | None = None

    def request(self, kind: str, payload: dict[str, Any] | None = None, *,
                budget: dict[str, Any] | None = None) -> Any:
        """Ask the host; returns the answer's payload or raises :class:`RemoteError`."""
        msg = self._channel.request({"kind": kind, "payload": payload or {},
                                     "depth": self.depth, "budget": budget})
        if msg.get("budget") is not None:
            self.budget = msg["budget"]
        if not msg.get("ok"):
            raise RemoteError(msg.get("error") or f"request {kind!r} failed")
        return msg.get("payload")

    def set_state_hook(self, hook: Callable[[], dict[str, Any]]) -> None:
        """``hook()`` is sent to the host after every cell as ``CellResult.state`` (JSON)."""
        self.state_hook = hook


def room_bootstrap(host: Host) -> dict[str, Any]:
    """The default bootstrap: ``room`` (the opened room) and nothing else."""
    from dealroom.room import Room

    return {"room": Room.open(host.room_dir, built=True)} if host.room_dir else {}
