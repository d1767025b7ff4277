"""The generator: settings, bad input, determinism, scaling, token counts and file formats."""

from __future__ import annotations

import filecmp
import json
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from dealroom.errors import ConfigError, InputError
from dealroom.room import count_tokens, extract_pages, generate_room, load_manifest
from dealroom.room._generate import (
    CRITERION_TYPES,
    DISTRACTOR_KINDS,
    ISSUE_KINDS,
    PROFILES,
    GenerateSettings,
    parse_count,
    plan_room,
)
from dealroom.room._generate._formats import wrap

FORMATS = {"md", "txt", "pdf", "docx", "xlsx", "eml"}
SMALL = {"docs": 120, "secret": "tests", "seed": 1, "profile": "manufacturer", "tokens": 180_000,
         "workers": 1}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 120-document room whose seed gives it every file format."""
    seed = next(s for s in range(1, 100) if {p.fmt for p in plan_room(GenerateSettings(
        **{**SMALL, "seed": s})).plans} == FORMATS)
    SMALL["seed"] = seed
    out = tmp_path_factory.mktemp("gen") / "room"
    generate_room(out, **SMALL)
    return out


def test_room_layout(small: Path) -> None:
    assert sorted(p.name for p in small.iterdir()) == [
        "answer_key", "documents", "room.json", "task.json"]
    assert sorted(p.name for p in (small / "answer_key").iterdir()) == [
        "findings.json", "generation.json", "gold_memo.md"]
    manifest = load_manifest(small)
    assert manifest.totals()["docs"] == 120
    ids = [d.id for d in manifest.documents]
    assert ids == [f"D{i:05d}" for i in range(1, 121)]
    for doc in manifest.documents:
        assert doc.path.startswith(f"documents/{doc.folder}/")
        assert doc.folder.startswith(doc.category + "/")
        assert doc.category[:2].isdigit() and (small / doc.path).is_file()
    listed = {d.path for d in manifest.documents}
    on_disk = {p.relative_to(small).as_posix() for p in (small / "documents").rglob("*")
               if p.is_file()}
    assert listed == on_disk


def test_same_arguments_give_byte_identical_rooms(small: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate_room(again, **{**SMALL, "workers": 2})  # the worker split must not matter
    cmp = filecmp.dircmp(small, again)
    files = [p.relative_to(small) for p in small.rglob("*") if p.is_file()]
    match, mismatch, errors = filecmp.cmpfiles(small, again, files, shallow=False)
    assert not mismatch and not errors and len(match) == len(files)
    assert not cmp.left_only and not cmp.right_only


def test_another_seed_gives_another_room(tmp_path: Path) -> None:
    a = generate_room(tmp_path / "a", docs=20, secret="tests", seed=1, tokens=40_000, workers=1)
    b = generate_room(tmp_path / "b", docs=20, secret="tests", seed=2, tokens=40_000, workers=1)
    assert a.name != b.name or [d.sha256 for d in a.documents] != [d.sha256 for d in b.documents]


def test_token_counts_equal_the_extracted_text(small: Path) -> None:
    manifest = load_manifest(small)
    formats = Counter(d.format for d in manifest.documents)
    assert set(formats) == FORMATS
    for doc in manifest.documents:
        pages = extract_pages(small / doc.path)
        assert len(pages) == doc.pages, doc.path
        assert sum(count_tokens(p) for p in pages) == doc.tokens, doc.path


def test_total_tokens_follow_the_request(small: Path) -> None:
    total = load_manifest(small).totals()["tokens"]
    assert abs(total - SMALL["tokens"]) / SMALL["tokens"] < 0.05


def test_lengths_vary_with_document_type(small: Path) -> None:
    docs = load_manifest(small).documents
    tokens = sorted(d.tokens for d in docs)
    assert tokens[-1] > 8 * tokens[len(tokens) // 2]  # a few long contracts, many short papers
    assert max(d.pages for d in docs) >= 10


def test_binary_files_open_with_real_parsers(small: Path) -> None:
    import docx
    import openpyxl
    from pypdf import PdfReader

    docs = load_manifest(small).documents
    for doc in docs:
        path = small / doc.path
        if doc.format == "pdf":
            reader = PdfReader(str(path), strict=True)
            assert len(reader.pages) == doc.pages
            assert reader.pages[0].extract_text().strip()
        elif doc.format == "docx":
            assert any(p.text.strip() for p in docx.Document(str(path)).paragraphs)
            assert zipfile.ZipFile(path).testzip() is None
        elif doc.format == "xlsx":
            book = openpyxl.load_workbook(str(path))
            assert len(book.worksheets) == doc.pages
            assert book.worksheets[0].max_row > 1
        elif doc.format == "eml":
            from email import message_from_bytes, policy

            msg = message_from_bytes(path.read_bytes(), policy=policy.default)
            assert msg["From"] and msg["Subject"] and msg.get_body().get_content().strip()


def test_scaling_of_folders_categories_and_criteria() -> None:
    sizes = (20, 100, 300, 2270)
    plans = {n: plan_room(GenerateSettings(docs=n, secret="tests", seed=4)) for n in sizes}
    folders = [len({p.folder for p in plans[n].plans}) for n in sizes]
    categories = [len({p.category for p in plans[n].plans}) for n in sizes]
    criteria = [sum(len(f.points) for f in plans[n].findings) + 3 for n in sizes]
    assert folders == sorted(folders) and categories == sorted(categories)
    assert criteria == sorted(criteria)
    assert 74 <= folders[-1] <= 86 and categories[-1] == 14
    assert 540 <= criteria[-1] <= 610
    kinds = {f.kind for f in plans[2270].findings}
    assert kinds == set(ISSUE_KINDS) | set(DISTRACTOR_KINDS)
    assert len(ISSUE_KINDS) >= 15


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_profiles_differ_in_vocabulary_and_folders(profile: str) -> None:
    plan = plan_room(GenerateSettings(docs=400, secret="tests", seed=1, profile=profile))
    titles = " ".join(p.title for p in plan.plans)
    assert PROFILES[profile].contracts["customer"] in titles
    own = {f.name for f in PROFILES[profile].extra_folders}
    assert any(p.folder.split("/")[1].split(" ", 1)[1] in own for p in plan.plans)


def test_bad_profile_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="profile must be bank, software or manufacturer, got "
                                         "'bakery'"):
        generate_room(tmp_path / "r", docs=5, secret="tests", seed=1, profile="bakery")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("docs", [0, -3])
def test_too_few_documents_is_a_clear_error(tmp_path: Path, docs: int) -> None:
    with pytest.raises(InputError, match=rf"docs must be an integer in \[1, 20000\], got {docs}"):
        generate_room(tmp_path / "r", docs=docs, secret="tests", seed=1)
    assert not (tmp_path / "r").exists()


def test_too_few_tokens_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="too few"):
        GenerateSettings(docs=100, tokens=500)


def test_existing_files_are_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "r"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="already holds files"):
        generate_room(out, docs=5, secret="tests", seed=1, workers=1)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # no temporary folder left


def test_an_empty_folder_is_filled(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    generate_room(out, docs=3, secret="tests", seed=1, tokens=3000, workers=1)
    assert (out / "room.json").is_file()
    assert json.loads((out / "task.json").read_text())["criteria"]


def test_a_single_document_room_still_plants_a_finding(tmp_path: Path) -> None:
    manifest = generate_room(tmp_path / "one", docs=1, secret="tests", seed=3, tokens=2000,
                             workers=1)
    assert len(manifest.documents) == 1
    findings = json.loads((tmp_path / "one/answer_key/findings.json").read_text())["findings"]
    assert findings and findings[0]["evidence"][0]["doc"] == "D00001"


def test_parse_count() -> None:
    assert parse_count("80M") == 80_000_000
    assert parse_count("500k") == 500_000
    assert parse_count("31,000,000") == 31_000_000
    with pytest.raises(ConfigError):
        parse_count("lots")


def test_wrap_keeps_words_whole() -> None:
    line = "alpha " * 40 + "supercalifragilisticexpialidocious"
    lines = wrap(line.strip(), 30)
    assert all(len(x) <= 34 for x in lines)
    assert " ".join(lines).split() == line.split()


def test_criterion_types_are_the_lab_types() -> None:
    assert set(CRITERION_TYPES) == {"fact", "conclusion", "citation", "severity",
                                    "recommendation", "timeline", "monetary", "formatting"}


@pytest.mark.slow
def test_large_room_is_fast_and_lean(tmp_path: Path) -> None:
    manifest = generate_room(tmp_path / "big", docs=2270, secret="tests", seed=7,
                             tokens=31_000_000, workers=2)  # its time: bench_generate.py
    totals = manifest.totals()
    assert 74 <= totals["folders"] <= 86 and totals["categories"] == 14
    assert abs(totals["tokens"] - 31_000_000) < 0.02 * 31_000_000


@pytest.mark.parametrize("budget", [300, 4000])
def test_a_planted_cap_table_total_adds_up(budget: int) -> None:
    from random import Random

    from dealroom.room._generate._layouts import Writer
    from dealroom.room._generate._model import DocPlan, Insert
    from dealroom.room._generate._sheets import build_sheets
    from dealroom.room._generate._text import Library

    ctx = plan_room(GenerateSettings(docs=5, secret="tests", seed=1)).ctx
    plan = DocPlan(0, "D00001", "documents/a/b/c.xlsx", "Cap table", "cap_table", "xlsx", budget,
                   "2024-01-01", inserts=[Insert("Total shares outstanding\t\t12,000,000\t",
                                                 ("12,000,000",), where="end")])
    summary = build_sheets(Writer(plan, Library(ctx), Random(1)))[0]
    assert summary.rows[-1][:3] == ["Total shares outstanding", "", "12,000,000"]
    assert sum(int(r[2].replace(",", "")) for r in summary.rows[1:-1]) == 12_000_000


def test_generate_settings_are_a_schema_that_reads_counts():
    from typing import get_args

    from dealroom.room._generate._profiles import PROFILES
    from dealroom.room._generate._settings import Profile

    assert GenerateSettings(docs=10, tokens="31k", secret="s").tokens == 31_000
    assert GenerateSettings.model_validate({"tokens": "1,500,000"}).total_tokens == 1_500_000
    assert len(GenerateSettings().secret or "") == 32, "a fresh secret is drawn"
    assert sorted(get_args(Profile)) == sorted(PROFILES)
    for given, expected in (({"docs": True}, "docs must be an integer, got True"),
                            ({"seed": "3"}, "seed must be an integer, got '3'"),
                            ({"workers": 0}, "workers must be an integer of at least 1, got 0"),
                            ({"secret": "  "}, "secret must be a non-empty string (or left out "
                                               "to draw one), got '  '"),
                            ({"tokens": "lots"}, "cannot read 'lots' as a count"),
                            ({"size": 3}, "unknown key 'size'; the keys are docs, seed")):
        with pytest.raises(InputError) as err:
            GenerateSettings(**given)
        assert str(err.value).startswith(expected), str(err.value)
