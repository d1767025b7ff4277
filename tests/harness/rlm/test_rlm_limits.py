"""Time limits, REPL state after a timeout, and what a killed run leaves behind, end to end."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from dealroom.harness import run_agent
from dealroom.harness.rlm._session import ReplSession
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.harness.sandbox import _cgroup, make_scratch
from dealroom.models import ScriptedModel
from dealroom.testing import MockOpenAIServer

SPIN = ("import threading\n"
        "def spin():\n    while True:\n        try:\n            llm('x')\n"
        "        except Exception:\n            pass\n"
        "threads = [threading.Thread(target=spin, daemon=True) for _ in range(4)]\n"
        "for t in threads:\n    t.start()\n"
        "for t in threads:\n    t.join()\n")
"""Issue 9 item 4: four threads looping ``llm("x")``; some sub-call is always in flight."""


def cell(code: str) -> str:
    return f"```python\n{code}```"


def events_of(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]


def test_max_seconds_stops_a_cell_spinning_on_sub_calls(small_room: Path, tmp_path: Path) -> None:
    root = ScriptedModel([cell(SPIN), cell("print('never reached')")])
    sub = ScriptedModel(["x"], cycle=True)  # a sub-agent that never fails: the clock stops it
    result = run_agent(small_room, tmp_path / "run", root=root, sub=sub,
                       max_turns=10, cell_timeout=60, max_seconds=4)
    assert result.status == "budget_exhausted" and "seconds" in result.reason
    cells = [e for e in events_of(tmp_path / "run") if e["type"] == "cell"]
    assert len(cells) == 1 and cells[0]["timed_out"]
    assert "wall-clock limit" in cells[0]["error"] and "time is up" in cells[0]["output"]


def test_the_run_records_the_confinement_in_force(small_room: Path, tmp_path: Path) -> None:
    run_agent(small_room, tmp_path / "run", root=ScriptedModel([cell("submit()")]),
              sub=ScriptedModel(["x"]), max_turns=2)
    [event] = [e for e in events_of(tmp_path / "run") if e["type"] == "sandbox"]
    assert event["agent"] == "root" and event["isolation"] == event["confinement"]["isolation"]
    assert set(event["confinement"]) == {"isolation", "memory", "filesystem", "scratch",
                                         "seccomp"}
    if os.geteuid() == 0:  # as here: root, where the strongest confinement must be in force
        assert event["isolation"] == "namespaces+uid" and event["degraded"] == [], event


def test_repl_state_survives_a_timeout(small_room: Path) -> None:
    settings = RLMSettings(max_turns=10_000, output_limit=1_000_000, cell_timeout=1)

    async def go() -> list:
        async with ReplSession(small_room, ScriptedModel(["x"]), settings) as repl:
            first = await repl.run("x = 41\nfrom pathlib import Path\nPath('f').write_text('y')")
            stuck = await repl.run("while True:\n    pass")
            after = await repl.run("print(x + 1, Path('f').read_text())")
            return [first, stuck, after]

    first, stuck, after = asyncio.run(go())
    assert first.error is None
    assert stuck.timed_out and "variables are kept" not in stuck.error
    assert "the REPL was restarted and its state rebuilt by re-running the cell" in stuck.error
    assert (after.text, after.error) == ("42 y\n", None)


@pytest.fixture(scope="module")
def slow_sub():
    with MockOpenAIServer("NONE", latency=0.05) as srv:
        yield srv


def test_repl_cell_timeout_stops_threads_spinning_on_llm(small_room: Path, slow_sub) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dealroom", "repl", str(small_room), "-c", SPIN,
         "--sub", f"mock@{slow_sub.base_url}", "--cell-timeout", "2"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 1  # ended by the cell's clock, not by the 120 s guard
    assert "TimeoutError: the cell ran past its" in done.stderr, done.stderr


@pytest.mark.slow
def test_issue_figures_cell_timeout_10_and_max_seconds_20(small_room: Path, tmp_path: Path,
                                                          slow_sub) -> None:
    """The issue's own figures: a REPL cell under --cell-timeout 10 is stopped (it ran on
    for 54 s and counting), a run under --max-seconds 20 ends near 20 s (it went on past 119 s)."""
    sub = f"mock@{slow_sub.base_url}"
    done = subprocess.run([sys.executable, "-m", "dealroom", "repl", str(small_room), "-c", SPIN,
                           "--sub", sub, "--cell-timeout", "10"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "TimeoutError" in done.stderr
    with MockOpenAIServer(cell(SPIN)) as root:
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "dealroom", "run", str(small_room), "--out",
             str(tmp_path / "run"), "--root", f"mock@{root.base_url}", "--sub", sub,
             "--cell-timeout", "10", "--max-seconds", "20", "--max-turns", "30"],
            capture_output=True, text=True, timeout=300)
        elapsed = time.monotonic() - t0
    assert done.returncode == 0 and "budget_exhausted" in done.stdout, done.stderr
    assert elapsed > 19, elapsed  # it ran to its budget (how soon after: bench, not a test)
    last = events_of(tmp_path / "run")[-1]
    assert last["type"] == "run_end" and "seconds" in last["reason"]


def scratch_folders(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"dealroom-scratch-{pid}-*"))


def workers_of(scratch: Path) -> list[str]:
    """Pids of processes whose command line names ``scratch`` (the sandbox workers' does)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(scratch).encode() in cmdline.read_bytes():
                found.append(cmdline.parent.name)
        except OSError:
            pass
    return found


def test_a_killed_run_leaves_nothing_behind_for_long(small_room: Path, tmp_path: Path) -> None:
    with MockOpenAIServer("NONE", latency=30) as hung:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dealroom", "run", str(small_room), "--out",
             str(tmp_path / "run"), "--sub", f"mock@{hung.base_url}", "--max-turns", "10"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while hung.calls == 0 and time.monotonic() < deadline:  # a sub-call is in flight
            time.sleep(0.1)
        assert hung.calls > 0 and scratch_folders(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    left = scratch_folders(proc.pid)
    assert left  # SIGKILL gave it no chance to clean up
    deadline = time.monotonic() + 10
    while workers_of(left[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers_of(left[0]) == []  # its sandbox workers saw their host go and exited
    make_scratch("scratch")  # the next run's start
    assert scratch_folders(proc.pid) == []
    _cgroup.remove_stale()
    assert not [p for p in Path("/sys/fs/cgroup").rglob(f"dealroom-{proc.pid}-*")]
