"""The user's own functions in the REPL: sandboxed tools (``--tools``) and host tools
(``--host-tools``), their records, and a resumed run that calls no host tool twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dealroom.errors import ConfigError
from dealroom.harness import resume_run, run_agent
from dealroom.testing import MockOpenAIServer, ScriptedModel

SANDBOXED = '''
import socket


def clause_count(text: str, word: str = "shall") -> int:
    """Count a word in a clause.

    More lines the root is not shown.
    """
    return text.lower().split().count(word)


def reach(port: int) -> str:
    """Try to open a connection to 127.0.0.1:port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return "connected"
    except OSError as exc:
        return f"refused: {type(exc).__name__}"


def scribble(path: str) -> str:
    """Try to write a file."""
    try:
        with open(path, "w") as fh:
            fh.write("changed")
        return "written"
    except OSError as exc:
        return f"refused: {type(exc).__name__}"


def _helper() -> None:
    """Not a tool."""
'''

HOST = '''
import os
import time


def where() -> dict:
    """The process the tool runs in."""
    return {"pid": os.getpid()}


def stamp(label: str) -> str:
    """Append a label to the ledger."""
    with open(os.environ["DEALROOM_TEST_LEDGER"], "a") as fh:
        fh.write(label + "\\n")
    return label.upper()


def broken() -> None:
    """Always fails."""
    raise ValueError("licence server down")


def slow(seconds: float) -> str:
    """Sleeps."""
    time.sleep(seconds)
    return "late"


def opaque() -> object:
    """Returns no JSON."""
    return object()
