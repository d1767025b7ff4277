"""The worker's syscall filter: a classic-BPF seccomp program built here, with no library.

Installed last, after the worker dropped its identity and set ``no_new_privs``, so it binds
every thread and process the REPL will ever start. Denied (``EPERM`` unless noted):

    namespaces        unshare / clone with any CLONE_NEW* flag, setns; clone3 (ENOSYS: its
                      flags sit behind a pointer seccomp cannot read; libc falls back to clone)
    other processes   ptrace, process_vm_readv/writev, pidfd_getfd
    the kernel        bpf, perf_event_open, userfaultfd, io_uring_*, keyctl/add_key/request_key,
                      kexec_*, init/finit/delete_module, open_by_handle_at
    mounts            mount, umount2, pivot_root, chroot, the new mount API (fsopen ... )
    unmetered memory  memfd_create, memfd_secret, shmget (the worker made its one memfd before)
    sockets           socket() of any family but AF_INET, AF_INET6 and AF_NETLINK: no Unix
                      socket can connect anywhere (seccomp cannot read a path, so one in the
                      scratch dir is refused too), no vsock to a hypervisor; socketpair() works

A syscall from another ABI (x32) is refused; a program of another architecture is killed.
Only x86_64 and aarch64 have tables here: elsewhere :func:`install` raises ``OSError``.
"""

from __future__ import annotations

import ctypes
import errno
import platform

SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO = 0x80000000, 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC = 1, 1
LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
CLONE_NEW = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET."""
CLONE_NEWTIME = 0x80
"""Only ``unshare`` has it (in ``clone`` those bits are the exit signal)."""
SOCKET_FAMILIES = (2, 10, 16)
"""AF_INET, AF_INET6 (the network namespace has no route out), AF_NETLINK (libc's resolver)."""
X32_BIT = 0x40000000

DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "bpf",
          "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
          "io_uring_register", "keyctl", "add_key", "request_key", "kexec_load",
          "kexec_file_load", "init_module", "finit_module", "delete_module",
          "open_by_handle_at", "mount", "umount2", "pivot_root", "chroot", "open_tree",
          "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "setns",
          "memfd_create", "memfd_secret", "shmget")

_GENERIC = {  # aarch64 (asm-generic/unistd.h)
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
    "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217,
    "request_key": 218, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
    "finit_module": 273, "delete_module": 106, "open_by_handle_at": 265, "mount": 40,
    "umount2": 39, "pivot_root": 41, "chroot": 51, "setns": 268, "memfd_create": 279,
    "shmget": 194, "unshare": 97, "clone": 220, "socket": 198, "seccomp": 277,
}
_X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248,
    "request_key": 249, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "open_by_handle_at": 304, "mount": 165,
    "umount2": 166, "pivot_root": 155, "chroot": 161, "setns": 308, "memfd_create": 319,
    "shmget": 29, "unshare": 272, "clone": 56, "socket": 41, "seccomp": 317,
}
_SHARED = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
           "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
           "fspick": 433, "clone3": 435, "mount_setattr": 442, "memfd_secret": 447}
ARCHES = {"x86_64": (0xC000003E, {**_X86_64, **_SHARED}),
          "aarch64": (0xC00000B7, {**_GENERIC, **_SHARED})}
SUMMARY = ("denies namespaces, ptrace, bpf, mounts, memfd and SysV shm, io_uring, keyrings, "
           "kernel modules, and sockets other than inet and netlink")


class _Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn))]


def _arg0() -> tuple[int, int, int, int]:
    return (LD_ABS, 0, 0, 16)  # the low 32 bits of args[0] (little-endian)


def _errno(code: int) -> tuple[int, int, int, int]:
    return (RET, 0, 0, SECCOMP_RET_ERRNO | code)


ALLOW = (RET, 0, 0, SECCOMP_RET_ALLOW)


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` as (code, jt, jf, k) instructions."""
    if machine not in ARCHES:
        raise OSError(f"no syscall table for {machine}")
    arch, nr = ARCHES[machine]
    out = [(LD_ABS, 0, 0, 4), (JEQ, 1, 0, arch), (RET, 0, 0, SECCOMP_RET_KILL_PROCESS),
           (LD_ABS, 0, 0, 0)]
    if machine == "x86_64":
        out += [(JGE, 0, 1, X32_BIT), _errno(errno.EPERM)]

    def block(number: int, body: list[tuple[int, int, int, int]]) -> None:
        out.append((JEQ, 0, len(body), number))  # A holds the syscall number here
        out.extend(body)

    for name in DENIED:
        block(nr[name], [_errno(errno.EPERM)])
    block(nr["clone3"], [_errno(errno.ENOSYS)])
    for name, mask in (("unshare", CLONE_NEW | CLONE_NEWTIME), ("clone", CLONE_NEW)):
        block(nr[name], [_arg0(), (JSET, 0, 1, mask), _errno(errno.EPERM), ALLOW])
    families = [(JEQ, len(SOCKET_FAMILIES) - i, 0, f) for i, f in enumerate(SOCKET_FAMILIES)]
    block(nr["socket"], [_arg0(), *families, _errno(errno.EPERM), ALLOW])
    out.append(ALLOW)
    return out


def install() -> str:
    """Install the filter on every thread of this process; what it denies, or OSError."""
    machine = platform.machine()
    insns = program(machine)
    array = (_Insn * len(insns))(*[_Insn(*i) for i in insns])
    prog = _Prog(len(insns), array)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    ret = libc.syscall(ctypes.c_long(ARCHES[machine][1]["seccomp"]),
                       ctypes.c_long(SECCOMP_SET_MODE_FILTER),
                       ctypes.c_long(SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(prog))
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {errno.errorcode.get(err, err)}")
    return f"on: {SUMMARY}"
