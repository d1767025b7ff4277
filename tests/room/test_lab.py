"""Harvey LAB compatibility on a LAB-format task written by hand."""

from __future__ import annotations

import json
from pathlib import Path

import docx
import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import ConfigError, InputError
from dealroom.room import (
    DocumentRecord,
    IngestSettings,
    RoomManifest,
    classify_criterion,
    export_lab,
    import_lab,
    load_manifest,
    load_task,
)
from dealroom.room._lab import check_lab_task

LAB_TASK = {
    "title": "Buy-side diligence: Falcon Logistics",
    "instructions": (
        "Our client is acquiring Falcon Logistics. Review the data room and send me a memo on "
        "the issues that matter for signing: change of control, termination rights, and any "
        "money at stake. Cite the documents."
    ),
    "work_type": "review",
    "deliverables": {"memo": "memo.md"},
    "criteria": [
        {
            "id": "C-001",
            "title": "Termination fee",
            "match_criteria": "PASS if the memo states that the termination fee is $88.2 million."
            " FAIL if the amount is missing or wrong.",
            "deliverables": ["memo"],
            "source": "expert",
        },
        {
            "id": "C-002",
            "title": "Consent source",
            "match_criteria": "PASS if the memo cites acme_msa.docx for the consent requirement.",
            "deliverables": ["memo"],
            "source": "oracle",
            "sources": ["2 Contracts/acme_msa.docx"],
        },
        {
            "id": "C-003",
            "title": "Next step",
            "match_criteria": "PASS if the memo recommends obtaining Acme's consent before "
            "closing. FAIL if it says no consent is needed.",
            "deliverables": ["memo"],
        },
    ],
    "tags": ["corporate-ma", "diligence"],
    "language": "en",
    "jurisdiction": "US-DE",
}


def lab_task_dir(root: Path) -> Path:
    """A LAB task folder as LAB ships one: task.json and documents/."""
    task = root / "falcon-diligence"
    docs = task / "documents"
    (docs / "1 Corporate").mkdir(parents=True)
    (docs / "2 Contracts").mkdir()
    (docs / "1 Corporate" / "charter.md").write_text("Falcon Logistics, Inc.\fArticle II")
    msa = docx.Document()
    msa.add_paragraph("Change of control requires Acme's prior written consent.")
    msa.save(docs / "2 Contracts" / "acme_msa.docx")
    (docs / "2 Contracts" / "exhibit scan.heic").write_bytes(b"\xff\xd8\xff\xe0 not text")
    (task / "task.json").write_text(json.dumps(LAB_TASK, indent=2), encoding="utf-8")
    return task


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


SETTINGS = IngestSettings(workers=1)


def test_import_keeps_every_lab_field_and_adds_types(tmp_path):
    report = import_lab(lab_task_dir(tmp_path), tmp_path / "room", SETTINGS)
    task = load_task(tmp_path / "room")
    for key in ("title", "instructions", "work_type", "deliverables", "tags", "language"):
        assert task[key] == LAB_TASK[key]
    types_ = [c["type"] for c in task["criteria"]]
    assert types_ == ["monetary", "citation", "recommendation"]
    assert [c["source"] for c in task["criteria"]] == ["expert", "oracle", "expert"]
    assert task["criteria"][1]["sources"] == ["2 Contracts/acme_msa.docx"]
    assert all("expect" not in c for c in task["criteria"])
    manifest = load_manifest(tmp_path / "room")
    assert manifest.name == "falcon-diligence"
    assert manifest.meta["lab"]["added_source"] == ["C-003"]
    assert [d.path for d in manifest.documents] == [
        "documents/1 Corporate/charter.md",
        "documents/2 Contracts/acme_msa.docx",
    ]
    assert manifest.documents[0].pages == 2
    (entry,) = report.entries
    assert (entry.path, entry.reason, entry.action) == (
        "2 Contracts/exhibit scan.heic",
        "unsupported_format",
        "copied",
    )


def test_round_trip_gives_back_the_same_task_and_documents(tmp_path):
    original = lab_task_dir(tmp_path)
    import_lab(original, tmp_path / "room", SETTINGS)
    written = export_lab(tmp_path / "room", tmp_path / "exported")
    exported = json.loads(written.read_text(encoding="utf-8"))
    assert exported == LAB_TASK
    assert list(exported) == list(LAB_TASK)  # field order kept too
    assert tree(tmp_path / "exported" / "documents") == tree(original / "documents")
    assert sorted(p.name for p in (tmp_path / "exported").iterdir()) == ["documents", "task.json"]


