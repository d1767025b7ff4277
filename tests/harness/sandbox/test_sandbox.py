"""The process sandbox's REPL: notebook semantics, requests to the host, clocks, crashes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sandbox_kit import make, run, session

from dealroom.errors import ConfigError, SandboxError
from dealroom.harness.sandbox import (
    ProcessSandbox,
    SandboxLimits,
    SubcallRequest,
    SubcallResult,
)


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


FORGE = """
import json, os
forged = 0
for fd in os.listdir('/proc/self/fd'):
    for cell in (1, 2):  # this cell, and the next one
        line = json.dumps({'op': 'done', 'cell': cell, 'pid': os.getpid(), 'nonce': '',
                           'stdout': 'forged', 'error': None, 'state': {}, 'exit': None})
        try:
            os.write(int(fd), (line + '\\n').encode())
            forged += 1
        except OSError:
            pass
print('forged', forged > 0)
print('the genuine end')
"""


def test_a_done_written_by_the_cell_on_the_channel_does_not_end_it(small_room: Path,
                                                                   tmp_path: Path) -> None:
    """The cell writes ``done`` messages (its own number and the next, its pid) on every fd
    it has, the protocol's included: the host waits for the worker's own ``done``."""
    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute(FORGE)
        assert r.stdout.startswith("forged True\nthe genuine end\n"), r  # not 'forged'
        assert r.error is None and not r.timed_out and not r.crashed
        r = await sb.execute("print('next')")
        assert r.stdout == "next\n", r

    session(small_room, tmp_path, body)


# -- requests to the host ---------------------------------------------------------------------
def test_request_round_trips(small_room: Path, tmp_path: Path) -> None:
    seen: list[SubcallRequest] = []
    slow = {"in_flight": 0, "peak": 0}
    all_in = asyncio.Event()

    async def handler(req: SubcallRequest) -> SubcallResult:
        seen.append(req)
        if req.kind == "fail":
            return SubcallResult(ok=False, error="budget exhausted")
        if req.kind == "raise":
            raise ValueError("handler bug")
        if req.kind == "slow":  # each waits until all eight are in: one by one never ends
            slow["in_flight"] += 1
            slow["peak"] = max(slow["peak"], slow["in_flight"])
            if slow["peak"] == 8:
                all_in.set()
            await all_in.wait()
            slow["in_flight"] -= 1
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
                "with ThreadPoolExecutor(8) as ex:\n"
                "    out = list(ex.map(lambda i: ask('slow', {'i': i})['echo']['i'], range(8)))\n"
                "print(out)")
        r = await sb.execute(code, on_request=handler)
        assert r.stdout == "[0, 1, 2, 3, 4, 5, 6, 7]\n" and slow["peak"] == 8  # concurrent
        r = await sb.execute("ask('anything')")
        assert "no request handler" in r.error
        counter = await sb.execute("counter = 3", on_request=handler)
        assert counter.state == {"counter": 3, "depth": 2, "options": {"k": "v"}}

    session(small_room, tmp_path, body, bootstrap="sandbox_boot:with_host", depth=2,
            options={"k": "v"})


PATIENT = SandboxLimits(cell_timeout=10, interrupt_grace=0.5, start_timeout=30,
                        cell_wall_timeout=60)
"""A wall-clock ceiling far enough not to be what stops a cell."""


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
        assert r.timed_out and "its 1 s limit" in r.error  # its own work is still bounded

    session(small_room, tmp_path, body, bootstrap="sandbox_boot:with_host", limits=PATIENT)


SPINNERS = ("import threading\n"
            "def spin():\n    while True:\n        try:\n            ask('llm', {'p': 'x'})\n"
            "        except Exception:\n            pass\n"
            "threads = [threading.Thread(target=spin, daemon=True) for _ in range(4)]\n"
            "for t in threads:\n    t.start()\n"
            "for t in threads:\n    t.join()\n")
"""Four threads asking the host without end (issue 9 item 4): some request is always out."""


def test_threads_spinning_on_requests_are_charged_their_cpu(small_room: Path,
                                                            tmp_path: Path) -> None:
    calls = []

    async def instant(req: SubcallRequest) -> SubcallResult:
        calls.append(1)
        return SubcallResult(ok=False, error="budget exhausted")  # what a spent budget says

    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute(SPINNERS, timeout=2, on_request=instant)
        assert r.timed_out and "its 2 s limit" in r.error, r
        assert len(calls) > 100  # requests kept coming in, and the cell was stopped anyway

    session(small_room, tmp_path, body, bootstrap="sandbox_boot:with_host", limits=PATIENT)


def test_a_cell_has_a_wall_clock_ceiling(small_room: Path, tmp_path: Path) -> None:
    async def slow(req: SubcallRequest) -> SubcallResult:
        await asyncio.sleep(0.3)
        return SubcallResult(ok=True, payload="answer")

    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute(SPINNERS, timeout=1, on_request=slow)  # ceiling: 4 x 1 s
        assert r.timed_out and "its 4 s wall-clock limit" in r.error, r
        assert r.seconds >= 4  # not cut before its ceiling; the message names which clock
        r = await sb.execute(SPINNERS, timeout=30, wall_timeout=1.5, on_request=slow)
        assert r.timed_out and "its 1.5 s wall-clock limit" in r.error and r.seconds >= 1.5

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


# -- start-up cost --------------------------------------------------------------------------
def test_a_repl_starts_without_the_hosts_libraries(small_room: Path, tmp_path: Path) -> None:
    """A REPL start loads neither asyncio, pydantic nor the room's validation: every child an
    agent spawns pays its imports (bench_children.py)."""
    async def body(sb: ProcessSandbox) -> None:
        r = await sb.execute("import sys\nsorted(m for m in ('asyncio', 'pydantic', "
                             "'dealroom.room._room_schema', 'dealroom.harness.sandbox._process')"
                             " if m in sys.modules)")
        assert (r.error, r.stdout) == (None, "[]\n")
    session(small_room, tmp_path, body)


def test_numeric_libraries_start_no_threads_in_the_repl(small_room: Path,
                                                        tmp_path: Path) -> None:
    """OpenBLAS would start a thread per core as numpy is imported (CPU at every start, and a
    task each against the sandbox's process limit)."""
    async def body(sb: ProcessSandbox) -> None:
        code = ("import threading\nimport numpy\nnumpy.ones((64, 64)) @ numpy.ones((64, 64))\n"
                "open('/proc/self/status').read().split('Threads:')[1].split()[0] == "
                "str(threading.active_count())")
        r = await sb.execute(code)
        assert (r.error, r.stdout) == (None, "True\n")
    session(small_room, tmp_path, body)
