"""Coverage probes on known inputs with known coverage."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dealroom.measure import CoverageIndex, CoverageProbe, DocText, coverage_from_run
from dealroom.room import Room, count_tokens, generate_room
from dealroom.room._tables import line_hashes


def _docs(mini_docs: dict) -> list[DocText]:
    return [DocText(i, f, f.split("/")[0], t) for i, (f, _, t) in mini_docs.items()]


@pytest.fixture(scope="module")
def index(mini_docs: dict) -> CoverageIndex:
    return CoverageIndex(_docs(mini_docs))


def _tok(text: str) -> int:
    return count_tokens(text)


def _covered(probe: CoverageProbe, doc: str) -> int:
    ix = probe.index
    per_unit = probe.covered_by_unit()
    return int(per_unit[ix.unit_doc == ix.doc_index[doc]].sum())


def test_totals_match_the_room_tokenizer(index: CoverageIndex, mini_docs: dict) -> None:
    assert index.total_tokens == sum(_tok(t) for _, _, t in mini_docs.values())
    for doc, (_, _, text) in mini_docs.items():
        assert index.doc_tokens[index.doc_index[doc]] == _tok(text)


def test_empty_probe_covers_nothing(index: CoverageIndex) -> None:
    summary = CoverageProbe(index).summary()
    assert summary["coverage"] == 0.0
    assert summary["tokens_covered"] == 0
    assert summary["documents_touched"] == 0


def test_whole_document_slice_covers_exactly_that_document(
    index: CoverageIndex, mini_docs: dict
) -> None:
    probe = CoverageProbe(index)
    text = mini_docs["D00002"][2]
    probe.observe_slice("D00002", 0, len(text))
    summary = probe.summary()
    assert summary["tokens_covered"] == _tok(text)
    assert summary["by_document"]["D00002"] == 1.0
    assert summary["by_document"]["D00001"] == 0.0
    folder = summary["by_folder"]["03 Material Contracts/3.2 Customer Agreements"]
    assert folder["coverage"] == 1.0
    category = summary["by_category"]["03 Material Contracts"]
    assert category["tokens_covered"] == _tok(text)
    assert category["tokens_total"] == _tok(text) + _tok(mini_docs["D00003"][2])


def test_slice_cut_inside_lines_counts_tokens_that_start_inside(
    index: CoverageIndex, mini_docs: dict
) -> None:
    text = mini_docs["D00001"][2]
    start = text.index("name of")  # mid-line
    end = text.index("Wilmington") + 3  # cuts the word "Wilmington": it still starts inside
    probe = CoverageProbe(index)
    probe.observe_slice("D00001", start, end)
    assert _covered(probe, "D00001") == _tok(text[start:end])
    assert _tok(text[start:end]) == _tok("name of the corporation is Acme Holdings Inc.") + _tok(
        "Article 2. The registered office is in Wil"
    )


def test_overlapping_slices_are_not_counted_twice(index: CoverageIndex, mini_docs: dict) -> None:
    text = mini_docs["D00002"][2]
    probe = CoverageProbe(index)
    probe.observe_slice("D00002", 0, 100)
    probe.observe_slice("D00002", 50, 160)
    probe.observe_slice("D00002", 10, 20)
    assert _covered(probe, "D00002") == _tok(text[:160])
    # out-of-range ends are clamped to the document
    probe.observe_slice("D00002", -5, 10**9)
    assert _covered(probe, "D00002") == _tok(text)


def test_page_reference_covers_that_page(index: CoverageIndex, mini_docs: dict) -> None:
    text = mini_docs["D00001"][2]
    page2 = text.split("\f")[1]
    probe = CoverageProbe(index)
    probe.observe_ref({"id": "D00001", "pages": [2, 2]})
    assert _covered(probe, "D00001") == _tok(page2)
    probe.observe_ref({"id": "D00001", "pages": [1, 1]})
    assert _covered(probe, "D00001") == _tok(text)


def test_unknown_documents_are_counted_not_covered(index: CoverageIndex) -> None:
    probe = CoverageProbe(index)
    probe.observe_slice("D09999", 0, 100)
    probe.observe_ref({"id": "D09998", "chars": [0, 10]})
    summary = probe.summary()
    assert summary["tokens_covered"] == 0
    assert summary["evidence"]["unknown_docs"] == 2


def test_raw_text_lines_are_matched_back_despite_whitespace(index: CoverageIndex) -> None:
    probe = CoverageProbe(index)
    probe.observe_text(
        "Here is what I found:\n"
        "  Article   1. The name of the corporation is Acme Holdings Inc.  \n"
        "Article 3. The corporation may issue 10,000,000 shares of common stock.\n"
    )
    expected = _tok("Article 1. The name of the corporation is Acme Holdings Inc.") + _tok(
        "Article 3. The corporation may issue 10,000,000 shares of common stock."
    )
    assert probe.summary()["tokens_covered"] == expected


def test_a_line_found_in_two_documents_is_credited_once(index: CoverageIndex) -> None:
    clause = (
        "Section 9.2 Change of Control. Either party may terminate this Agreement upon a "
        "change of control of the other party without prior written consent."
    )
    probe = CoverageProbe(index)
    probe.observe_text(clause)
    assert probe.summary()["tokens_covered"] == _tok(clause)


def test_neighbours_decide_which_copy_of_a_line_was_read(
    index: CoverageIndex, mini_docs: dict
) -> None:
    lease = mini_docs["D00003"][2]
    probe = CoverageProbe(index)
    probe.observe_text(lease)  # "Signed" and the clause also occur in D00002
    summary = probe.summary()
    assert summary["by_document"]["D00003"] == 1.0
    assert summary["by_document"]["D00002"] == 0.0


def test_short_lines_count_only_inside_a_run(index: CoverageIndex) -> None:
    probe = CoverageProbe(index)
    probe.observe_text("Signed\nSigned")
    assert probe.summary()["tokens_covered"] == 0
    probe.observe_text("Rent is $42,000 per month.\nSigned")  # "Signed" here is not after Rent
    assert probe.summary()["tokens_covered"] == _tok("Rent is $42,000 per month.")


def test_cut_off_lines_count_for_the_tokens_they_hold(
    index: CoverageIndex, mini_docs: dict
) -> None:
    msa = mini_docs["D00002"][2]
    clause_start = msa.index("Section 9.2")
    chunk = msa[: clause_start + 40]  # ends mid-line, as text[:N] does
    probe = CoverageProbe(index)
    probe.observe_text(chunk)
    assert _covered(probe, "D00002") == _tok(chunk)

    tail = msa[msa.index("without prior") :]  # starts mid-line, as text[N:] does
    probe = CoverageProbe(index)
    probe.observe_text(tail)
    assert _covered(probe, "D00002") == _tok(tail)


def test_lone_long_prefix_is_found_by_its_prefix_hash(index: CoverageIndex) -> None:
    line = "Fees under this Agreement total $88.2 million over the initial term."
    piece = line[:55]
    probe = CoverageProbe(index)
    probe.observe_text("Preview: \n" + piece)
    assert _covered(probe, "D00002") == _tok(piece)


def test_keyword_lists_do_not_count_as_reading(index: CoverageIndex) -> None:
    probe = CoverageProbe(index)
    probe.observe_text(
        "D00001 D00002 D00003\nAcme Holdings Inc.\nChange of Control\n$88.2 million\n"
        "Section 9.2 Change of Control.\nRent"
    )
    assert probe.summary()["tokens_covered"] == 0


def test_events_feed_the_probe_from_every_role(index: CoverageIndex, mini_docs: dict) -> None:
    lease = mini_docs["D00003"][2]
    charter = mini_docs["D00001"][2]
    probe = CoverageProbe(index)
    probe.observe_events(
        [
            {
                "type": "model_call",
                "role": "root",
                "input": {
                    "messages": [
                        {"role": "system", "content": "You are a diligence agent."},
                        {"role": "user", "content": [{"type": "text", "text": lease}]},
                    ]
                },
            },
            {
                "type": "model_call",
                "role": "sub",
                "input": {
                    "prompt": "Summarise.",
                    "text": "",
                    "docs": [{"id": "D00001", "pages": [1, 1], "chars": [0, charter.index("\f")]}],
                },
            },
            {
                "type": "model_call",
                "role": "sub",
                "error": "connection refused",
                "usage": {"input_tokens": 0},
                "input": {"prompt": "x", "docs": [{"id": "D00002", "chars": [0, 500]}]},
            },
            {"type": "cell", "output": mini_docs["D00002"][2]},
        ]
    )
    summary = probe.summary()
    assert summary["by_document"]["D00003"] == 1.0
    assert _covered(probe, "D00001") == _tok(charter.split("\f")[0])
    assert summary["by_document"]["D00002"] == 0.0


def test_coverage_from_run_reads_the_room_and_trajectory(
    room_dir: Path, tmp_path: Path, mini_docs: dict, run_writer
) -> None:
    msa = mini_docs["D00002"][2]
    run = run_writer(
        tmp_path / "run",
        [{"type": "model_call", "role": "sub", "input": {"docs": [{"id": "D00002"}]}}],
        {"room": str(room_dir)},
    )
    summary = coverage_from_run(run)
    total = sum(_tok(t) for _, _, t in mini_docs.values())
    assert summary["tokens_total"] == total
    assert summary["coverage"] == pytest.approx(_tok(msa) / total)
    assert summary["documents_touched"] == 1


def test_empty_room_coverage_is_undefined() -> None:
    summary = CoverageProbe([DocText("D00001", "a", "a", "")]).summary()
    assert math.isnan(summary["coverage"])


def test_vectorised_token_counts_equal_the_tokenizer() -> None:
    rng = np.random.default_rng(7)
    alphabet = [chr(i) for i in range(128)] + [" "] * 40 + ["\n"] * 8 + list("abc") * 20
    for _ in range(20):
        text = "".join(rng.choice(alphabet, size=2000).tolist())
        index = CoverageIndex([DocText("D00001", "f", "c", text)])
        assert index.total_tokens == count_tokens(text)


def test_non_ascii_documents(mini_docs: dict) -> None:
    text = "Société Générale — prêt de €5 millions.\nRésiliation en cas de changement de contrôle."
    index = CoverageIndex([DocText("D00009", "f", "c", text)])
    assert index.total_tokens == count_tokens(text)
    probe = CoverageProbe(index)
    probe.observe_text("Résiliation  en cas de changement de contrôle.")
    assert probe.summary()["tokens_covered"] == count_tokens(text.split("\n")[1])


def test_labelled_lines_such_as_search_hits(index: CoverageIndex, mini_docs: dict) -> None:
    line = "Article 2. The registered office is in Wilmington, Delaware."
    probe = CoverageProbe(index)
    probe.observe_text(f"[grep] 2 hits\nD00001 p.1: {line}\nD00002 p.2: Section 9.2 Change of")
    assert probe.summary()["tokens_covered"] == _tok(line)


ODD_DOCS = {
    "D00001": ("01 Odd", "nbsp.txt", "Consent\u00a0is\u00a0required.\nzero\u200bwidth\u00ad "
               "line\n\f  \t \n\fSociété Générale — €5 millions\u2028next ١٢٣\n"),
    "D00002": ("01 Odd", "long.txt", "word " * 20_000 + "\f" + "\n\n\n"),
}


@pytest.mark.parametrize("kind", ["mini", "odd", "generated"])
def test_the_index_line_table_equals_the_lines_cut_in_memory(
    kind: str, tmp_path: Path, mini_docs: dict, room_writer
) -> None:
    root = tmp_path / "room"
    if kind == "generated":
        generate_room(root, docs=20, seed=4, tokens=40_000, workers=1, secret="lines")
    else:
        room_writer(root, ODD_DOCS if kind == "odd" else mini_docs)
    with Room.open(root) as room:
        stored = CoverageIndex.from_room(room)
        memory = CoverageIndex([DocText(d.id, d.folder, d.category, room.text(d))
                                for d in room.docs])
        for name in ("unit_start", "unit_end", "unit_tok", "unit_doc", "unit_hash",
                     "hash_sorted", "hash_unit", "pfx_sorted", "pfx_unit", "doc_len",
                     "doc_off", "doc_tokens"):
            np.testing.assert_array_equal(getattr(stored, name), getattr(memory, name), name)
        for a, b in zip(stored.page_starts, memory.page_starts, strict=True):
            np.testing.assert_array_equal(a, b)
        assert [stored.unit_text(u) for u in range(stored.n_units)] == [
            memory.unit_text(u) for u in range(memory.n_units)]
        assert stored.total_tokens == sum(map(count_tokens, map(room.text, room.docs)))


def test_line_hashes_are_the_same_in_every_process() -> None:
    lines = ["Section 9.2 Change of Control.", "Société — ١٢٣", "x" * 500]
    code = ("import sys; from dealroom.room._tables import line_hashes; "
            f"print(line_hashes({lines!r}).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONHASHSEED": "123"})
    assert out.stdout.strip() == str(line_hashes(lines).tolist())
    assert len(set(line_hashes(lines).tolist())) == 3


def test_union_of_cut_ranges_equals_a_naive_union() -> None:
    from dealroom.measure._coverage import _union_sizes

    rng = np.random.default_rng(5)
    for _ in range(50):
        rows = []
        for _ in range(int(rng.integers(1, 60))):
            lo = int(rng.integers(0, 40))
            rows.append((int(rng.integers(0, 8)), lo, lo + int(rng.integers(0, 15))))
        units, sizes = _union_sizes(np.array(rows, dtype=np.int64))
        naive = {u: len({t for v, lo, hi in rows if v == u for t in range(lo, hi)})
                 for u, _, _ in rows}
        assert dict(zip(units.tolist(), sizes.tolist(), strict=True)) == naive


def test_coverage_is_the_summary_figure_and_the_index_loads_on_first_use(
    room_dir: Path, mini_docs: dict
) -> None:
    probe = CoverageProbe(room_dir)
    assert probe._index is None  # nothing read yet
    probe.observe_slice("D00002", 10, 200)
    probe.observe_text("Article 1. The name of the corporation is Acme Holdings Inc.")
    assert probe.coverage() == probe.summary()["coverage"] > 0
    rng = np.random.default_rng(2)
    for _ in range(40):  # many overlapping slices, cut anywhere, folded in between
        doc = str(rng.choice(list(mini_docs)))
        a = int(rng.integers(0, len(mini_docs[doc][2])))
        probe.observe_slice(doc, a, a + int(rng.integers(0, 120)))
        if rng.random() < 0.3:
            assert probe.coverage() == probe.summary()["coverage"]
    per_unit = probe.covered_by_unit()
    assert probe.coverage() == per_unit.sum() / probe.index.total_tokens
    assert (per_unit <= probe.index.unit_tok).all()


def test_runs_of_one_room_share_its_index_until_it_is_rebuilt(room_dir: Path) -> None:
    from dealroom.measure import build_index
    from dealroom.room import build_index as build_room_index

    first = build_index(room_dir)
    assert build_index(room_dir) is first  # dealroom summary over many runs reads it once
    build_room_index(room_dir)
    assert build_index(room_dir) is not first
