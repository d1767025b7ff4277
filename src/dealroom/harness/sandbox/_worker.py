"""The sandboxed worker: ``python -m dealroom.harness.sandbox._worker CONFIG_JSON``.

Start-up (see :mod:`._confine`): join the cgroup the host made, keep the protocol on private
copies of fds 0 and 1, unshare namespaces, fork into PID 1 of the new pid namespace, point fd 1
at a memfd, confine (the seccomp filter last), then import the bootstrap and answer the host
``ready`` with what is in force. After that the main thread runs cells; a reader thread takes every
host message off stdin, queueing ``exec``/``exit`` and handing each ``response`` to the thread
waiting in ``host.request``. The message flow is drawn in :mod:`._base`.

Inside a cell, ``print`` and ``sys.stderr`` go to a capped per-cell buffer; fd 1 (C code,
subprocesses) goes to a memfd read back after the cell; fd 2 stays the host's diagnostics pipe
(faulthandler writes crash tracebacks there).
"""

from __future__ import annotations

import ast
import builtins
import faulthandler
import importlib
import inspect
import io
import json
import linecache
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any

from dealroom.errors import RoomError
from dealroom.harness.sandbox import _confine, _host
from dealroom.harness.sandbox._host import Host, _Channel


class _Output(io.TextIOBase):
    """A text sink keeping the first and last ``limit / 2`` characters written."""

    def __init__(self, limit: int) -> None:
        self.half = max(1, limit // 2)
        self.head: list[str] = []
        self.head_len = 0
        self.tail = ""
        self.dropped = 0
        self.lock = threading.Lock()

    encoding = "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        n = len(s)
        with self.lock:
            room = self.half - self.head_len
            if room > 0:
                self.head.append(s[:room])
                self.head_len += min(len(s), room)
                s = s[room:]
            if s:
                joined = self.tail + s
                self.dropped += max(0, len(joined) - self.half)
                self.tail = joined[-self.half:]
        return n

    def text(self) -> str:
        middle = f"\n[... {self.dropped:,} characters of output dropped ...]\n"
        return "".join(self.head) + (middle if self.dropped else "") + self.tail


# -- running cells --------------------------------------------------------------------------
class Repl:
    """A notebook-like namespace: cells share globals, a last expression is echoed."""

    def __init__(self, namespace: dict[str, Any], host: Host, limits: dict[str, Any],
                 isolation: str, fd_out: int) -> None:
        self.ns = namespace
        self.host = host
        self.limits = limits
        self.isolation = isolation
        self.fd_out = fd_out

    def run(self, code: str, cell: int, nonce: str) -> dict[str, Any]:
        """Run one cell; the ``done`` message's fields (``nonce``: the host's, for this cell)."""
        out = _Output(self.limits["max_output_chars"])
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = out
        error, exit_code = None, None
        try:
            _IN_CELL.set()
            self._exec(code, f"<cell-{cell}>")
        except SystemExit as exc:
            exit_code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # noqa: BLE001 - everything the cell raises is its result
            error = _format(exc, self.limits)
            if isinstance(exc, KeyboardInterrupt) and self.isolation != "rlimits":
                _kill_others()
        finally:
            _IN_CELL.clear()
            sys.stdout, sys.stderr = saved
        if os.getpid() != _host.MAIN_PID:  # the cell forked and this is the copy: vanish quietly
            os._exit(0)
        stdout = out.text() + _drain(self.fd_out, self.limits["max_output_chars"])
        return {"op": "done", "cell": cell, "nonce": nonce, "pid": _host.MAIN_PID,
                "stdout": stdout, "error": error, "state": self._state(), "exit": exit_code}

    def _exec(self, code: str, name: str) -> None:
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        tree = ast.parse(code, name, "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        _await(eval(compile(tree, name, "exec", flags=flags), self.ns))
        if isinstance(last, ast.Expr):
            expr = ast.Expression(last.value)
            value = _await(eval(compile(expr, name, "eval", flags=flags), self.ns))
            if value is not None:
                self.ns["_"] = value
                print(repr(value))

    def _state(self) -> dict[str, Any]:
        if self.host.state_hook is None:
            return {}
        try:
            state = self.host.state_hook()
            json.dumps(state)
            return state
        except Exception as exc:  # noqa: BLE001 - reported, never fatal
            return {"state_error": f"{type(exc).__name__}: {exc}"}


def _await(value: Any) -> Any:
    if inspect.iscoroutine(value):
        import asyncio  # a cell's rare coroutine: not loaded at every REPL start (~25 ms)

        return asyncio.run(value)
    return value


def _format(exc: BaseException, limits: dict[str, Any]) -> str:
    """The traceback from the cell's first frame on (the worker's frames are noise)."""
    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell-"):
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()
    if isinstance(exc, MemoryError):
        gib = limits["memory_bytes"] / 2**30
        text += (f"\n(the cell went past the sandbox's {gib:.1f} GiB memory limit; "
                 "the REPL and its variables are still there)")
    return text


def _kill_others() -> None:
    """After an interrupted cell, stop every other process in the namespace (fork bombs)."""
    if os.getpid() != 1:  # only PID 1 of a private pid namespace may do this safely
        return
    for _ in range(100):  # again until none is left: some may be mid-fork
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            break
        _reap()
        time.sleep(0.005)
    _reap()


def _reap() -> None:
    """PID 1 inherits orphans: collect the finished ones."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _redirect_fd1() -> int:
    """Point fd 1 at a memfd so C-level output is captured, not mixed into the protocol.

    Made before the syscall filter, which denies cells any memfd of their own."""
    fd = os.memfd_create("cell-output")
    os.dup2(fd, 1)
    return fd


def _join_cgroup(procs: list[str]) -> None:
    """Move this process into the cgroup the host made (before anything else happens)."""
    for path in procs:
        with open(path, "w") as f:
            f.write(str(os.getpid()))


def _drain(fd: int, limit: int) -> str:
    size = os.lseek(fd, 0, os.SEEK_END)
    if not size:
        return ""
    data = os.pread(fd, min(size, limit), 0)
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    more = f"\n[... {size - len(data):,} bytes dropped ...]" if size > len(data) else ""
    return data.decode("utf-8", "replace") + more


def _first_message(fd: int, op: str) -> dict[str, Any]:
    """The host's first message, read before the reader thread starts (nothing follows it
    until the worker says ``ready``)."""
    chunks: list[bytes] = []
    while not chunks or not chunks[-1].endswith(b"\n"):
        chunks.append(os.read(fd, 1 << 20))
        if not chunks[-1]:
            raise EOFError("the host closed the channel during start-up")
    msg = json.loads(b"".join(chunks))
    if msg.get("op") != op:
        raise ValueError(f"the host's first message is {msg.get('op')!r}, not {op!r}")
    return dict(msg)


def _load_bootstrap(spec: str) -> Callable[[Host], dict[str, Any]]:
    module, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"bootstrap {spec!r} must look like 'package.module:function'")
    return getattr(importlib.import_module(module), name)


# -- start-up -------------------------------------------------------------------------------
def main(argv: list[str]) -> None:
    cfg = json.loads(argv[1])
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    faulthandler.enable(file=sys.__stderr__ or sys.stderr)
    channel = _Channel(proto_in, proto_out)
    stage, level = "confine", cfg["isolation"]
    try:
        if cfg.get("room_dir"):  # the host's first message: the room's files to show
            cfg["room_files"] = _first_message(proto_in, "room")["files"]
        _join_cgroup(cfg.get("cgroup") or [])
        base = _confine.user_tasks()
        level = _confine.enter(cfg["isolation"])
        if level != "rlimits":
            child = os.fork()
            if child:
                _confine.keep(child, (proto_in, proto_out))
            _confine.as_child()
        _host.MAIN_PID = os.getpid()
        fd_out = _redirect_fd1()
        confinement, weak = _confine.confine(level, cfg, base)
        stage = "bootstrap"
        cfg["isolation"] = level
        signal.signal(signal.SIGINT, _on_sigint)
        threading.Thread(target=channel.read_forever, name="host-reader", daemon=True).start()
        for path in reversed(cfg.get("pythonpath") or []):
            sys.path.insert(0, path)
        host = Host(channel, cfg)
        names = _load_bootstrap(cfg["bootstrap"])(host)  # becomes the REPL's globals as is
        hook = names.pop("__state__", None)
        if hook is not None and host.state_hook is None:
            host.set_state_hook(hook)
        names.update({"__name__": "__main__", "__builtins__": builtins})
        repl = Repl(names, host, cfg["limits"], level, fd_out)
    except BaseException as exc:  # noqa: BLE001 - reported to the host, then exit
        if stage == "confine" and isinstance(exc, RoomError):
            stage = "room"  # the room, not the machine: a weaker level is no answer
        channel.send({"op": "fatal", "stage": stage, "level": level,
                      "error": "".join(traceback.format_exception(exc)).rstrip()})
        os._exit(1)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversize writes fail with EFBIG instead
    channel.send({"op": "ready", "isolation": level, "pid": _host.MAIN_PID,
                  "confinement": confinement, "weak": weak,
                  "names": sorted(k for k in repl.ns if not k.startswith("__"))})
    serve(channel, repl)


_IN_CELL = threading.Event()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """The host's timeout: interrupt the cell; between cells (a late signal) do nothing."""
    if _IN_CELL.is_set():
        raise KeyboardInterrupt


def serve(channel: _Channel, repl: Repl) -> None:
    while True:
        msg = channel.commands.get()
        if msg.get("op") != "exec":
            os._exit(0)
        cell, nonce = int(msg.get("cell", 0)), str(msg.pop("nonce", ""))
        try:
            done = repl.run(str(msg.pop("code", "")), cell, nonce)
        except KeyboardInterrupt:  # the timeout's signal landed just after the cell's code
            done = {"op": "done", "cell": cell, "nonce": nonce, "pid": _host.MAIN_PID,
                    "stdout": "", "error": "KeyboardInterrupt", "state": {}, "exit": None}
        channel.send(done)
        if done["exit"] is not None:
            os._exit(done["exit"] if 0 <= done["exit"] < 256 else 1)
        if os.getpid() == 1:
            _reap()


if __name__ == "__main__":
    main(sys.argv)
