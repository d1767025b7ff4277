"""What confines the worker: isolation levels, the filesystem view, processes, limits.

Each test skips only where the machine itself lacks what it needs (see ``sandbox_kit``);
where the machine has it, the sandbox must use it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sandbox_kit import FAST, REPO, machine, run, session, uid_processes

from dealroom.errors import SandboxError
from dealroom.harness.sandbox import ProcessSandbox, SandboxLimits


def test_auto_gives_the_strongest_confinement_the_machine_offers(small_room: Path,
                                                                 tmp_path: Path) -> None:
    m = machine()

    async def body(sb: ProcessSandbox) -> None:
        assert sb.isolation == m.isolation, (sb.confinement, m.missing)
        parts = {"memory": "cgroup", "scratch": "tmpfs", "seccomp": "seccomp"}
        for part, capability in parts.items():
            weak = [d for d in sb.degraded if d.startswith(f"{part}:")]
            assert capability in m.missing or not weak, (weak, sb.confinement)
        if not m.missing:  # this machine (root, all capabilities): everything in force
            assert sb.degraded == [] and sb.isolation == "namespaces+uid"
            assert sb.confinement["memory"].startswith("cgroup v")
            assert sb.confinement["scratch"].startswith("tmpfs of 256 MiB")
            assert sb.confinement["seccomp"].startswith("on:")
        r = await sb.execute("print(open('/proc/self/status').read())")
        assert ("Seccomp:\t2" in r.stdout) == ("seccomp" not in m.missing)
        assert "NoNewPrivs:\t1" in r.stdout

    session(small_room, tmp_path, body)


def test_a_weaker_level_says_what_is_missing(small_room: Path, tmp_path: Path) -> None:
    async def body(sb: ProcessSandbox) -> None:
        assert sb.isolation == "rlimits"
        assert sb.degraded[0] == ("isolation rlimits: no network, filesystem or process "
                                  "isolation (asked for)")
        assert any(d.startswith("scratch: no quota") for d in sb.degraded)
        assert any(d.startswith("filesystem: the host's, as the host user sees it")
                   for d in sb.degraded), sb.degraded

    session(small_room, tmp_path, body, isolation="rlimits")


def test_network_is_unreachable(small_room: Path, tmp_path: Path) -> None:
    machine().needs("namespaces")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    async def body(sb: ProcessSandbox) -> None:
        for addr in (("1.1.1.1", 53), ("127.0.0.1", port)):
            code = (f"import socket\ns = socket.socket()\ns.settimeout(2)\n"
                    f"s.connect({addr!r})")
            r = await sb.execute(code)
            assert r.error and "OSError" in r.error and "Network is unreachable" in r.error, r
        r = await sb.execute("import socket\nsocket.getaddrinfo('example.com', 80)")
        assert "gaierror" in r.error

    try:
        session(small_room, tmp_path, body)
    finally:
        server.close()


def test_writes_stay_in_the_scratch_tmpfs(small_room: Path, tmp_path: Path) -> None:
    machine().needs("namespaces", "tmpfs")
    targets = [small_room / "room.json", small_room / "new.txt", Path("/tmp/dealroom-escape.txt"),
               REPO / "escape.txt", REPO / "src/dealroom/__init__.py", small_room / ".index/x"]
    before = {p: p.read_bytes() for p in targets if p.exists()}

    async def body(sb: ProcessSandbox) -> None:
        for target in targets:
            r = await sb.execute(f"open({str(target)!r}, 'a').write('pwned')")
            assert r.error and ("Read-only" in r.error or "Permission" in r.error), target
        r = await sb.execute("open('mine.txt', 'w').write('ok')\nopen('mine.txt').read()")
        assert r.stdout == "'ok'\n"
        r = await sb.execute("import os\nos.statvfs('.').f_blocks * os.statvfs('.').f_frsize")
        assert r.stdout == f"{FAST.scratch_bytes}\n"
        await sb.restart()  # a fresh worker, a fresh scratch
        r = await sb.execute("import os\nos.listdir('.')")
        assert r.stdout == "[]\n"
        r = await sb.execute("import os\n[os.path.exists(p) for p in ('/root/.ssh', '/run')]")
        assert r.stdout == "[False, False]\n", r  # no host keys, no host sockets

    session(small_room, tmp_path, body)
    assert {p: p.read_bytes() for p in targets if p.exists()} == before
    assert not Path("/tmp/dealroom-escape.txt").exists() and not (REPO / "escape.txt").exists()
    assert list((tmp_path / "scratch").iterdir()) == []  # nothing reached the host's folder


def test_answer_key_rubric_and_home_are_hidden(small_room: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    machine().needs("namespaces")
    room = tmp_path / "room"
    shutil.copytree(small_room, room)
    (room / "answer_key").mkdir(exist_ok=True)
    (room / "answer_key/findings.json").write_text('{"secret": "planted"}')
    (room / "task.json").write_text('{"criteria": ["rubric"]}')
    home = tmp_path / "home"
    (home / "runs").mkdir(parents=True)
    (home / ".aws").mkdir()
    (home / ".aws/credentials").write_text("aws_secret=abc")
    monkeypatch.setenv("HOME", str(home))

    async def go() -> None:
        sb = ProcessSandbox(room, home / "runs/scratch", FAST)
        await sb.start()
        try:
            for path in (room / "answer_key/findings.json", room / "task.json",
                         home / ".aws/credentials"):
                r = await sb.execute(f"open({str(path)!r}).read()")
                assert r.error and "FileNotFoundError" in r.error, r
            r = await sb.execute(f"import os\nos.listdir({str(home)!r})")
            assert r.stdout == "['runs']\n"
            r = await sb.execute("len(room.grep('agreement')) > 0")
            assert r.stdout == "True\n"
        finally:
            await sb.close()

    run(go())


def test_host_environment_is_not_visible(small_room: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEALROOM_FAKE_SECRET", "sk-live-123")

    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute("import os\nsorted(os.environ)")
        assert "DEALROOM_FAKE_SECRET" not in r.stdout and "'HOME'" in r.stdout
        machine().needs("namespaces")
        r = await sb.execute(f"open('/proc/{os.getpid()}/environ', 'rb').read()")
        assert r.error and "sk-live-123" not in (r.stdout + r.error)

    session(small_room, tmp_path, body)


def test_fork_bomb_is_bounded(small_room: Path, tmp_path: Path) -> None:
    machine().needs("namespaces", "fresh_uid")
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"

    async def body(sb: ProcessSandbox) -> list[int]:
        r = await sb.execute(bomb, timeout=1)
        assert r.timed_out
        if r.crashed:
            await sb.restart()
        r = await sb.execute("print('alive')\nroom.grep('permit')[0].doc")
        assert r.stdout.startswith("alive") and not r.error
        return uid_processes(sb.uid)

    assert len(session(small_room, tmp_path, body)) == 1  # the worker itself, bomb gone


def test_infinite_loops_time_out(small_room: Path, tmp_path: Path) -> None:
    stubborn = ("while True:\n    try:\n        while True:\n            pass\n"
                "    except KeyboardInterrupt:\n        pass")

    async def body(sb: ProcessSandbox) -> None:
        await sb.execute("kept = 'yes'")
        r = await sb.execute("while True:\n    pass", timeout=1)
        assert r.timed_out and not r.crashed and "TimeoutError" in r.error
        assert (await sb.execute("kept")).stdout == "'yes'\n"
        r = await sb.execute(stubborn, timeout=1)
        assert r.timed_out and r.crashed and "was killed" in r.error
        with pytest.raises(SandboxError, match="not running"):
            await sb.execute("1")
        await sb.restart()
        assert (await sb.execute("'kept' in globals()")).stdout == "False\n"

    session(small_room, tmp_path, body)


def test_memory_limit(small_room: Path, tmp_path: Path) -> None:
    async def body(sb: ProcessSandbox) -> None:
        await sb.execute("keep = list(range(10))")
        r = await sb.execute("x = bytearray(10 * 2**30)")
        assert "MemoryError" in r.error and "memory limit" in r.error and not r.crashed
        r = await sb.execute("chunks = []\nwhile True:\n    chunks.append(bytearray(2**26))")
        assert "MemoryError" in r.error
        assert (await sb.execute("del chunks\nlen(keep)")).stdout == "10\n"

    session(small_room, tmp_path, body,
            limits=SandboxLimits(memory_bytes=768 * 2**20, start_timeout=30))


def test_signalling_the_host_fails(small_room: Path, tmp_path: Path) -> None:
    machine().needs("namespaces")  # kill(-1) without a pid namespace would hit this test run
    host_pid = os.getpid()

    async def body(sb: ProcessSandbox) -> None:
        tricks = ["import os\nos.kill(os.getppid(), 9)", "import os\nos.killpg(os.getpgid(0), 9)",
                  "import os\nos.kill(-1, 9)", f"import os\nos.kill({host_pid}, 9)",
                  f"import os\nos.killpg({os.getpgid(0)}, 9)"]
        for code in tricks:
            r = await sb.execute(code)
            if r.crashed:
                await sb.restart()
        assert (await sb.execute("'fine'")).stdout == "'fine'\n"

    session(small_room, tmp_path, body)
    assert threading.main_thread().is_alive()  # and this process is still here


def test_no_orphans_after_close(small_room: Path, tmp_path: Path) -> None:
    machine().needs("namespaces", "fresh_uid")
    code = ("import subprocess, os\n"
            "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
            "if os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(300)\n")

    async def body(sb: ProcessSandbox) -> int:
        r = await sb.execute(code)
        assert r.error is None
        assert len(uid_processes(sb.uid)) >= 3
        return sb.uid

    uid = session(small_room, tmp_path, body)
    assert uid_processes(uid) == []


def test_the_cgroup_kills_what_escaped_the_process_group(small_room: Path,
                                                         tmp_path: Path) -> None:
    machine().needs("cgroup")
    marker = f"dealroom-escapee-{os.getpid()}"
    code = ("import subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', "
            f"{marker!r}], start_new_session=True)\ntime.sleep(0.5)")

    def escapees() -> list[str]:
        found = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if marker.encode() in cmdline.read_bytes():
                    found.append(cmdline.parent.name)
            except OSError:
                pass
        return found

    async def body(sb: ProcessSandbox) -> None:
        assert (await sb.execute(code)).error is None
        assert len(escapees()) == 1

    session(small_room, tmp_path, body, isolation="rlimits")  # no pid namespace to reap it
    assert escapees() == []


def test_the_worker_starts_single_threaded() -> None:
    # unshare(CLONE_NEWUSER) fails in a multi-threaded process: nothing the worker imports
    # before it confines itself may start threads (numpy's BLAS does).
    code = "import sys, dealroom.harness.sandbox._worker; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("level", ["userns", "rlimits"])
def test_weaker_isolation_levels(small_room: Path, tmp_path: Path, level: str) -> None:
    if level == "userns":
        machine().needs("namespaces")
        unshare = ["unshare", "--user", "--map-root-user", "true"]
        if subprocess.run(unshare, capture_output=True).returncode != 0:
            pytest.skip("this machine lacks user namespaces")
    probe = ("import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), 1)\n"
             "except OSError as e:\n    print('blocked')\nprint(1 + 1)")

    async def body(sb: ProcessSandbox) -> None:
        assert sb.isolation == level
        r = await sb.execute(probe)
        assert r.stdout.endswith("2\n")
        if level == "userns":
            assert r.stdout.startswith("blocked")
            r = await sb.execute(f"open({str(small_room / 'x.txt')!r}, 'w')")
            assert "Read-only" in r.error

    session(small_room, tmp_path, body, isolation=level)


def test_doctor_shows_what_is_in_force_and_what_is_weaker() -> None:
    from typer.testing import CliRunner

    from dealroom.cli import app

    def doctor(*args: str):
        return CliRunner().invoke(app, ["doctor", "--no-start-local", *args])

    done = doctor()
    assert done.exit_code == 0, done.output
    for part in ("isolation", "memory", "filesystem", "scratch", "seccomp"):
        assert part in done.stdout
    if not machine().missing:
        assert "the strongest confinement is in force" in done.stdout
    weak = doctor("--isolation", "rlimits")
    assert weak.exit_code == 0 and "strongest" not in weak.stdout
    assert "sandbox weaker than it should be: isolation rlimits" in weak.stdout


def test_the_run_display_warns_of_a_weaker_sandbox() -> None:
    from rich.console import Console

    from dealroom.cli.display_live import RunDisplay

    console = Console(record=True, width=200)
    with RunDisplay(console) as display:
        event = {"type": "sandbox", "agent": "root", "depth": 0, "isolation": "rlimits",
                 "degraded": ["isolation rlimits: no network, filesystem or process isolation"]}
        display(event, type("Probe", (), {"summary": lambda self: {"coverage": 0.0}})())
    assert "sandbox weaker than it should be: isolation rlimits" in console.export_text()
