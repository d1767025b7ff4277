"""The RLM harness end to end: real sandboxed worker, real room, a scripted model on loopback."""

import json
import re

import pytest
from support.cli import dealroom

from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.testing import MockOpenAIServer

FINDING = ("ISSUE: Acme may terminate on a change of control | SEVERITY: high | "
           "AMOUNT: $2,500,000 | PAGE: 2")


def reads_for_findings(request):
    """A deterministic sub-agent: reports the change-of-control clause when it sees it."""
    return FINDING if "Change of Control" in request["messages"][-1]["content"] else "NONE"


@pytest.fixture(scope="module")
def sub_server():
    with MockOpenAIServer(reads_for_findings) as srv:
        yield srv


def events_of(run):
    return [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]


def test_scripted_root_with_an_endpoint_sub_agent(small_room, sub_server, tmp_path):
    run = tmp_path / "run"
    result = run_agent(small_room, run, root="scripted", sub=f"mock@{sub_server.base_url}",
                       max_turns=10)
    assert result.status == "submitted"
    memo = (run / "output" / "memo.md").read_text()
    assert "[D00002 p.2]" in memo and "$2,500,000" in memo and "severity: high" in memo
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["coverage"]["coverage"] == pytest.approx(1.0)
    assert metrics["behaviour"]["sub_calls"] == 4 and metrics["behaviour"]["memo_incremental"]
    config = json.loads((run / "config.json").read_text())
    assert config["sub"].startswith("mock@") and config["settings"]["max_turns"] == 10
    room_text = "Section 14.2 Change of Control. Acme may terminate"
    assert room_text not in (run / "trajectory.jsonl").read_text(), "slices are by reference"


def test_timeouts_and_hostile_cells_are_survived_and_state_is_rebuilt(small_room, tmp_path):
    root = ScriptedModel([
        "```python\nx = 41\nprint('set')\n```",
        "```python\nwhile True:\n    pass\n```",
        "```python\nimport os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n```",
        "```python\nimport socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)\n```",
        "```python\nimport os\nprint(sorted(k for k in os.environ if 'SECRET' in k))\n```",
        "```python\nprint(x + 1)\nsubmit()\n```",
    ])
    result = run_agent(small_room, tmp_path / "run", root=root, sub=ScriptedModel(["x"]),
                       max_turns=10, cell_timeout=2)
    assert result.status == "submitted"
    seen = [m[-1]["content"] for m in root.messages[1:]]
    assert "its 2 s limit" in seen[1] and "state rebuilt by re-running the cell" in seen[1]
    assert "sock.connect(sa)" in seen[3]  # the connection itself was refused, not the code
    assert re.search(r"^OSError: \[Errno \d+\] \w", seen[3], re.M), seen[3]
    assert "[]" in seen[4]
    cells = [e for e in events_of(tmp_path / "run") if e["type"] == "cell"]
    assert cells[-1]["output"].startswith("42")


def test_cli_run_and_repl(small_room, sub_server, tmp_path):
    run = tmp_path / "cli-run"
    sub = f"mock@{sub_server.base_url}"
    done = dealroom("run", str(small_room), "--out", str(run), "--sub", sub, "--max-turns", "8")
    assert done.returncode == 0, done.stderr
    assert "submitted" in done.stdout and (run / "output" / "memo.md").is_file()
    again = dealroom("run", str(small_room), "--out", str(run))
    assert again.returncode == 1 and "already holds files" in again.stderr
    cell = dealroom("repl", str(small_room), "--sub", sub, "-c",
                    "print(len(room.docs)); print(llm('say hi', docs=['D00002']))")
    assert cell.returncode == 0, cell.stderr
    assert cell.stdout.splitlines()[0] == "4" and "change of control" in cell.stdout
    bad = dealroom("repl", str(small_room), "--sub", sub, "-c", "1/0")
    assert bad.returncode == 1 and "ZeroDivisionError" in bad.stderr


def test_a_dead_endpoint_fails_fast_with_what_to_set(small_room, tmp_path):
    done = dealroom("run", str(small_room), "--out", str(tmp_path / "r"), "--sub",
                    "m@http://127.0.0.1:9/v1")
    assert done.returncode == 1
    assert "127.0.0.1:9" in done.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_the_embedded_local_model_reads_the_room_for_real(small_room, tmp_path):
    result = run_agent(small_room, tmp_path / "run", root="scripted", sub="local", max_turns=8)
    assert result.status == "submitted"
    subs = [e for e in events_of(tmp_path / "run")
            if e["type"] == "model_call" and e["role"] == "sub"]
    assert len(subs) == 4 and all(e["error"] is None and e["output"] for e in subs)
    assert all(e["usage"]["output_tokens"] > 0 for e in subs)
    assert "[D0000" in (tmp_path / "run" / "output" / "memo.md").read_text()


def keyword_reader(request):
    """A deterministic sub-agent that reports the sentences holding diligence keywords."""
    import re

    content = request["messages"][-1]["content"]
    found, doc, page = [], None, 1
    for line in content.splitlines():
        if m := re.match(r"--- (D\d{5}) page (\d+) ---", line):
            doc, page = m.group(1), int(m.group(2))
        elif doc and re.search(r"change of control|terminat|indemnif|litigation|claim|"
                               r"audit|expired|breach|remediation|default", line, re.I):
            found.append(f"ISSUE: {line.strip()[:300]} | SEVERITY: high | AMOUNT: none | "
                         f"DOC: {doc} | PAGE: {page}")
    return "\n".join(found[:6]) or "NONE"


