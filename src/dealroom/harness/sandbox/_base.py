"""The sandbox boundary: the ``Sandbox`` ABC, its limits and results, and the one message pair.

One worker process per episode runs the REPL; the host talks to it in JSON lines over the
worker's stdin and stdout, which the worker keeps for the protocol alone (user ``print`` goes
to a per-cell buffer, C-level writes to fd 1 to a memfd, fd 2 to the host's diagnostics)::

    host (ProcessSandbox)                                     worker (_worker.py, sandboxed)
    ─────────────────────                                     ──────────────────────────────
    spawn python -m dealroom.harness.sandbox._worker CONFIG
                                                   ◀─ ready    {isolation, pid, names,
                                                                confinement, weak}
                                                      (or fatal {error}: bootstrap failed)
    execute(code) ─ exec     {cell, code, nonce} ─▶
                                                      the cell runs; REPL code may call
                                                      host.request(kind, payload)
                                                   ◀─ request  {id, kind, payload, depth, budget}
    on_request(SubcallRequest) -> SubcallResult
                  ─ response {id, ok, payload | error, budget} ─▶ returned (or RemoteError)
                     (any number of requests, also concurrent from threads, per cell)
                                                   ◀─ done     {cell, nonce, pid, stdout,
                                                                 error, state, exit}
    timeout: SIGINT, then after a grace period SIGKILL to the whole process group
    close() ─ exit ─────────────────────────────────▶ worker exits (EOF on stdin does too)

``state`` is what the bootstrap's state hook returns (JSON); ``exit`` is set when the cell
called ``exit()``/``sys.exit()`` (the worker then stops). Every message carries ``op``.
``nonce`` is fresh and random for every cell: the host takes a ``done`` only with the cell's
own, so a cell that writes a ``done`` on the protocol fd does not end itself early.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from dealroom.errors import ConfigError

ISOLATION_LEVELS = ("namespaces+uid", "userns", "rlimits")
"""Strongest first. ``namespaces+uid``: own network, mount, pid and IPC namespaces, a fresh
unprivileged uid, read-only filesystem but the scratch dir (needs root). ``userns``: the same
namespaces inside a user namespace, no uid change (any user where unprivileged user namespaces
are allowed). ``rlimits``: resource limits and the cell timeout only — no network or filesystem
isolation."""


def size_text(n: float) -> str:
    """Bytes in words: ``3 GiB``, ``256 MiB``, ``1.5 GiB``."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


class RemoteError(RuntimeError):
    """Raised inside the sandbox by ``host.request`` when the host answered with an error."""


@dataclass
class SandboxLimits:
    """Resource limits of one worker; each is enforced by the kernel or by the host."""

    memory_bytes: int = 3 * 2**30
    """RLIMIT_AS of each process (the memory-mapped text layer of a full room, ~0.7 GB, fits);
    with a memory cgroup, ``memory_bytes + scratch_bytes`` also bounds all the RAM the worker
    holds, every process, memfd, page cache and kernel memory together."""
    scratch_bytes: int = 2**30
    """Size of the scratch dir, a tmpfs of the sandbox's own (namespace levels): writes past it
    fail with ENOSPC. It starts empty with each worker."""
    cpu_seconds: int | None = 3600
    """RLIMIT_CPU over the worker's life (waiting for sub-calls costs none); None: unlimited."""
    file_size_bytes: int = 2**30
    """RLIMIT_FSIZE: largest file the worker may write (writes past it fail with EFBIG)."""
    max_processes: int = 64
    """RLIMIT_NPROC: processes and threads of the worker's uid (bounds fork bombs)."""
    max_open_files: int = 256
    """RLIMIT_NOFILE."""
    cell_timeout: float = 120.0
    """Seconds of a cell's own time when ``execute`` gets no ``timeout``: wall-clock time, but
    while the host answers its requests (sub-agent calls) only the worker's CPU time counts."""
    cell_wall_timeout: float | None = None
    """Wall-clock ceiling of one cell, time waiting for sub-calls included; None: 4 × its
    timeout."""
    interrupt_grace: float = 2.0
    """After a timeout the cell gets SIGINT (KeyboardInterrupt); this long later, SIGKILL."""
    max_output_chars: int = 200_000
    """Printed output kept per cell (its head and tail; the middle is dropped with a note)."""
    start_timeout: float = 120.0
    """Seconds for the worker to start and run its bootstrap."""

    def __post_init__(self) -> None:
        if self.memory_bytes < 256 * 2**20:
            raise ConfigError("SandboxLimits.memory_bytes must be at least 256 MiB "
                              "(Python and the room's memory map need it)")
        for name in ("file_size_bytes", "max_processes", "max_open_files", "max_output_chars"):
            if getattr(self, name) < 1:
                raise ConfigError(f"SandboxLimits.{name} must be positive")
        if self.max_open_files < 32:
            raise ConfigError("SandboxLimits.max_open_files must be at least 32")
        if self.scratch_bytes < 2**20:
            raise ConfigError("SandboxLimits.scratch_bytes must be at least 1 MiB")
        for name in ("cell_timeout", "interrupt_grace", "start_timeout"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"SandboxLimits.{name} must be a positive number of seconds")
        if self.cell_wall_timeout is not None and self.cell_wall_timeout <= 0:
            raise ConfigError("SandboxLimits.cell_wall_timeout must be positive or None")
        if self.cpu_seconds is not None and self.cpu_seconds < 1:
            raise ConfigError("SandboxLimits.cpu_seconds must be positive or None")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CellResult:
    """What one ``execute`` produced."""

    stdout: str
    """Printed output (stdout and stderr of the cell, in order), plus the last expression's repr."""
    error: str | None
    """Traceback text (trimmed to the cell's frames), or why the worker died; None on success."""
    timed_out: bool = False
    """The cell ran past its timeout."""
    crashed: bool = False
    """The worker is gone (killed, crashed, exited): call ``restart()`` before the next cell."""
    seconds: float = 0.0
    state: dict[str, Any] = field(default_factory=dict)
    """The bootstrap's state hook after the cell (empty when the worker died)."""


