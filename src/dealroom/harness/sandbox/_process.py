"""``ProcessSandbox``: the host side of one sandboxed worker process (Linux).

The worker is ``python -m dealroom.harness.sandbox._worker`` in its own session, with a bare
environment (PATH, LANG, HOME and TMPDIR = the scratch dir, PYTHONPATH to find dealroom). It
confines itself before running anything else (:mod:`._confine`); the host enforces the cell
timeout, answers requests, and kills the whole process group on close. Messages: :mod:`._base`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import secrets
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import dealroom
from dealroom._util.redact import logger
from dealroom._util.threads import ONE_THREAD
from dealroom.errors import ConfigError, RoomError, SandboxError
from dealroom.harness.sandbox import _cgroup
from dealroom.harness.sandbox._base import (
    ISOLATION_LEVELS,
    CellResult,
    RequestHandler,
    Sandbox,
    SandboxLimits,
    SubcallRequest,
    SubcallResult,
    size_text,
)
from dealroom.harness.sandbox._clock import CellClock, tree_cpu

log = logger("dealroom.sandbox")

DEFAULT_BOOTSTRAP = "dealroom.harness.sandbox._host:room_bootstrap"
MAX_LINE = 256 * 2**20
"""Largest protocol message (bytes)."""
UID_BASE = 1_000_000_000
WALL_FACTOR = 4
"""A cell's default wall-clock ceiling, in multiples of its timeout."""
EXTRA_TASKS = 8
"""Tasks the cgroup allows beyond ``max_processes``: the keeper and the worker's own threads."""
WEAKER = {"userns": "no fresh uid per sandbox", "rlimits": "no network, filesystem or process "
          "isolation"}
_uids = itertools.count()


def fresh_uid() -> int:
    """A uid no one else uses, so RLIMIT_NPROC and signals are this sandbox's alone."""
    return UID_BASE + (os.getpid() % 100_000) * 100 + next(_uids) % 100


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


