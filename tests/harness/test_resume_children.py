"""A run whose root sends a batch of children (rlm_batch), killed with SIGKILL while they
work and resumed: the children that ended are answered from their records, the others go on
from theirs, and no completed model call is made again."""

import json
import re
import signal
import subprocess

import pytest
from test_resume import dealroom, lines, room_48, run_and_kill, successful_call_ids

from dealroom.harness import resume_run
from dealroom.testing import MockOpenAIServer

__all__ = ["room_48"]  # the fixture, shared with test_resume
DOCS = [f"D{i:05d}" for i in range(1, 9)]


def reply(request):
    """Root, children and sub-agents as one served model: the root sends one child per
    document and writes their answers into the memo; a child reads its document with two
    sub-calls, then submits; a sub-call names the document it was shown."""
    messages = request["messages"]
    if len(messages) < 2:
        return "ok"
    first, turn = messages[1]["content"], sum(m["role"] == "assistant" for m in messages) + 1
    if "child agent" in first:
        doc = re.search(r"read (D\d{5})", first).group(1)
        if turn == 1:
            return (f"```python\nr = llm_batch([{{'prompt': 'part ' + str(i), 'docs': "
                    f"['{doc}']}} for i in range(2)])\n```")
        return f"```python\nsubmit('{doc}: ' + ' / '.join(r))\n```"
    if "data room" in first:
        if turn == 1:
            return f"```python\nr = rlm_batch([f'read {{d}}' for d in {DOCS!r}])\n```"
        return "```python\nmemo.write('\\n'.join(r))\nsubmit()\n```"
    shown = re.findall(r"^=== (D\d{5}) \|", messages[-1]["content"], re.M)
    return f"finding in {', '.join(shown)} ({messages[-1]['content'][:6]})"


@pytest.fixture(scope="module")
def server():
    with MockOpenAIServer(reply, latency=0.15) as srv:
        yield srv


def events(run):
    return [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]


def test_sigkill_during_a_batch_of_children_then_resume(room_48, server, tmp_path):
    model = f"mock@{server.base_url}"
    args = ("--root", model, "--sub", model, "--depth", "2", "--child-concurrency", "3",
            "--max-turns", "4")
    reference = tmp_path / "reference"
    done = subprocess.run(dealroom("run", room_48, "--out", reference, *args),
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    expected = (reference / "output" / "memo.md").read_text()
    assert all(f"{d}: finding in {d}" in expected for d in DOCS)
    ends = [e["seq"] for e in events(reference) if e["type"] == "child_end"]
    for k, at in enumerate((ends[1] + 1, ends[5] + 1)):
        run = tmp_path / f"killed-{k}"
        code = run_and_kill(dealroom("run", room_48, "--out", run, *args),
                            run / "trajectory.jsonl", at)
        assert code == -signal.SIGKILL, f"the run finished before line {at}"
        before = events(run)
        ended = {e["agent"] for e in before if e["type"] == "child_end"}
        assert 0 < len(ended) < len(DOCS)  # killed with children done and children going
        calls_before = len(server.requests)
        resumed = resume_run(run)
        assert resumed.status == "submitted", resumed.reason
        assert (run / "output" / "memo.md").read_text() == expected
        ids = successful_call_ids(run)
        assert len(ids) == len(set(ids)), "a completed call was made again"
        assert sorted(ids) == sorted(successful_call_ids(reference))
        after = events(run)
        for kind in ("child_start", "child_end"):
            agents = [e["agent"] for e in after if e["type"] == kind]
            assert sorted(agents) == sorted(set(agents)) and len(agents) == len(DOCS), kind
        done_before = sum(e["type"] == "model_call" and e["error"] is None for e in before)
        sent_again = len(server.requests) - calls_before
        assert sent_again <= len(ids) - done_before  # only what had not been answered
        assert lines(run / "trajectory.jsonl") > len(before)
