"""The tool-loop baseline on a real (ingested) room."""

import json
import re

import pytest

from dealroom.harness import run_agent
from dealroom.harness.toolloop import ToolBox, parse_tool_calls
from dealroom.models import ScriptedModel
from dealroom.room import Room


def test_tools_say_when_a_list_is_cut_and_grep_sees_every_format(small_room, monkeypatch):
    import dealroom.harness.toolloop._tools as tools

    room = Room.open(small_room)
    box = ToolBox(room)
    monkeypatch.setattr(tools, "MAX_LINES", 2)
    listing = box.call("list", {})
    assert "[2 of 4 shown" in listing
    hits = box.call("grep", {"pattern": "change of control"})
    assert "p.2" in hits and "Acme" in hits
    page = box.call("read", {"doc": hits.split()[0], "page": 2})
    assert "Section 14.2" in page and "page 2 of 3" in page
    assert box.call("read", {"doc": "D99999"}).startswith("error:")
    assert box.call("frobnicate", {}).startswith("error: unknown tool")


def test_malformed_tool_blocks_become_errors_not_crashes():
    calls = parse_tool_calls("```tool\n{not json}\n```\n```tool\n{\"name\": \"list\"}\n```")
    assert isinstance(calls[0], str) and calls[0].startswith("error: malformed")
    assert calls[1] == ("list", {})


@pytest.mark.parametrize("depth", [100, 5000])
def test_tool_arguments_nested_too_deep_are_an_error_not_a_record_no_reader_takes(depth):
    """Arguments are recorded as given: deeper than the records' limit, the run could not be
    read back; far deeper, the parser itself gave up with a RecursionError."""
    deep = "[" * depth + "]" * depth
    calls = parse_tool_calls('```tool\n{"name": "list", "arguments": {"x": ' + deep + "}}\n```")
    assert isinstance(calls[0], str) and calls[0].startswith("error: malformed tool block")
    fits = "[" * 98 + "]" * 98  # 100 deep with the block's object and the arguments'
    block = '```tool\n{"name": "l", "arguments": {"x": ' + fits + "}}\n```"
    assert parse_tool_calls(block) == [("l", {"x": json.loads(fits)})]


def test_scripted_toolloop_run_writes_the_same_records_as_the_rlm_harness(small_room, tmp_path):
    out = tmp_path / "run"
    result = run_agent(small_room, out, harness="toolloop", root="scripted", max_turns=20)
    assert result.status == "finished"
    memo = (out / "output" / "memo.md").read_text()
    assert "[D0000" in memo and "Acme" in memo
    config = json.loads((out / "config.json").read_text())
    assert config["harness"] == "toolloop" and config["root"] == "scripted"
    metrics = json.loads((out / "metrics.json").read_text())
    assert 0 < metrics["coverage"]["coverage"] <= 1
    assert metrics["behaviour"]["sub_calls"] == 0
    types = [json.loads(x)["type"] for x in (out / "trajectory.jsonl").read_text().splitlines()]
    assert types[0] == "run_start" and types[-1] == "run_end" and "tool" in types


def test_the_loop_stops_at_the_turn_cap(small_room, tmp_path):
    model = ScriptedModel(['```tool\n{"name": "list", "arguments": {}}\n```'], cycle=True)
    result = run_agent(small_room, tmp_path / "r", harness="toolloop", root=model, max_turns=3)
    assert (result.status, result.turns) == ("max_turns", 3)
    assert len(model.calls) == 3
    tools = [json.loads(x) for x in (tmp_path / "r" / "trajectory.jsonl").read_text().splitlines()]
    assert [e["turn"] for e in tools if e["type"] == "tool"] == [1, 2, 3]


def test_an_interrupted_toolloop_run_resumes_without_repeating_a_call(small_room, tmp_path):
    from dealroom.harness import resume_run
    from dealroom.harness.toolloop._scripted import scripted_toolloop

    reference = tmp_path / "reference"
    run_agent(small_room, reference, harness="toolloop", root="scripted", max_turns=20)
    lines = (reference / "trajectory.jsonl").read_text().splitlines()
    events = [json.loads(x) for x in lines]
    expected = (reference / "output" / "memo.md").read_text()
    calls = [e["call_id"] for e in events if e["type"] == "model_call"]
    first_tool_of_turn_3 = next(i for i, e in enumerate(events)
                                if e["type"] == "tool" and e["turn"] == 3)
    for cut in (2, first_tool_of_turn_3, first_tool_of_turn_3 + 1, len(lines) - 1):
        run = tmp_path / f"cut-{cut}"
        run.mkdir()
        (run / "config.json").write_text((reference / "config.json").read_text())
        (run / "trajectory.jsonl").write_text("\n".join(lines[:cut]) + "\n")
        model = scripted_toolloop()
        result = resume_run(run, root=model)
        assert result.status == "finished"
        assert (run / "output" / "memo.md").read_text() == expected
        resumed = [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]
        assert [e["call_id"] for e in resumed if e["type"] == "model_call"] == calls
        assert len(model.calls) == sum(e["type"] == "model_call" for e in events[cut:])
        strip = [{k: v for k, v in e.items() if k not in ("seq", "t")} for e in resumed
                 if e["type"] != "resumed"]
        assert strip == [{k: v for k, v in e.items() if k not in ("seq", "t")} for e in events]


