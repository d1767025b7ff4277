"""Sub-call inputs are built from document references and cut to the sub-agent's context."""

from types import SimpleNamespace

from dealroom.harness.rlm._slices import build_sub_input, cut_to_tokens
from dealroom.room import count_tokens


class FakeRoom:
    """Two documents; pages joined with form feeds as in the room's text layer."""

    def __init__(self):
        self.pages = {
            "D00001": ["alpha " * 50, "beta " * 50, "gamma " * 50],
            "D00002": ["short page"],
        }

    def doc(self, doc_id):
        return SimpleNamespace(id=doc_id, title=f"Title {doc_id}", path=f"documents/{doc_id}.md")

    def text(self, doc_id):
        return "\f".join(self.pages[doc_id])

    def page_spans(self, doc_id):
        spans, pos = [], 0
        for page in self.pages[doc_id]:
            spans.append((pos, pos + len(page)))
            pos += len(page) + 1
        return spans


def test_slices_are_recorded_by_reference_with_page_markers():
    room = FakeRoom()
    built = build_sub_input(room, {"prompt": "Find issues.", "docs": [("D00001", 2, 3)]},
                            system="sys", context_tokens=10_000)
    content = built.messages[1]["content"]
    assert "--- D00001 page 2 ---" in content and "--- D00001 page 3 ---" in content
    assert "alpha" not in content
    start, end = built.record["docs"][0]["chars"]
    assert room.text("D00001")[start:end] == "\f".join(room.pages["D00001"][1:])
    assert built.record["docs"][0]["pages"] == [2, 3]
    assert built.record["truncated"] is False and built.notes == []


def test_slice_is_cut_to_the_context_and_the_cut_is_reported():
    room = FakeRoom()
    built = build_sub_input(room, {"prompt": "p", "docs": ["D00001", "D00002"]},
                            system="s", context_tokens=80)
    assert built.record["truncated"] is True
    assert any("cut" in n for n in built.notes)
    assert any("D00002 left out" in n for n in built.notes)
    assert built.tokens <= 80
    start, end = built.record["docs"][0]["chars"]
    assert end - start < len(room.text("D00001"))


def test_free_text_is_recorded_in_full_and_cut_when_too_long():
    built = build_sub_input(FakeRoom(), {"prompt": "p", "text": "word " * 500},
                            system="s", context_tokens=100)
    assert built.record["truncated"] is True
    assert count_tokens(built.record["text"]) < 100


def test_cut_to_tokens():
    assert cut_to_tokens("a b c", 5) == ("a b c", False)
    assert cut_to_tokens("a, b", 2) == ("a,", True)
    assert cut_to_tokens("a", 0) == ("", True)
