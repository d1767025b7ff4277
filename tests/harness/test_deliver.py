"""Deliverables under the task's file names: Markdown as written, .txt plain, .docx in Word."""

import doctest
import json
import shutil

import docx
import pytest

from dealroom.errors import ConfigError
from dealroom.harness import Deliverables, check_deliverables, run_agent
from dealroom.harness import _markdown as markdown
from dealroom.harness._markdown import parse_blocks, to_docx, to_text
from dealroom.models import ScriptedModel
from dealroom.room import deliverable_text
from dealroom.runs import RunFolder

MEMO = """\
# Antitrust Risk Memo

## Executive Summary

An HSR filing is **required**; the *overlap* on `Chicago-Denver` is material.
A second line.

## Findings

- **Route overlap** (severity: high): both carriers run Chicago-Denver. [D00042 p.3]
  - Shares above 40% on two routes [D00007 pp.3-4]
- **Gun-jumping** (severity: medium): joint pricing before closing. [D00012]

  The integration plan must wait for clearance.

## Next Steps

3. File the HSR notification.
4. Negotiate a hell-or-high-water covenant.

Then, separately:

- a bullet between the lists

1. Brief the partner.

| Issue | Severity |
|---|---|
| Overlap | **High** |

> Counsel's note [D00001]
"""


def paragraphs(data: bytes, tmp_path):
    path = tmp_path / "memo.docx"
    path.write_bytes(data)
    return docx.Document(str(path)), path


def test_the_memo_renders_to_word_with_its_structure(tmp_path):
    document, path = paragraphs(to_docx(MEMO), tmp_path)
    styles = [(p.style.name, p.text) for p in document.paragraphs]
    assert styles[:3] == [("Heading 1", "Antitrust Risk Memo"),
                          ("Heading 2", "Executive Summary"),
                          ("Normal", "An HSR filing is required; the overlap on Chicago-Denver "
                                     "is material. A second line.")]
    assert ("List Bullet", "Route overlap (severity: high): both carriers run Chicago-Denver. "
            "[D00042 p.3]") in styles
    assert ("List Bullet 2", "Shares above 40% on two routes [D00007 pp.3-4]") in styles
    assert ("List Continue", "The integration plan must wait for clearance.") in styles
    assert ("Quote", "Counsel's note [D00001]") in styles
    summary = document.paragraphs[2].runs
    assert [(r.text, bool(r.bold), bool(r.italic)) for r in summary[:4]] == [
        ("An HSR filing is ", False, False), ("required", True, False),
        ("; the ", False, False), ("overlap", False, True)]
    assert summary[5].font.name == "Courier New"
    [table] = document.tables
    assert [[c.text for c in row.cells] for row in table.rows] == [["Issue", "Severity"],
                                                                   ["Overlap", "High"]]
    assert all(r.bold for r in table.rows[0].cells[0].paragraphs[0].runs)
    text = deliverable_text(path)
    for line in ("Route overlap (severity: high)", "[D00042 p.3]", "Overlap | High"):
        assert line in text


def test_each_numbered_list_counts_from_its_own_start(tmp_path):
    document, _ = paragraphs(to_docx(MEMO), tmp_path)
    numbered = [p for p in document.paragraphs if p.style.name == "List Number"]
    assert [p.text for p in numbered] == ["File the HSR notification.",
                                          "Negotiate a hell-or-high-water covenant.",
                                          "Brief the partner."]
    ids = [p._p.pPr.numPr.numId.val for p in numbered]
    assert ids[0] == ids[1] != ids[2]
    numbering = document.part.numbering_part.element
    starts = [numbering.num_having_numId(i).lvlOverride_lst[0].startOverride.val
              for i in (ids[0], ids[2])]
    assert starts == [3, 1]


def test_plain_text_keeps_list_markers_and_drops_emphasis():
    text = to_text(MEMO)
    assert text.startswith("Antitrust Risk Memo\n\nExecutive Summary\n\nAn HSR filing is "
                           "required; the overlap")
    assert ("- Route overlap (severity: high): both carriers run Chicago-Denver. [D00042 p.3]\n"
            "  - Shares above 40% on two routes [D00007 pp.3-4]\n- Gun-jumping") in text
    assert "3. File the HSR notification.\n4. Negotiate" in text
    assert "Issue | Severity\nOverlap | High" in text and "**" not in text
    assert to_text("") == ""


