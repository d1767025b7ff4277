"""The scripted root writes findings only from replies in the finding format, counts the
others (``behaviour.non_findings``), and cites the page of the text a finding quotes when
the answer gives none (issue 39, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dealroom.harness import run_agent
from dealroom.room import ingest, load_manifest
from dealroom.testing import MockOpenAIServer

CLAUSE = "Either party may terminate this Agreement upon a change of control of the other party."
FILLER = "The Supplier shall deliver the Products to the Customer's warehouse in good order. "


@pytest.fixture(scope="module")
def room(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    (src / "03 Contracts").mkdir()
    (src / "05 Real Estate").mkdir()
    pages = [f"SUPPLY AGREEMENT\n\n1. {FILLER * 3}", f"2. {FILLER * 3}",
             f"3. {FILLER} {CLAUSE}\n{FILLER}"]
    (src / "03 Contracts" / "supply.txt").write_text("\f".join(pages))
    (src / "05 Real Estate" / "lease.txt").write_text("LEASE\n\nThe Tenant pays rent monthly.\f"
                                                      "The premises are in New York.")
    room = tmp_path_factory.mktemp("rooms") / "quotes"
    ingest(src, room)
    return room


def test_non_answers_are_counted_and_quotes_cite_their_page(room, tmp_path):
    ids = {d.path.rsplit("/", 1)[-1]: d.id for d in load_manifest(room).documents}
    supply = ids["supply.txt"]

    def reader(request):
        content = request["messages"][-1]["content"]
        if "SUPPLY AGREEMENT" in content:  # no PAGE: the quote says where
            return (f'ISSUE: The supply agreement provides that "{CLAUSE.lower()}" | SEVERITY: '
                    f"high | AMOUNT: none | DOC: {supply}\n"
                    f"ISSUE: Pricing may be revisited by a committee nobody formed | "
                    f"SEVERITY: low | AMOUNT: none | DOC: {supply} | PAGE: 9")
        return ("The above excerpt contains a detailed description of the lease terms.\n"
                "This document sets out the obligations of the parties in full detail.")

    with MockOpenAIServer(reader) as srv:
        result = run_agent(room, tmp_path / "run", root="scripted",
                           sub=f"reader@{srv.base_url}", max_turns=10)
    assert result.status == "submitted"
    memo = (tmp_path / "run" / "output" / "memo.md").read_text()
    found = [line for line in memo.splitlines() if line.startswith("- **")]
    assert len(found) == 2, memo
    quoted = next(x for x in found if "change of control" in x)
    unplaced = next(x for x in found if "committee" in x)
    assert f"[{supply} p.3]" in quoted  # not p.1, the slice's first page
    assert f"[{supply}]" in unplaced and f"[{supply} p." not in unplaced
    assert "above excerpt" not in memo and "obligations of the parties" not in memo
    assert result.metrics["behaviour"]["non_findings"] == 1
