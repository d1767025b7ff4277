"""Sub-call inputs: sized from the index's token tables, equal to cutting the text itself.

The reference below is the implementation the token tables replaced (it re-tokenises every
page it sends); the property tests hold the new path to it, token for token and byte for byte,
on every format of a generated room and on text with non-breaking spaces, zero-width
characters and very long lines.
"""

import json
import random

import pytest

from dealroom.errors import ConfigError
from dealroom.harness.rlm._slices import build_sub_input, cut_to_tokens, normalize_ref
from dealroom.room import Room, build_index, count_tokens, generate_room

SYSTEM = "You are a diligence reviewer."


def reference_build(room, call, *, system, context_tokens):
    """(messages, record, notes, tokens) as the pre-index code built them."""
    prompt = str(call.get("prompt") or "")
    budget = context_tokens - count_tokens(system) - count_tokens(prompt) - 16
    notes, parts, refs, unsent = [], [], [], []
    for raw in call.get("docs") or []:
        if budget <= 0:
            doc_id, first, last = normalize_ref(raw)
            unsent.append([doc_id, first or 1, last or room.doc(doc_id).pages])
            notes.append(f"{doc_id} left out: the sub-agent's context is full")
            continue
        body, ref, rest = _reference_slice(room, raw, budget)
        budget -= count_tokens(body)
        parts.append(body)
        refs.append(ref)
        if rest:
            unsent.append(rest)
            notes.append(f"{ref['id']} cut at page {ref['pages'][1]} to fit the sub-agent's "
                         f"context; pages {rest[1]}-{rest[2]} not sent (result.unsent)")
    free = call.get("text")
    if free:
        kept, cut = cut_to_tokens(str(free), max(budget, 0))
        if cut:
            notes.append(f"text cut to {max(budget, 0):,} tokens to fit the sub-agent's context")
        free = kept
        parts.append(kept)
    content = prompt if not parts else f"{prompt}\n\n" + "\n\n".join(parts)
    record = {"prompt": prompt, "text": free or None, "docs": refs, "truncated": bool(notes)}
    if unsent:
        record["unsent"] = unsent
    messages = [{"role": "system", "content": system}, {"role": "user", "content": content}]
    return messages, record, notes, count_tokens(system) + count_tokens(content)


def _reference_slice(room, raw, budget):
    doc_id, first, last = normalize_ref(raw)
    doc = room.doc(doc_id)
    spans = room.page_spans(doc.id)
    first = max(1, first or 1)
    last = min(len(spans), last or len(spans))
    if first > last:
        raise ConfigError(f"{doc.id} has {len(spans)} pages; pages {first}-{last} do not exist")
    full = room.text(doc.id)
    header = f"=== {doc.id} | {doc.title} | {doc.path} ==="
    out, left = [header], budget - count_tokens(header)
    start, end, kept_last, rest = spans[first - 1][0], spans[first - 1][0], first, None
    for page in range(first, last + 1):
        lo, hi = spans[page - 1]
        marker = f"--- {doc.id} page {page} ---"
        text, cut = cut_to_tokens(full[lo:hi], left - count_tokens(marker))
        out += [marker, text]
        left -= count_tokens(marker) + count_tokens(text)
        end, kept_last = lo + len(text), page
        if cut or left <= 0:
            if cut or page < last:  # what was not sent: the page cut in, and those after it
                rest = [doc.id, page if cut else page + 1, last]
            break
    ref = {"id": doc.id, "pages": [first, kept_last], "chars": [start, end]}
    return "\n".join(out), ref, rest


# -- rooms ---------------------------------------------------------------------------------
ODD = ["\u00a0", "\u200b", "\u00ad", "\u2028", "\u037e", "\u3000", "\t", "\r\n", "\n", "  ",
       "é", "日本語", "_x_", "e\u0301", "١٢٣", "😀", "§", "—", "$2,500,000", "\ufeff", "\x0b"]
WORDS = ["consent", "change", "of", "control", "Acme", "Section", "4.2", "(a)", "fee", "Ltd."]


def odd_text(rng: random.Random, n: int) -> str:
    """Words mixed with look-alike spaces, zero-width and combining characters."""
    return "".join(rng.choice(ODD) if rng.random() < 0.3 else rng.choice(WORDS) + " "
                   for _ in range(n))


def odd_pages(rng: random.Random) -> dict[str, list[str]]:
    docs = {f"D{i:05d}": [odd_text(rng, rng.randint(0, 300)) for _ in range(rng.randint(1, 6))]
            for i in range(1, 13)}
    docs["D00013"] = ["", "   \u00a0\u2028 ", "a"]  # empty, blank and one-token pages
    docs["D00014"] = ["word\u00a0" * 30_000, "x" * 70_000]  # very long lines
    docs["D00015"] = ["trailing space   \n\n", "\u200b" * 200 + " end \t"]
    return docs


