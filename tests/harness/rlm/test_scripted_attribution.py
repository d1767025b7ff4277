"""The scripted root cites a finding to the document its sub-agent's answer names, and leaves
it unattributed when the answer names none of a multi-document slice's documents."""

from __future__ import annotations

import json
import re

from dealroom.harness import run_agent
from dealroom.testing import MockOpenAIServer

SEEN: list[str] = []


def reader(request):
    """A sub-agent that names the document for some issues (by id or by title) and not for
    others, as served models do."""
    content = request["messages"][-1]["content"]
    SEEN.append(content)
    lines = []
    if "Northwind may terminate" in content:
        lines.append("ISSUE: Northwind may terminate the MSA on a change of control | "
                     "SEVERITY: high | AMOUNT: $14,600,000 | DOC: D00005 | PAGE: 1")
    if "Orion may terminate" in content:
        lines.append("ISSUE: Orion holds a consent right over a change of control of the "
                     "distributor | SEVERITY: medium | AMOUNT: none | PAGE: 1")
    if "irrevocably consents" in content:
        lines.append("ISSUE: Orion waived its termination right in writing | SEVERITY: low | "
                     "AMOUNT: none | DOC: Consent and Waiver | PAGE: 1")
    return "\n".join(lines) or "NONE"


def test_findings_are_cited_to_the_document_named_or_left_unattributed(hand_room, tmp_path):
    run = tmp_path / "run"
    with MockOpenAIServer(reader) as srv:
        result = run_agent(hand_room, run, root="scripted", sub=f"reader@{srv.base_url}",
                           max_turns=10)
    assert result.status == "submitted"
    contracts = [c for c in SEEN if "Northwind may terminate" in c]
    assert len(contracts) == 1, "the three contracts share one slice"
    for doc in ("D00005", "D00006", "D00007"):  # each document labelled with id and page
        assert f"=== {doc} |" in contracts[0] and f"--- {doc} page 1 ---" in contracts[0]
    memo = (run / "output" / "memo.md").read_text()
    lines = {line for line in memo.splitlines() if line.startswith("- **")}
    northwind = next(x for x in lines if "Northwind may terminate" in x)
    orion = next(x for x in lines if "consent right over a change of control" in x)
    waiver = next(x for x in lines if "waived its termination right" in x)
    assert "[D00005 p.1]" in northwind
    assert "[D00007 p.1]" in waiver
    assert not re.search(r"D\d{5}", orion), "named by no answer: not cited to the first document"
    events = [json.loads(x) for x in (run / "trajectory.jsonl").read_text().splitlines()]
    assert any(e["type"] == "model_call" and e["role"] == "sub" for e in events)