def test_text_a_model_may_write_never_breaks_the_document(tmp_path):
    hostile = "# T\x00itle\n\n- \x07bell [D00001]\n\n|a|\n|-|\n\n<b>raw</b> & <i>html</i>\n\n"
    document, _ = paragraphs(to_docx(hostile + "#" * 7 + " deep\n\n---\n"), tmp_path)
    assert [p.text for p in document.paragraphs][:3] == ["Title", "bell [D00001]",
                                                         "<b>raw</b> & <i>html</i>"]
    empty, _ = paragraphs(to_docx(""), tmp_path)
    assert empty.paragraphs == [] or all(not p.text for p in empty.paragraphs)
    assert [b.kind for b in parse_blocks("- [ ]\n\n```\nx\n```\n")] == ["item", "code"]


@pytest.mark.parametrize("text", [
    MEMO,
    MEMO.replace("## Next Steps", "```\n\n## not a heading\n```\n\n## Next Steps"),
    "1. one\n\n# H\n\n1. two\n2. three\n\n## I\n\n5. four\n",
    "<pre>\n\n# inside pre\n</pre>\n\n# after\n",
    "See [the MSA][msa].\n\n# H\n\n[msa]: https://example.com\n",
    "> quote\n\n# H\n- item\n# I\n~~~\n# fenced\n~~~\n",
])
def test_parsing_section_by_section_gives_what_parsing_the_whole_gives(text):
    whole = markdown._Walker().walk(markdown._parser().parse(text))
    assert parse_blocks(text) == whole
    assert parse_blocks(text) == whole  # from the cache


def test_the_module_examples_hold():
    assert doctest.testmod(markdown).failed == 0


@pytest.mark.parametrize("filename", ["memo.pdf", "memo.xlsx", "memo"])
def test_a_format_dealroom_cannot_write_is_refused_with_what_it_can(filename):
    with pytest.raises(ConfigError, match=rf"the task asks for the deliverable '{filename}', "
                       r"which dealroom cannot write \(it writes \.md, \.markdown, \.txt, "
                       r"\.docx; there is no PDF writer\): name it memo\.docx or \.md"):
        check_deliverables({"memo": filename})


@pytest.mark.parametrize("filename", ["../escape.md", "sub/memo.md", "..", ""])
def test_a_deliverable_is_a_plain_file_name(filename):
    with pytest.raises(ConfigError, match="a deliverable is a file name in the run's output/"):
        check_deliverables({"memo": filename})


def test_the_writer_writes_each_file_in_its_format_once_per_change(tmp_path, monkeypatch):
    files = {"memo": "memo.md", "report": "report.docx", "notes": "notes.txt"}
    folder = RunFolder.create(tmp_path / "run", {"deliverables": files})
    out = Deliverables(folder)
    out.write_memo(MEMO, {"notes": "Only **notes**."})
    assert (tmp_path / "run" / "output" / "memo.md").read_text() == MEMO
    assert (tmp_path / "run" / "output" / "notes.txt").read_text() == "Only notes.\n"
    assert "[D00042 p.3]" in deliverable_text(tmp_path / "run" / "output" / "report.docx")
    renders = []
    monkeypatch.setitem(out._writers, "docx", lambda md: renders.append(md) or to_docx(md))
    out.write_memo(MEMO, {"notes": "Only **notes**."})
    assert renders == []  # unchanged: nothing is rendered again
    assert out.write("output/report.docx", "# New\n") and renders == ["# New\n"]
    assert out.text("report") == "# New\n"
    with pytest.raises(ConfigError, match=r"'x.md' is not a deliverable of this task: its "
                       r"deliverables are output/memo.md, output/report.docx, output/notes.txt"):
        out.write("x.md", "")
    assert sorted(p.name for p in (tmp_path / "run" / "output").iterdir()) == [
        "memo.md", "notes.txt", "report.docx"]  # no temp file left


def test_finish_leaves_every_deliverable_even_when_none_was_written(tmp_path):
    files = {"antitrust-risk-memo.docx": "antitrust-risk-memo.docx", "memo": "memo.md"}
    folder = RunFolder.create(tmp_path / "run", {"deliverables": files})
    Deliverables(folder).finish()
    assert folder.deliverable("memo").read_text() == ""
    assert deliverable_text(folder.deliverable("antitrust-risk-memo.docx")) == ""


def test_the_run_folder_knows_deliverables_by_name(tmp_path):
    old = RunFolder.create(tmp_path / "v1", {"harness": "rlm"})
    assert old.deliverables == {"memo": "memo.md"}
    assert old.memo_path == old.deliverable("memo") == tmp_path / "v1" / "output" / "memo.md"
    new = RunFolder.create(tmp_path / "new", {"deliverables": {"issues": "issues.docx",
                                                              "memo": "memo.txt"}})
    assert new.memo_path.name == "memo.txt" and new.deliverable("issues").name == "issues.docx"
    assert new.deliverable("issues.docx") == new.deliverable("issues")


