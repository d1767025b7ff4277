"""The process sandbox: one confined worker process per episode, running a persistent REPL.

The boundary is one message pair, :class:`SubcallRequest` / :class:`SubcallResult`; the
protocol is drawn in :mod:`dealroom.harness.sandbox._base`.
"""

from typing import TYPE_CHECKING

from dealroom._util.lazy import lazy_exports

_EXPORTS = {
    "ISOLATION_LEVELS": "dealroom.harness.sandbox._base",
    "CellResult": "dealroom.harness.sandbox._base",
    "RemoteError": "dealroom.harness.sandbox._base",
    "RequestHandler": "dealroom.harness.sandbox._base",
    "Sandbox": "dealroom.harness.sandbox._base",
    "SandboxLimits": "dealroom.harness.sandbox._base",
    "SubcallRequest": "dealroom.harness.sandbox._base",
    "SubcallResult": "dealroom.harness.sandbox._base",
    "Host": "dealroom.harness.sandbox._host",
    "room_bootstrap": "dealroom.harness.sandbox._host",
    "DEFAULT_BOOTSTRAP": "dealroom.harness.sandbox._process",
    "ProcessSandbox": "dealroom.harness.sandbox._process",
    "check_confinement": "dealroom.harness.sandbox._process",
    "make_scratch": "dealroom.harness.sandbox._scratch",
}
"""Loaded on first use: the worker imports this package's modules it runs on and nothing
else (the host's side brings asyncio and the cgroup code, ~35 ms a REPL start)."""
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from dealroom.harness.sandbox._base import (
        ISOLATION_LEVELS,
        CellResult,
        RemoteError,
        RequestHandler,
        Sandbox,
        SandboxLimits,
        SubcallRequest,
        SubcallResult,
    )
    from dealroom.harness.sandbox._host import Host, room_bootstrap
    from dealroom.harness.sandbox._process import (
        DEFAULT_BOOTSTRAP,
        ProcessSandbox,
        check_confinement,
    )
    from dealroom.harness.sandbox._scratch import make_scratch

__all__ = sorted(_EXPORTS)
