"""The worker's syscall filter: each denial, tried from a cell of the real sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_kit import machine, session

from dealroom.harness.sandbox import ProcessSandbox
from dealroom.harness.sandbox._seccomp import ARCHES, DENIED, program

SYSCALL = ("import ctypes, os, platform\n"
           "from dealroom.harness.sandbox._seccomp import ARCHES\n"
           "libc = ctypes.CDLL(None, use_errno=True)\n"
           "def call(name, *args):\n"
           "    nr = ARCHES[platform.machine()][1][name]\n"
           "    ret = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])\n"
           "    return ret, os.strerror(ctypes.get_errno()) if ret < 0 else ''\n")
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x20000, 0x40000000, 17

DENIALS = {
    "unshare(CLONE_NEWUSER)": f"call('unshare', {CLONE_NEWUSER})",
    "unshare(CLONE_NEWNS)": f"call('unshare', {CLONE_NEWNS})",
    "unshare(CLONE_NEWNET)": f"call('unshare', {CLONE_NEWNET})",
    "clone(CLONE_NEWUSER)": f"call('clone', {CLONE_NEWUSER | SIGCHLD}, 0, 0, 0, 0)",
    "setns": "call('setns', os.open('/proc/self/ns/net', os.O_RDONLY), 0)",
    "ptrace(TRACEME)": "call('ptrace', 0, 0, 0, 0)",
    "ptrace(ATTACH, 1)": "call('ptrace', 16, 1, 0, 0)",
    "process_vm_readv": "call('process_vm_readv', 1, 0, 0, 0, 0, 0)",
    "bpf": "call('bpf', 0, 0, 0)",
    "perf_event_open": "call('perf_event_open', 0, 0, -1, -1, 0)",
    "userfaultfd": "call('userfaultfd', 0)",
    "io_uring_setup": "call('io_uring_setup', 8, 0)",
    "keyctl": "call('keyctl', 0, 0)",
    "mount": "call('mount', 0, 0, 0, 0, 0)",
    "umount2": "call('umount2', 0, 0)",
    "fsopen": "call('fsopen', 0, 0)",
    "chroot": "call('chroot', 0)",
    "memfd_create": "call('memfd_create', 0, 0)",
    "shmget": "call('shmget', 0, 4096, 0o1000)",
    "init_module": "call('init_module', 0, 0, 0)",
    "socket(AF_UNIX)": "call('socket', 1, 1, 0)",
    "socket(AF_VSOCK)": "call('socket', 40, 1, 0)",
    "socket(AF_PACKET)": "call('socket', 17, 3, 0)",
}


def test_the_filter_covers_each_architecture_it_names() -> None:
    for arch, (_, table) in ARCHES.items():
        assert set(DENIED) | {"clone3", "unshare", "clone", "socket", "seccomp"} <= set(table)
        assert len(program(arch)) < 256  # jumps are 8-bit; far from the kernel's 4096
    with pytest.raises(OSError, match="no syscall table"):
        program("sparc64")


def test_each_denied_syscall_fails_with_eperm(small_room: Path, tmp_path: Path) -> None:
    machine().needs("seccomp")

    async def body(sb: ProcessSandbox) -> None:
        assert (await sb.execute(SYSCALL)).error is None
        for name, code in DENIALS.items():
            r = await sb.execute(code)
            assert r.stdout == "(-1, 'Operation not permitted')\n", (name, r)
        r = await sb.execute("call('clone3', 0, 0)")
        assert r.stdout == "(-1, 'Function not implemented')\n"  # libc then falls back to clone

    session(small_room, tmp_path, body)


def test_what_cells_need_still_works(small_room: Path, tmp_path: Path) -> None:
    machine().needs("seccomp")
    code = ("import os, socket, subprocess, threading, asyncio, ctypes\n"
            "from concurrent.futures import ThreadPoolExecutor\n"
            "a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'\n"
            "socket.socket(socket.AF_INET).close(); socket.socket(socket.AF_INET6).close()\n"
            "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
            "with ThreadPoolExecutor(4) as ex: assert list(ex.map(abs, [-1, -2])) == [1, 2]\n"
            "pid = os.fork()\nif pid == 0: os._exit(7)\n"
            "assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7\n"
            "assert subprocess.run(['echo', 'hi'], capture_output=True).stdout == b'hi\\n'\n"
            "asyncio.run(asyncio.sleep(0))\n"
            "assert ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 3)() == 3\n"
            "print('ok')")

    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute(code)
        assert r.stdout == "ok\n" and r.error is None, r

    session(small_room, tmp_path, body)
