"""The room store: index build and freshness, documents, text slices, grep and search."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dealroom.errors import RoomError
from dealroom.room import Room, RoomKeyError, build_index, index_status
from dealroom.room import _grep as grep_mod
from dealroom.room import _store as store_mod

DOCS: dict[str, tuple[str, str, list[str]]] = {
    "D00001": ("01 Corporate/1.1 Charter", "charter.txt", [
        "ACME HOLDINGS INC. CERTIFICATE OF INCORPORATION\nArticle 1. The name is Acme.\n",
        "Article 3. The corporation may issue 10,000,000 shares.\nSigned at Wilmington\n",
    ]),
    "D00002": ("03 Material Contracts/3.2 Customer Agreements", "msa.md", [
        "MASTER SERVICES AGREEMENT\nSection 9.2 Change of Control. Either party may terminate\n"
        "upon a change of control without prior written consent.\n",
        "Fees total $88.2 million. The customer indemnified the supplier.\n",
        "Café résumé: prix 5 € — ünïcödé line with Indemnification\nlast line of msa",
    ]),
    "D00003": ("03 Material Contracts/3.3 Leases", "lease.txt", [
        "first line of lease\nLEASE AGREEMENT for 100 Main Street\nRent is $42,000 per month.\n"
        "The landlord's consent is required for any assignment.\n",
    ]),
    "D00004": ("03 Material Contracts", "overview.txt", [
        "Overview of material contracts: change\nof control clauses appear in the MSA.\n",
    ]),
}


def make_room(root: Path, docs: dict[str, tuple[str, str, list[str]]] = DOCS) -> Path:
    """A room folder with text documents (pages joined by form feeds) and its room.json."""
    records = []
    for doc_id, (folder, name, pages) in docs.items():
        path = root / "documents" / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\f".join(pages), encoding="utf-8")
        records.append({
            "id": doc_id, "path": str(path.relative_to(root)), "title": name,
            "category": folder.split("/")[0], "folder": folder,
            "format": path.suffix.lstrip("."), "pages": len(pages),
            "tokens": sum(len(p.split()) for p in pages), "sha256": "", "bytes": 0,
        })
    manifest = {"version": 1, "name": "Test Room", "documents": records}
    (root / "room.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


@pytest.fixture
def room(tmp_path: Path) -> Room:
    r = Room.open(make_room(tmp_path / "room"))
    yield r
    r.close()


def test_open_builds_once_and_reports_progress(tmp_path: Path) -> None:
    path = make_room(tmp_path / "room")
    calls: list[tuple[str, int, int]] = []
    Room.open(path, progress=lambda *a: calls.append(a)).close()
    assert ("extract", 4, 4) in calls and calls[-1] == ("index", 1, 1)
    assert index_status(path) is None
    calls.clear()
    Room.open(path, progress=lambda *a: calls.append(a)).close()
    assert calls == []


def test_changed_document_rebuilds(tmp_path: Path) -> None:
    path = make_room(tmp_path / "room")
    Room.open(path).close()
    (path / "documents/03 Material Contracts/overview.txt").write_text("brand new words here")
    assert "overview.txt changed" in (index_status(path) or "")
    with Room.open(path) as r:
        assert r.text("D00004") == "brand new words here"
        assert r.grep("brand new")[0].doc == "D00004"


def test_built_opens_a_current_index_as_it_is_and_refuses_a_stale_one(tmp_path: Path) -> None:
    """``built=True`` (a sandbox's worker, its host having built the index) never builds."""
    path = make_room(tmp_path / "room")
    with pytest.raises(RoomError, match="has not been built"):
        Room.open(path, built=True)
    Room.open(path).close()
    with Room.open(path, built=True) as r, Room.open(path) as checked:
        assert [h.doc for h in r.grep("change of control")] == \
            [h.doc for h in checked.grep("change of control")] != []
    (path / "documents/03 Material Contracts/overview.txt").write_text("brand new words here")
    with pytest.raises(RoomError, match="overview.txt changed"):
        Room.open(path, built=True)


def test_given_pages_skip_extraction(tmp_path: Path) -> None:
    path = make_room(tmp_path / "room")
    build_index(path, pages_by_doc={"D00003": ["from the generator", "page two"]})
    with Room.open(path) as r:
        assert r.doc("D00003").pages == 2
        assert r.text("D00003", 2) == "page two"
        assert r.text("D00001", 1).startswith("ACME")


def test_unreadable_document_names_itself(tmp_path: Path) -> None:
    path = make_room(tmp_path / "room")
    manifest = json.loads((path / "room.json").read_text())
    bad = path / "documents/bad.pdf"
    bad.write_bytes(b"this is not a pdf")
    manifest["documents"].append({**manifest["documents"][0], "id": "D00099",
                                  "path": "documents/bad.pdf", "format": "pdf"})
    (path / "room.json").write_text(json.dumps(manifest))
    with pytest.raises(RoomError, match="D00099.*bad.pdf"):
        Room.open(path)
    assert not (path / ".index").exists()


def test_pool_extraction_failure_names_the_document(tmp_path: Path) -> None:
    path = make_room(tmp_path / "room")
    manifest = json.loads((path / "room.json").read_text())
    for i in (1, 2):
        (path / f"documents/bad{i}.pdf").write_bytes(b"%PDF-1.4 truncated")
        manifest["documents"].append({**manifest["documents"][0], "id": f"D0009{i}",
                                      "path": f"documents/bad{i}.pdf", "format": "pdf"})
    (path / "room.json").write_text(json.dumps(manifest))
    with pytest.raises(RoomError, match=r"D00091 \(documents/bad1.pdf\)"):
        build_index(path, workers=2)


def test_index_is_readable_by_everyone(tmp_path: Path) -> None:
    path = make_room(tmp_path / "room")
    Room.open(path).close()
    files = list((path / ".index").iterdir())
    assert all(p.stat().st_mode & 0o444 == 0o444 for p in files)
    (path / ".index/meta.json").chmod(0o600)  # as an older build left it
    Room.open(path).close()
    assert (path / ".index/meta.json").stat().st_mode & 0o777 == 0o644


def test_broken_pool_falls_back_to_extracting_here(tmp_path: Path, monkeypatch) -> None:
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from dealroom.room import _index

    class Broken:
        def __init__(self, *a, **kw) -> None:
            pass

        def submit(self, *a, **kw) -> Future:
            fut: Future = Future()
            fut.set_exception(BrokenProcessPool("no __main__ to import"))
            return fut

        def shutdown(self, *a, **kw) -> None:
            pass

    docs = {f"D{i:05d}": ("01 A", f"d{i}.html", [f"<p>page of doc {i}</p>"]) for i in range(4)}
    path = make_room(tmp_path / "room", docs)
    monkeypatch.setattr(_index, "ProcessPoolExecutor", Broken)
    monkeypatch.setattr(_index, "INLINE_FORMATS", frozenset())  # every document to the pool
    build_index(path, workers=2)
    with Room.open(path) as r:
        assert r.text("D00003") == "page of doc 3"


def test_reading_writes_nothing_into_the_index(room: Room) -> None:
    idx = room.path / ".index"
    before = {p.name: p.stat().st_mtime_ns for p in idx.iterdir()}
    room.grep("consent")
    room.search("change of control")
    room.text("D00002")
    Room.open(room.path).close()
    assert {p.name: p.stat().st_mtime_ns for p in idx.iterdir()} == before


RO_SCRIPT = """
import sys
from dealroom.room import Room
from dealroom.errors import RoomError
try:
    r = Room.open(sys.argv[1])
except RoomError as exc:
    print("ROOMERROR", exc)
else:
    print(len(r.docs), r.grep("landlord")[0].doc, r.search("rent month")[0].doc)
"""


def _ro_open(path: Path) -> str:
    cmd = (f"mount --bind '{path}' '{path}' && mount -o remount,bind,ro '{path}' && "
           f"{sys.executable} -c '{RO_SCRIPT}' '{path}'")
    out = subprocess.run(["unshare", "--mount", "sh", "-c", cmd], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root")
def test_read_only_mount(tmp_path: Path) -> None:
    path = make_room(tmp_path / "room")
    Room.open(path).close()
    assert _ro_open(path).split() == ["4", "D00003", "D00003"]
    (path / "documents/03 Material Contracts/overview.txt").write_text("changed")
    assert "ROOMERROR" in _ro_open(path) and "read-only" in _ro_open(path)


# -- documents and text -------------------------------------------------------------------
def test_docs_metadata_and_short_repr(room: Room) -> None:
    assert [d.id for d in room.docs] == ["D00001", "D00002", "D00003", "D00004"]  # by path
    d = room.doc("D00002")
    assert (d.format, d.pages) == ("md", 3)
    assert d.folder == "03 Material Contracts/3.2 Customer Agreements"
    assert "Indemnification" not in repr(d) and "D00002" in repr(d)
    assert room.totals["docs"] == 4 and room.totals["pages"] == 7
    assert "Test Room" in repr(room)


def test_doc_lookup(room: Room) -> None:
    assert room.doc("d00003").id == "D00003"
    assert room.doc("documents/03 Material Contracts/3.3 Leases/lease.txt").id == "D00003"
    assert room.doc("03 Material Contracts/3.3 Leases/lease.txt").id == "D00003"
    assert room.doc(room.docs[0]) is room.docs[0]
    with pytest.raises(KeyError) as info:
        room.doc("D00033")
    assert isinstance(info.value, RoomKeyError)
    assert "close matches: D00003" in str(info.value)


def test_text_pages_and_spans_line_up(room: Room) -> None:
    for doc_id, (_, _, pages) in DOCS.items():
        full = room.text(doc_id)
        assert full == "\f".join(pages) == room.doc(doc_id).text
        spans = room.page_spans(doc_id)
        assert len(spans) == len(pages)
        for n, (lo, hi) in enumerate(spans, 1):
            assert full[lo:hi] == pages[n - 1] == room.doc(doc_id).page(n)
            if n < len(pages):
                assert full[hi] == "\f" and spans[n][0] == hi + 1
    spans = room.page_spans("D00002")
    assert room.text("D00002", (2, 3)) == room.text("D00002")[spans[1][0]:spans[2][1]]
    with pytest.raises(IndexError, match="pages 1-3"):
        room.text("D00002", 4)
    assert room.page_spans("D00002", 2, 3) == spans[1:3]
    assert room.page_spans("D00002", 3) == spans[2:]
    assert room.page_tokens("D00002", 2, 2) == room.page_tokens("D00002")[1:2]


def test_tree(room: Room) -> None:
    tree = room.tree()
    assert tree.splitlines()[0].startswith("Test Room: 4 documents")
    assert "03 Material Contracts/  (3 docs" in tree
    assert "  3.2 Customer Agreements/  (1 docs" in tree
    assert "3.2 Customer" not in room.tree(depth=1)


# -- grep ---------------------------------------------------------------------------------
def _check_hit(room: Room, hit: store_mod.Hit) -> None:
    full = room.text(hit.doc)
    assert full[hit.offset:hit.offset + len(hit.match)] == hit.match
    lo, hi = room.page_spans(hit.doc)[hit.page - 1]
    assert lo <= hit.offset <= hi
    assert full[lo:hit.offset].count("\n") + 1 == hit.line


def test_grep_hits_carry_page_line_offset(room: Room) -> None:
    hits = room.grep("change of control")
    assert [(h.doc, h.page, h.line) for h in hits] == [("D00002", 1, 2), ("D00002", 1, 3)]
    for h in hits:
        _check_hit(room, h)
    assert hits[0].snippet.startswith("Section 9.2 Change of Control")
    assert hits.total == 2 and not hits.truncated
    assert "[D00002 p.1] l.2" in repr(hits)


def test_grep_non_ascii_offsets_and_patterns(room: Room) -> None:
    hit = room.grep("indemnification")[0]
    assert (hit.doc, hit.page, hit.line) == ("D00002", 3, 1)
    _check_hit(room, hit)
    hits = room.grep("r[ée]sum[ée]|ünïcödé")
    assert [h.match for h in hits] == ["résumé", "ünïcödé"]
    for h in hits:
        _check_hit(room, h)


def test_grep_crosses_lines_but_not_documents(room: Room) -> None:
    assert [h.doc for h in room.grep(r"change\s+of control")] == ["D00002", "D00002", "D00004"]
    assert room.grep(r"last line of msa\s+first line of lease") == []
    assert [h.doc for h in room.grep(r"^first line")] == ["D00003"]


def test_grep_truncates_and_counts(room: Room) -> None:
    hits = room.grep(r"\w+", max_hits=5)
    assert len(hits) == 5 and hits.truncated and hits.total > 100 and hits.exact
    assert "5 hits of" in repr(hits)


def test_grep_folder_filter_and_errors(room: Room) -> None:
    assert {h.doc for h in room.grep("agreement", folder="03 Material Contracts")} == {
        "D00002", "D00003"}
    assert room.grep("agreement", folder="3.3")[0].doc == "D00003"
    with pytest.raises(KeyError, match="close matches"):
        room.grep("x", folder="03 Material Contract")
    with pytest.raises(ValueError, match="invalid regex"):
        room.grep("(unclosed")


WORDS = ["consent", "change", "control", "assignment", "landlord", "Indemnity", "fee", "rent",
         "ÉTÉ", "notice", "\n", "\n", " ", " ", " ", ".", "$4.2", "million", "\f"]
PATTERNS = ["consent", "change of control", r"\bfee\b", "indemnit(y|ies)", r"rent\s+notice",
            "^notice", r"control\.?$", r"\$\d+\.\d", "landlord|assignment", "été", r"(?s)fee.*rent",
            "million[^\n]*consent", r"\d", "x{0}consent", "Consent", "(?-i:Consent)",
            r"(notice) \1", r"rent(?= notice)", r"\bfee\b\s*$", r"(?<!\.)fee", r"^\s*$"]


@pytest.mark.parametrize("engine", ["re2", "re"])
def test_grep_matches_a_plain_regex_reference(tmp_path: Path, monkeypatch, engine: str) -> None:
    if engine == "re":
        monkeypatch.setattr(grep_mod, "_re2", None)
    rng = random.Random(7)
    docs = {}
    for i in range(40):
        pages = ["".join(rng.choice(WORDS) + rng.choice(" \n") for _ in range(rng.randint(0, 300)))
                 for _ in range(rng.randint(1, 4))]
        docs[f"D{i:05d}"] = (f"{i % 3:02d} Folder/sub{i % 2}", f"d{i}.txt",
                             [p.replace("\f", "") for p in pages])
    path = make_room(tmp_path / "room", docs)
    monkeypatch.setattr(store_mod, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(store_mod, "default_workers", lambda: 3)
    monkeypatch.setattr(grep_mod, "MAX_WINDOWS", 4)
    with Room.open(path) as r:
        for pattern in PATTERNS:
            got = r.grep(pattern, max_hits=100_000)
            flags = re.I | re.M
            want = [(d.id, m.start(), m.group()) for d in r.docs
                    for m in re.finditer(pattern, r.text(d.id), flags)]
            if pattern.isascii():  # bytes semantics: ASCII-only case folding, same on this text
                want = [(d.id, m.start(), m.group()) for d in r.docs for m in re.finditer(
                    pattern.encode(), r.text(d.id).encode(), flags)]
                want = [(i, len(r.text(i).encode()[:s].decode()), g.decode()) for i, s, g in want]
            want = [(i, s, g[:store_mod.SNIPPET]) for i, s, g in want]
            assert [(h.doc, h.offset, h.match) for h in got] == want, pattern
            assert got.total == len(want)


# -- search -------------------------------------------------------------------------------
def test_search_ranks_pages(room: Room) -> None:
    hits = room.search("landlord consent assignment")
    assert hits[0].doc == "D00003" and hits[0].page == 1 and hits[0].score > 0
    assert "consent" in hits[0].snippet.lower()
    _check_hit(room, hits[0])
    hits = room.search("indemnify")  # stemming: indemnified
    assert hits and hits[0].doc == "D00002" and hits[0].page == 2
    assert room.search('"change of control"')[0].doc in {"D00002", "D00004"}
    assert room.search("the of and")  # stop words only: still searched
    assert room.search("") == []
    assert room.search("zzzunknownword") == []
    assert room.search("4.2 $88.2")[0].doc == "D00002"
    assert room.search("indemn*")[0].doc == "D00002"


def test_search_folder_filter_and_k(room: Room) -> None:
    assert {h.doc for h in room.search("agreement", folder="03 Material Contracts")} == {
        "D00002", "D00003"}
    assert [h.doc for h in room.search("agreement", folder="01 Corporate")] == []
    assert len(room.search("agreement line", k=1)) == 1


def test_search_weighs_common_terms_instead_of_dropping_them(tmp_path: Path) -> None:
    docs = {f"D{i:05d}": ("01 A", f"d{i}.txt", [f"shared boilerplate words page {i}"])
            for i in range(60)}
    docs["D00007"] = ("01 A", "d7.txt", ["shared boilerplate words about a rare covenant"])
    with Room.open(make_room(tmp_path / "room", docs)) as r:
        assert r._search._df(store_mod.parse_query("boilerplate")[0]) == 60
        hits = r.search("boilerplate covenant", k=3)
        assert hits[0].doc == "D00007" and len(hits) == 3  # the common word still ranks
        assert hits[0].score > 2 * hits[1].score
        assert len(r.search("boilerplate", k=5)) == 5


def test_matcher_plans() -> None:
    m = grep_mod.compile_matcher("indemnit(y|ies)")
    assert (m.literals, m.line_mode, m.engine) == ((b"indemnit",), True, "re2")
    m = grep_mod.compile_matcher("Warranty|Indemnity")
    assert m.literals == (b"indemnity", b"warranty")
    assert grep_mod.compile_matcher(r"consent\s+of").line_mode is False
    assert grep_mod.compile_matcher(r"(notice) \1").engine == "re"  # RE2 has no backreferences
    assert grep_mod.compile_matcher(r"^\s*$").engine == "re"  # can match empty: re semantics
    assert grep_mod.compile_matcher(r"\d{3}").literals is None
    assert grep_mod.compile_matcher("été").str_mode
