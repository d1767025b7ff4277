"""Hostile cells, each run in the real sandbox and checked for containment (issue 9's suite).

Every cell attacks something on the host (network, secrets, processes, memory, disk, the kernel,
the answer key, the channel) and the test asserts it failed: the expected error or verdict is in
the cell's output, the attack never printed ``ESCAPED``, the host is untouched, and the sandbox
answers the next cell. A cell skips only where the machine lacks what containing it relies on.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sandbox_kit import HERE, REPO, machine

from dealroom.harness.sandbox import ProcessSandbox, SandboxLimits, SubcallResult

SECRET = "sk-live-hostile-123"
LIMITS = SandboxLimits(memory_bytes=512 * 2**20, scratch_bytes=64 * 2**20,
                       file_size_bytes=32 * 2**20, max_processes=32, cell_timeout=5,
                       interrupt_grace=0.5, start_timeout=30)
NS, UID, CG, SEC, TMPFS = ("namespaces",), ("fresh_uid",), ("cgroup",), ("seccomp",), ("tmpfs",)


@dataclass
class Hostile:
    name: str
    code: str
    contained: str
    """A regex the cell's output (stdout, then error) must match."""
    needs: tuple[str, ...] = ()
    timeout: float | None = None
    fresh: bool = False
    """Leaves the worker full (of threads, processes, files): restart it after."""


def h(name: str, code: str, contained: str, needs: tuple[str, ...] = (),
      timeout: float | None = None, fresh: bool = False) -> Hostile:
    return Hostile(name, code, contained, needs, timeout, fresh)


PERM = r"PermissionError|Operation not permitted"
DENIED = r"\(-1, 'Operation not permitted'\)"
GONE = r"FileNotFoundError|No such file"
RO = r"Read-only file system|PermissionError|OSError: \[Errno 30\]"


