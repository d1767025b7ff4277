"""What the root is told one sub-call can carry is what the host admits, and what the host
must still cut is handed back (``result.unsent``) and sent again by the scripted root: the
memo's account of what was read stays true (issue 36, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dealroom.harness import run_agent
from dealroom.runs import RunFolder
from dealroom.testing import MockOpenAIServer, ServedModelServer


@pytest.fixture(scope="module")
def bpe():
    pytest.importorskip("transformers")
    from dealroom.testing import smollm2_count

    return smollm2_count()


@pytest.fixture(scope="module")
def room120(tmp_path_factory) -> Path:
    """The issue's room: ``dealroom generate ROOM --docs 120 --seed 21``."""
    from dealroom.room import generate_room

    room = tmp_path_factory.mktemp("r120") / "room"
    generate_room(room, docs=120, seed=21)
    return room


def reader(request: dict) -> str:
    """As a served model answers: JSON where the request constrains it (vLLM does)."""
    if request.get("response_format"):
        return '{"findings": []}'
    return "ISSUE: none material | SEVERITY: low | PAGE: 1"


class Unlisted(ServedModelServer):
    """A server that does not say its window (llama-cpp-python's does not)."""

    async def _models(self, request):
        return await MockOpenAIServer._models(self, request)


def run(room: Path, out: Path, *, served: int, declared: int, count, tokenize: bool = True):
    """A scripted run against a loopback sub-agent whose real window is ``served`` tokens
    (counted with ``count``; said only when it serves ``/tokenize``) and whose spec says
    ``declared``."""
    server_type = ServedModelServer if tokenize else Unlisted
    with server_type(reader, model="sub", context_window=served, count=count,
                     tokenize=tokenize) as server:
        result = run_agent(room, out, root="scripted",
                           sub=f"sub@{server.base_url}#context_window={declared}")
    events = RunFolder.open(out).events()
    subs = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    metrics = json.loads((out / "metrics.json").read_text())
    return result, subs, metrics["coverage"]["coverage"], (out / "output" / "memo.md").read_text()


def sent_pages(subs: list[dict]) -> dict[str, set[int]]:
    """Pages sent whole or in part, per document (from the records)."""
    pages: dict[str, set[int]] = {}
    for e in subs:
        if e["error"] is None:
            for ref in e["input"]["docs"]:
                pages.setdefault(ref["id"], set()).update(range(ref["pages"][0],
                                                                ref["pages"][1] + 1))
    return pages


def assert_remainders_sent(subs: list[dict]) -> None:
    """Every page a call could not carry went in a later call."""
    later = sent_pages(subs)
    cut = [u for e in subs for u in e["input"].get("unsent") or []]
    for doc, first, last in cut:
        assert set(range(first, last + 1)) <= later.get(doc, set()), (doc, first, last)


@pytest.mark.slow
def test_the_root_planning_by_context_tokens_is_not_cut(room120, tmp_path, bpe) -> None:
    result, subs, coverage, memo = run(room120, tmp_path / "run", served=32768,
                                       declared=32768, count=bpe)
    assert result.status == "submitted"
    assert coverage >= 0.999
    # the host admits what it promised: a call is cut only when the endpoint refused it (a
    # page far denser in the model's tokens than the sample), and what it left is sent later
    cut = [e for e in subs if e["input"].get("unsent")]
    assert all(e["provider"].get("refused") for e in cut)
    assert len(cut) <= len(subs) // 50
    assert_remainders_sent(subs)
    assert "We reviewed all 120 documents" in memo


@pytest.mark.slow
def test_a_forced_cut_is_sent_again_in_a_later_wave(room120, tmp_path, bpe) -> None:
    # the spec claims 32k, the server holds 24k and has no /tokenize: refusals, re-cuts
    result, subs, coverage, memo = run(room120, tmp_path / "run", served=24000,
                                       declared=32768, count=bpe, tokenize=False)
    assert result.status == "submitted"
    assert any(e["input"].get("unsent") for e in subs)
    assert_remainders_sent(subs)
    assert coverage >= 0.999
    assert "We reviewed all 120 documents" in memo


def test_a_cut_on_a_small_room_is_recovered(generated_room, tmp_path) -> None:
    """The same on the 20-document room: words-v1 counting, a server that holds less than
    its spec says."""
    result, subs, coverage, memo = run(generated_room, tmp_path / "run", served=2400,
                                       declared=4000, count=_words, tokenize=False)
    assert result.status == "submitted"
    unsent = [e for e in subs if e["input"].get("unsent")]
    assert unsent and all(e["error"] is None for e in unsent)
    assert_remainders_sent(subs)
    assert coverage >= 0.999
    assert "We reviewed all 20 documents" in memo


def _words(text: str) -> int:
    from dealroom.room import count_tokens

    return int(count_tokens(text))
