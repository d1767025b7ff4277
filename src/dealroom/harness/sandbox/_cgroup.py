"""One cgroup per worker (Linux): RAM, tasks and CPU time of everything the worker runs.

RLIMIT_AS bounds one process's address space; it does not see memfd or tmpfs pages, page cache,
kernel memory, or the sum over the worker's processes. A memory cgroup counts all of them. The
host creates ``dealroom-<host pid>-<n>`` below its own cgroup, writes the limits, and the worker
joins it first thing, before it confines itself (after that it could not)::

    host                                   worker (still the host's uid, nothing run yet)
    mkdir .../dealroom-<pid>-<n>           write its pid to each cgroup.procs
    memory limit, task limit               unshare, confine, ...
    ... read CPU time, OOM kills ...
    close: kill every task in it, rmdir

cgroup v2 is used where the host's cgroup can hand the memory controller down, else the v1
``memory``, ``pids`` and ``cpuacct`` hierarchies. Where neither works, :func:`create` raises
``OSError`` with the reason and the sandbox says so (``confinement["memory"]``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from dealroom.harness.sandbox._base import size_text
from dealroom.harness.sandbox._scratch import alive

PREFIX = "dealroom-"
_STALE = re.compile(r"dealroom-(\d+)-\d+$")
_names = itertools.count()
_swept = False


@dataclass
class Cgroup:
    """The worker's cgroup: one directory (v2) or one per v1 controller."""

    version: int
    dirs: dict[str, Path]
    """Controller (``memory``, ``pids``, ``cpu``) to its directory; v2 has one for all."""
    memory_bytes: int

    @property
    def procs(self) -> list[str]:
        """The ``cgroup.procs`` files the worker writes its pid to."""
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    def describe(self) -> str:
        tasks = "" if "pids" not in self.dirs else f", tasks {self._read('pids', 'pids.max')}"
        return f"cgroup v{self.version}: {size_text(self.memory_bytes)} of RAM{tasks}"

    def _read(self, controller: str, name: str) -> str:
        return (self.dirs[controller] / name).read_text().strip()

    def cpu_seconds(self) -> float | None:
        """CPU time used by every task in the cgroup so far, or None when not counted."""
        try:
            if self.version == 2:
                stat = dict(line.split() for line in self._read("cpu", "cpu.stat").splitlines())
                return int(stat["usage_usec"]) / 1e6
            if "cpu" in self.dirs:
                return int(self._read("cpu", "cpuacct.usage")) / 1e9
        except (OSError, KeyError, ValueError):
            pass
        return None

    def oom_kills(self) -> int:
        """Processes the kernel killed for going past the memory limit."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            fields = dict(line.split() for line in self._read("memory", name).splitlines())
            return int(fields.get("oom_kill", 0))
        except (OSError, ValueError):
            return 0

    def kill(self) -> None:
        """SIGKILL every task in the cgroup, again until none is left (some may be forking)."""
        if self.version == 2 and (self.dirs["memory"] / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.dirs["memory"] / "cgroup.kill").write_text("1")
        for _ in range(200):
            pids = _pids(self.procs)
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self) -> None:
        """Kill what is left and delete the directories (a dying task may hold them a moment)."""
        self.kill()
        for folder in sorted(set(self.dirs.values())):
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def create(memory_bytes: int, max_tasks: int) -> Cgroup:
    """A new cgroup below this process's own with the given limits; OSError says why not."""
    global _swept
    if not _swept:
        _swept = True
        remove_stale()
    name = f"{PREFIX}{os.getpid()}-{next(_names)}"
    reasons = []
    for build in (_create_v2, _create_v1):
        try:
            return build(name, memory_bytes, max_tasks)
        except OSError as exc:
            reasons.append(str(exc))
    raise OSError("no memory cgroup can be made here (" + "; ".join(reasons) + ")")


def _create_v2(name: str, memory_bytes: int, max_tasks: int) -> Cgroup:
    own = _own_dirs()
    if "" not in own:
        raise OSError("cgroup v2: not mounted")
    parent = own[""]
    if "memory" not in (parent / "cgroup.controllers").read_text().split():
        raise OSError(f"cgroup v2: the memory controller is not available in {parent}")
    subtree = (parent / "cgroup.subtree_control").read_text().split()
    wanted = [c for c in ("memory", "pids", "cpu") if c not in subtree]
    if wanted:  # fails while the host's own cgroup holds processes (the "no internal" rule)
        try:
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
        except OSError as exc:
            if "memory" in wanted:
                raise OSError(f"cgroup v2: cannot enable the memory controller in {parent} "
                              f"({exc.strerror})") from None
    folder = parent / name
    folder.mkdir()
    group = Cgroup(2, {"memory": folder, "cpu": folder}, memory_bytes)
    try:
        (folder / "memory.max").write_text(str(memory_bytes))
        with contextlib.suppress(OSError):
            (folder / "memory.swap.max").write_text("0")
        if (folder / "pids.max").exists():
            (folder / "pids.max").write_text(str(max_tasks))
            group.dirs["pids"] = folder
    except OSError:
        group.remove()
        raise
    return group


def _create_v1(name: str, memory_bytes: int, max_tasks: int) -> Cgroup:
    own = _own_dirs()
    if "memory" not in own:
        raise OSError("cgroup v1: no memory hierarchy")
    group = Cgroup(1, {}, memory_bytes)
    try:
        for controller, key in (("memory", "memory"), ("pids", "pids"), ("cpu", "cpuacct")):
            if key in own:
                folder = own[key] / name
                folder.mkdir()
                group.dirs[controller] = folder
        memory = group.dirs["memory"]
        (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
        with contextlib.suppress(OSError):  # absent without swap accounting
            (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
        if "pids" in group.dirs:
            (group.dirs["pids"] / "pids.max").write_text(str(max_tasks))
    except OSError as exc:
        group.remove()
        raise OSError(f"cgroup v1: {exc}") from None
    return group


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, fstype, super options) of each cgroup mount."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        rest = fields[fields.index("-") + 1:]
        if rest[0] in ("cgroup", "cgroup2"):
            out.append((fields[3], fields[4], rest[0], set(rest[2].split(","))))
    return out


def _own_dirs() -> dict[str, Path]:
    """This process's cgroup directory per v1 controller, and for v2 under the key ``""``."""
    mounts = _mounts()
    out: dict[str, Path] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        keys = controllers.split(",") if controllers else [""]
        for root, point, fstype, options in mounts:
            if (fstype == "cgroup2") != (controllers == ""):
                continue
            if controllers and not set(keys) <= options:
                continue
            rel = os.path.relpath(path, root)
            if rel.startswith(".."):
                continue
            for key in keys:
                out.setdefault(key, Path(point) / rel if rel != "." else Path(point))
    return out


def _pids(files: list[str]) -> list[int]:
    pids: list[int] = []
    for name in files:
        with contextlib.suppress(OSError):
            pids += [int(p) for p in Path(name).read_text().split()]
    return pids


def remove_stale() -> int:
    """Delete the cgroups of sandbox hosts that died without closing them; how many."""
    roots = {point for _, point, fstype, options in _mounts()
             if fstype == "cgroup2" or options & {"memory", "pids", "cpuacct"}}
    removed = 0
    for root in roots:
        for folder, dirs, _ in os.walk(root):
            for name in [d for d in dirs if d.startswith(PREFIX)]:
                dirs.remove(name)
                match = _STALE.match(name)
                if match and not alive(int(match.group(1))):
                    path = Path(folder) / name
                    Cgroup(1, {"memory": path}, 0).remove()
                    removed += not path.exists()
    return removed
