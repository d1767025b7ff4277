"""``dealroom cuad import`` on a fixture in CUAD v1's own format (text of our own)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import ConfigError, InputError
from dealroom.judge import judge_memo, judge_run
from dealroom.room import (
    CuadSettings,
    Room,
    import_cuad,
    load_cuad,
    load_manifest,
    validate_room,
    write_cuad_sample,
)
from dealroom.room._cuad import DEFAULT_MAX_BYTES, file_names
from dealroom.room._cuad_rubric import TERMS


@pytest.fixture(scope="module")
def cuad(tmp_path_factory) -> Path:
    return write_cuad_sample(tmp_path_factory.mktemp("cuad") / "CUAD_v1", contracts=6, seed=3)


@pytest.fixture(scope="module")
def room(cuad, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rooms") / "cuad-6"
    import_cuad(cuad, out, CuadSettings(workers=1))
    return out


def _result(scores, cid: str):
    return next(r for r in scores.criteria_results if r.id == cid)


def _memo(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_room_holds_the_contracts_pdfs_first_and_validates(cuad, room):
    docs = load_manifest(room).documents
    assert len(docs) == 6 and sorted(d.format for d in docs) == ["pdf"] * 3 + ["txt"] * 3
    assert [p for p in validate_room(room, deep=True) if p.level == "error"] == []
    assert load_manifest(room).meta["kind"] == "real"
    task = json.loads((room / "task.json").read_text())
    contracts = load_cuad(cuad)
    assert len(task["criteria"]) == 6 * len(TERMS)
    text = json.dumps(task)
    spans = [s for c in contracts for k, v in c.spans.items() if k in TERMS for s, _ in v]
    assert spans and not any(s[:60] in text for s in spans)  # the task never holds answers
    assert "Change Of Control" in task["instructions"]
    (kept := json.loads((room / "answer_key" / "cuad_labels.json").read_text()))
    assert {c["doc"] for c in kept["contracts"]} == {d.id for d in docs}


def test_labelled_spans_point_at_the_pages_they_are_on(room):
    labels = json.loads((room / "answer_key" / "cuad_labels.json").read_text())
    with Room.open(room) as r:
        for contract in labels["contracts"]:
            for spans in contract["labels"].values():
                for span in spans:
                    first = " ".join(r.text(contract["doc"], span["pages"][0]).split())
                    assert " ".join(span["text"].split())[:30] in first


def test_gold_empty_and_claim_everything_memos(room, tmp_path):
    gold = judge_memo(room, room / "answer_key" / "gold_memo.md")
    assert gold.pass_rate >= 0.95
    assert judge_memo(room, _memo(tmp_path / "empty.md", "")).pass_rate <= 0.10
    docs = [d.id for d in load_manifest(room).documents]
    claims = "\n\n".join(
        f"## {d}\n\nReviewed [{d}].\n\n" + "\n".join(
            f"- The {terms[0]} clause of this contract [{d} p.1]." for terms in TERMS.values())
        for d in docs)
    every = judge_memo(room, _memo(tmp_path / "every.md", claims))
    task = json.loads((room / "task.json").read_text())
    negatives = [c["id"] for c in task["criteria"] if c["expect"].get("negative")]
    verdicts = {r.id: r.verdict for r in every.criteria_results}
    assert negatives and all(verdicts[i] == "fail" for i in negatives)


def test_a_citation_on_the_wrong_page_does_not_count(room, tmp_path):
    task = json.loads((room / "task.json").read_text())
    crit = next(c for c in task["criteria"] if "pages" in c["expect"])
    doc, pages = next(iter(crit["expect"]["pages"].items()))
    term = crit["expect"]["terms"][0][0]
    wrong = next(p for p in range(1, 99) if p not in pages)
    right = judge_memo(room, _memo(tmp_path / "r.md", f"- The {term} clause [{doc} p.{pages[0]}]."))
    miss = judge_memo(room, _memo(tmp_path / "w.md", f"- The {term} clause [{doc} p.{wrong}]."))
    assert _result(right, crit["id"]).verdict == "pass"
    assert _result(miss, crit["id"]).verdict == "fail"
    assert f"citation of {doc} at p." in _result(miss, crit["id"]).reasoning


def test_a_scripted_run_on_the_room_is_judged(room, tmp_path):
    from dealroom.harness import run_agent

    run_agent(room, tmp_path / "run", root="scripted", sub="oracle")
    scores = judge_run(tmp_path / "run")
    assert 0 < scores.pass_rate < 1 and scores.by_type()["citation"]["passed"] > 0


def test_picking_contracts_and_categories(cuad, tmp_path):
    titles = sorted(c.title for c in load_cuad(cuad))
    two = import_cuad(cuad, tmp_path / "a", CuadSettings(contracts=2, seed=5, workers=1,
                                                         categories=("governing law",)))
    again = import_cuad(cuad, tmp_path / "b", CuadSettings(contracts=2, seed=5, workers=1))
    assert [d.path for d in two.manifest.documents] == [d.path for d in again.manifest.documents]
    task = json.loads((tmp_path / "a" / "task.json").read_text())
    assert len(task["criteria"]) == 2 and "Governing Law" in task["instructions"]
    picked = import_cuad(cuad, tmp_path / "c", CuadSettings(ids=(titles[4],), workers=1))
    assert len(picked.manifest.documents) == 1
    with pytest.raises(ConfigError, match="no contract"):
        import_cuad(cuad, tmp_path / "d", CuadSettings(ids=("nope",)))
    with pytest.raises(ConfigError, match="no category 'Vibes'"):
        import_cuad(cuad, tmp_path / "d", CuadSettings(categories=("Vibes",)))
    with pytest.raises(ConfigError, match="not both"):
        CuadSettings(contracts=1, ids=("x",))
    with pytest.raises(ConfigError, match="is not a CUAD folder"):
        import_cuad(tmp_path, tmp_path / "d")


def test_cli_cuad_import(cuad, tmp_path):
    result = CliRunner().invoke(app, ["cuad", "import", str(cuad), str(tmp_path / "room"),
                                      "--contracts", "2", "--categories",
                                      "Change Of Control,Governing Law", "--workers", "1"])
    assert result.exit_code == 0, result.output
    task = json.loads((tmp_path / "room" / "task.json").read_text())
    assert len(task["criteria"]) == 4


# --- a hostile CUAD folder (issue 37, item 2) ------------------------------------------------

CANARY = "CANARY-5e1d host secret"
LAW = "This Agreement is governed by the laws of the State of Delaware."


def _entry(title: str, context: str, start: int | None = None) -> dict:
    """One contract of CUAD_v1.json, its Governing Law clause labelled at ``start``."""
    start = context.index(LAW) if start is None and LAW in context else start
    answers = [] if start is None else [{"text": LAW, "answer_start": start}]
    return {"title": title, "paragraphs": [{"context": context, "qas": [
        {"id": f"{title}__Governing Law", "question": "?", "answers": answers,
         "is_impossible": not answers}]}]}


def _folder(root: Path, entries: list[dict], files: dict[str, str] | None = None) -> Path:
    """A CUAD folder holding ``entries`` and ``files`` (under full_contract_txt/)."""
    folder = root / "CUAD_v1"
    (folder / "full_contract_txt").mkdir(parents=True)
    (folder / "CUAD_v1.json").write_text(json.dumps({"version": "aok_v1.0", "data": entries}))
    for name, text in (files or {}).items():
        (folder / "full_contract_txt" / name).write_text(text)
    return folder


def _text(contract: str) -> str:
    return f"SUPPLY AGREEMENT {contract}\n\n1. Products.\n\n2. {LAW}\n"


def _stored(out: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()) \
        if out.exists() else ""


SETTINGS = CuadSettings(workers=1)


def test_a_contract_file_linked_out_of_the_folder_is_never_read(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text(CANARY)
    folder = _folder(tmp_path, [_entry("Shadow", _text("one"))])
    (folder / "full_contract_txt" / "Shadow.txt").symlink_to(secret)
    out = tmp_path / "room"
    with pytest.raises(InputError, match="Shadow.txt is a symbolic link to .*shadow"):
        import_cuad(folder, out, SETTINGS)
    assert CANARY not in _stored(out) and not out.exists()
    pdfs = folder / "full_contract_pdf" / "Part_I"
    pdfs.mkdir(parents=True)
    (folder / "full_contract_txt" / "Shadow.txt").unlink()
    (pdfs / "Shadow.pdf").symlink_to(secret)
    with pytest.raises(InputError, match="never follows a link out of its source"):
        import_cuad(folder, out, SETTINGS)
    assert not out.exists()


def test_a_title_is_never_a_path(tmp_path):
    (tmp_path / "secret.txt").write_text(CANARY)
    (tmp_path / "absolute.txt").write_text(CANARY)
    titles = ["../../secret", str(tmp_path / "absolute")]
    folder = _folder(tmp_path, [_entry(t, _text(f"no. {n}")) for n, t in enumerate(titles)])
    out = tmp_path / "room"
    report = import_cuad(folder, out, SETTINGS)
    assert CANARY not in _stored(out)
    paths = sorted(d.path for d in report.manifest.documents)
    assert paths == sorted(f"documents/{n}.txt" for n in file_names(titles).values())
    assert all("/" not in p.removeprefix("documents/") for p in paths)
    with Room.open(out) as room:
        assert sorted(room.text(d.id, 1).split("\n")[0] for d in report.manifest.documents) \
            == ["SUPPLY AGREEMENT no. 0", "SUPPLY AGREEMENT no. 1"]


def test_titles_that_sanitise_alike_stay_two_documents_each_with_its_rubric(tmp_path):
    titles = ["a/b", "a_b", "A_B"]
    folder = _folder(tmp_path, [_entry(t, _text(f"of {t}")) for t in titles])
    out = tmp_path / "room"
    report = import_cuad(folder, out, SETTINGS)
    assert len(report.manifest.documents) == 3
    labels = json.loads((out / "answer_key" / "cuad_labels.json").read_text())["contracts"]
    task = json.loads((out / "task.json").read_text())
    with Room.open(out) as room:
        for contract in labels:
            first = room.text(contract["doc"], 1)
            assert first.startswith(f"SUPPLY AGREEMENT of {contract['title']}")
            cited = [c for c in task["criteria"]
                     if contract["doc"] in c["expect"].get("pages", {})]
            assert len(cited) == 1 and f"{contract['title']} ({contract['doc']})" \
                in cited[0]["match_criteria"]
    assert len({c["doc"] for c in labels}) == 3


def test_a_title_used_twice_is_refused(tmp_path):
    folder = _folder(tmp_path, [_entry("Twice", _text("1")), _entry("Twice", _text("2"))])
    with pytest.raises(InputError, match="'Twice' is used twice"):
        import_cuad(folder, tmp_path / "room", SETTINGS)


HOSTILE = {
    "long_title": ([_entry("T" * 300, _text("long"))], "title is 300 bytes long, over 200"),
    "negative_start": ([_entry("Neg", _text("neg"), start=-10**18)],
                       r"\('Neg'\) .*answer_start must be an integer of at least 0, "
                       "got -1000000000000000000"),
    "start_past_the_end": ([_entry("Past", _text("past"), start=10**6)],
                           "answer_start 1000000 is past the end"),
    "start_not_a_number": ([_entry("Str", _text("str"), start="12")],  # type: ignore[arg-type]
                           "answer_start must be an integer"),
    "no_category": ([{**_entry("Cat", _text("cat")), "paragraphs": [{
        "context": "x", "qas": [{"id": "no-category", "answers": []}]}]}], r"qas\[0\]\.id"),
    "empty_category": ([{**_entry("Cat", _text("cat")), "paragraphs": [{
        "context": "x", "qas": [{"id": "Cat__Law__ ", "answers": []}]}]}],
        "qa id 'Cat__Law__ ' names no category"),
    "surrogates": ([_entry("Sur\ud800", "x"), _entry("Sur\ud800", "y")],
                   r"data\[0\] \('Sur\ufffd'\) is not in CUAD's SQuAD format: title"),
    "no_paragraph": ([{"title": "Empty", "paragraphs": []}], "paragraphs"),
    "not_squad": ({"data": "nope"}, "not in CUAD's SQuAD format"),
}


def _write_hostile(folder: Path, data: object) -> None:
    body = data if isinstance(data, dict) else {"data": data}
    (folder / "CUAD_v1.json").write_text(json.dumps(body))


@pytest.mark.parametrize("case", HOSTILE)
def test_malformed_fields_are_input_errors(tmp_path, case):
    data, message = HOSTILE[case]
    folder = _folder(tmp_path, [])
    _write_hostile(folder, data)
    with pytest.raises(InputError, match=message):
        import_cuad(folder, tmp_path / "room", SETTINGS)
    assert not (tmp_path / "room").exists()


def test_json_nested_too_deep_is_an_input_error(tmp_path):
    folder = _folder(tmp_path, [])
    (folder / "CUAD_v1.json").write_text('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InputError, match="nested too deep"):
        import_cuad(folder, tmp_path / "room", SETTINGS)


def test_contracts_over_the_size_limit_are_refused(tmp_path):
    big = _text("big") + "x" * 5000
    folder = _folder(tmp_path, [_entry("Big", big)])
    small = CuadSettings(workers=1, max_bytes=4096)
    with pytest.raises(InputError, match="text is 5,.* characters, over the 0.0 MB limit"):
        import_cuad(folder, tmp_path / "room", small)
    _write_hostile(folder, [_entry("Big", _text("small"))])
    (folder / "full_contract_txt" / "Big.txt").write_text(big)
    with pytest.raises(InputError, match=r"Big.txt: .* over the 4,096-byte limit \(raise --max-mb"):
        import_cuad(folder, tmp_path / "room", small)
    assert not (tmp_path / "room").exists()
    assert DEFAULT_MAX_BYTES == 20 * 2**20 and CuadSettings().max_bytes == DEFAULT_MAX_BYTES


@pytest.mark.parametrize("case", ["long_title", "negative_start", "deep", "big"])
def test_cli_cuad_import_of_a_malformed_folder_exits_2_without_a_traceback(
        monkeypatch, capsys, tmp_path, case):
    from dealroom.cli import main

    folder = _folder(tmp_path, [])
    if case == "deep":
        (folder / "CUAD_v1.json").write_text('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif case == "big":
        _write_hostile(folder, [_entry("Big", _text("big") + "x" * 2 * 2**20)])
    else:
        _write_hostile(folder, HOSTILE[case][0])
    monkeypatch.setattr(sys, "argv", ["dealroom", "cuad", "import", str(folder),
                                      str(tmp_path / "room"), "--workers", "1", "--max-mb", "1"])
    with pytest.raises(SystemExit) as exit_:
        main()
    out = capsys.readouterr()
    assert exit_.value.code == 2 and "Traceback" not in out.out + out.err
    assert "CUAD_v1.json" in out.out + out.err
    assert not (tmp_path / "room").exists()
