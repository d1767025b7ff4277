"""The process sandbox: one confined worker process per episode, running a persistent REPL.

The boundary is one message pair, :class:`SubcallRequest` / :class:`SubcallResult`; the
protocol is drawn in :mod:`dealroom.harness.sandbox._base`.
"""

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
from dealroom.harness.sandbox._process import DEFAULT_BOOTSTRAP, ProcessSandbox, check_confinement
from dealroom.harness.sandbox._scratch import make_scratch

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "ISOLATION_LEVELS",
    "CellResult",
    "Host",
    "ProcessSandbox",
    "RemoteError",
    "RequestHandler",
    "Sandbox",
    "SandboxLimits",
    "SubcallRequest",
    "SubcallResult",
    "check_confinement",
    "make_scratch",
    "room_bootstrap",
]
