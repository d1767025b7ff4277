"""The worker's filesystem: a new root that holds only what it may see (an allow-list).

In the worker's private mount namespace, before any user code runs::

    plan (host paths)             a tmpfs at the scratch path becomes the new root:
    ─────────────────             ─────────────────────────────────────────────────
    each allowed path, resolved   its parents as empty folders, itself a bind mount
    each symlink on the way       the same symlink (/lib64 -> usr/lib64, a venv's python)
    /proc (this pid namespace)    bound at /proc
    null zero full random urandom bound in a tmpfs /dev (plus fd, stdin, stdout, stderr)
    the room's agent files        a tmpfs at the room's path; in it, each file the agent may
      (dealroom.room.agent_files,   read (room.json, the listed documents, the index's files),
       checked by the host)         bound, then refused unless it is the inode checked
    the scratch dir               a tmpfs of scratch_bytes, the one writable place
    pivot_root into it, the old root detached; every mount but the scratch made read-only

No parent of an allowed path is shown beyond the folder names leading to it, and nothing else
of the host exists in the new root: a room's siblings, its run folders and sweep files, other
users' homes, /etc, /srv, /run and /tmp are simply absent. Of the room itself only its agent
files exist: its rubric, answer key, notes, an unlisted file in ``documents/`` or ``.index/``
are absent, whatever they are linked to. Where ``pivot_root`` is refused (a
root on initramfs) the worker ``chroot``s into the same new root instead, and says so.
"""

from __future__ import annotations

import ctypes
import os
import platform
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from dealroom.errors import RoomError

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The operating system's programs and shared libraries (Python's runtime needs them)."""
ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
"""The few files of /etc a program's start-up reads (the dynamic loader's cache, the time
zone); nothing else of /etc."""
DEVICES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2"}
O_PATH = getattr(os, "O_PATH", 0o10000000)
MNT_DETACH = 2
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
MOUNT_SETATTR = {"x86_64": 442, "aarch64": 442}.get(platform.machine())
MOUNT_ATTR_RDONLY, AT_RECURSIVE, AT_FDCWD = 0x1, 0x8000, -100
MAX_LINKS = 40


class ViewFile(NamedTuple):
    """A file of the room to show (``dealroom.room.AgentFile``, as the host sent it)."""

    path: str
    """Relative to the room."""
    real: str
    """On the host, every link resolved."""
    inode: tuple[int, int]
    """``(st_dev, st_ino)`` when the host checked it."""


@dataclass
class Plan:
    """What the new root holds, found on the host before anything is mounted."""

    binds: dict[str, bool] = field(default_factory=dict)
    """Real path -> whether it is a folder; none lies under another."""
    links: dict[str, str] = field(default_factory=dict)
    """Path -> the symlink's target, as on the host."""
    fds: dict[str, int] = field(default_factory=dict)
    """Real path -> an O_PATH fd to bind it from once the scratch path is covered."""

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def plan(paths: Iterable[str], scratch: str) -> Plan:
    """The binds and symlinks that make each of ``paths`` (absolute) readable as on the host.

    A path that does not exist is left out, and so is one holding the ``scratch`` dir (the
    writable place cannot lie in a read-only one), ``/`` included."""
    paths = list(paths)
    out = Plan()
    real: set[str] = set()
    for path in paths:
        if not os.path.isabs(path) or not os.path.exists(path):
            continue
        resolved = os.path.realpath(path)
        if not _under(scratch, resolved):
            real.add(resolved)
    for path in sorted(real, key=len):
        if not any(_under(path, b) for b in out.binds):
            out.binds[path] = os.path.isdir(path)
    for path in paths:
        if os.path.isabs(path) and os.path.exists(path):
            _links(os.path.normpath(path), out, 0)
    for path in out.binds:
        out.fds[path] = os.open(path, O_PATH | os.O_CLOEXEC)
    return out


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _links(path: str, out: Plan, depth: int) -> None:
    """Record the symlinks met on the way to ``path`` (and on the way to their targets)."""
    parts = path.split("/")[1:]
    for i in range(len(parts)):
        prefix = "/" + "/".join(parts[:i + 1])
        if any(_under(prefix, b) for b in out.binds):
            return  # visible through a bind, as on the host
        if os.path.islink(prefix):
            if depth >= MAX_LINKS:
                return
            out.links[prefix] = os.readlink(prefix)
            rest = os.path.join(os.path.realpath(prefix), *parts[i + 1:])
            _links(os.path.normpath(rest), out, depth + 1)
            return


