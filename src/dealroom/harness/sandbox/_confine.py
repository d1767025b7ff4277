"""Confining the worker at start-up, before any user code runs (Linux).

The worker starts as the host's user and confines itself in two steps::

    keeper (host's uid)                          child: PID 1 of the new pid namespace
    unshare(NET|NS|PID|IPC [|USER])  ──fork──▶   mounts private, fresh /proc
    forwards SIGINT, waits, exits                a new root of allowed paths (:mod:`._view`)
    with the child's status                      scratch: a tmpfs, the one writable mount
                                                 every other mount remounted read-only
                                                 rlimits, setuid(fresh uid), no_new_privs

When the keeper dies the child gets SIGKILL (PDEATHSIG), and when PID 1 dies the kernel kills
every process in the namespace: nothing outlives the sandbox. With no namespaces available the
worker runs as is with rlimits and the seccomp filter only (isolation ``rlimits``). Before any
of this the worker joined its cgroup (:mod:`._cgroup`), where the host could make one.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dealroom.harness.sandbox import _seccomp, _view
from dealroom.harness.sandbox._base import size_text

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x20000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 16384, 1 << 18, 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SCRATCH_INODES = 65536
"""Files and folders the scratch tmpfs may hold."""
KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
              "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME,
              "strictatime": MS_STRICTATIME}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    enc = [None if s is None else os.fsencode(s) for s in (src, target, fstype, data)]
    _check(_libc.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def _prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, value, 0, 0, 0), "prctl")


def enter(requested: str) -> str:
    """Unshare the namespaces ``requested`` allows; return the isolation level reached."""
    tries = {"auto": ["namespaces+uid", "userns", "rlimits"] if os.geteuid() == 0
             else ["userns", "rlimits"]}.get(requested, [requested])
    errors = []
    for level in tries:
        try:
            if level == "namespaces+uid":
                _unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC)
            elif level == "userns":
                uid, gid = os.geteuid(), os.getegid()
                _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC)
                Path("/proc/self/setgroups").write_text("deny")
                Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
                Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
            elif level != "rlimits":
                raise ValueError(f"unknown isolation {level!r}; use one of auto, "
                                 "namespaces+uid, userns, rlimits")
            return level
        except OSError as exc:
            errors.append(f"{level}: {exc}")
    raise OSError(f"isolation {requested!r} is not available here ({'; '.join(errors)})")


def keep(child: int, fds: Iterable[int]) -> None:
    """The keeper's life: forward SIGINT to the child, then exit with its status.

    It closes its copies of the protocol ``fds`` so the host sees EOF when the child dies.
    """
    signal.signal(signal.SIGINT, lambda *_: os.kill(child, signal.SIGINT))
    signal.signal(signal.SIGTERM, lambda *_: os.kill(child, signal.SIGKILL))
    for fd in (0, 1, *fds):
        os.close(fd)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def as_child() -> None:
    """In the forked child: die with the keeper."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


# -- the filesystem view --------------------------------------------------------------------
def _hide(paths: Iterable[str]) -> None:
    """Make files read as empty and directories look empty (``ProcessSandbox(hide=...)``)."""
    for path in paths:
        if os.path.isdir(path):
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=555,size=4k")
        elif os.path.exists(path):
            _mount("/dev/null", path, None, MS_BIND)


