"""Limits that add up: RAM over all the worker's processes, the scratch quota, descriptors."""

from __future__ import annotations

from pathlib import Path

from sandbox_kit import machine, session

from dealroom.harness.sandbox import ProcessSandbox, SandboxLimits

SMALL = SandboxLimits(memory_bytes=400 * 2**20, scratch_bytes=64 * 2**20, cell_timeout=20,
                      interrupt_grace=0.5, start_timeout=30, max_processes=32)

HOGS = ("import os, time\n"
        "pids = []\n"
        "for _ in range(12):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        try:\n"
        "            block = b'x' * (150 * 2**20)\n"  # under RLIMIT_AS, touched for real
        "        except MemoryError:\n"
        "            os._exit(3)\n"
        "        time.sleep(3)\n"
        "        os._exit(0)\n"
        "    pids.append(pid)\n"
        "codes = [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids]\n"
        "print(sorted(codes))")
"""Twelve processes of 150 MiB each: 1.8 GB, each under its 400 MiB address-space limit."""


def test_ram_is_bounded_over_all_processes(small_room: Path, tmp_path: Path) -> None:
    machine().needs("cgroup")

    async def body(sb: ProcessSandbox) -> None:
        assert sb.confinement["memory"].startswith("cgroup v")
        r = await sb.execute(HOGS)
        cgroup = sb._cgroup
        assert cgroup is not None
        peak = "memory.max_usage_in_bytes" if cgroup.version == 1 else "memory.peak"
        used = int((cgroup.dirs["memory"] / peak).read_text())
        assert used <= SMALL.memory_bytes + SMALL.scratch_bytes
        if not r.crashed:  # the kernel killed hogs, not necessarily the worker
            assert "-9" in r.stdout, r
        assert cgroup.oom_kills() >= 1

    session(small_room, tmp_path, body, limits=SMALL)


def test_the_scratch_dir_has_a_quota(small_room: Path, tmp_path: Path) -> None:
    machine().needs("namespaces", "tmpfs")
    fill = ("n = 0\ntry:\n    for i in range(100):\n"
            "        with open(f'f{i}', 'wb') as f:\n            f.write(b'x' * 2**24)\n"
            "        n += 1\nexcept OSError as e:\n    print(n, e.errno)")

    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute(fill)
        assert r.stdout == "4 28\n", r  # four 16 MiB files fill 64 MiB: the 5th gets ENOSPC
        r = await sb.execute("import os\nfor i in range(5): os.remove(f'f{i}')\n"
                             "open('again', 'wb').write(b'y' * 2**24)")
        assert r.error is None and r.stdout == f"{2**24}\n"  # room again once freed

    session(small_room, tmp_path, body, limits=SMALL)


def test_memfd_and_descriptors_are_capped(small_room: Path, tmp_path: Path) -> None:
    machine().needs("seccomp")
    fds = ("import os\nfds = []\ntry:\n    while True:\n        fds.append(os.open('/dev/null',"
           " os.O_RDONLY))\nexcept OSError as e:\n    print(e.errno, len(fds) < 64)\n"
           "for fd in fds: os.close(fd)")

    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute("import os\nos.memfd_create('hold')")
        assert "PermissionError" in r.error
        r = await sb.execute(fds)
        assert r.stdout == "24 True\n", r  # EMFILE at the 64-descriptor limit

    session(small_room, tmp_path, body,
            limits=SandboxLimits(max_open_files=64, start_timeout=30))
