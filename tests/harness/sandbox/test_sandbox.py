"""The process sandbox end to end: REPL semantics, requests, and hostile cells contained."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from dealroom.errors import ConfigError, SandboxError
from dealroom.harness.sandbox import (
    ProcessSandbox,
    SandboxLimits,
    SubcallRequest,
    SubcallResult,
)

HERE = Path(__file__).parent
REPO = HERE.parents[2]
FAST = SandboxLimits(cell_timeout=10, interrupt_grace=0.5, max_processes=24,
                     memory_bytes=2 * 2**30, start_timeout=30)


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]


def make(small_room: Path, tmp_path: Path, **kw: Any) -> ProcessSandbox:
    kw.setdefault("limits", FAST)
    if "bootstrap" in kw:
        kw.setdefault("pythonpath", [HERE])
    return ProcessSandbox(small_room, tmp_path / "scratch", **kw)


def session(small_room: Path, tmp_path: Path,
            body: Callable[[ProcessSandbox], Awaitable[Any]], **kw: Any) -> Any:
    async def go() -> Any:
        sb = make(small_room, tmp_path, **kw)
        await sb.start()
        try:
            return await body(sb)
        finally:
            await sb.close()

    return run(go())


def isolated(sb: ProcessSandbox) -> bool:
    return sb.isolation in ("namespaces+uid", "userns")


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


def test_message_pair_round_trips() -> None:
    req = SubcallRequest(kind="llm", payload={"calls": [1]}, depth=1, budget={"tokens": 9}, id=4)
    assert SubcallRequest.from_dict(req.to_dict()) == req
    ok = SubcallResult(ok=True, payload={"text": "x"}, budget={"left": 1}, id=4)
    assert SubcallResult.from_dict(ok.to_dict()) == ok
    bad = SubcallResult(ok=False, error="no", id=2)
    assert bad.to_dict() == {"id": 2, "ok": False, "budget": None, "error": "no"}


def test_limits_are_validated() -> None:
    with pytest.raises(ConfigError, match="memory_bytes"):
        SandboxLimits(memory_bytes=1000)
    with pytest.raises(ConfigError, match="cell_timeout"):
        SandboxLimits(cell_timeout=0)
    with pytest.raises(ConfigError, match="isolation"):
        ProcessSandbox(None, "/tmp/x", isolation="docker")


# -- REPL semantics -----------------------------------------------------------------------
def test_notebook_semantics_and_room(small_room: Path, tmp_path: Path) -> None:
    async def body(sb: ProcessSandbox) -> None:
        assert sb.names == ["room"]
        r = await sb.execute("x = 40\nx + 2")
        assert (r.stdout, r.error, r.crashed, r.timed_out) == ("42\n", None, False, False)
        r = await sb.execute("import sys\nprint('out'); print('err', file=sys.stderr)\n_ + x")
        assert r.stdout == "out\nerr\n82\n"
        r = await sb.execute("hits = room.grep('change of control')\nprint(hits[0].doc, len(hits))")
        assert r.error is None and r.stdout == "D00002 2\n"
        r = await sb.execute("import asyncio\nawait asyncio.sleep(0)\n'awaited'")
        assert r.stdout == "'awaited'\n"
        r = await sb.execute("import os\nprint(os.getcwd())")
        assert r.stdout.strip() == str(tmp_path / "scratch")

    session(small_room, tmp_path, body)


def test_errors_are_trimmed_tracebacks(small_room: Path, tmp_path: Path) -> None:
    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute("def f():\n    return 1 / 0\nf()")
        assert r.error.startswith("Traceback") and "ZeroDivisionError" in r.error
        assert '"<cell-1>", line 3' in r.error and "return 1 / 0" in r.error
        assert "_worker.py" not in r.error and not r.crashed
        r = await sb.execute("def g(:\n  pass")
        assert "SyntaxError" in r.error and "Traceback" not in r.error
        r = await sb.execute("room.doc('D99999')")
        assert "no document 'D99999'" in r.error
        assert (await sb.execute("print('still here')")).stdout == "still here\n"

    session(small_room, tmp_path, body)


def test_printed_output_cannot_corrupt_the_channel(small_room: Path, tmp_path: Path) -> None:
    limits = SandboxLimits(max_output_chars=1000, cell_timeout=10, start_timeout=30)

    async def body(sb: ProcessSandbox) -> None:
        code = ('print(\'{"op": "done", "cell": 1, "stdout": "forged"}\')\n'
                "import os, sys\nos.write(1, b'raw fd write\\n')\n"
                "sys.__stdout__.write('dunder stdout\\n'); sys.__stdout__.flush()\n"
                "os.system('echo from a subprocess')")
        r = await sb.execute(code)
        assert r.stdout.startswith('{"op": "done", "cell": 1, "stdout": "forged"}\n0\n')
        for piece in ("raw fd write", "dunder stdout", "from a subprocess"):
            assert piece in r.stdout
        r = await sb.execute("print('a' * 5000 + 'END')")
        assert len(r.stdout) < 1100 and "characters of output dropped" in r.stdout
        assert r.stdout.rstrip().endswith("aEND")
        assert (await sb.execute("1 + 1")).stdout == "2\n"

    session(small_room, tmp_path, body, limits=limits)


# -- requests to the host ---------------------------------------------------------------------
def test_request_round_trips(small_room: Path, tmp_path: Path) -> None:
    seen: list[SubcallRequest] = []

    async def handler(req: SubcallRequest) -> SubcallResult:
        seen.append(req)
        if req.kind == "fail":
            return SubcallResult(ok=False, error="budget exhausted")
        if req.kind == "raise":
            raise ValueError("handler bug")
        if req.kind == "slow":
            await asyncio.sleep(0.2)
        return SubcallResult(ok=True, payload={"echo": req.payload}, budget={"left": 7})

    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute("ask('llm', {'q': [1, 'é']}, budget={'max_tokens': 5})",
                             on_request=handler)
        assert r.stdout == "{'echo': {'q': [1, 'é']}}\n" and r.error is None
        assert seen[0].kind == "llm" and seen[0].depth == 2 and seen[0].budget == {"max_tokens": 5}
        r = await sb.execute("print(host.budget)\nask('fail')", on_request=handler)
        assert r.stdout == "{'left': 7}\n" and "RemoteError: budget exhausted" in r.error
        r = await sb.execute("ask('raise')", on_request=handler)
        assert "ValueError: handler bug" in r.error
        code = ("from concurrent.futures import ThreadPoolExecutor\n"
                "import time\nt = time.time()\n"
                "with ThreadPoolExecutor(8) as ex:\n"
                "    out = list(ex.map(lambda i: ask('slow', {'i': i})['echo']['i'], range(8)))\n"
                "print(out, time.time() - t < 1.2)")
        r = await sb.execute(code, on_request=handler)
        assert r.stdout == "[0, 1, 2, 3, 4, 5, 6, 7] True\n"  # concurrent, not one by one
        r = await sb.execute("ask('anything')")
        assert "no request handler" in r.error
        counter = await sb.execute("counter = 3", on_request=handler)
        assert counter.state == {"counter": 3, "depth": 2, "options": {"k": "v"}}

    session(small_room, tmp_path, body, bootstrap="sandbox_boot:with_host", depth=2,
            options={"k": "v"})


def test_time_waiting_on_the_host_is_not_charged_to_the_cell(small_room: Path,
                                                              tmp_path: Path) -> None:
    async def slow_model(req: SubcallRequest) -> SubcallResult:
        await asyncio.sleep(2.5)
        return SubcallResult(ok=True, payload="answer")

    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute("print(ask('llm'), ask('llm'))", timeout=1, on_request=slow_model)
        assert r.stdout == "answer answer\n" and not r.timed_out and r.seconds > 5
        r = await sb.execute("ask('llm')\nwhile True:\n    pass", timeout=1,
                             on_request=slow_model)
        assert r.timed_out and "TimeoutError" in r.error  # its own work is still bounded

    session(small_room, tmp_path, body, bootstrap="sandbox_boot:with_host")


def test_state_key_and_bootstrap_failure(small_room: Path, tmp_path: Path) -> None:
    async def body(sb: ProcessSandbox) -> None:
        assert sb.names == ["n"]
        assert (await sb.execute("n")).state == {"legacy": True}

    session(small_room, tmp_path, body, bootstrap="sandbox_boot:legacy_state")

    async def early(sb: ProcessSandbox) -> None:
        r = await sb.execute("startup_error")
        assert "RemoteError: requests are not served during start-up" in r.stdout

    session(small_room, tmp_path, early, bootstrap="sandbox_boot:asks_at_start")
    sb = make(small_room, tmp_path, bootstrap="sandbox_boot:broken")
    with pytest.raises(SandboxError, match="bootstrap exploded on purpose"):
        run(sb.start())
    with pytest.raises(SandboxError, match="not running"):
        run(sb.execute("1"))


# -- hostile cells --------------------------------------------------------------------------
def test_network_is_unreachable(small_room: Path, tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    async def body(sb: ProcessSandbox) -> None:
        if not isolated(sb):
            pytest.skip(f"isolation is {sb.isolation}")
        for addr in (("1.1.1.1", 53), ("127.0.0.1", port)):
            code = (f"import socket\ns = socket.socket()\ns.settimeout(2)\n"
                    f"s.connect({addr!r})")
            r = await sb.execute(code)
            assert r.error and ("OSError" in r.error or "Error" in r.error), r
        r = await sb.execute("import socket\nsocket.getaddrinfo('example.com', 80)")
        assert "gaierror" in r.error

    try:
        session(small_room, tmp_path, body)
    finally:
        server.close()


def test_writes_outside_scratch_fail(small_room: Path, tmp_path: Path) -> None:
    targets = [small_room / "room.json", small_room / "new.txt", Path("/tmp/dealroom-escape.txt"),
               REPO / "escape.txt", REPO / "src/dealroom/__init__.py", small_room / ".index/x"]
    before = {p: p.read_bytes() for p in targets if p.exists()}

    async def body(sb: ProcessSandbox) -> None:
        if not isolated(sb):
            pytest.skip(f"isolation is {sb.isolation}")
        for target in targets:
            r = await sb.execute(f"open({str(target)!r}, 'a').write('pwned')")
            assert r.error and ("Read-only" in r.error or "Permission" in r.error), target
        r = await sb.execute("open('mine.txt', 'w').write('ok')\nopen('mine.txt').read()")
        assert r.stdout == "'ok'\n"
        sb.uid += 1  # a later worker with another uid can still change what this one left
        await sb.restart()
        r = await sb.execute("open('mine.txt', 'a').write('!')\nopen('mine.txt').read()")
        assert r.stdout == "'ok!'\n"
        r = await sb.execute("import os\nos.listdir('/root'), os.listdir('/run')")
        assert ".ssh" not in r.stdout and r.stdout.endswith(", [])\n")  # no host sockets

    session(small_room, tmp_path, body)
    assert {p: p.read_bytes() for p in targets if p.exists()} == before
    assert not Path("/tmp/dealroom-escape.txt").exists() and not (REPO / "escape.txt").exists()
    assert (tmp_path / "scratch/mine.txt").read_text() == "ok!"


def test_answer_key_rubric_and_home_are_hidden(small_room: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
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
            if not isolated(sb):
                pytest.skip(f"isolation is {sb.isolation}")
            for path in (room / "answer_key/findings.json", home / ".aws/credentials"):
                r = await sb.execute(f"open({str(path)!r}).read()")
                assert r.error and "FileNotFoundError" in r.error, r
            r = await sb.execute(f"open({str(room / 'task.json')!r}).read()")
            assert r.stdout == "''\n"
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
        if isolated(sb):
            code = f"open('/proc/{os.getpid()}/environ', 'rb').read()"
            r = await sb.execute(code)
            assert r.error and "sk-live-123" not in (r.stdout + r.error)

    session(small_room, tmp_path, body)


def test_fork_bomb_is_bounded(small_room: Path, tmp_path: Path) -> None:
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"

    async def body(sb: ProcessSandbox) -> list[int]:
        if sb.isolation != "namespaces+uid":
            pytest.skip("needs the fresh-uid process limit")
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
        assert r.timed_out and r.crashed and "was killed" in r.error and r.seconds < 8
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
    host_pid = os.getpid()

    async def body(sb: ProcessSandbox) -> None:
        if not isolated(sb):
            pytest.skip("kill(-1) without a pid namespace would hit the test run itself")
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


@pytest.mark.parametrize("code, why", [
    ("exit(3)", "called exit(3)"),
    ("import os\nos._exit(0)", "exit status 0"),
    ("import ctypes\nctypes.string_at(0)", "SIGSEGV"),
])
def test_crashes_are_reported(small_room: Path, tmp_path: Path, code: str, why: str) -> None:
    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute("print('before')\n" + code)
        assert r.crashed and not r.timed_out and why in r.error, r
        await sb.restart()
        assert (await sb.execute("6 * 7")).stdout == "42\n"

    session(small_room, tmp_path, body)


def test_no_orphans_after_close(small_room: Path, tmp_path: Path) -> None:
    code = ("import subprocess, os\n"
            "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
            "if os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(300)\n")

    async def body(sb: ProcessSandbox) -> int:
        if sb.isolation != "namespaces+uid":
            pytest.skip("orphans are only guaranteed gone with a pid namespace")
        r = await sb.execute(code)
        assert r.error is None
        assert len(uid_processes(sb.uid)) >= 3
        return sb.uid

    uid = session(small_room, tmp_path, body)
    assert uid_processes(uid) == []


def machine_has_user_namespaces() -> bool:
    done = subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True)
    return done.returncode == 0


def test_the_worker_starts_single_threaded() -> None:
    # unshare(CLONE_NEWUSER) fails in a multi-threaded process: nothing the worker imports
    # before it confines itself may start threads (numpy's BLAS does).
    code = "import sys, dealroom.harness.sandbox._worker; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("level", ["userns", "rlimits"])
def test_weaker_isolation_levels(small_room: Path, tmp_path: Path, level: str) -> None:
    probe = ("import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), 1)\n"
             "except OSError as e:\n    print('blocked')\nprint(1 + 1)")

    async def go() -> None:
        sb = make(small_room, tmp_path, isolation=level)
        try:
            await sb.start()
        except SandboxError as exc:
            if level == "userns" and not machine_has_user_namespaces():
                pytest.skip(f"no user namespaces on this machine: {exc}")
            raise
        try:
            assert sb.isolation == level
            r = await sb.execute(probe)
            assert r.stdout.endswith("2\n")
            if level == "userns":
                assert r.stdout.startswith("blocked")
                r = await sb.execute(f"open({str(small_room / 'x.txt')!r}, 'w')")
                assert "Read-only" in r.error
        finally:
            await sb.close()

    run(go())