def _mounts() -> list[tuple[str, set[str]]]:
    """(mount point, options) of every mount in this namespace, from /proc/self/mountinfo."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point = fields[4]
        if "\\" in point:  # octal escapes (a space is \040)
            point = point.encode().decode("unicode_escape").encode("latin-1").decode()
        out.append((point, set(fields[5].split(","))))
    return out


def _read_only_except(writable: str) -> list[str]:
    """Remount every mount read-only except ``writable`` (bound onto itself first)."""
    _mount(writable, writable, None, MS_BIND | MS_REC)
    failed = []
    for point, options in _mounts():
        if point == writable or "ro" in options:
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        flags |= sum(v for k, v in KEPT_FLAGS.items() if k in options)
        try:
            _mount(None, point, None, flags)
        except OSError as exc:
            failed.append(f"{point}: {exc.strerror}")
    return failed


def confine(level: str, cfg: dict[str, Any],
            base_tasks: int = 0) -> tuple[dict[str, str], list[str]]:
    """Set up the filesystem, limits, identity and syscall filter of the worker (run as PID 1
    of its namespace). Returns what is in force for ``filesystem``, ``scratch`` and
    ``seccomp``, in words, and which of them is weaker than it should be."""
    scratch = os.path.realpath(cfg["scratch_dir"])
    uid, gid = cfg["uid"], cfg["gid"]
    done = {"filesystem": "the host's, as the host user sees it: the rlimits level has no "
                          "mount namespace",
            "scratch": "no quota: the rlimits level has no mount namespace"}
    weak = ["filesystem", "scratch"]
    if level != "rlimits":
        done["filesystem"], weak = _new_root(level, cfg, scratch), []
        done["scratch"] = f"tmpfs of {size_text(cfg['limits']['scratch_bytes'])}"
        if not done["filesystem"].endswith("(pivot_root)"):
            weak.append("filesystem")
        failed = _read_only_except(scratch)
        if failed:
            print("sandbox: could not make read-only: " + "; ".join(failed), file=sys.stderr)
    os.chdir(scratch)
    set_limits(cfg["limits"], level, base_tasks)
    if level == "namespaces+uid":
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    try:
        done["seccomp"] = _seccomp.install()
    except OSError as exc:
        done["seccomp"] = f"off: {exc}"
        weak.append("seccomp")
    return done, weak


def allowed(cfg: dict[str, Any]) -> list[str]:
    """Every path the worker may read: the system's runtime, Python (this interpreter's own
    import path included), dealroom, the room."""
    paths = [*_view.SYSTEM, *_view.ETC, *cfg["expose"], sys.executable]
    paths += [p for p in sys.path if p and os.path.isabs(p)]
    return paths


def _new_root(level: str, cfg: dict[str, Any], scratch: str) -> str:
    """Pivot into a root holding only :func:`allowed` (read-only) and the scratch tmpfs."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    paths = allowed(cfg)
    room = _room_files(cfg)
    plan = _view.plan(paths, scratch)
    owner = f",uid={cfg['uid']},gid={cfg['gid']}" if level == "namespaces+uid" else ""
    data = (f"size={cfg['limits']['scratch_bytes']},nr_inodes={SCRATCH_INODES},"
            f"mode=700{owner}")
    try:
        _mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=4m")
        _view.build(scratch, plan, _mount, scratch, data, room)
    finally:
        plan.close()
    how = _view.enter(scratch)
    _hide(cfg.get("hide", []))
    shown = (f", the room's {len(room[1]):,} agent files (room.json, its listed documents, "
             "its index)") if room is not None else ""
    return (f"allow-list: {len(plan.binds)} paths read-only (system, Python, dealroom){shown}, "
            f"the scratch dir writable ({how})")


def _room_files(cfg: dict[str, Any]) -> tuple[str, list[_view.ViewFile]] | None:
    """The room's real path and the files of it the worker may read, as the host checked them
    (``dealroom.room.agent_files``, sent as ``room_files``)."""
    if not cfg.get("room_dir"):
        return None
    files = [_view.ViewFile(str(rel), str(real), (int(dev), int(ino)))
             for rel, real, dev, ino in cfg["room_files"]]
    return os.path.realpath(cfg["room_dir"]), files


def _user_tasks(uid: int) -> int:
    """Processes and threads ``uid`` runs now (RLIMIT_NPROC counts them all)."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1"))
    return count


def user_tasks() -> int:
    """Processes and threads of this uid now: RLIMIT_NPROC counts them all (call it early)."""
    return _user_tasks(os.getuid())


def set_limits(limits: dict[str, Any], level: str, base_tasks: int = 0) -> None:
    """Apply the rlimits; without a fresh uid the process limit adds the user's other tasks."""
    nproc = limits["max_processes"]
    if level != "namespaces+uid":
        nproc += base_tasks
    pairs = [(resource.RLIMIT_AS, limits["memory_bytes"]),
             (resource.RLIMIT_FSIZE, limits["file_size_bytes"]),
             (resource.RLIMIT_NPROC, nproc),
             (resource.RLIMIT_NOFILE, limits["max_open_files"]),
             (resource.RLIMIT_CORE, 0)]
    if limits.get("cpu_seconds"):
        pairs.append((resource.RLIMIT_CPU, limits["cpu_seconds"]))
    for which, value in pairs:
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))