def room_with(small_room, tmp_path, deliverables):
    room = shutil.copytree(small_room, tmp_path / "room")
    task = json.loads((room / "task.json").read_text())
    (room / "task.json").write_text(json.dumps({**task, "deliverables": deliverables}))
    return room


def test_a_pdf_deliverable_stops_the_run_before_any_model_or_folder(small_room, tmp_path):
    room = room_with(small_room, tmp_path, {"memo": "memo.pdf"})
    root = ScriptedModel(["never asked"])
    with pytest.raises(ConfigError, match="'memo.pdf', which dealroom cannot write"):
        run_agent(room, tmp_path / "run", root=root, sub="no-such-model@http://127.0.0.1:9/v1")
    assert not (tmp_path / "run").exists() and root.calls == []


def test_the_rlm_memo_is_written_to_each_deliverable_or_its_own_text(small_room, tmp_path):
    room = room_with(small_room, tmp_path, {"antitrust-risk-memo.docx": "antitrust-risk-memo.docx",
                                            "issues": "issues.md"})
    root = ScriptedModel([
        "```python\nmemo.section('Findings', '- Acme may terminate [D00002 p.2]')\n"
        "print(memo)\n```",
        "```python\nmemo.write('# Issues\\n\\n1. Consent [D00002 p.2]\\n', name='issues.md')\n"
        "try:\n    memo.write('x', name='other.md')\nexcept ValueError as e:\n    print(e)\n```",
        "```python\nsubmit()\n```",
    ])
    result = run_agent(room, tmp_path / "run", root=root, sub=ScriptedModel(["x"]), max_turns=5)
    assert result.status == "submitted"
    first = root.calls[0].messages[1]["content"]
    assert ("Deliverables: output/antitrust-risk-memo.docx (Word, rendered from the Markdown), "
            "output/issues.md (Markdown).") in first
    assert "written to antitrust-risk-memo.docx, issues.md>" in \
        root.calls[1].messages[-1]["content"]
    assert ("no deliverable 'other.md': the task's deliverables are antitrust-risk-memo.docx, "
            "issues.md") in root.calls[2].messages[-1]["content"]
    word = docx.Document(str(result.deliverables["antitrust-risk-memo.docx"]))
    assert [p.text for p in word.paragraphs] == ["Due Diligence Memo", "Findings",
                                                 "Acme may terminate [D00002 p.2]"]
    assert result.memo_path == result.deliverables["antitrust-risk-memo.docx"]
    assert result.deliverables["issues"].read_text() == "# Issues\n\n1. Consent [D00002 p.2]\n"
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["deliverables"] == {"antitrust-risk-memo.docx": "antitrust-risk-memo.docx",
                                      "issues": "issues.md"}
    assert sorted(p.name for p in (tmp_path / "run" / "output").iterdir()) == [
        "antitrust-risk-memo.docx", "issues.md"]


def test_an_interrupted_run_resumes_into_the_files_it_started_with(small_room, tmp_path):
    from dealroom.harness import resume_run

    room = room_with(small_room, tmp_path, {"report": "report.docx"})
    cells = ["```python\nmemo.section('Findings', '- Acme may terminate [D00002 p.2]')\n```",
             "```python\nmemo.section('Next Steps', '1. Obtain consent [D00002]')\n```",
             "```python\nsubmit()\n```"]
    reference = tmp_path / "reference"
    run_agent(room, reference, root=ScriptedModel(cells), sub=ScriptedModel(["x"]))
    task = json.loads((room / "task.json").read_text())  # the task changes after the start
    (room / "task.json").write_text(json.dumps({**task, "deliverables": {"memo": "memo.md"}}))
    cut = shutil.copytree(reference, tmp_path / "cut")
    lines = (cut / "trajectory.jsonl").read_text().splitlines()
    (cut / "trajectory.jsonl").write_text("\n".join(lines[:4]) + "\n")
    (cut / "output" / "report.docx").unlink()
    result = resume_run(cut, root=ScriptedModel(cells), sub=ScriptedModel(["x"]))
    assert result.status == "submitted" and result.memo_path.name == "report.docx"
    assert sorted(p.name for p in (cut / "output").iterdir()) == ["report.docx"]
    assert deliverable_text(cut / "output" / "report.docx") == \
        deliverable_text(reference / "output" / "report.docx")
    assert "Obtain consent [D00002]" in deliverable_text(cut / "output" / "report.docx")