def suite(host_pid: int, port: int, room: Path, secret_file: Path) -> list[Hostile]:
    """The hostile cells, given the host's pid, a listening port, the room and a host file."""
    sock = room / "host.sock"
    return [
        # -- network ------------------------------------------------------------------------
        h("tcp to the internet", "import socket\nsocket.create_connection(('1.1.1.1', 53), 2)\n"
          "print('ESCAPED')", r"Network is unreachable", NS),
        h("tcp to a host port", f"import socket\nsocket.create_connection(('127.0.0.1', {port}),"
          " 2)\nprint('ESCAPED')", r"OSError", NS),
        h("tcp over ipv6 loopback", f"import socket\nsocket.create_connection(('::1', {port}), 2)"
          "\nprint('ESCAPED')", r"OSError", NS),
        h("udp to a resolver", "import socket\ns = socket.socket(socket.AF_INET, "
          "socket.SOCK_DGRAM)\ns.sendto(b'x', ('8.8.8.8', 53))\nprint('ESCAPED')",
          r"Network is unreachable", NS),
        h("dns lookup", "import socket\nsocket.getaddrinfo('example.com', 80)\nprint('ESCAPED')",
          r"gaierror", NS),
        h("raw icmp socket", "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_RAW, 1)\n"
          "print('ESCAPED')", PERM),
        h("packet socket", "import socket\nsocket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
          "print('ESCAPED')", PERM),
        h("vsock to the hypervisor", "import socket\ns = socket.socket(40, socket.SOCK_STREAM)\n"
          "s.connect((2, 1024))\nprint('ESCAPED')", PERM, SEC),
        h("bring loopback up", "import fcntl, socket, struct\ns = socket.socket()\n"
          "fcntl.ioctl(s, 0x8914, struct.pack('16sh', b'lo', 1))\nprint('ESCAPED')", PERM, NS),
        h("interfaces visible", "import socket\nprint(socket.if_nameindex())",
          r"^\[\(1, 'lo'\)\]", NS),
        h("unix socket to a host service", f"import socket\ns = socket.socket(socket.AF_UNIX)\n"
          f"s.connect({str(sock)!r})\nprint('ESCAPED')", PERM, SEC),
        h("unix socket in scratch", "import socket\ns = socket.socket(socket.AF_UNIX)\n"
          "s.bind('mine.sock')\nprint('ESCAPED')", PERM, SEC),
        h("abstract unix socket", "import socket\ns = socket.socket(socket.AF_UNIX)\n"
          f"s.connect('\\0dealroom-hostile-{host_pid}')\nprint('ESCAPED')", PERM, SEC),
        h("host sockets in /run", "import os\nprint(os.listdir('/run'))", r"^\[\]|" + GONE, NS),
        # -- secrets ------------------------------------------------------------------------
        h("secret in the environment", "import os\nprint('DEALROOM_HOSTILE_SECRET' in os.environ"
          f", {SECRET!r} in str(os.environ))", r"^False False"),
        h("only the bare environment", "import os\nprint(sorted(os.environ) == ['HOME', 'LANG',"
          " 'MKL_NUM_THREADS', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'PATH', "
          "'PYTHONDONTWRITEBYTECODE', 'PYTHONPATH', 'PYTHONUNBUFFERED', 'TMPDIR'])",
          r"^True"),
        h("host process environ", f"open('/proc/{host_pid}/environ', 'rb').read()\n"
          "print('ESCAPED')", GONE, NS),
        h("pid 1 environ", f"print({SECRET!r}.encode() in open('/proc/1/environ', 'rb').read())",
          r"^False|PermissionError"),
        h("own environ", f"print({SECRET!r}.encode() in open('/proc/self/environ', 'rb').read())",
          r"^False|PermissionError"),
        h("answer key", f"open({str(room / 'answer_key/findings.json')!r}).read()\n"
          "print('ESCAPED')", GONE, NS),
        h("answer key listing", f"import os\nprint(os.listdir({str(room / 'answer_key')!r}))",
          GONE, NS),
        h("rubric", f"print(repr(open({str(room / 'task.json')!r}).read()))", GONE, NS),
        h("a host file in /tmp", f"open({str(secret_file)!r}).read()\nprint('ESCAPED')",
          GONE, NS),
        h("a host file through /proc/1/root", f"open('/proc/1/root' + {str(secret_file)!r})"
          ".read()\nprint('ESCAPED')", GONE, NS),
        h("the host user's home", "import os\nnames = set(os.listdir('/root'))\n"
          "print(sorted(names & {'.ssh', '.aws', '.config', '.gitconfig', '.bash_history'}))",
          r"^\[\]|" + GONE, NS),
        h("/etc/shadow", "open('/etc/shadow').read()\nprint('ESCAPED')", PERM + "|" + GONE, UID),
        h("/etc/shadow through a symlink", "import os\nos.symlink('/etc/shadow', 'shadow')\n"
          "open('shadow').read()\nprint('ESCAPED')", PERM + "|" + GONE, UID),
        h("kernel memory", "open('/proc/kcore', 'rb').read(16)\nprint('ESCAPED')",
          PERM + "|" + GONE, UID),
        # -- host processes -----------------------------------------------------------------
        h("host pids visible", f"import os\npids = [p for p in os.listdir('/proc') if "
          f"p.isdigit()]\nprint('{host_pid}' in pids, len(pids) < 8)", r"^False True", NS),
        h("probe the host pid", f"import os\nos.kill({host_pid}, 0)\nprint('ESCAPED')",
          r"ProcessLookupError", NS),
        h("signal the host's group", f"import os\nos.killpg({os.getpgid(0)}, 9)\n"
          "print('ESCAPED')", r"ProcessLookupError|PermissionError", NS),
        h("kill everything", "import os\nos.kill(-1, 9)\nprint('survived')",
          r"survived|ProcessLookupError", NS),
        h("kill the parent", "import os\nos.kill(os.getppid(), 9)", r".*", NS),
        h("host command line", f"open('/proc/{host_pid}/cmdline').read()\nprint('ESCAPED')",
          GONE, NS),
        # -- processes and threads ----------------------------------------------------------
        h("fork bomb", "import os\nwhile True:\n    try:\n        os.fork()\n"
          "    except OSError:\n        pass", r"TimeoutError|BlockingIOError", NS + UID,
          timeout=1, fresh=True),
        h("thread bomb", "import threading, time\nts = []\nwhile True:\n"
          "    t = threading.Thread(target=time.sleep, args=(30,), daemon=True)\n"
          "    t.start()\n    ts.append(t)", r"can't start new thread|RuntimeError", fresh=True),
        h("subprocess bomb", "import subprocess\nps = []\nwhile True:\n"
          "    ps.append(subprocess.Popen(['sleep', '30']))", r"BlockingIOError|OSError", UID,
          fresh=True),
        h("escape into a new session", "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
          "    time.sleep(300)\nprint('forked')", r"^forked", fresh=True),
        # -- memory -------------------------------------------------------------------------
        h("10 GB at once", "x = bytearray(10 * 2**30)\nprint('ESCAPED')", r"MemoryError"),
        h("grow until it breaks", "chunks = []\nwhile True:\n    chunks.append(bytearray(2**26))",
          r"MemoryError", fresh=True),
        h("10 GB mmap", "import mmap\nm = mmap.mmap(-1, 10 * 2**30)\nprint('ESCAPED')",
          r"Cannot allocate memory|MemoryError|OSError"),
        h("memfd", "import os\nos.memfd_create('hold')\nprint('ESCAPED')", PERM, SEC),
        h("memfd by syscall", "print(call('memfd_create', 0, 0))", DENIED, SEC),
        h("SysV shared memory", "print(call('shmget', 0, 2**30, 0o1000))", DENIED, SEC),
        h("POSIX shared memory", "from multiprocessing import shared_memory\n"
          "shared_memory.SharedMemory(create=True, size=2**30)\nprint('ESCAPED')",
          r"Error", NS),
        h("many processes each under the limit", "import os, time\npids = []\n"
          "for _ in range(16):\n    pid = os.fork()\n    if pid == 0:\n        try:\n"
          "            b = b'x' * (64 * 2**20)\n        except MemoryError:\n"
          "            os._exit(3)\n        time.sleep(2)\n        os._exit(0)\n"
          "    pids.append(pid)\n"
          "print(sorted(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids))",
          r"-9|died", CG, timeout=120),  # 16 forks of 64 MB take long on a busy machine
        h("deep recursion", "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n"
          "    return f(n + 1)\nf(0)", r"RecursionError|MemoryError|SystemError|SIGSEGV|died|"
          r"TimeoutError", fresh=True),
        h("20 MB of print", "print('x' * 20_000_000)", r"characters of output dropped"),
        h("100 MB to fd 1", "import os\nfor _ in range(100):\n    os.write(1, b'y' * 2**20)",
          r"bytes dropped|File too large"),
        h("10 MB to the diagnostics fd", "import os\nos.write(2, b'z' * 10**7)\nprint('ok')",
          r"^ok"),
        # -- disk ---------------------------------------------------------------------------
        h("fill the scratch dir", "n = 0\ntry:\n    while True:\n        with open(f'f{n}', "
          "'wb') as f:\n            f.write(b'x' * 2**24)\n        n += 1\n"
          "except OSError as e:\n    print(e.errno, n < 5)", r"^28 True", TMPFS, fresh=True),
        h("one file past the size limit", "open('big', 'wb').write(b'x' * 40 * 2**20)\n"
          "print('ESCAPED')", r"File too large|Errno 27|No space left"),
        h("run out of inodes", "import os\nos.mkdir('many')\ntry:\n    for i in range(70000):\n"
          "        open(f'many/{i}', 'w').close()\n    print('ESCAPED')\n"
          "except OSError as e:\n    print(e.errno)", r"^28", TMPFS, timeout=30, fresh=True),
        h("hard link a room file", f"import os\nos.link({str(room / 'room.json')!r}, 'r.json')\n"
          "print('ESCAPED')", r"Invalid cross-device link|PermissionError", TMPFS),
        h("write the manifest", f"open({str(room / 'room.json')!r}, 'a').write('x')\n"
          "print('ESCAPED')", RO, NS),
        h("write the index", f"open({str(room / '.index/x')!r}, 'w').write('x')\n"
          "print('ESCAPED')", RO, NS),
        h("write the package", f"open({str(REPO / 'src/dealroom/__init__.py')!r}, 'a')"
          ".write('x')\nprint('ESCAPED')", RO, NS),
        h("write /tmp", "open('/tmp/dealroom-hostile', 'w').write('x')\nprint('ESCAPED')",
          RO, NS),
        h("write /etc", "open('/etc/dealroom-hostile', 'w').write('x')\nprint('ESCAPED')",
          RO + "|" + GONE, NS),
        h("write /dev/shm", "open('/dev/shm/dealroom-hostile', 'w').write('x')\n"
          "print('ESCAPED')", RO + "|" + GONE, NS),
        h("chmod a room file", f"import os\nos.chmod({str(room / 'room.json')!r}, 0o777)\n"
          "print('ESCAPED')", RO, NS),
        h("raise the cgroup's limit", "import os\nfor d, _, fs in os.walk('/sys/fs/cgroup'):\n"
          "    for f in fs:\n        if f in ('memory.limit_in_bytes', 'memory.max') and "
          "'dealroom-' in d:\n            open(os.path.join(d, f), 'w').write('-1')\n"
          "            print('ESCAPED')\nprint('done')", r"^done|" + RO, NS),
        h("sysrq", "open('/proc/sysrq-trigger', 'w').write('b')\nprint('ESCAPED')",
          RO + "|" + GONE, NS),
        h("a kernel setting", "open('/proc/sys/kernel/hostname', 'w').write('x')\n"
          "print('ESCAPED')", RO, NS),
        # -- privileges and the kernel ------------------------------------------------------
        h("setuid root", "import os\nos.setuid(0)\nprint('ESCAPED')", PERM, UID),
        h("a setuid binary", "import subprocess\nr = subprocess.run(['su', '-c', 'id'], "
          "capture_output=True, stdin=subprocess.DEVNULL)\nprint('ESCAPED' if b'uid=0' in "
          "r.stdout else 'refused')", r"^refused", UID),
        h("a user namespace", f"print(call('unshare', {0x10000000}))", DENIED, SEC),
        h("a user namespace by clone", f"print(call('clone', {0x10000000 | 17}, 0, 0, 0, 0))",
          DENIED, SEC),
        h("the unshare tool", "import subprocess\nr = subprocess.run(['unshare', '-U', '-r', "
          "'id'], capture_output=True)\nprint('ESCAPED' if r.returncode == 0 else 'refused')",
          r"^refused", SEC),
        h("join pid 1's namespaces", "import os\nfd = os.open('/proc/1/ns/mnt', os.O_RDONLY)\n"
          "print(call('setns', fd, 0))", DENIED, SEC),
        h("mount a filesystem", "print(call('mount', 0, 0, 0, 0, 0))", DENIED, SEC),
        h("unmount the scratch dir", "import ctypes, os\nprint(call('umount2', 0, 0))",
          DENIED, SEC),
        h("ptrace", "print(call('ptrace', 0, 0, 0, 0))", DENIED, SEC),
        h("ptrace pid 1", "print(call('ptrace', 16, 1, 0, 0))", DENIED, SEC),
        h("read another process's memory", "print(call('process_vm_readv', 1, 0, 0, 0, 0, 0))",
          DENIED, SEC),
        h("bpf", "print(call('bpf', 0, 0, 0))", DENIED, SEC),
        h("io_uring", "print(call('io_uring_setup', 8, 0))", DENIED, SEC),
        h("userfaultfd", "print(call('userfaultfd', 0))", DENIED, SEC),
        h("kernel keyring", "print(call('keyctl', 0, 0))", DENIED, SEC),
        h("load a kernel module", "print(call('init_module', 0, 0, 0))", DENIED, SEC),
        h("set the clock", "import time\ntime.clock_settime(time.CLOCK_REALTIME, 0)\n"
          "print('ESCAPED')", PERM, UID),
        h("raise a hard limit", "import resource\nresource.setrlimit(resource.RLIMIT_AS, "
          "(resource.RLIM_INFINITY, resource.RLIM_INFINITY))\nprint('ESCAPED')",
          r"ValueError|PermissionError"),
        h("raise the priority", "import os\nos.nice(-5)\nprint('ESCAPED')", PERM),
        h("chroot", "import os\nos.chroot('/')\nprint('ESCAPED')", PERM, SEC),
        # -- signals, the interpreter, the channel ------------------------------------------
        h("ignore the interrupt", "while True:\n    try:\n        while True:\n"
          "            pass\n    except KeyboardInterrupt:\n        pass", r"was killed",
          timeout=1),
        h("stop itself", "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)",
          r"\A\Z|TimeoutError|died", timeout=1),
        h("kill itself", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
          r"\A\Z|SIGKILL|died"),
        h("sleep forever", "import time\ntime.sleep(10**9)", r"TimeoutError", timeout=1),
        h("segfault", "import ctypes\nctypes.string_at(0)", r"SIGSEGV"),
        h("exit", "import os\nos._exit(0)", r"exit status 0"),
        h("forge a protocol message", "print('{\"op\": \"done\", \"cell\": 1, \"pid\": 1}')\n"
          "print('after')", r"after"),
        h("close the channel", "import os\nos.closerange(3, 64)\nprint('closed')",
          r"closed|died|TimeoutError", timeout=2),
        h("threads spinning on the host", "import threading\ndef spin():\n    while True:\n"
          "        try:\n            ask('llm', {'p': 'x'})\n        except Exception:\n"
          "            pass\nts = [threading.Thread(target=spin, daemon=True) for _ in range(4)]"
          "\nfor t in ts:\n    t.start()\nfor t in ts:\n    t.join()",
          r"TimeoutError: the cell ran past", timeout=2),
    ]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, small_room: Path) -> Iterator[dict]:
    """A room with an answer key and a rubric, host-side listeners and a secret, one sandbox."""
    base = tmp_path_factory.mktemp("hostile")
    room = base / "room"
    shutil.copytree(small_room, room)
    (room / "answer_key").mkdir(exist_ok=True)
    (room / "answer_key/findings.json").write_text('{"planted": "secret"}')
    (room / "task.json").write_text('{"criteria": ["the rubric"]}')
    secret_file = base / "host-secret.txt"
    secret_file.write_text(SECRET)
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(room / "host.sock"))
    unix.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0dealroom-hostile-{os.getpid()}")
    abstract.listen()
    os.environ["DEALROOM_HOSTILE_SECRET"] = SECRET
    loop = asyncio.new_event_loop()

    async def instant(req: object) -> SubcallResult:
        return SubcallResult(ok=False, error="budget exhausted")

    sb = ProcessSandbox(room, base / "scratch", LIMITS, bootstrap="sandbox_boot:hostile",
                        pythonpath=[HERE])
    loop.run_until_complete(sb.start())
    try:
        yield {"sandbox": sb, "loop": loop, "handler": instant,
               "cells": {c.name: c for c in suite(os.getpid(), tcp.getsockname()[1], room,
                                                  secret_file)}}
    finally:
        loop.run_until_complete(sb.close())
        loop.close()
        del os.environ["DEALROOM_HOSTILE_SECRET"]
        for s in (tcp, unix, abstract):
            s.close()


NAMES = [c.name for c in suite(1, 1, Path("/r"), Path("/s"))]


def test_the_suite_is_whole() -> None:
    assert len(NAMES) == len(set(NAMES)) >= 70


@pytest.mark.parametrize("name", NAMES)
def test_hostile_cell_is_contained(world: dict, name: str) -> None:
    cell: Hostile = world["cells"][name]
    machine().needs(*cell.needs)
    sb: ProcessSandbox = world["sandbox"]
    run = world["loop"].run_until_complete
    r = run(sb.execute(cell.code, timeout=cell.timeout, on_request=world["handler"]))
    output = r.stdout + (r.error or "")
    if r.crashed:
        output += "\n(the worker died)"
    assert "ESCAPED" not in r.stdout, output
    assert re.search(cell.contained, output, re.M), output[-3000:]
    if r.crashed or r.timed_out or cell.fresh:
        run(sb.restart())
    after = run(sb.execute("1 + 1"))
    assert after.stdout == "2\n", after  # and the sandbox still works
    assert os.path.exists("/proc/self") and not Path("/tmp/dealroom-hostile").exists()
