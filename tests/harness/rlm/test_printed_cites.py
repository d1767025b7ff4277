"""``memo.finding(cites=...)`` takes a page as printed (``"A-12"``, a transcript's
``"452:7"``), finds it in the room and shows it beside the PDF index; the judge still reads the
PDF index."""

from __future__ import annotations

from pathlib import Path

import pytest

from dealroom.harness.rlm import Memo
from dealroom.harness.rlm._repl_api import build_namespace
from dealroom.judge._reference import cited_pages
from dealroom.room import IngestSettings, Room, ingest

TRANSCRIPT = ["DEPOSITION OF JANE ROE"] + [
    f"Page {page}\n" + "\n".join(
        f"{n} A. The termination fee was never discussed." if (page, n) == (453, 7)
        else f"{n} Q. Question {n} of page {page}?" for n in range(1, 26))
    for page in (452, 453, 454)]
AGREEMENT = ["AGREEMENT AND PLAN OF MERGER"] + [
    f"Article {n}\nThe terms of article {n}.\nA-{n}" for n in range(1, 6)]


def _namespace(tmp_path: Path, room: Room) -> dict:
    return build_namespace(lambda *a: {}, room=room, depth=0, max_depth=1,
                           context_tokens=1000, deliverables={"memo": "memo.md"})


@pytest.fixture
def room(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "roe.txt").write_text("\f".join(TRANSCRIPT))
    (src / "merger.txt").write_text("\f".join(AGREEMENT))
    ingest(src, tmp_path / "room", IngestSettings(workers=1))
    with Room.open(tmp_path / "room") as opened:
        yield opened


def test_a_finding_cites_the_printed_page_beside_the_pdf_index(tmp_path: Path, room) -> None:
    memo = _namespace(tmp_path, room)["memo"]
    t, a = room.doc("roe.txt").id, room.doc("merger.txt").id
    memo.finding("Litigation", "Fee never discussed", "The witness said so.",
                 cites=[(t, "453:7"), {"doc": a, "page": "A-4"}, (a, 3),
                        (a, "A-1", "A-2"), {"doc": t, "page": "454", "line": 2}, a])
    md = memo.render()
    assert (f"[{t} p.3, printed 453:7] [{a} p.5, printed A-4] [{a} p.3, printed A-2] "
            f"[{a} pp.2-3, printed A-1 to A-2] [{t} p.4, printed 454:2] [{a}]") in md
    assert cited_pages(md) == {t: {3, 4}, a: {2, 3, 5}}  # the judge reads PDF pages


def test_a_printed_page_the_document_lacks_changes_nothing(tmp_path: Path, room) -> None:
    memo = _namespace(tmp_path, room)["memo"]
    a = room.doc("merger.txt").id
    memo.finding("Contracts", "Kept", "A finding.", cites=[(a, "A-1")])
    before = memo.render()
    with pytest.raises(KeyError, match="prints no page 'A-99'"):
        memo.finding("Contracts", "Lost", "Another.", cites=[(a, "A-99")])
    with pytest.raises(ValueError, match="does not number its lines"):
        memo.finding("Contracts", "Lost", "Another.", cites=[(a, "A-2:7")])
    assert memo.render() == before


def test_a_memo_without_the_room_keeps_pdf_pages_and_refuses_printed_ones() -> None:
    memo = Memo()
    memo.finding("Contracts", "Fee", "Due.", cites=[("D00001", 3), ("D00001", 3, 4)])
    assert "[D00001 p.3] [D00001 pp.3-4]" in memo.render()
    with pytest.raises(ValueError, match="cite the PDF page"):
        memo.finding("Contracts", "Fee", "Due.", cites=[("D00001", "A-12")])


def test_the_sandboxed_repl_cites_a_printed_page(tmp_path: Path, room) -> None:
    """In a REPL session (the sandboxed worker, as a run's): the memo resolves ``"453:7"``."""
    import asyncio

    from dealroom.harness.rlm._session import ReplSession
    from dealroom.models import ScriptedModel

    t = room.doc("roe.txt").id
    code = (f"memo.finding('Litigation', 'Fee', 'Never.', cites=[('{t}', '453:7')])\n"
            f"print(memo.render().splitlines()[-1]); print(room.grep('never discussed')[0])")

    async def go() -> str:
        async with ReplSession(room.path, ScriptedModel(["x"])) as repl:
            return (await repl.run(code)).text

    out = asyncio.run(go())
    assert f"[{t} p.3, printed 453:7]" in out and f"[{t} p.3] (printed 453:7) l.8" in out