@dataclass
class SubcallRequest:
    """A request from REPL code to the host (a sub-agent call, a budget query, ...)."""

    kind: str
    """What is asked, e.g. ``llm`` or ``rlm``; the handler defines the kinds."""
    payload: dict[str, Any] = field(default_factory=dict)
    depth: int = 0
    """Depth of the agent whose REPL asks (0: the root)."""
    budget: dict[str, Any] | None = None
    """Limits the REPL asks this request to stay within; the host clamps them to what is left."""
    id: int = 0
    """Per-worker request number, echoed in the result."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubcallRequest:
        return cls(kind=str(data["kind"]), payload=dict(data.get("payload") or {}),
                   depth=int(data.get("depth", 0)), budget=data.get("budget"),
                   id=int(data.get("id", 0)))


@dataclass
class SubcallResult:
    """The host's answer to a :class:`SubcallRequest`."""

    ok: bool
    payload: Any = None
    """Returned by ``host.request`` when ``ok`` (JSON)."""
    error: str | None = None
    """Raised as :class:`RemoteError` inside the sandbox when not ``ok``."""
    budget: dict[str, Any] | None = None
    """What is left of the agent's budget after the request (the REPL may show it)."""
    id: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "ok": self.ok, "budget": self.budget}
        out.update({"payload": self.payload} if self.ok else {"error": self.error or "failed"})
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubcallResult:
        return cls(ok=bool(data["ok"]), payload=data.get("payload"), error=data.get("error"),
                   budget=data.get("budget"), id=int(data.get("id", 0)))


RequestHandler = Callable[[SubcallRequest], Awaitable[SubcallResult]]


class Sandbox(ABC):
    """A persistent Python REPL in an isolated worker, one per episode.

    Globals persist across cells like a notebook; a cell's last expression is echoed. Failures
    inside a cell come back in :class:`CellResult` (``error``, ``timed_out``, ``crashed``);
    nothing a cell does raises in the host.

    Raises :class:`dealroom.errors.SandboxError` from ``start`` when the worker cannot start
    (bootstrap error, unavailable isolation level), and from ``execute`` when the worker is not
    running or a cell is already running. ``close`` never raises.
    """

    isolation: str = "rlimits"
    """The isolation level in force, one of :data:`ISOLATION_LEVELS` (known after start)."""
    confinement: dict[str, str] = {}
    """What is in force, by part (``isolation``, ``memory``, ``scratch``, ``seccomp``), in words
    (known after start)."""
    degraded: list[str] = []
    """The parts weaker than the strongest confinement, each with the reason (empty: none)."""

    @abstractmethod
    async def start(self) -> None:
        """Start the worker and run the bootstrap; a no-op when it is running."""

    @abstractmethod
    async def execute(self, code: str, *, timeout: float | None = None,
                      wall_timeout: float | None = None,
                      on_request: RequestHandler | None = None) -> CellResult:
        """Run one cell; ``on_request`` answers the cell's requests to the host.

        ``timeout`` bounds the cell's own time (default ``SandboxLimits.cell_timeout``);
        ``wall_timeout`` is a deadline for this cell, sub-call waits included (what is left of
        an episode's time, say). The ceiling ``SandboxLimits.cell_wall_timeout`` applies too.
        """

    async def restart(self) -> None:
        """A fresh worker: globals and scratch files are lost."""
        await self.close()
        await self.start()

    @abstractmethod
    async def close(self) -> None:
        """Stop the worker and every process it started."""

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