def test_export_drops_dealroom_extensions_and_the_answer_key(tmp_path):
    room = tmp_path / "generated"
    (room / "documents" / "01 Corporate").mkdir(parents=True)
    (room / "documents" / "01 Corporate" / "a.md").write_text("text")
    (room / "answer_key").mkdir()
    (room / "answer_key" / "gold_memo.md").write_text("the answers")
    (room / ".index").mkdir()
    record = DocumentRecord(
        id="D00001",
        path="documents/01 Corporate/a.md",
        title="a",
        category="01 Corporate",
        folder="01 Corporate",
        format="md",
        pages=1,
        tokens=1,
        sha256="0" * 64,
    )
    (room / "room.json").write_text(json.dumps(RoomManifest(name="g", documents=[record])
                                               .to_dict()))
    criterion = {
        "id": "C-001",
        "title": "Fee",
        "match_criteria": "PASS if $5 million.",
        "deliverables": ["memo"],
        "source": "oracle",
        "type": "monetary",
        "expect": {"amounts": [{"value": 5e6, "tolerance": 0.01}], "cite": ["D00001"]},
    }
    task = {
        **{k: LAB_TASK[k] for k in ("title", "instructions", "work_type", "deliverables", "tags")},
        "criteria": [criterion],
        "dealroom": {"x": 1},
    }
    (room / "task.json").write_text(json.dumps(task))
    export_lab(room, tmp_path / "lab")
    exported = json.loads((tmp_path / "lab" / "task.json").read_text())
    assert exported["criteria"] == [
        {k: criterion[k] for k in ("id", "title", "match_criteria", "deliverables", "source")}
    ]
    assert "dealroom" not in exported
    check_lab_task(exported)
    assert sorted(tree(tmp_path / "lab")) == ["documents/01 Corporate/a.md", "task.json"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("PASS if the report states that the escrow is $4.5 million.", "monetary"),
        ("PASS if the memo states the cap of USD 12,000,000.", "monetary"),
        ("PASS if the memo cites D00042 for the lease term.", "citation"),
        ("PASS if the memo recommends a special indemnity. FAIL if $1M.", "recommendation"),
        ("PASS if the memo rates the litigation as a high risk.", "severity"),
        ("PASS if the memo notes the licence expires on 2026-03-31.", "timeline"),
        ("PASS if the memo has a heading for each category.", "formatting"),
        ("PASS if the memo concludes that consent is required.", "conclusion"),
        ("PASS if the memo states the target has 412 employees.", "fact"),
    ],
)
def test_classify_criterion(text, kind):
    assert classify_criterion(text) == kind


def test_import_rejects_what_is_not_a_lab_task(tmp_path):
    with pytest.raises(ConfigError, match="task.json is missing"):
        import_lab(tmp_path, tmp_path / "room")
    task = lab_task_dir(tmp_path)
    bad = json.loads((task / "task.json").read_text())
    bad["criteria"].append(dict(bad["criteria"][0]))
    (task / "task.json").write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match="C-001 appears twice"):
        import_lab(task, tmp_path / "room")
    bad["criteria"] = [{"id": "C-001", "title": "x"}]
    (task / "task.json").write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match=r"missing required key 'criteria\[0\]\.match_criteria'"):
        import_lab(task, tmp_path / "room")
    bad["criteria"] = [{"id": "C-001", "title": "x", "match_criteria": " "}]
    (task / "task.json").write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match=r"criteria\[0\]\.match_criteria is empty"):
        import_lab(task, tmp_path / "room")
    (task / "task.json").write_text(json.dumps(LAB_TASK))
    for f in sorted((task / "documents").rglob("*"), reverse=True):
        f.unlink() if f.is_file() else f.rmdir()
    (task / "documents").rmdir()
    with pytest.raises(ConfigError, match="documents/ is missing"):
        import_lab(task, tmp_path / "room")


def test_export_refuses_to_overwrite_what_is_not_a_lab_task(tmp_path):
    import_lab(lab_task_dir(tmp_path), tmp_path / "room", SETTINGS)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a LAB task"):
        export_lab(tmp_path / "room", tmp_path / "busy", overwrite=True)
    export_lab(tmp_path / "room", tmp_path / "lab")
    with pytest.raises(ConfigError, match="already exists"):
        export_lab(tmp_path / "room", tmp_path / "lab")
    assert export_lab(tmp_path / "room", tmp_path / "lab", overwrite=True).is_file()


