"""Bootstraps for the sandbox tests (imported inside the worker)."""

from __future__ import annotations

from typing import Any


def with_host(host: Any) -> dict[str, Any]:
    """``ask`` (host.request), ``host`` and a state hook reporting ``counter``."""
    ns: dict[str, Any] = {"ask": host.request, "host": host, "counter": 0}
    host.set_state_hook(lambda: {"counter": ns.get("counter"), "depth": host.depth,
                                 "options": host.options})
    return ns


def legacy_state(host: Any) -> dict[str, Any]:
    """The ``__state__`` key as a state hook (the RLM namespace's way)."""
    return {"n": 1, "__state__": lambda: {"legacy": True}}


def broken(host: Any) -> dict[str, Any]:
    raise RuntimeError("bootstrap exploded on purpose")


def asks_at_start(host: Any) -> dict[str, Any]:
    """A bootstrap that asks the host while starting (the host refuses until ready)."""
    try:
        host.request("budget")
    except Exception as exc:  # noqa: BLE001
        return {"startup_error": f"{type(exc).__name__}: {exc}"}
    return {"startup_error": None}


def hostile(host: Any) -> dict[str, Any]:
    """The room, ``ask`` (host.request) and a syscall helper ``call(name, *args)`` that
    returns ``(result, strerror)`` (the hostile-cell suite's)."""
    import ctypes
    import os
    import platform

    from dealroom.harness.sandbox._seccomp import ARCHES
    from dealroom.room import Room

    libc = ctypes.CDLL(None, use_errno=True)
    table = ARCHES.get(platform.machine(), (0, {}))[1]

    def call(name: str, *args: int) -> tuple[int, str]:
        ret = libc.syscall(ctypes.c_long(table[name]), *[ctypes.c_long(a) for a in args])
        return ret, os.strerror(ctypes.get_errno()) if ret < 0 else ""

    return {"room": Room.open(host.room_dir), "ask": host.request, "call": call}
