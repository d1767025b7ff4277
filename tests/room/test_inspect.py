"""``inspect_room`` and ``dealroom inspect`` / ``dealroom generate`` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import dealroom
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import RoomError
from dealroom.room import inspect_room, load_manifest

KEYS = {"docs", "folders", "categories", "tokens", "criteria", "criteria_by_type"}


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("insp") / "room"
    result = CliRunner().invoke(app, ["generate", str(out), "--docs", "40", "--seed", "5",
                                      "--profile", "bank", "--tokens", "80k", "--workers", "1",
                                      "--secret", "tests", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["docs"] == 40  # --json prints one object, nothing else
    return out


def test_inspect_counts_match_the_files(room: Path) -> None:
    info = inspect_room(room)
    totals = load_manifest(room).totals()
    assert set(info) >= KEYS
    assert {k: info[k] for k in totals} == totals
    task = json.loads((room / "task.json").read_text())
    assert info["criteria"] == len(task["criteria"])
    assert sum(info["criteria_by_type"].values()) == info["criteria"]
    assert list(info["criteria_by_type"]) == [t for t in (
        "fact", "conclusion", "citation", "severity", "recommendation", "timeline", "monetary",
        "formatting") if t in info["criteria_by_type"]]
    findings = json.loads((room / "answer_key/findings.json").read_text())["findings"]
    assert info["findings"] == len(findings) and info["negative_criteria"] >= 1
    assert sum(info["formats"].values()) == info["docs"] == sum(info["docs_by_category"].values())
    assert info["generation"] == {"generator": "dealroom-generate/2", "seed": 5,
                                  "profile": "bank", "docs": 40, "tokens": 80_000}


def test_inspect_without_answer_key_or_task(room: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "room.json").write_text((room / "room.json").read_text())
    info = inspect_room(bare)
    assert info["findings"] is None and info["criteria"] == 0 and info["docs"] == 40
    assert info["generation"] is None


def test_inspect_refuses_what_is_not_a_room(tmp_path: Path) -> None:
    with pytest.raises(RoomError, match="not a data room"):
        inspect_room(tmp_path)


def test_cli_inspect_json_is_one_object(room: Path) -> None:
    result = CliRunner().invoke(app, ["inspect", str(room), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output) == json.loads(json.dumps(inspect_room(room)))
    text = CliRunner().invoke(app, ["inspect", str(room)])
    assert text.exit_code == 0 and "criteria" in text.output and "folders" in text.output


def test_cli_generate_errors_are_one_line(room: Path, tmp_path: Path) -> None:
    # a bad value is an InputError: exit 2, as for a usage error
    for args, message, code in (
            ([str(room)], "already holds files", 1),
            ([str(tmp_path / "x"), "--docs", "0"], "docs must be an integer in [1, 20000], got 0",
             2),
            ([str(tmp_path / "y"), "--profile", "bakery"], "profile must be bank, software or "
             "manufacturer, got 'bakery'", 2),
            ([str(tmp_path / "z"), "--tokens", "lots"], "cannot read 'lots'", 2)):
        done = dealroom("generate", *args)
        assert done.returncode == code and message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert not any((tmp_path / n).exists() for n in "xyz")


def test_inspect_prints_the_outline_its_help_promises(room: Path, monkeypatch) -> None:
    """Each category and folder, with its documents, tokens and size, not only counts."""
    monkeypatch.setenv("COLUMNS", "80")
    manifest = load_manifest(room)
    outline = inspect_room(room)["outline"]
    assert [c["category"] for c in outline] == sorted({d.category for d in manifest.documents})
    assert sum(c["docs"] for c in outline) == 40
    assert sum(c["tokens"] for c in outline) == manifest.totals()["tokens"]
    for category in outline:
        assert sum(f["docs"] for f in category["folders"]) == category["docs"]
    shown = dealroom("inspect", room)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    for doc in manifest.documents:
        folder = doc.folder[len(doc.category):].lstrip("/")
        docs = sum(d.folder == doc.folder for d in manifest.documents)
        tokens = sum(d.tokens for d in manifest.documents if d.folder == doc.folder)
        assert any(line.split()[:2] == [str(docs), f"{tokens:,}"]
                   and line.rstrip().endswith(f" {folder}/") for line in lines), (folder, lines)
        assert any(line.rstrip().endswith(f" {doc.category}/") for line in lines)
    assert "outline" in dealroom("inspect", "--help").stdout
