"""A task in exactly Harvey LAB's public shape, end to end through the CLI: lab import →
validate → run (both harnesses, scripted roots) → a Word deliverable → an LLM judge."""

from __future__ import annotations

import json
import re
from pathlib import Path

import docx
import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.room import deliverable_text
from dealroom.testing import MockOpenAIServer

MEMO = "antitrust-risk-memo.docx"
TASK = {
    "title": "Antitrust risk review: Falcon Logistics and Hawk Freight",
    "instructions": "Review the data room and write the antitrust risk memo for the partner: "
                    "filings, overlaps, gun-jumping risk, with citations.",
    "deliverables": {MEMO: MEMO},
    "criteria": [
        {"id": "C-001", "title": "Filing",
         "match_criteria": "PASS if the memo states that an HSR filing is required."},
        {"id": "C-002", "title": "Overlap",
         "match_criteria": "PASS if the memo names the overlapping Chicago-Denver route.",
         "deliverables": [MEMO]},
    ],
}
FINDING = ("ISSUE: Falcon and Hawk both serve the Chicago-Denver lane; an HSR filing is "
           "required | SEVERITY: high | AMOUNT: $410 million | PAGE: 1")


def lab_task(root: Path) -> Path:
    task = root / "antitrust-task"
    (task / "documents" / "Contracts").mkdir(parents=True)
    merger = docx.Document()
    merger.add_paragraph("Agreement and Plan of Merger between Falcon Logistics and Hawk Freight.")
    merger.add_paragraph("Either party may terminate if HSR clearance for the Chicago-Denver "
                         "lane, which both operate, is refused. Purchase price $410 million.")
    merger.save(task / "documents" / "Contracts" / "merger agreement.docx")
    (task / "documents" / "board minutes.md").write_text(
        "Board minutes. Integration planning may not begin before clearance.")
    (task / "task.json").write_text(json.dumps(TASK, indent=2))
    return task


def reply(request: dict) -> str:
    """The sub-agent (an excerpt) or the judge (a rubric): one mock endpoint for both."""
    prompt = request["messages"][-1]["content"]
    if "# Criteria" in prompt:
        ids = re.findall(r'"id": "(C-\d{3})"', prompt)
        verdict = "pass" if "Chicago-Denver" in prompt else "fail"
        return json.dumps({"results": [{"id": i, "verdict": verdict, "reasoning": "seen"}
                                       for i in ids]})
    return FINDING if "Chicago-Denver" in prompt else "NONE"


@pytest.fixture(scope="module")
def server():
    with MockOpenAIServer(reply) as srv:
        yield srv


def invoke(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("harness", ["rlm", "toolloop"])
def test_a_public_lab_task_runs_to_a_word_memo_that_the_judge_reads(tmp_path, server, harness):
    room = tmp_path / "room"
    invoke("lab", "import", lab_task(tmp_path), room)
    invoke("validate", room)
    run = tmp_path / "run"
    invoke("run", room, "--out", run, "--harness", harness, "--root", "scripted",
           *(["--sub", f"mock@{server.base_url}"] if harness == "rlm" else []))
    assert sorted(p.name for p in (run / "output").iterdir()) == [MEMO]
    word = docx.Document(str(run / "output" / MEMO))
    styles = [p.style.name for p in word.paragraphs]
    assert styles[0] == "Heading 1" and "Heading 2" in styles and "List Bullet" in styles
    cited = [p.text for p in word.paragraphs if re.search(r"\[D0000\d p\.\d\]", p.text)]
    assert any("Chicago-Denver" in text for text in cited)
    first = len(server.requests)
    invoke("judge", run, "--judge", f"mock@{server.base_url}")
    judged = [r["messages"][-1]["content"] for r in server.requests[first:]]
    assert len(judged) == 2  # one call per criterion
    text = deliverable_text(run / "output" / MEMO)
    assert all(f"# Deliverable `{MEMO}`\n<<<\n{text}\n>>>" in prompt for prompt in judged)
    scores = json.loads((run / "scores.json").read_text())
    assert (scores["n_passed"], scores["deliverables_missing"]) == (2, [])