class ProcessSandbox(Sandbox):
    """A REPL in a separate, confined worker process.

    ``room_dir`` is readable to the REPL (its index is built first if needed), ``scratch_dir``
    is its writable cwd and HOME. ``bootstrap`` (``"module:function"``, imported in the worker)
    receives a :class:`~dealroom.harness.sandbox.Host` and returns the REPL's globals;
    ``options`` reaches it as ``host.options``. ``isolation``: ``auto`` (the strongest
    available; warns when it is only ``rlimits``) or one of :data:`ISOLATION_LEVELS`, which
    then must be available. With a mount namespace the worker sees only an allow-list of paths
    (:mod:`._view`): the system's runtime, Python, dealroom, ``pythonpath``, the room's agent
    files (:func:`dealroom.room.agent_files`: ``room.json``, the documents it lists, the
    index; never ``task.json``, ``answer_key/`` or any other file of the room) read-only, and
    the scratch dir. ``hide`` lists more files and folders of those the REPL must not read.
    """

    def __init__(self, room_dir: str | Path | None, scratch_dir: str | Path,
                 limits: SandboxLimits | None = None, *, bootstrap: str = DEFAULT_BOOTSTRAP,
                 options: dict[str, Any] | None = None, depth: int = 0,
                 isolation: str = "auto", uid: int | None = None,
                 pythonpath: Sequence[str | Path] = (),
                 hide: Sequence[str | Path] | None = None) -> None:
        if isolation != "auto" and isolation not in ISOLATION_LEVELS:
            raise ConfigError(f"isolation {isolation!r}: use auto or one of "
                              f"{', '.join(ISOLATION_LEVELS)}")
        if ":" not in bootstrap:
            raise ConfigError(f"bootstrap {bootstrap!r} must look like 'package.module:function'")
        self.room_dir = Path(room_dir).resolve() if room_dir else None
        self.scratch_dir = Path(scratch_dir).resolve()
        self.limits = limits or SandboxLimits()
        self.bootstrap, self.options, self.depth = bootstrap, options or {}, depth
        self.requested = isolation
        self.isolation = isolation
        self.uid = uid if uid is not None else fresh_uid()
        self.pythonpath = [str(Path(p).resolve()) for p in pythonpath]
        self.hide = [str(Path(p).resolve()) for p in hide or ()]
        self.names: list[str] = []
        """The REPL's globals after the bootstrap (from the ``ready`` message)."""
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr: deque[bytes] = deque(maxlen=200)
        self._stderr_task: asyncio.Task[None] | None = None
        self._worker_pid = 0
        self._cells = itertools.count(1)
        self._busy = asyncio.Lock()
        self._cgroup: _cgroup.Cgroup | None = None
        self._warned = False
        self.confinement: dict[str, str] = {}
        self.degraded: list[str] = []

    # -- life cycle -------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def start(self) -> None:
        if self.alive:
            return
        if self.room_dir is not None:
            from dealroom.room import ensure_index

            await asyncio.to_thread(ensure_index, self.room_dir)
        self.scratch_dir.mkdir(parents=True, exist_ok=True)
        level = self.requested
        while True:
            try:
                await self._spawn(level)
                break
            except _ConfineFailed as exc:
                lower = ISOLATION_LEVELS[ISOLATION_LEVELS.index(exc.level) + 1:]
                if self.requested != "auto" or not lower:
                    raise SandboxError(f"cannot confine the worker: {exc}") from None
                log.warning("sandbox isolation %s failed (%s); trying %s", exc.level, exc,
                            lower[0])
                level = lower[0]
        if not self._warned and self.requested == "auto":
            self._warned = True
            for weak in self.degraded:
                log.warning("sandbox: weaker than it should be: %s", weak)

    def _take_stock(self, msg: dict[str, Any], memory: str) -> None:
        """Record what confinement is in force (from the ``ready`` message) and what is weak."""
        self.isolation = msg["isolation"]
        worker = dict(msg.get("confinement") or {})
        self.confinement = {"isolation": self.isolation, "memory": memory, **worker}
        weak = [p for p in msg.get("weak") or [] if p in worker]
        weak += [] if self._cgroup is not None else ["memory"]
        self.degraded = [f"{part}: {self.confinement[part]}" for part in sorted(weak)]
        if self.isolation in WEAKER:
            why = "asked for" if self.requested != "auto" else (
                "namespaces+uid needs root" if self.isolation == "userns"
                else "no namespaces available here")
            self.degraded.insert(0, f"isolation {self.isolation}: {WEAKER[self.isolation]} "
                                    f"({why})")

    def _make_cgroup(self) -> str:
        """The worker's cgroup, where the machine allows one; how memory is bounded, in words."""
        limits = self.limits
        try:
            self._cgroup = _cgroup.create(limits.memory_bytes + limits.scratch_bytes,
                                          limits.max_processes + EXTRA_TASKS)
        except OSError as exc:
            self._cgroup = None
            return (f"address space only: {size_text(limits.memory_bytes)} per process, "
                    f"up to {limits.max_processes} processes ({exc})")
        return self._cgroup.describe()

    def _config(self, level: str) -> dict[str, Any]:
        package_root = str(Path(dealroom.__file__).resolve().parent.parent)
        expose = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  package_root, sys.executable, *self.pythonpath}
        return {
            "room_dir": str(self.room_dir) if self.room_dir else None,
            "scratch_dir": str(self.scratch_dir), "bootstrap": self.bootstrap,
            "options": self.options, "depth": self.depth, "isolation": level,
            "uid": self.uid, "gid": self.uid, "limits": self.limits.to_dict(),
            "expose": sorted(expose), "pythonpath": self.pythonpath,
            "hide": self.hide,
            "cgroup": self._cgroup.procs if self._cgroup is not None else [],
        }

    def _env(self) -> dict[str, str]:
        package_root = str(Path(dealroom.__file__).resolve().parent.parent)
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "HOME": str(self.scratch_dir), "TMPDIR": str(self.scratch_dir),
                "PYTHONPATH": os.pathsep.join([*self.pythonpath, package_root]),
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", **ONE_THREAD}

    async def _spawn(self, level: str) -> None:
        memory = await asyncio.to_thread(self._make_cgroup)
        cmd = [sys.executable, "-s", "-P", "-m", "dealroom.harness.sandbox._worker",
               json.dumps(self._config(level))]
        self._stderr.clear()
        self._proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=str(self.scratch_dir), env=self._env(),
            start_new_session=True, limit=MAX_LINE,
        )
        self._stderr_task = asyncio.create_task(self._drain_stderr(self._proc))
        try:
            msg = await asyncio.wait_for(self._start_up(), self.limits.start_timeout)
        except TimeoutError:
            await self._kill()
            raise SandboxError(f"the sandbox worker did not start within "
                               f"{self.limits.start_timeout:g} s{self._stderr_tail()}") from None
        if msg.get("op") == "fatal":
            await self._kill()
            if msg.get("stage") == "confine":
                raise _ConfineFailed(msg.get("level") or level, msg.get("error", ""))
            if msg.get("stage") == "room":  # no weaker level would show less: stop here
                last = (msg.get("error") or "").strip().splitlines()[-1:] or [""]
                raise SandboxError(f"the sandbox cannot show the room to its worker: {last[0]}")
            raise SandboxError(f"the sandbox bootstrap {self.bootstrap} failed:\n{msg['error']}")
        self._take_stock(msg, memory)
        self._worker_pid = int(msg["pid"])
        self.names = list(msg.get("names") or [])

    async def _start_up(self) -> dict[str, Any]:
        await self._show_room()  # checked while the worker's interpreter starts
        return await self._read_ready()

    async def _show_room(self) -> None:
        """Send the worker the room's agent files, checked here (the first message; the worker
        binds each one into its view, :mod:`._view`)."""
        if self.room_dir is None:
            return
        from dealroom.room import agent_files

        try:
            files = await asyncio.to_thread(agent_files, self.room_dir)
        except RoomError as exc:
            await self._kill()
            raise SandboxError(f"the sandbox cannot show the room to its worker: {exc}") from None
        await self._send({"op": "room", "files": [[f.path, f.real, *f.inode] for f in files]})

    async def _read_ready(self) -> dict[str, Any]:
        while True:
            msg = await self._read()
            if msg is None:
                raise SandboxError(f"the sandbox worker exited during start-up"
                                   f"{self._stderr_tail()}")
            if msg.get("op") in ("ready", "fatal"):
                return msg
            if msg.get("op") == "request":
                await self._send({"op": "response", "id": msg.get("id"), "ok": False,
                                  "error": "requests are not served during start-up"})

    async def close(self) -> None:
        if self._proc is None:
            return
        if self.alive:
            with contextlib.suppress(Exception):
                await self._send({"op": "exit"})
                self._proc.stdin.close()  # type: ignore[union-attr]
                await asyncio.wait_for(self._proc.wait(), 0.5)
        await self._kill()
        self._proc = None

    async def _kill(self) -> None:
        """SIGKILL the worker's process group (its pid namespace dies with it)."""
        proc = self._proc
        if proc is None:
            if self._cgroup is not None:
                await asyncio.to_thread(self._cgroup.remove)
                self._cgroup = None
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        if self._cgroup is not None:  # every process in it, whatever session or namespace
            await asyncio.to_thread(self._cgroup.remove)
            self._cgroup = None
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._stderr_task, 1.0)

    # -- cells ------------------------------------------------------------------------------
    async def execute(self, code: str, *, timeout: float | None = None,
                      wall_timeout: float | None = None,
                      on_request: RequestHandler | None = None) -> CellResult:
        if not self.alive:
            raise SandboxError("the sandbox is not running: call start() (or restart())")
        if self._busy.locked():
            raise SandboxError("a cell is already running in this sandbox")
        own = timeout or self.limits.cell_timeout
        wall = self.limits.cell_wall_timeout or WALL_FACTOR * own
        wall = min(wall, wall_timeout) if wall_timeout else wall
        async with self._busy:
            return await self._execute(code, _Cell(next(self._cells), own, wall, self._cpu),
                                       on_request)

    def _cpu(self) -> float | None:
        """CPU seconds of everything the worker runs (its cgroup, else its process tree)."""
        if self._cgroup is not None and (cpu := self._cgroup.cpu_seconds()) is not None:
            return cpu
        return tree_cpu(self._proc.pid) if self._proc is not None else None

    async def _execute(self, code: str, cell: _Cell,
                       on_request: RequestHandler | None) -> CellResult:
        """Run a cell until it is done, its clock runs out (:mod:`._clock`) or the worker dies."""
        reader: asyncio.Task[dict[str, Any] | None] | None = None
        try:
            try:
                await asyncio.wait_for(self._send(
                    {"op": "exec", "cell": cell.number, "code": code, "nonce": cell.nonce}),
                    cell.own)
            except TimeoutError:  # the worker does not even read its input
                cell.limit = "own"
                return await self._died(cell)
            while True:
                cell.clock.waiting(bool(cell.tasks) and cell.limit is None)
                reader = reader or asyncio.ensure_future(self._read())
                done: set[Any] = set()
                if (wait := cell.clock.left()) > 0:
                    done, _ = await asyncio.wait({reader, *cell.tasks}, timeout=wait,
                                                 return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    if (why := cell.clock.expired()) is None:
                        continue
                    if cell.limit is not None:
                        return await self._died(cell)
                    cell.limit = why
                    await self._interrupt(cell)
                    continue
                if reader not in done:
                    continue  # a request was answered: the cell's clock may run again
                msg, reader = reader.result(), None
                if msg is None:
                    return await self._died(cell)
                if msg.get("op") == "request":
                    self._start_answer(cell, msg, on_request)
                elif msg.get("op") == "done" and self._genuine(msg, cell):
                    return await self._finish(msg, cell)
        except _ProtocolError as exc:
            await self._kill()
            return CellResult(stdout="", error=f"SandboxError: {exc}; the worker was stopped",
                              crashed=True, seconds=cell.seconds())
        finally:
            if reader is not None:
                reader.cancel()
            for task in cell.tasks:
                task.cancel()

    def _genuine(self, msg: dict[str, Any], cell: _Cell) -> bool:
        """A ``done`` the worker's own loop sent for this cell: its number, the REPL's pid and
        the cell's nonce (a forged one, written by the cell's code, lacks the nonce)."""
        if (msg.get("cell") == cell.number and msg.get("pid") == self._worker_pid
                and secrets.compare_digest(str(msg.get("nonce", "")), cell.nonce)):
            return True
        if not cell.forged:
            log.warning("sandbox: cell %d: a done message that is not the worker's own was "
                        "ignored", cell.number)
        cell.forged += 1
        return False

    def _start_answer(self, cell: _Cell, msg: dict[str, Any],
                      on_request: RequestHandler | None) -> None:
        if cell.limit is not None:  # an interrupted cell gets no more answers
            on_request = _refuse
        task = asyncio.create_task(self._answer(msg, on_request))
        cell.tasks[task] = msg.get("id")
        task.add_done_callback(lambda t: cell.tasks.pop(t, None))

    async def _interrupt(self, cell: _Cell) -> None:
        """SIGINT the cell; requests still out are cancelled and fail in the REPL."""
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._proc.pid, signal.SIGINT)
        for task, rid in list(cell.tasks.items()):
            task.cancel()
            await self._send({"op": "response", "id": rid, "ok": False,
                              "error": f"the cell ran past {cell.describe()}"})
        cell.tasks.clear()
        cell.clock.grace(self.limits.interrupt_grace)

    async def _finish(self, msg: dict[str, Any], cell: _Cell) -> CellResult:
        error = msg.get("error")
        if cell.limit is not None:
            error = (f"TimeoutError: the cell ran past {cell.describe()} and was "
                     f"interrupted\n{error or ''}").rstrip()
        crashed = msg.get("exit") is not None
        if crashed:
            error = ((error + "\n") if error else "") + (
                f"SystemExit: the cell called exit({msg['exit']}); the REPL worker has stopped "
                "— restart() it to go on")
            await self._kill()
        return CellResult(stdout=msg.get("stdout") or "", error=error,
                          timed_out=cell.limit is not None, crashed=crashed,
                          seconds=cell.seconds(), state=msg.get("state") or {})

    async def _died(self, cell: _Cell) -> CellResult:
        """The worker is gone or stuck: kill it and say why."""
        proc = self._proc
        code = proc.returncode if proc is not None else None
        if code is None and proc is not None and cell.limit is None:
            with contextlib.suppress(TimeoutError):
                code = await asyncio.wait_for(proc.wait(), 2.0)
        ooms = self._cgroup.oom_kills() if self._cgroup is not None else 0
        await self._kill()
        if cell.limit is not None:
            why = (f"TimeoutError: the cell ran past {cell.describe()} and did not stop "
                   f"when interrupted; the REPL worker was killed — restart() it to go on")
        else:
            why = (f"SandboxError: the REPL worker died ({self._describe(code, ooms)}) "
                   "— restart() it")
        return CellResult(stdout="", error=why + self._stderr_tail(),
                          timed_out=cell.limit is not None, crashed=True,
                          seconds=cell.seconds())

    def _describe(self, code: int | None, ooms: int = 0) -> str:
        if ooms and code in (-9, 137, None):
            return (f"SIGKILL: the memory limit of the sandbox "
                    f"({self._cgroup.describe() if self._cgroup else ''}) was reached")
        if code is None:
            return "no exit status"
        if code < 0 or code > 128:
            sig = -code if code < 0 else code - 128
            name = _signal_name(sig)
            hint = {"SIGKILL": "killed: memory, CPU time or process limit, or a kill",
                    "SIGSEGV": "segmentation fault", "SIGXCPU": "CPU time limit",
                    "SIGABRT": "aborted"}.get(name, "")
            return f"{name}{': ' + hint if hint else ''}"
        return f"exit status {code}"

    async def _answer(self, msg: dict[str, Any], on_request: RequestHandler | None) -> None:
        try:
            request = SubcallRequest.from_dict(msg)
        except (KeyError, TypeError, ValueError) as exc:
            result = SubcallResult(ok=False, error=f"malformed request: {exc}")
        else:
            if on_request is None:
                result = SubcallResult(ok=False, error="this sandbox has no request handler")
            else:
                try:
                    result = await on_request(request)
                except Exception as exc:  # noqa: BLE001 - the REPL sees it as RemoteError
                    result = SubcallResult(ok=False, error=f"{type(exc).__name__}: {exc}")
        result.id = int(msg.get("id") or 0)
        try:
            await self._send({"op": "response", **result.to_dict()})
        except TypeError as exc:  # a payload that is not JSON
            await self._send({"op": "response", "id": result.id, "ok": False,
                              "error": f"the host's answer is not JSON: {exc}"})

    # -- the wire ---------------------------------------------------------------------------
    async def _send(self, msg: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        data = (json.dumps(msg, ensure_ascii=False) + "\n").encode("utf-8")
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(data)
            await proc.stdin.drain()

    async def _read(self) -> dict[str, Any] | None:
        """The next message, or None at EOF."""
        assert self._proc is not None and self._proc.stdout is not None
        try:
            line = await self._proc.stdout.readline()
        except ValueError as exc:  # longer than MAX_LINE
            raise _ProtocolError(f"a message from the worker is too long ({exc})") from None
        if not line:
            return None
        try:
            msg = json.loads(line)
        except ValueError:
            raise _ProtocolError(f"the worker wrote a non-message: {line[:120]!r}") from None
        if not isinstance(msg, dict):
            raise _ProtocolError(f"the worker wrote a non-message: {line[:120]!r}")
        return msg

    async def _drain_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            self._stderr.append(line[:2000])

    def _stderr_tail(self, lines: int = 20) -> str:
        tail = b"".join(list(self._stderr)[-lines:]).decode("utf-8", "replace").strip()
        return f"\nworker stderr:\n{tail}" if tail else ""


class _Cell:
    """One running cell: its number, clocks, the requests it has out, why it was stopped."""

    def __init__(self, number: int, own: float, wall: float,
                 cpu: Callable[[], float | None]) -> None:
        self.number, self.own, self.wall = number, own, wall
        self.nonce = secrets.token_hex(16)
        """Sent with ``exec``; only a ``done`` that carries it ends the cell."""
        self.forged = 0
        """``done`` messages ignored: not the worker's own."""
        self.t0 = time.monotonic()
        self.clock = CellClock(own, wall, cpu)
        self.tasks: dict[asyncio.Task[None], Any] = {}
        self.limit: str | None = None
        """None while it may run; ``own`` or ``wall``: the limit it ran past."""

    def seconds(self) -> float:
        return time.monotonic() - self.t0

    def describe(self) -> str:
        if self.limit == "wall":
            return f"its {self.wall:g} s wall-clock limit (sub-call waits included)"
        return f"its {self.own:g} s limit"


async def _refuse(request: SubcallRequest) -> SubcallResult:
    return SubcallResult(ok=False, error="the cell was interrupted")


class _ProtocolError(Exception):
    pass


class _ConfineFailed(Exception):
    def __init__(self, level: str, error: str) -> None:
        super().__init__(error.strip().splitlines()[-1] if error.strip() else "unknown error")
        self.level = level


async def check_confinement(isolation: str = "auto") -> tuple[dict[str, str], list[str]]:
    """Start a throwaway sandbox and report what confines it here: ``(confinement, degraded)``
    as :attr:`ProcessSandbox.confinement` and :attr:`~ProcessSandbox.degraded` give them."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dealroom-check-") as tmp:
        sandbox = ProcessSandbox(None, Path(tmp) / "scratch", isolation=isolation)
        await sandbox.start()
        try:
            return dict(sandbox.confinement), list(sandbox.degraded)
        finally:
            await sandbox.close()
