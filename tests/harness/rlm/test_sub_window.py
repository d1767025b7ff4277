"""Sub-call slices sized in the sub model's own tokens: against a 2,000-token sub window that
counts like a BPE tokenizer, no sub-call is lost; a refused one is re-cut and sent again
under the same call_id, the refused attempt in its provider record."""

from __future__ import annotations

import json

import pytest

from dealroom.harness import run_agent
from dealroom.runs import RunFolder
from dealroom.testing import ServedModelServer


@pytest.fixture(scope="module")
def bpe():
    pytest.importorskip("transformers")
    from dealroom.testing import smollm2_count

    return smollm2_count()


def reader(request: dict) -> str:
    """As a served model answers: JSON where the request constrains it (vLLM does)."""
    if request.get("response_format"):
        return '{"findings": []}'
    return "ISSUE: none material | SEVERITY: low | PAGE: 1"


@pytest.mark.parametrize("tokenize", [True, False])
def test_no_sub_call_is_lost_against_a_small_bpe_window(generated_room, tmp_path, bpe,
                                                        tokenize) -> None:
    with ServedModelServer(reader, model="sub", context_window=2000, count=bpe,
                           tokenize=tokenize) as server:
        result = run_agent(generated_room, tmp_path / "run", root="scripted",
                           sub=f"sub@{server.base_url}#context_window=2000", max_turns=30)
        refusals = server.refusals
    events = RunFolder.open(tmp_path / "run").events()
    subs = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    assert result.status == "submitted" and len(subs) > 10
    assert [e["call_id"] for e in subs if e["error"]] == []
    assert len({e["call_id"] for e in subs}) == len(subs)  # a re-cut call keeps its id
    recut = [e for e in subs if e["provider"].get("refused")]
    assert sum(len(e["provider"]["refused"]) for e in recut) == refusals
    if tokenize:  # sized with the server's own count: few need re-cutting
        assert refusals <= len(subs) // 10
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["behaviour"]["sub_calls_failed"] == 0