def test_cli_lab_import_export_and_ingest_with_a_rubric(tmp_path):
    runner = CliRunner()
    task = lab_task_dir(tmp_path)
    result = runner.invoke(
        app, ["lab", "import", str(task), str(tmp_path / "room"), "--workers", "1"]
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "2 documents" in output and "unsupported_format 1" in output
    result = runner.invoke(app, ["lab", "export", str(tmp_path / "room"), str(tmp_path / "lab")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "lab" / "task.json").read_text()) == LAB_TASK
    result = runner.invoke(
        app,
        [
            "ingest",
            str(task / "documents"),
            str(tmp_path / "r2"),
            "--task",
            str(task / "task.json"),
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert [c["type"] for c in load_task(tmp_path / "r2")["criteria"]][0] == "monetary"


PUBLIC_TASK = {
    "title": "Antitrust risk review: Falcon Logistics",
    "instructions": "Review the data room and write the antitrust risk memo for the partner.",
    "deliverables": {"antitrust-risk-memo.docx": "antitrust-risk-memo.docx"},
    "criteria": [
        {
            "id": "C-001",
            "title": "Filing",
            "match_criteria": "PASS if the memo states that an HSR filing is required.",
        },
        {
            "id": "C-002",
            "title": "Overlap",
            "match_criteria": "PASS if the memo names the overlapping routes.",
            "deliverables": ["antitrust-risk-memo.docx"],
        },
    ],
}
"""LAB's public task shape: deliverables named by file, criteria with id, title, match_criteria."""


def public_task_dir(root: Path, task: dict) -> Path:
    folder = lab_task_dir(root)
    (folder / "task.json").write_text(json.dumps(task, indent=2), encoding="utf-8")
    (folder / "documents" / "index.html").write_text("<p>Data room index</p>")  # top level
    (folder / "documents" / "mail.eml").write_bytes(
        b"From: banker@advisor.example\nSubject: Welcome\n\nThe data room is open.\n"
    )
    return folder


@pytest.mark.parametrize(
    "task",
    [
        PUBLIC_TASK,
        {
            **PUBLIC_TASK,
            "deliverables": {"memo": "memo.md"},
            "criteria": [{**PUBLIC_TASK["criteria"][1], "deliverables": ["memo.md"]},
                         {**PUBLIC_TASK["criteria"][0], "deliverables": ["memo"]}],
        },
    ],
    ids=["by-file-name", "by-key-or-file"],
)
def test_lab_import_of_the_public_task_shape_validates(tmp_path, task):
    from dealroom.room import validate_room

    report = import_lab(public_task_dir(tmp_path, task), tmp_path / "room", SETTINGS)
    assert "documents/mail.eml" in [d.path for d in report.manifest.documents]
    problems = validate_room(tmp_path / "room", deep=True)
    assert [str(p) for p in problems if p.level == "error"] == []
    assert any("copied by ingest" in p.message for p in problems)  # the .heic
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "room")])
    assert result.exit_code == 0, result.output


def test_import_refuses_what_validate_refuses_before_writing_anything(tmp_path):
    bad = {**PUBLIC_TASK, "criteria": [{**PUBLIC_TASK["criteria"][0],
                                        "deliverables": ["memo.md"]}]}
    with pytest.raises(ConfigError, match=r"1 problem\(s\) `dealroom validate` would reject") \
            as caught:
        import_lab(public_task_dir(tmp_path, bad), tmp_path / "room", SETTINGS)
    assert "deliverables must list names or file names from task deliverables " \
        "(antitrust-risk-memo.docx), or be left out" in str(caught.value)
    assert not (tmp_path / "room").exists()


def test_import_refuses_a_deliverable_named_by_a_description(tmp_path):
    bad = {**PUBLIC_TASK, "deliverables": {"memo": "A short memo to the deal team, in Word."},
           "criteria": [{**c, "id": f"{n}"} for n, c in enumerate(PUBLIC_TASK["criteria"])]}
    with pytest.raises(ConfigError) as caught:
        import_lab(public_task_dir(tmp_path, bad), tmp_path / "room", SETTINGS)
    message = str(caught.value)
    assert "deliverables['memo'] is 'A short memo to the deal team, in Word.', not a file " \
        "name: give one such as memo.docx" in message
    assert "id '0' is not like C-001" in message


def test_import_never_reads_through_documents_linked_out_of_the_task(tmp_path):
    task = lab_task_dir(tmp_path)
    outside = tmp_path / "elsewhere"
    (task / "documents").rename(outside)
    (outside / "secret.md").write_text("CANARY-lab")
    (task / "documents").symlink_to(outside)
    with pytest.raises(InputError, match="documents is a symbolic link .* an import never "
                                         "follows a link out of its source"):
        import_lab(task, tmp_path / "room", SETTINGS)
    assert not (tmp_path / "room").exists()
