"""room.search on real-contract word statistics: common words weighed, phrases boosted."""

from __future__ import annotations

import json
from pathlib import Path

from dealroom.room import Room

FILLER = ("The parties agree that this section is drafted for convenience of reference only "
          "and shall be read with the schedules attached hereto. ")


def _room(root: Path) -> Path:
    """40 contracts: 14 use "change" and "control" apart, twice; 4 have the clause."""
    docs = {}
    for i in range(40):
        if i % 10 == 3:  # the labelled ones: long pages, the phrase once
            text = FILLER * 4 + ("Upon a change of control of the Supplier, the Customer may "
                                  "terminate this Agreement. ") + FILLER * 4
        elif i < 14:  # common words (on 45% of pages), far apart, twice (a high bm25 alone)
            text = ("Either party may change its address for notices. " + FILLER * 2
                    + "Each party shall control the defence of claims it indemnifies. ") * 2
        else:
            text = FILLER * 3
        docs[f"D{i + 1:05d}"] = text
    records = []
    for doc_id, text in docs.items():
        path = root / "documents" / "contracts" / f"{doc_id}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        records.append({"id": doc_id, "path": f"documents/contracts/{doc_id}.txt",
                        "title": doc_id, "category": "contracts", "folder": "contracts",
                        "format": "txt", "pages": 1, "tokens": len(text.split()),
                        "sha256": "", "bytes": 0})
    (root / "room.json").write_text(json.dumps({"version": 1, "name": "t",
                                                "documents": records}), encoding="utf-8")
    return root


def test_a_phrase_of_common_words_finds_the_clauses(tmp_path: Path) -> None:
    labelled = {"D00004", "D00014", "D00024", "D00034"}
    with Room.open(_room(tmp_path / "room")) as room:
        assert len(room.grep(r"\bchange\b").docs()) > 10  # on far more than 25% of pages
        top = room.search("change of control", k=5)
        assert set(top.docs()[:4]) == labelled
        assert set(room.search("change control", k=4).docs()) == labelled  # proximity
        assert set(room.search("“change of control”", k=4).docs()) == labelled  # curly quotes


def test_query_phrase_keeps_stop_words_and_skips_quoted_parts() -> None:
    from dealroom.room._search import query_phrase

    assert query_phrase("termination for convenience").words == (
        "termination", "for", "convenience")
    assert query_phrase('"change of control" consent') is None
    assert query_phrase("indemnity") is None


def test_a_hyphenated_word_found_nowhere_is_searched_as_its_words(tmp_path: Path) -> None:
    with Room.open(_room(tmp_path / "room")) as room:
        assert room.search("non-compete") == []  # neither word on any page
        hits = room.search("change-of-control")  # found as written
        assert set(hits.docs()[:4]) == {"D00004", "D00014", "D00024", "D00034"}
        assert room.search("indemnifies-claims")  # nowhere as a phrase: its words rank
        assert room.search('"indemnifies claims"') == []  # quoted: only as written
