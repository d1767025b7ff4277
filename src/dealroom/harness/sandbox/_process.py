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
import logging
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dealroom
from dealroom.errors import ConfigError, SandboxError
from dealroom.harness.sandbox._base import (
    ISOLATION_LEVELS,
    CellResult,
    RequestHandler,
    Sandbox,
    SandboxLimits,
    SubcallRequest,
    SubcallResult,
)

log = logging.getLogger("dealroom.sandbox")

DEFAULT_BOOTSTRAP = "dealroom.harness.sandbox._host:room_bootstrap"
MAX_LINE = 256 * 2**20
"""Largest protocol message (bytes)."""
UID_BASE = 1_000_000_000
HIDDEN = ("answer_key", "task.json")
"""Room parts the agent must not read: the planted findings and the rubric."""
_uids = itertools.count()


def fresh_uid() -> int:
    """A uid no one else uses, so RLIMIT_NPROC and signals are this sandbox's alone."""
    return UID_BASE + (os.getpid() % 100_000) * 100 + next(_uids) % 100


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


class _CellClock:
    """A cell's deadline that stands still while the host is answering the cell's requests."""

    def __init__(self, timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        self.paused_at: float | None = None

    def waiting(self, on_host: bool) -> None:
        now = time.monotonic()
        if on_host and self.paused_at is None:
            self.paused_at = now
        elif not on_host and self.paused_at is not None:
            self.deadline += now - self.paused_at
            self.paused_at = None

    def left(self) -> float | None:
        return None if self.paused_at is not None else max(0.0, self.deadline - time.monotonic())

    def grace(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.paused_at = None


class ProcessSandbox(Sandbox):
    """A REPL in a separate, confined worker process.

    ``room_dir`` is readable to the REPL (its index is built first if needed), ``scratch_dir``
    is its writable cwd and HOME. ``bootstrap`` (``"module:function"``, imported in the worker)
    receives a :class:`~dealroom.harness.sandbox.Host` and returns the REPL's globals;
    ``options`` reaches it as ``host.options``. ``isolation``: ``auto`` (the strongest
    available; warns when it is only ``rlimits``) or one of :data:`ISOLATION_LEVELS`, which
    then must be available. ``hide`` lists files and folders the REPL must not read (default:
    the room's ``answer_key/`` and ``task.json``); the host user's home, /run and /tmp show
    only what the worker needs.
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
        if hide is None:
            hide = [self.room_dir / n for n in HIDDEN] if self.room_dir else []
        self.hide = [str(Path(p).resolve()) for p in hide]
        self.names: list[str] = []
        """The REPL's globals after the bootstrap (from the ``ready`` message)."""
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr: deque[bytes] = deque(maxlen=200)
        self._stderr_task: asyncio.Task[None] | None = None
        self._worker_pid = 0
        self._cells = itertools.count(1)
        self._busy = asyncio.Lock()

    # -- life cycle -------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def start(self) -> None:
        if self.alive:
            return
        if self.room_dir is not None:
            from dealroom.room._index import ensure_index

            await asyncio.to_thread(ensure_index, self.room_dir)
        self.scratch_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:  # files left by an earlier worker (another uid) stay usable
            await asyncio.to_thread(_chown_tree, self.scratch_dir, self.uid)
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
        if self.isolation == "rlimits" and self.requested == "auto":
            log.warning("sandbox: no network or filesystem isolation is available here (no "
                        "user namespaces); the REPL runs with resource limits only")

    def _config(self, level: str) -> dict[str, Any]:
        package_root = str(Path(dealroom.__file__).resolve().parent.parent)
        expose = {sys.prefix, sys.base_prefix, sys.exec_prefix, package_root,
                  os.path.realpath(sys.executable), *self.pythonpath}
        expose |= {p for p in sys.path if p and os.path.isabs(p)}
        if self.room_dir is not None:
            expose.add(str(self.room_dir))
        return {
            "room_dir": str(self.room_dir) if self.room_dir else None,
            "scratch_dir": str(self.scratch_dir), "bootstrap": self.bootstrap,
            "options": self.options, "depth": self.depth, "isolation": level,
            "uid": self.uid, "gid": self.uid, "limits": self.limits.to_dict(),
            "expose": sorted(expose), "pythonpath": self.pythonpath,
            "mask": _masks(), "hide": self.hide,
        }

    def _env(self) -> dict[str, str]:
        package_root = str(Path(dealroom.__file__).resolve().parent.parent)
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "HOME": str(self.scratch_dir), "TMPDIR": str(self.scratch_dir),
                "PYTHONPATH": os.pathsep.join([*self.pythonpath, package_root]),
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}

    async def _spawn(self, level: str) -> None:
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
            msg = await asyncio.wait_for(self._read_ready(), self.limits.start_timeout)
        except TimeoutError:
            await self._kill()
            raise SandboxError(f"the sandbox worker did not start within "
                               f"{self.limits.start_timeout:g} s{self._stderr_tail()}") from None
        if msg.get("op") == "fatal":
            await self._kill()
            if msg.get("stage") == "confine":
                raise _ConfineFailed(msg.get("level") or level, msg.get("error", ""))
            raise SandboxError(f"the sandbox bootstrap {self.bootstrap} failed:\n{msg['error']}")
        self.isolation = msg["isolation"]
        self._worker_pid = int(msg["pid"])
        self.names = list(msg.get("names") or [])

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
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._stderr_task, 1.0)

    # -- cells ------------------------------------------------------------------------------
    async def execute(self, code: str, *, timeout: float | None = None,
                      on_request: RequestHandler | None = None) -> CellResult:
        if not self.alive:
            raise SandboxError("the sandbox is not running: call start() (or restart())")
        if self._busy.locked():
            raise SandboxError("a cell is already running in this sandbox")
        async with self._busy:
            return await self._execute(code, timeout or self.limits.cell_timeout, on_request)

    async def _execute(self, code: str, timeout: float,
                       on_request: RequestHandler | None) -> CellResult:
        """Run a cell. Time spent while the host answers the cell's requests (sub-agent calls)
        is not charged to ``timeout``: it bounds the cell's own work, not the models'."""
        cell = next(self._cells)
        t0 = time.monotonic()
        tasks: set[asyncio.Task[None]] = set()
        interrupted = False
        clock = _CellClock(timeout)
        reader: asyncio.Task[dict[str, Any] | None] | None = None
        try:
            try:
                await asyncio.wait_for(self._send({"op": "exec", "cell": cell, "code": code}),
                                       timeout)
            except TimeoutError:  # the worker does not even read its input
                return await self._died(t0, timed_out=True, timeout=timeout)
            while True:
                clock.waiting(bool(tasks) and not interrupted)
                reader = reader or asyncio.ensure_future(self._read())
                done, _ = await asyncio.wait({reader, *tasks}, timeout=clock.left(),
                                             return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    if interrupted:
                        return await self._died(t0, timed_out=True, timeout=timeout)
                    interrupted = True
                    self._interrupt()
                    clock.grace(self.limits.interrupt_grace)
                    continue
                if reader not in done:
                    continue  # a request was answered: the cell's clock may run again
                msg, reader = reader.result(), None
                if msg is None:
                    return await self._died(t0, timed_out=interrupted, timeout=timeout)
                if msg.get("op") == "request":
                    task = asyncio.create_task(self._answer(msg, on_request))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                elif (msg.get("op") == "done" and msg.get("cell") == cell
                      and msg.get("pid") == self._worker_pid):
                    return await self._finish(msg, t0, interrupted, timeout)
        except _ProtocolError as exc:
            await self._kill()
            return CellResult(stdout="", error=f"SandboxError: {exc}; the worker was stopped",
                              crashed=True, seconds=time.monotonic() - t0)
        finally:
            if reader is not None:
                reader.cancel()
            for task in tasks:
                task.cancel()

    async def _finish(self, msg: dict[str, Any], t0: float, interrupted: bool,
                      timeout: float) -> CellResult:
        error = msg.get("error")
        if interrupted:
            error = (f"TimeoutError: the cell ran past its {timeout:g} s limit and was "
                     f"interrupted (the REPL's variables are kept)\n{error or ''}").rstrip()
        crashed = msg.get("exit") is not None
        if crashed:
            error = ((error + "\n") if error else "") + (
                f"SystemExit: the cell called exit({msg['exit']}); the REPL worker has stopped "
                "— restart() it to go on")
            await self._kill()
        return CellResult(stdout=msg.get("stdout") or "", error=error, timed_out=interrupted,
                          crashed=crashed, seconds=time.monotonic() - t0,
                          state=msg.get("state") or {})

    async def _died(self, t0: float, *, timed_out: bool, timeout: float) -> CellResult:
        """The worker is gone or stuck: kill it and say why."""
        proc = self._proc
        code = proc.returncode if proc is not None else None
        if code is None and proc is not None and not timed_out:
            with contextlib.suppress(TimeoutError):
                code = await asyncio.wait_for(proc.wait(), 2.0)
        await self._kill()
        if timed_out:
            why = (f"TimeoutError: the cell ran past its {timeout:g} s limit and did not stop "
                   f"when interrupted; the REPL worker was killed — restart() it to go on")
        else:
            why = f"SandboxError: the REPL worker died ({self._describe(code)}) — restart() it"
        return CellResult(stdout="", error=why + self._stderr_tail(), timed_out=timed_out,
                          crashed=True, seconds=time.monotonic() - t0)

    def _describe(self, code: int | None) -> str:
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

    def _interrupt(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._proc.pid, signal.SIGINT)

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


def _chown_tree(root: Path, uid: int) -> None:
    os.lchown(root, uid, uid)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.lchown(os.path.join(folder, name), uid, uid)


def _masks() -> list[str]:
    """Directories shown only in part (the paths the worker needs): where secrets and sockets
    live — the host user's home, /run (sockets such as docker.sock), /tmp, /var/tmp, /dev/shm."""
    home = Path(os.path.expanduser("~")).resolve()
    system = {"/", "/usr", "/etc", "/var", "/opt", "/tmp", "/bin", "/lib", "/srv"}
    out = [str(home)] if len(home.parts) >= 2 and str(home) not in system else []
    return out + ["/run", "/tmp", "/var/tmp", "/dev/shm"]


class _ProtocolError(Exception):
    pass


class _ConfineFailed(Exception):
    def __init__(self, level: str, error: str) -> None:
        super().__init__(error.strip().splitlines()[-1] if error.strip() else "unknown error")
        self.level = level
