"""Helpers of the sandbox tests, and what this machine can do, found without the sandbox's code.

A security test skips only when :func:`machine` says the machine itself lacks what the test
needs (with the probe's reason); where the machine has it, the sandbox must use it or the test
fails — a confinement regression cannot turn into a skip.
"""

from __future__ import annotations

import asyncio
import functools
import os
import platform
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from dealroom.harness.sandbox import ProcessSandbox, SandboxLimits

HERE = Path(__file__).parent
REPO = HERE.parents[2]
FAST = SandboxLimits(cell_timeout=10, interrupt_grace=0.5, max_processes=24,
                     memory_bytes=2 * 2**30, start_timeout=30, scratch_bytes=256 * 2**20)


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]


def make(room: Path | None, tmp_path: Path, **kw: Any) -> ProcessSandbox:
    kw.setdefault("limits", FAST)
    if "bootstrap" in kw:
        kw.setdefault("pythonpath", [HERE])
    return ProcessSandbox(room, tmp_path / "scratch", **kw)


def session(room: Path | None, tmp_path: Path,
            body: Callable[[ProcessSandbox], Awaitable[Any]], **kw: Any) -> Any:
    async def go() -> Any:
        sb = make(room, tmp_path, **kw)
        await sb.start()
        try:
            return await body(sb)
        finally:
            await sb.close()

    return run(go())


def uid_processes(uid: int) -> list[int]:
    """Pids of live (non-zombie) processes owned by ``uid``."""
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines()
                          if ":" in line)
        except OSError:
            continue
        if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
            pids.append(int(status.parent.name))
    return pids


# -- what the machine offers ------------------------------------------------------------------
@dataclass
class Machine:
    isolation: str
    """The strongest isolation level this machine allows."""
    missing: dict[str, str] = field(default_factory=dict)
    """Capability (``namespaces``, ``fresh_uid``, ``tmpfs``, ``seccomp``, ``cgroup``) to the
    reason the machine lacks it."""

    def needs(self, *capabilities: str) -> None:
        """Skip the calling test, with the probe's reason, where the machine lacks one."""
        for cap in capabilities:
            if cap in self.missing:
                pytest.skip(f"this machine lacks {cap}: {self.missing[cap]}")


def _works(cmd: list[str]) -> str | None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{' '.join(cmd)}: {exc}"
    return None if done.returncode == 0 else f"{' '.join(cmd)}: {done.stderr.strip()[-200:]}"


def _memory_cgroup() -> str | None:
    """Why no memory-limited cgroup can be made below this process's own (None: it can)."""
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    own = {c: p for _, cs, p in (x.split(":", 2) for x in lines) for c in cs.split(",")}
    base = Path("/sys/fs/cgroup")
    if "" in own and (base / own[""].lstrip("/") / "cgroup.controllers").exists():
        here = base / own[""].lstrip("/")
        if "memory" in (here / "cgroup.subtree_control").read_text().split():
            return None
        try:
            (here / "cgroup.subtree_control").write_text("+memory")
            return None
        except OSError as exc:
            v2 = f"cgroup v2 cannot delegate memory in {here}: {exc.strerror}"
    else:
        v2 = "no cgroup v2 here"
    if "memory" not in own or not (base / "memory").is_dir():
        return f"{v2}; no cgroup v1 memory hierarchy"
    probe = base / "memory" / own["memory"].lstrip("/") / f"dealroom-probe-{os.getpid()}"
    try:
        probe.mkdir()
        (probe / "memory.limit_in_bytes").write_text(str(2**30))
        probe.rmdir()
    except OSError as exc:
        return f"{v2}; cgroup v1 memory: {exc.strerror}"
    return None


@functools.cache
def machine() -> Machine:
    missing: dict[str, str] = {}
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    ns = ["unshare", *user, "--net", "--mount", "--pid", "--ipc", "--fork", "true"]
    if (why := _works(ns)) is not None:
        missing["namespaces"] = why
    if os.geteuid() != 0:
        missing["fresh_uid"] = "not root: a fresh uid per sandbox needs root"
    with tempfile.TemporaryDirectory() as d:
        cmd = ["unshare", *user, "--mount", "mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d]
        if (why := _works(cmd)) is not None:
            missing["tmpfs"] = why
    status = Path("/proc/self/status").read_text()
    if "Seccomp:" not in status:
        missing["seccomp"] = "the kernel has no seccomp"
    elif platform.machine() not in ("x86_64", "aarch64"):
        missing["seccomp"] = f"dealroom has no syscall table for {platform.machine()}"
    if (why := _memory_cgroup()) is not None:
        missing["cgroup"] = why
    if "namespaces" in missing:
        level = "rlimits"
    else:
        level = "userns" if "fresh_uid" in missing else "namespaces+uid"
    return Machine(level, missing)