def test_scripted_root_on_a_generated_room_writes_a_memo_citing_documents(tmp_path):
    from dealroom.judge import judge_run
    from dealroom.room import generate_room

    room = tmp_path / "room"
    generate_room(room, docs=24, secret="tests", seed=3, profile="software", tokens=30_000)
    with MockOpenAIServer(keyword_reader) as srv:
        result = run_agent(room, tmp_path / "run", root="scripted",
                           sub=f"reader@{srv.base_url}", max_turns=10)
    assert result.status == "submitted"
    assert result.metrics["coverage"]["coverage"] == pytest.approx(1.0)
    memo = (tmp_path / "run" / "output" / "memo.md").read_text()
    cited = set(re.findall(r"\[(D\d{5}) p\.\d+\]", memo))
    assert len(cited) >= 5
    scores = judge_run(tmp_path / "run")
    assert scores.n_criteria > 0 and (tmp_path / "run" / "scores.json").is_file()


def test_a_folder_that_is_not_a_room_is_named_as_such(tmp_path):
    done = dealroom("run", str(tmp_path / "nope"), "--out", str(tmp_path / "r"))
    assert done.returncode == 1 and "is not a data room" in done.stderr


TIMING = {"t", "latency_s", "seconds"}


def _untimed(run):
    """The events without their timings (``print(budget)`` shows seconds used, too)."""
    events = [{k: v for k, v in e.items() if k not in TIMING} for e in events_of(run)]
    return re.sub(r"seconds_used=[\d.]+", "", json.dumps(events))


def test_the_same_run_twice_gives_the_same_records(tmp_path, sub_server):
    from dealroom.room import generate_room

    room = tmp_path / "room"
    generate_room(room, docs=30, seed=3, tokens=90_000, workers=1, secret="same")
    runs = [tmp_path / "a", tmp_path / "b"]
    for run in runs:  # a token budget that runs out mid-batch: admission must not vary
        run_agent(room, run, root="scripted", sub=f"mock@{sub_server.base_url}",
                  max_turns=8, slice_tokens=1500, max_tokens=40_000, concurrency=4)
    a, b = (_untimed(run) for run in runs)
    waves = [e for e in events_of(runs[0]) if e["type"] == "wave"]
    assert any(0 < w["failed"] < w["calls"] for w in waves), "the budget ran out in a wave"
    assert a == b
    assert (runs[0] / "output/memo.md").read_bytes() == (runs[1] / "output/memo.md").read_bytes()


def test_a_waves_records_keep_its_call_order_whatever_answers_first(tmp_path):
    import asyncio
    import hashlib

    from dealroom.room import generate_room

    async def scrambled(request):
        """Each reply comes back after 0-80 ms, drawn from its prompt: out of call order."""
        digest = hashlib.sha256(request["messages"][-1]["content"].encode()).digest()
        await asyncio.sleep(digest[0] / 255 * 0.08)
        return reads_for_findings(request)

    room = tmp_path / "room"
    generate_room(room, docs=30, seed=3, tokens=90_000, workers=1, secret="order")
    with MockOpenAIServer(scrambled) as srv:
        run_agent(room, tmp_path / "run", root="scripted", sub=f"mock@{srv.base_url}",
                  max_turns=8, slice_tokens=1500, concurrency=16)
    calls = [e for e in events_of(tmp_path / "run") if e["type"] == "model_call"
             and e["role"] == "sub"]
    by_wave: dict[int, list[int]] = {}
    for e in calls:
        by_wave.setdefault(e["wave"], []).append(int(e["call_id"].rsplit("/s", 1)[1]))
    assert sum(len(v) > 8 for v in by_wave.values()) >= 1, "a wave of many calls"
    assert all(v == sorted(v) for v in by_wave.values())
    assert [e["seq"] for e in events_of(tmp_path / "run")] == sorted(
        e["seq"] for e in events_of(tmp_path / "run"))


def test_in_order_writes_each_record_once_every_earlier_one_is_written():
    from dealroom.harness._common._calls import InOrder

    written: list[int] = []
    order = InOrder()
    for k in (2, 0, 3, 1, 5):
        order.done(k, lambda k=k: written.append(k))
    assert written == [0, 1, 2, 3]
    order.flush()  # call 4 never answered: 5 is still written
    assert written == [0, 1, 2, 3, 5]


def test_a_cancelled_wave_writes_the_replies_it_holds_back(tmp_path):
    import asyncio

    from dealroom.harness import run_agent_async
    from dealroom.room import generate_room

    async def first_doc_hangs(request):
        if "=== D00001 " in request["messages"][-1]["content"]:
            await asyncio.sleep(60)  # hedged re-sends of it hang too
        return "NONE"

    generate_room(tmp_path / "room", docs=30, seed=3, tokens=90_000, workers=1, secret="held")
    with MockOpenAIServer(first_doc_hangs) as srv:
        async def go():
            task = asyncio.ensure_future(run_agent_async(
                tmp_path / "room", tmp_path / "run", root="scripted",
                sub=f"mock@{srv.base_url}", max_turns=8, slice_tokens=1500, concurrency=16))
            while srv.calls < 12:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # the other replies are in, held behind the first call's
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(go())
    subs = [e for e in events_of(tmp_path / "run") if e["type"] == "model_call"
            and e["role"] == "sub"]
    assert len(subs) >= 10
    hung = [e for e in subs if any(d["id"] == "D00001" for d in e["input"]["docs"])]
    assert hung, "the call still in flight is recorded too"
    assert all(e["output"] is None and e["provider"]["kind"] == "cancelled"
               and e["error"].startswith("cancelled in flight") for e in hung)
    assert all(e["error"] is None for e in subs if e not in hung)
