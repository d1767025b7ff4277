"""Killing `dealroom run` at random points (SIGKILL) and resuming loses and repeats nothing."""

import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest

from dealroom.harness import resume_run, run_agent
from dealroom.room import ingest
from dealroom.testing import MockOpenAIServer

CATEGORIES = ("01 Corporate", "03 Material Contracts", "05 Litigation", "07 Regulatory")


def sub_reply(request):
    """Deterministic sub-agent: one finding for every document it is shown."""
    content = request["messages"][-1]["content"]
    docs = re.findall(r"^=== (D\d{5}) \|", content, re.M)
    return "\n".join(f"ISSUE: clause in {d} | SEVERITY: medium | AMOUNT: none | DOC: {d} | "
                     "PAGE: 1" for d in docs) or "NONE"


@pytest.fixture(scope="module")
def room_48(tmp_path_factory):
    src = tmp_path_factory.mktemp("src48")
    for i in range(48):
        folder = src / CATEGORIES[i % 4] / "Documents"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"doc {i:02d}.md").write_text(f"Document {i}. " + "Clause text. " * 40)
    room = tmp_path_factory.mktemp("rooms") / "r48"
    ingest(src, room)
    return room


@pytest.fixture(scope="module")
def server():
    with MockOpenAIServer(sub_reply, latency=0.15) as srv:
        yield srv


def dealroom(*args, **kw):
    return [sys.executable, "-m", "dealroom", *map(str, args)]


def lines(path):
    return path.read_text().count("\n") if path.exists() else 0


def run_and_kill(cmd, trajectory, at_line, deadline=60):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    end = time.monotonic() + deadline
    while proc.poll() is None and lines(trajectory) < at_line and time.monotonic() < end:
        time.sleep(0.005)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return proc.returncode


def successful_call_ids(run):
    events = [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]
    return [e["call_id"] for e in events if e["type"] == "model_call" and e["error"] is None]


def test_sigkill_at_random_points_then_resume_gives_the_same_memo(room_48, server, tmp_path):
    sub = f"mock@{server.base_url}"
    reference = tmp_path / "reference"
    args = ("--sub", sub, "--max-turns", "8", "--slice-tokens", "200")
    done = subprocess.run(dealroom("run", room_48, "--out", reference, *args),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = (reference / "output" / "memo.md").read_text()
    total = lines(reference / "trajectory.jsonl")
    assert expected.count("[D000") == 48

    rng = random.Random(20261201)
    for k, at in enumerate(sorted(rng.sample(range(2, total * 3 // 4), 3))):
        run = tmp_path / f"killed-{k}"
        code = run_and_kill(dealroom("run", room_48, "--out", run, *args),
                            run / "trajectory.jsonl", at)
        assert code == -signal.SIGKILL, f"the run finished before line {at}"
        calls_before = len(server.requests)
        resumed = resume_run(run)  # `dealroom resume` itself: the test below
        assert resumed.status == "submitted", resumed.reason
        assert (run / "output" / "memo.md").read_text() == expected
        ids = successful_call_ids(run)
        assert len(ids) == len(set(ids)), "a completed call was made again"
        assert len(server.requests) - calls_before <= 48
        assert sorted(ids) == sorted(successful_call_ids(reference))


def test_resume_refuses_a_finished_run(room_48, server, tmp_path):
    run = tmp_path / "done"
    run_agent(room_48, run, sub=f"mock@{server.base_url}")
    again = subprocess.run(dealroom("resume", run), capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "already finished" in again.stderr