def test_the_workspace_is_lab_s_documents_read_only_and_output_for_deliverables(small_room):
    box = ToolBox(Room.open(small_room), {"antitrust-risk-memo.docx": "antitrust-risk-memo.docx",
                                          "memo": "memo.md"})
    top = box.call("list", {})
    assert "documents/03 Material Contracts/3.2 Customer Agreements/  (1 documents" in top
    assert top.endswith("output/  (the deliverables)\noutput/antitrust-risk-memo.docx  (not "
                        "written yet)\noutput/memo.md  (not written yet)")
    assert "Acme MSA" in box.call("list", {"folder": "documents/03 Material Contracts"})
    assert box.call("list", {"folder": "documents"}) == top
    assert "p.2" in box.call("grep", {"pattern": "(?i)change of control",
                                      "folder": "documents/03 Material Contracts"})
    assert box.call("write", {"path": "documents/x.md", "text": "x"}) == (
        "error: documents/ is read-only: write the deliverables under output/")
    assert box.call("write", {"path": "output/notes.md", "text": "x"}).startswith(
        "error: 'output/notes.md' is not a deliverable of this task; write "
        "output/antitrust-risk-memo.docx, output/memo.md")
    assert box.call("write", {"path": "output/antitrust-risk-memo.docx", "text": "# A"}) == \
        "output/antitrust-risk-memo.docx now has 3 characters"
    box.call("write", {"path": "antitrust-risk-memo.docx", "text": "more", "append": True})
    assert box.written == "antitrust-risk-memo.docx" and box.opened is None
    assert box.call("read", {"doc": "output/antitrust-risk-memo.docx"}) == (
        "output/antitrust-risk-memo.docx (as written so far)\n# A\nmore")
    box.call("write", {"text": "# Memo"})  # no path: the main deliverable
    assert box.outputs == {"antitrust-risk-memo.docx": "# A\nmore", "memo": "# Memo"}
    box.call("read", {"doc": "documents/05 Litigation/5.1 Pending/Demand letter.md"})
    assert box.opened == "D00003" and box.written is None


def test_a_toolloop_run_writes_word_deliverables_and_reports_docs_read(small_room, tmp_path):
    import shutil

    import docx
    from typer.testing import CliRunner

    from dealroom.cli import app

    room = shutil.copytree(small_room, tmp_path / "room")
    task = json.loads((room / "task.json").read_text())
    deliverables = {"antitrust-risk-memo.docx": "antitrust-risk-memo.docx"}
    (room / "task.json").write_text(json.dumps({**task, "deliverables": deliverables}))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(room), "--out", str(out), "--harness",
                                      "toolloop", "--root", "scripted"])
    assert result.exit_code == 0, result.output
    word = docx.Document(str(out / "output" / "antitrust-risk-memo.docx"))
    assert [p.style.name for p in word.paragraphs][:2] == ["Heading 1", "Heading 2"]
    assert any("[D0000" in p.text and p.style.name == "List Bullet" for p in word.paragraphs)
    assert sorted(p.name for p in (out / "output").iterdir()) == ["antitrust-risk-memo.docx"]
    events = [json.loads(x) for x in (out / "trajectory.jsonl").read_text().splitlines()]
    read = {e["doc"] for e in events if e["type"] == "tool" and e["name"] == "read"}
    behaviour = json.loads((out / "metrics.json").read_text())["behaviour"]
    assert (behaviour["docs_read"], behaviour["room_docs"]) == (len(read), 4) and read
    assert re.search(rf"docs read +{len(read)}/4 *\n", result.output), result.output
    system = next(e for e in events if e["type"] == "model_call")["input"]["messages"][0]
    assert "output/ (your deliverables: output/antitrust-risk-memo.docx)" in system["content"]