def page_room(root, pages_by_doc) -> Room:
    """A room of text documents whose pages are given, indexed from them."""
    records = []
    for doc_id, pages in pages_by_doc.items():
        path = root / "documents" / "01 Odd" / f"{doc_id}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\f".join(pages), encoding="utf-8")
        records.append({"id": doc_id, "path": str(path.relative_to(root)), "title": doc_id,
                        "category": "01 Odd", "folder": "01 Odd", "format": "txt",
                        "pages": len(pages), "tokens": sum(map(count_tokens, pages)),
                        "sha256": "", "bytes": 0})
    manifest = {"version": 1, "name": "Odd Room", "documents": records}
    (root / "room.json").write_text(json.dumps(manifest), encoding="utf-8")
    build_index(root, pages_by_doc)
    return Room.open(root)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "room"
    generate_room(out, docs=80, seed=5, tokens=300_000, workers=1, secret="slices")
    with Room.open(out) as room:
        assert {d.format for d in room.docs} == {"md", "txt", "pdf", "docx", "xlsx", "eml"}
        yield room


@pytest.fixture(scope="module")
def odd(tmp_path_factory):
    with page_room(tmp_path_factory.mktemp("odd"), odd_pages(random.Random(3))) as room:
        yield room


# -- the token tables ----------------------------------------------------------------------
@pytest.mark.parametrize("which", ["generated", "odd"])
def test_page_tokens_and_cut_offsets_equal_the_regex(which, request):
    room = request.getfixturevalue(which)
    rng = random.Random(11)
    for doc in room.docs:
        counts = room.page_tokens(doc)
        assert len(counts) == doc.pages
        for page, tokens in enumerate(counts, start=1):
            text = room.text(doc, page)
            assert tokens == count_tokens(text)
            limits = {0, 1, tokens, tokens + 1, *(rng.randint(1, tokens + 1) for _ in range(8))}
            for n in limits:
                kept, _ = cut_to_tokens(text, n)
                assert text[:room.token_offset(doc, page, n)] == kept, (doc.id, page, n)


# -- planned inputs equal the text cut -----------------------------------------------------
def random_call(rng: random.Random, room, first_doc=None) -> dict:
    docs = [first_doc or rng.choice(room.docs)] + rng.sample(room.docs, rng.randint(0, 3))
    refs = []
    for d in docs:
        a = rng.randint(1, d.pages)
        b = rng.randint(a, d.pages)
        refs.append(rng.choice([d.id, (d.id, a), (d.id, a, b), {"id": d.id, "pages": [a, b]}]))
    call = {"prompt": rng.choice(["List the issues.", "Find every change of control."]),
            "docs": refs}
    if rng.random() < 0.3:
        call["text"] = odd_text(rng, rng.randint(0, 400))
    return call


@pytest.mark.parametrize("which", ["generated", "odd"])
def test_sub_inputs_equal_the_reference_byte_for_byte(which, request):
    room = request.getfixturevalue(which)
    rng = random.Random(7)
    calls = [random_call(rng, room, d) for d in room.docs]  # every document, so every format
    calls += [random_call(rng, room) for _ in range(200)]
    cut = 0
    for call in calls:
        context = int(10 ** rng.uniform(1.7, 4.6))
        built = build_sub_input(room, call, system=SYSTEM, context_tokens=context)
        messages, record, notes, tokens = reference_build(room, call, system=SYSTEM,
                                                          context_tokens=context)
        assert built.messages == messages
        assert built.record == record and built.notes == notes
        assert built.tokens == tokens == sum(count_tokens(m["content"]) for m in messages)
        cut += record["truncated"]
    assert 0 < cut < len(calls)  # both cut and whole slices were compared


def test_slices_are_recorded_by_reference_with_page_markers(odd):
    built = build_sub_input(odd, {"prompt": "Find issues.", "docs": [("D00013", 2, 3)]},
                            system="sys", context_tokens=10_000)
    content = built.messages[1]["content"]
    assert "--- D00013 page 2 ---" in content and "--- D00013 page 3 ---" in content
    start, end = built.record["docs"][0]["chars"]
    assert odd.text("D00013")[start:end] == odd.text("D00013", (2, 3))
    assert built.record["docs"][0]["pages"] == [2, 3]
    assert built.record["truncated"] is False and built.notes == []


def test_slice_is_cut_to_the_context_and_the_cut_is_reported(odd):
    built = build_sub_input(odd, {"prompt": "p", "docs": ["D00014", "D00013"]},
                            system="s", context_tokens=200)
    assert built.record["truncated"] is True
    assert any("D00014 cut at page 1" in n for n in built.notes)
    assert any("D00013 left out" in n for n in built.notes)
    assert built.record["unsent"] == [["D00014", 1, 2], ["D00013", 1, 3]]
    assert built.tokens <= 200
    start, end = built.record["docs"][0]["chars"]
    assert 0 < end - start < len(odd.text("D00014", 1))


def test_free_text_is_recorded_in_full_and_cut_when_too_long(odd):
    built = build_sub_input(odd, {"prompt": "p", "text": "word " * 500},
                            system="s", context_tokens=100)
    assert built.record["truncated"] is True
    assert count_tokens(built.record["text"]) < 100


def test_cut_to_tokens():
    assert cut_to_tokens("a b c", 5) == ("a b c", False)
    assert cut_to_tokens("a, b", 2) == ("a,", True)
    assert cut_to_tokens("a", 0) == ("", True)
    assert cut_to_tokens("a b  ", 2) == ("a b", False)