'''


@pytest.fixture
def tool_files(tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:
    sandboxed = tmp_path / "clauses.py"
    sandboxed.write_text(SANDBOXED)
    host = tmp_path / "licensed.py"
    host.write_text(HOST)
    ledger = tmp_path / "ledger.txt"
    monkeypatch.setenv("DEALROOM_TEST_LEDGER", str(ledger))
    return sandboxed, host, ledger


def cells(*code: str) -> ScriptedModel:
    return ScriptedModel([f"```python\n{textwrap.dedent(c).strip()}\n```" for c in code])


def events(run: Path, kind: str) -> list[dict]:
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def test_sandboxed_tools_are_repl_names_listed_in_the_prompt(small_room, tmp_path, tool_files):
    sandboxed, _, _ = tool_files
    root = cells("print(clause_count('Buyer shall pay. Seller shall deliver.'))",
                 "print('_helper' in dir())", "submit()")
    result = run_agent(small_room, tmp_path / "run", root=root, sub=ScriptedModel(["x"]),
                       tools=[str(sandboxed)], max_turns=5)
    assert result.status == "submitted"
    system = root.calls[0].messages[0]["content"]
    assert "clause_count(text: str, word: str='shall') -> int  Count a word in a clause." \
        in system
    assert "More lines" not in system and "_helper" not in system
    assert "Output:\n2" in root.calls[1].messages[-1]["content"]
    assert "Output:\nFalse" in root.calls[2].messages[-1]["content"]
    assert (tmp_path / "run" / "tools" / "sandbox" / "clauses.py").read_text() == SANDBOXED


def test_a_sandboxed_tool_reaches_no_network_and_cannot_write_the_room(
        small_room, tmp_path, tool_files):
    sandboxed, _, _ = tool_files
    before = (small_room / "room.json").read_bytes()
    with MockOpenAIServer("ok") as listening:  # a loopback port that does accept
        port = int(listening.base_url.rsplit(":", 1)[1].split("/")[0])
        root = cells(f"print(reach({port}))",
                     "print(scribble(str(room.path) + '/room.json'))", "submit()")
        run_agent(small_room, tmp_path / "run", root=root, sub=ScriptedModel(["x"]),
                  tools=[str(sandboxed)], max_turns=5)
    assert "refused:" in root.calls[1].messages[-1]["content"]
    assert "refused:" in root.calls[2].messages[-1]["content"]
    assert (small_room / "room.json").read_bytes() == before


def test_host_tools_run_on_the_host_and_fail_in_the_repl_alone(small_room, tmp_path, tool_files):
    _, host, ledger = tool_files
    root = cells(
        "print(where()['pid'])",
        """
        try:
            broken()
        except ToolError as e:
            print('ERR', e)
        print(stamp('a'))
        """,
        """
        for call in (lambda: slow(5), opaque, lambda: stamp('b')):
            try:
                print(call())
            except ToolError as e:
                print('ERR', e)
        """,
        "submit()")
    result = run_agent(small_room, tmp_path / "run", root=root, sub=ScriptedModel(["x"]),
                       host_tools=[str(host)], host_tool_timeout=0.5, max_host_tool_calls=5,
                       max_turns=6)
    assert result.status == "submitted"
    assert f"Output:\n{os.getpid()}" in root.calls[1].messages[-1]["content"]
    second = root.calls[2].messages[-1]["content"]
    assert "ERR broken raised ValueError: licence server down" in second and "\nA" in second
    third = root.calls[3].messages[-1]["content"]
    assert "ERR slow took longer than 0.5 s (--host-tool-timeout)" in third
    assert "ERR opaque returned a value that is not JSON" in third
    assert "ERR host tool calls are capped at 5 per run" in third
    assert ledger.read_text() == "a\n"
    calls = events(tmp_path / "run", "host_tool")
    assert [(c["name"], c["call_id"], c["error"] is None) for c in calls] == [
        ("where", "root/t1/h0", True), ("broken", "root/t2/h0", False),
        ("stamp", "root/t2/h1", True), ("slow", "root/t3/h0", False),
        ("opaque", "root/t3/h1", False), ("stamp", "root/t3/h2", False)]
    assert calls[2]["arguments"] == {"args": ["a"], "kwargs": {}}
    assert calls[2]["result"] == "A" and calls[2]["result_chars"] == 3
    assert "Run outside the sandbox" in root.calls[0].messages[0]["content"]


@pytest.mark.parametrize(("source", "message"), [
    ("def f(:\n", "syntax error line 1"),
    ("def _only():\n    pass\n", "no public function"),
    ("def llm(x):\n    return x\n", "'llm' is a REPL name"),
])
def test_a_bad_tools_file_stops_the_run_before_its_folder(small_room, tmp_path, source, message):
    bad = tmp_path / "bad.py"
    bad.write_text(source)
    with pytest.raises(ConfigError, match=message):
        run_agent(small_room, tmp_path / "run", root=ScriptedModel(["x"]),
                  sub=ScriptedModel(["x"]), tools=[str(bad)])
    assert not (tmp_path / "run").exists()
    with pytest.raises(ConfigError, match="not a .py file"):
        run_agent(small_room, tmp_path / "run", root=ScriptedModel(["x"]),
                  sub=ScriptedModel(["x"]), host_tools=[str(tmp_path / "missing.py")])


def test_a_resumed_run_answers_host_tool_calls_from_the_records(small_room, tmp_path,
                                                               tool_files):
    _, host, ledger = tool_files
    code = ["print(stamp('a'))", "print(stamp('b'))", "submit()"]
    reference = tmp_path / "reference"
    run_agent(small_room, reference, root=cells(*code), sub=ScriptedModel(["x"]),
              host_tools=[str(host)])
    assert ledger.read_text() == "a\nb\n"
    lines = (reference / "trajectory.jsonl").read_text().splitlines()
    second = next(i for i, e in enumerate(map(json.loads, lines))
                  if e["type"] == "host_tool" and e["call_id"] == "root/t2/h0")
    (reference / "trajectory.jsonl").write_text("\n".join(lines[:second + 1]) + "\n")
    root = cells("submit()")  # turns 1 and 2 are replayed from the records
    result = resume_run(reference, root=root, sub=ScriptedModel(["x"]))
    assert result.status == "submitted" and len(root.calls) == 1
    assert ledger.read_text() == "a\nb\n"  # cell 2 ran again, its call did not
    assert [e["call_id"] for e in events(reference, "host_tool")] == ["root/t1/h0", "root/t2/h0"]


ROOT_CELLS = ["```python\nprint(stamp('a'))\n```",
              "```python\nimport time\nprint(stamp('b'))\ntime.sleep(4)\n```",
              "```python\nsubmit()\n```"]


def root_reply(body: dict) -> str:
    turns = sum(m["role"] == "assistant" for m in body["messages"])
    return ROOT_CELLS[min(turns, len(ROOT_CELLS) - 1)]


def test_a_sigkilled_run_with_host_tool_calls_resumes_without_calling_them_twice(
        small_room, tmp_path, tool_files):
    _, host, ledger = tool_files
    run = tmp_path / "run"
    with MockOpenAIServer(root_reply) as server:
        model = f"mock@{server.base_url}"
        cmd = [sys.executable, "-m", "dealroom", "run", str(small_room), "--out", str(run),
               "--root", model, "--sub", model, "--host-tools", str(host)]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        end = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < end and not any(
                e["call_id"] == "root/t2/h0" for e in _host_calls(run)):
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before its second host tool call"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert ledger.read_text() == "a\nb\n"
        done = subprocess.run([sys.executable, "-m", "dealroom", "resume", str(run)],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert ledger.read_text() == "a\nb\n"
    assert [e["call_id"] for e in _host_calls(run)] == ["root/t1/h0", "root/t2/h0"]


def _host_calls(run: Path) -> list[dict]:
    path = run / "trajectory.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:  # a line being written
            continue
        if event["type"] == "host_tool":
            out.append(event)
    return out
