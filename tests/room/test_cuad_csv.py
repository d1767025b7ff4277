"""``cuad import`` from ``master_clauses.csv`` (issue 39, item 4): a copy without CUAD_v1.json
imports from the CSV, with the same hardening as the JSON."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import InputError
from dealroom.judge import judge_memo
from dealroom.room import CuadSettings, import_cuad, load_cuad, load_manifest, validate_room
from dealroom.room import write_cuad_sample as sample
from dealroom.room._cuad_csv import span_list

SETTINGS = CuadSettings(workers=1)
LAW = "This Agreement is governed by the laws of the State of Delaware."


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> Path:
    return sample(tmp_path_factory.mktemp("cuad") / "CUAD_v1", contracts=6, seed=3)


@pytest.fixture(scope="module")
def csv_only(both, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("csv") / "CUAD_v1"
    shutil.copytree(both, folder)
    (folder / "CUAD_v1.json").unlink()
    return folder


@pytest.fixture(scope="module")
def rooms(both, csv_only, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("rooms")
    import_cuad(both, out / "json", SETTINGS)
    import_cuad(csv_only, out / "csv", SETTINGS)
    return {"json": out / "json", "csv": out / "csv"}


def test_a_copy_without_the_json_imports_from_the_csv(rooms, tmp_path):
    room = rooms["csv"]
    assert [p for p in validate_room(room, deep=True) if p.level == "error"] == []
    meta = load_manifest(room).meta["cuad"]
    assert (meta["labels"], meta["labels_also"]) == ("master_clauses.csv", [])
    gold = judge_memo(room, room / "answer_key" / "gold_memo.md")
    empty = tmp_path / "empty.md"
    empty.write_text("")
    assert gold.pass_rate == 1.0 and judge_memo(room, empty).pass_rate == 0.0


def test_csv_and_json_give_the_same_rubric(rooms):
    tasks = {k: json.loads((room / "task.json").read_text()) for k, room in rooms.items()}
    assert tasks["csv"]["criteria"] == tasks["json"]["criteria"]
    labels = {k: json.loads((room / "answer_key" / "cuad_labels.json").read_text())
              for k, room in rooms.items()}
    assert labels["json"]["labels"] == "CUAD_v1.json"
    assert labels["csv"]["labels"] == "master_clauses.csv"
    pages = {k: [[s["pages"] for spans in c["labels"].values() for s in spans]
                 for c in v["contracts"]] for k, v in labels.items()}
    assert pages["csv"] == pages["json"] and any(any(p) for p in pages["csv"])


def test_where_both_exist_the_import_says_which_it_used_and_the_flag_chooses(both, tmp_path):
    result = CliRunner().invoke(app, ["cuad", "import", str(both), str(tmp_path / "a"),
                                      "--contracts", "2", "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "labels: CUAD_v1.json (master_clauses.csv is there too: --labels csv" in result.output
    result = CliRunner().invoke(app, ["cuad", "import", str(both), str(tmp_path / "b"),
                                      "--contracts", "2", "--workers", "1", "--labels", "csv"])
    assert result.exit_code == 0, result.output
    assert load_manifest(tmp_path / "b").meta["cuad"]["labels"] == "master_clauses.csv"
    assert "labels: master_clauses.csv (CUAD_v1.json is there too" in result.output
    json_only = tmp_path / "json-only"
    shutil.copytree(both, json_only)
    (json_only / "master_clauses.csv").unlink()
    import_cuad(json_only, tmp_path / "c", CuadSettings(contracts=1, workers=1))
    assert load_manifest(tmp_path / "c").meta["cuad"]["labels_also"] == []
    with pytest.raises(InputError, match="has no master_clauses.csv"):
        import_cuad(json_only, tmp_path / "d", CuadSettings(labels="csv"))
    with pytest.raises(InputError, match="--labels must be one of auto, json, csv"):
        CuadSettings(labels="xml")


def test_a_folder_with_neither_label_file_exits_2(monkeypatch, capsys, tmp_path):
    from dealroom.cli import main

    (tmp_path / "CUAD_v1" / "full_contract_txt").mkdir(parents=True)
    monkeypatch.setattr(sys, "argv", ["dealroom", "cuad", "import", str(tmp_path / "CUAD_v1"),
                                      str(tmp_path / "room")])
    with pytest.raises(SystemExit) as exit_:
        main()
    out = capsys.readouterr()
    assert exit_.value.code == 2 and "Traceback" not in out.out + out.err
    assert "neither CUAD_v1.json nor master_clauses.csv" in " ".join((out.out + out.err).split())


# --- hand-written CSVs -------------------------------------------------------------------------

HEADER = ["Filename", "Document Name", "Document Name-Answer", "Governing Law",
          "Governing Law- Answer", "change of control", "Change Of Control-Answer"]


def _csv_folder(root: Path, rows: list[list[str]], files: dict[str, str],
                header: list[str] = HEADER) -> Path:
    folder = root / "CUAD_v1"
    (folder / "full_contract_txt").mkdir(parents=True)
    with open(folder / "master_clauses.csv", "w", encoding="utf-8-sig", newline="") as fh:
        csv.writer(fh).writerows([header, *rows])
    for name, text in files.items():
        (folder / "full_contract_txt" / name).write_text(text)
    return folder


def _text(n: int) -> str:
    pages = [f"SUPPLY AGREEMENT {n}\n\n1. Products. " + "Goods are delivered. " * 60,
             "2. Law. This Agreement is governed by the laws\nof the  State of Delaware.\n"]
    return "\f".join(pages)


def test_spans_are_found_whitespace_aside_and_a_span_not_found_is_reported(tmp_path):
    rows = [["Alpha.pdf", "['SUPPLY AGREEMENT 1']", "x", repr([LAW]), "Yes", "[]", "No"],
            ["Beta.PDF", "['SUPPLY AGREEMENT 2']", "x",
             repr(["The laws of Narnia govern this Agreement."]), "Yes", "[]", "No"]]
    folder = _csv_folder(tmp_path, rows, {"Alpha.txt": _text(1), "Beta.txt": _text(2)})
    out = tmp_path / "room"
    report = import_cuad(folder, out, SETTINGS)
    labels = json.loads((out / "answer_key" / "cuad_labels.json").read_text())["contracts"]
    alpha, beta = sorted(labels, key=lambda c: c["title"])
    assert alpha["labels"]["Governing Law"][0]["pages"] == [2]
    assert "Governing Law" not in beta["labels"] and beta["not_found"] == [
        {"category": "Governing Law", "text": "The laws of Narnia govern this Agreement."}]
    lost = [e for e in report.entries if e.reason == "cuad_span_not_found"]
    assert len(lost) == 1 and lost[0].doc_id == beta["doc"] and "Narnia" in lost[0].detail
    saved = json.loads((out / "ingest_report.json").read_text())
    assert any(e["reason"] == "cuad_span_not_found" for e in saved["entries"])
    task = json.loads((out / "task.json").read_text())
    law = [c for c in task["criteria"] if "Governing Law" in c["title"]]
    assert [c["expect"]["cite"] for c in law] == [[alpha["doc"]]]  # none made up for Beta
    assert len([c for c in task["criteria"] if "Change Of Control" in c["title"]]) == 2


def test_a_contract_without_a_file_is_reported_and_a_filename_is_never_a_path(tmp_path):
    (tmp_path / "secret.txt").write_text("CANARY host secret " + LAW)
    rows = [["Alpha.pdf", "[]", "", repr([LAW]), "Yes", "[]", "No"],
            ["../../secret.pdf", "[]", "", repr([LAW]), "Yes", "[]", "No"]]
    folder = _csv_folder(tmp_path, rows, {"Alpha.txt": _text(1)})
    out = tmp_path / "room"
    report = import_cuad(folder, out, SETTINGS)
    assert len(report.manifest.documents) == 1
    (skipped,) = [e for e in report.entries if e.reason == "cuad_no_file"]
    assert skipped.path == "../../secret" and skipped.action == "skipped"
    assert not any("CANARY" in p.read_text(errors="replace")
                   for p in out.rglob("*") if p.is_file())
    with pytest.raises(InputError, match="none of the 1 contracts"):
        import_cuad(folder, tmp_path / "r2", CuadSettings(ids=("../../secret",), workers=1))


def test_the_csv_header_artifacts_and_category_case_are_absorbed(tmp_path):
    rows = [["Alpha.pdf", "[]", "", repr([LAW]), "Yes", "[]", "No"]]
    folder = _csv_folder(tmp_path, rows, {"Alpha.txt": _text(1)})
    (contract,) = load_cuad(folder)
    assert contract.title == "Alpha"
    assert set(contract.spans) == {"Document Name", "Governing Law", "Change Of Control"}


MALFORMED = {
    "unterminated": ("['Neither party may assign", r"line 2 \('Alpha'\), column 'Governing "
                     "Law': .* is not a list of span texts"),
    "not_a_list": ("Yes", "is not a list of span texts such as"),
    "not_strings": ("[1, 2]", r"is not a list of span texts \(strings\)"),
    "code": ("[__import__('os').system('x')]", "is not a list of quoted span texts"),
    "deep": ("[" * 5000 + "]" * 5000, "is not a list of quoted span texts"),
    "huge": ("['" + "x" * 200_000 + "']", "line 2: a cell is over 131,072 characters"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_cells_are_input_errors(tmp_path, case):
    cell, message = MALFORMED[case]
    folder = _csv_folder(tmp_path, [["Alpha.pdf", "[]", "", cell, "", "[]", ""]],
                         {"Alpha.txt": _text(1)})
    with pytest.raises(InputError, match=message):
        import_cuad(folder, tmp_path / "room", SETTINGS)
    assert not (tmp_path / "room").exists()


@pytest.mark.parametrize(("rows", "header", "message"), [
    ([["Alpha.pdf", "[]"]], HEADER, "line 2 has 2 cells, the header 7"),
    ([["Alpha.pdf", "[]", "", "[]", "", "[]", ""]] * 2, HEADER, "line 3 .* used twice"),
    ([["T" * 300 + ".pdf", "[]", "", "[]", "", "[]", ""]], HEADER, "300 bytes long, over 200"),
    ([[" .pdf", "[]", "", "[]", "", "[]", ""]], HEADER, "line 2: Filename is empty"),
    ([["Alpha.pdf", "[]"]], ["Name", "Governing Law"], "no 'Filename' column"),
])
def test_malformed_rows_are_input_errors(tmp_path, rows, header, message):
    folder = _csv_folder(tmp_path, rows, {"Alpha.txt": _text(1)}, header)
    with pytest.raises(InputError, match=message):
        import_cuad(folder, tmp_path / "room", SETTINGS)


def test_a_csv_that_is_not_utf8_or_links_out_is_refused(tmp_path):
    folder = _csv_folder(tmp_path, [], {})
    (folder / "master_clauses.csv").write_bytes(b"Filename\n\xff\xfe\xfa.pdf\n")
    with pytest.raises(InputError, match="is not UTF-8 text"):
        load_cuad(folder)
    outside = tmp_path / "elsewhere.csv"
    outside.write_text("Filename,Governing Law\nAlpha.pdf,[]\n")
    (folder / "master_clauses.csv").unlink()
    (folder / "master_clauses.csv").symlink_to(outside)
    with pytest.raises(InputError, match="csv resolves to .*outside the source"):
        load_cuad(folder)


def test_span_list_reads_python_literals_only():
    assert span_list("[]") == [] and span_list("") == []
    assert span_list("['a \\'quoted\\' b', \"it's\"]") == ["a 'quoted' b", "it's"]
    assert span_list("['  ', 'kept']") == ["kept"]


def test_a_contract_file_linked_out_of_the_folder_is_never_read(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("CANARY host secret " + LAW)
    folder = _csv_folder(tmp_path, [["Shadow.pdf", "[]", "", repr([LAW]), "Yes", "[]", "No"]],
                         {})
    (folder / "full_contract_txt" / "Shadow.txt").symlink_to(secret)
    with pytest.raises(InputError, match="never follows a link out of its source; put the file "
                                         "itself there, or remove the link$"):
        import_cuad(folder, tmp_path / "room", SETTINGS)
    assert not (tmp_path / "room").exists()
