"""Judges read every deliverable format and grade what each criterion names (key or file)."""

from __future__ import annotations

import asyncio
import doctest
import json
import shutil
from pathlib import Path

import docx

from dealroom.harness._markdown import to_docx
from dealroom.judge import _scores, judge_memo, judge_run, llm_judge, read_deliverables
from dealroom.models import ScriptedModel


def judged_prompts(model: ScriptedModel) -> list[str]:
    return [call.messages[-1]["content"] for call in model.calls]


def verdicts_for_each_criterion() -> ScriptedModel:
    import re

    def reply(messages):
        ids = re.findall(r'"id": "(C-\d{3})"', messages[-1]["content"])
        return json.dumps({"results": [{"id": i, "verdict": "pass", "reasoning": "ok"}
                                       for i in ids]})

    return ScriptedModel([reply], cycle=True, name="judge", model="judge")


def test_a_criterion_naming_a_file_grades_that_file_s_text(task):
    named = {**task, "deliverables": {"memo": "memo.md", "issues": "issues.md"},
             "criteria": [{**task["criteria"][0], "deliverables": ["memo.md"]},
                          {**task["criteria"][1], "deliverables": ["issues"]},
                          {k: v for k, v in task["criteria"][2].items() if k != "deliverables"}]}
    model = verdicts_for_each_criterion()
    texts = {"memo": "THE MEMO TEXT", "issues": "THE ISSUES LIST"}
    scores = asyncio.run(llm_judge(model)(named, texts))
    assert scores.n_passed == 3
    first, second, third = judged_prompts(model)
    assert "# Deliverable `memo`\n<<<\nTHE MEMO TEXT\n>>>" in first
    assert "THE ISSUES LIST" not in first
    assert "THE ISSUES LIST" in second and "THE MEMO TEXT" not in second
    assert "THE MEMO TEXT" in third and "THE ISSUES LIST" in third  # names none: grades all


def test_the_reference_judge_grades_a_criterion_naming_its_file(room, task, gold, tmp_path):
    copy = Path(shutil.copytree(room, tmp_path / "room"))
    named = {**task, "criteria": [{**c, "deliverables": ["memo.md"]} for c in task["criteria"]]}
    (copy / "task.json").write_text(json.dumps(named))
    by_file = judge_memo(copy, gold)
    assert by_file.n_passed == judge_memo(room, gold).n_passed > 0


def test_a_word_deliverable_is_judged_on_its_text(room, task, gold, tmp_path):
    copy = Path(shutil.copytree(room, tmp_path / "room"))
    files = {"memo": "antitrust-risk-memo.docx"}
    (copy / "task.json").write_text(json.dumps({**task, "deliverables": files}))
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"room": str(copy), "deliverables": files}))
    (run / "output" / "antitrust-risk-memo.docx").write_bytes(to_docx(gold))
    texts, missing = read_deliverables(run, {**task, "deliverables": files})
    assert missing == [] and "[D0000" in texts["memo"] and "**" not in texts["memo"]
    model = verdicts_for_each_criterion()
    scores = judge_run(run, llm_judge(model))
    assert scores.n_passed == scores.n_criteria and scores.extra["deliverables_missing"] == []
    first_line = docx.Document(str(run / "output" / files["memo"])).paragraphs[1].text
    assert all(first_line in prompt for prompt in judged_prompts(model))
    by_reference = judge_run(run, "reference", out=tmp_path / "ref.json")
    as_markdown = judge_memo(copy, gold)  # headings and blocks survive the round trip
    assert by_reference.n_passed == as_markdown.n_passed > 0
    assert ({r.id: r.verdict for r in by_reference.criteria_results}
            == {r.id: r.verdict for r in as_markdown.criteria_results})


def test_a_memo_file_in_word_is_read_as_text(room, gold, tmp_path):
    path = tmp_path / "draft.docx"
    path.write_bytes(to_docx(gold))
    model = verdicts_for_each_criterion()
    assert judge_memo(room, path, llm_judge(model)).n_errors == 0
    assert all("Beta MSA termination right — Beta Retail may terminate" in prompt
               and "[D00002 p.2]" in prompt and "**" not in prompt
               for prompt in judged_prompts(model))
    results = {r.id: r.verdict for r in judge_memo(room, path).criteria_results}
    assert results["C-001"] == "pass"


def test_an_older_run_s_memo_md_is_read_where_it_was_written(room, task, gold, tmp_path):
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"room": str(room), "harness": "rlm"}))
    (run / "output" / "memo.md").write_text(gold)
    texts, missing = read_deliverables(run, task)
    assert texts == {"memo": gold} and missing == []


def test_the_module_examples_hold():
    assert doctest.testmod(_scores).failed == 0