Mount = Callable[[str | None, str, str | None, int, str | None], None]
"""``mount(src, target, fstype, flags, data)``."""


def build(new: str, the_plan: Plan, mount: Mount, scratch: str, scratch_data: str,
          room: tuple[str, Sequence[ViewFile]] | None = None) -> None:
    """Fill the tmpfs at ``new`` per ``the_plan``, then the ``room`` (its real path, its
    agent files)."""
    m = mount
    for path, is_dir in sorted(the_plan.binds.items()):
        target = new + path
        _make(target, is_dir)
        m(f"/proc/self/fd/{the_plan.fds[path]}", target, None, MS_BIND | MS_REC, None)
    for path, target in sorted(the_plan.links.items()):
        inner = new + path
        os.makedirs(os.path.dirname(inner), exist_ok=True)
        if not os.path.lexists(inner):
            os.symlink(target, inner)
    if room is not None:
        show_room(new, *room, mount)
    _make(new + "/proc", True)
    m("/proc", new + "/proc", None, MS_BIND | MS_REC, None)
    _make(new + "/dev", True)
    m("tmpfs", new + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k")
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _make(f"{new}/dev/{name}", False)
            m(f"/dev/{name}", f"{new}/dev/{name}", None, MS_BIND, None)
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"{new}/dev/{name}")
    _make(new + scratch, True)
    m("tmpfs", new + scratch, "tmpfs", MS_NOSUID | MS_NODEV, scratch_data)


def show_room(new: str, room: str, files: Sequence[ViewFile], mount: Mount) -> None:
    """A tmpfs at the room's path holding only ``files``, each bound where the room lists it
    and checked once bound: a file swapped since the host's check (renamed over, relinked,
    replaced by a link) is refused, not shown. The whole tree is then made read-only in one
    call where the kernel has ``mount_setattr`` (else each mount is, later)."""
    top = new + room
    os.makedirs(top, exist_ok=True)
    folders = sorted({"/".join(f.path.split("/")[:i]) for f in files
                      for i in range(1, f.path.count("/") + 1)})
    mount("tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
          f"mode=755,size=1m,nr_inodes={len(files) + len(folders) + 16}")
    for folder in folders:
        os.mkdir(f"{top}/{folder}", 0o755)
    for file in files:
        target = f"{top}/{file.path}"
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o444))
        try:
            mount(file.real, target, None, MS_BIND, None)
            st = os.stat(target)
        except OSError as exc:  # the room's problem, not the machine's: no weaker sandbox
            raise RoomError(f"{room}/{file.path} cannot be shown ({exc.strerror}): it changed "
                            "while the sandbox started; start again") from None
        if (st.st_dev, st.st_ino) != file.inode or not stat.S_ISREG(st.st_mode):
            raise RoomError(f"{room}/{file.path} changed while the sandbox started (it is not "
                            "the file that was checked): it is not shown; start again")
    _read_only_tree(top)


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _read_only_tree(top: str) -> bool:
    """Make every mount at and under ``top`` read-only in one ``mount_setattr`` call (Linux
    5.12+); False where the kernel cannot (the per-mount remount does it then)."""
    if MOUNT_SETATTR is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    return libc.syscall(MOUNT_SETATTR, AT_FDCWD, os.fsencode(top), AT_RECURSIVE,
                        ctypes.byref(attr), ctypes.sizeof(attr)) == 0


def _make(target: str, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "a").close()  # noqa: SIM115 - a mount point


def enter(new: str) -> str:
    """Make ``new`` the root (pivot_root, the old root detached; else chroot); how, in words."""
    libc = ctypes.CDLL(None, use_errno=True)
    os.chdir(new)
    why = "no pivot_root number for this CPU"
    if PIVOT_ROOT is not None:
        if libc.syscall(PIVOT_ROOT, b".", b".") == 0:
            if libc.umount2(b".", MNT_DETACH) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"detaching the old root: {os.strerror(err)}")
            os.chdir("/")
            return "pivot_root"
        why = f"pivot_root: {os.strerror(ctypes.get_errno())}"
    os.chroot(".")
    os.chdir("/")
    return f"chroot ({why})"


MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC = 2, 4, 8, 4096, 16384
