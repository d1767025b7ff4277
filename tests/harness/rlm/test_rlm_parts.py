"""Unit tests of the RLM harness's host-side parts: memo, budgets, prompt handling."""

import pytest

from dealroom.harness._common._budget import BudgetTracker
from dealroom.harness.rlm._memo import Memo
from dealroom.harness.rlm._prompt import extract_code, truncate
from dealroom.types import Budget, Usage


def test_memo_renders_sections_findings_and_citations():
    memo = Memo("Project Falcon")
    memo.section("Executive Summary", "Two issues matter.")
    memo.finding(
        "Material Contracts",
        "Change of control",
        "Acme may terminate on a change of control.",
        cites=[("D00042", 3), ("D00043", 1, 2), "D00044"],
        severity="high",
        amount="$1.2 million",
        next_step="Obtain Acme's consent before signing.",
    )
    text = memo.render()
    assert text.startswith("# Project Falcon\n")
    assert "## Material Contracts" in text
    assert "[D00042 p.3] [D00043 pp.1-2] [D00044]" in text
    assert "(severity: high)" in text and "Exposure: $1.2 million." in text
    assert memo.snapshot()["sections"] == ["Executive Summary", "Material Contracts"]
    memo.write("# Free\n")
    assert memo.render() == "# Free\n"


def test_child_budget_never_exceeds_parent():
    parent = BudgetTracker(Budget(max_tokens=1000, max_cost_usd=1.0))
    child = parent.child(Budget(max_tokens=5000))
    assert child.budget.max_tokens == 1000
    child.settle(None, Usage(input_tokens=600, output_tokens=100, cost_usd=0.5))
    assert parent.spent.total_tokens == 700
    assert parent.tokens_left() == 300
    assert child.reserve(400, 0.1) is None  # more than the parent has left
    grandchild = child.child(Budget())
    assert grandchild.tokens_left() == 300


def test_reservations_bound_parallel_calls():
    tracker = BudgetTracker(Budget(max_tokens=1000))
    first = tracker.reserve(600, 0.0)
    assert first is not None
    assert tracker.reserve(600, 0.0) is None
    tracker.settle(first, Usage(input_tokens=100, output_tokens=50))
    assert tracker.tokens_left() == 850
    assert tracker.exhausted() is None


def test_turns_exhaust():
    tracker = BudgetTracker(Budget(max_turns=2))
    tracker.turns = 2
    assert tracker.exhausted() == "turns"


@pytest.mark.parametrize(
    "reply, code",
    [
        ("```python\nx = 1\n```", "x = 1\n"),
        ("```repl\nprint(2)\n```", "print(2)\n"),
        ("text\n```py\na\n```\nmore\n```python\nb\n```", "a\n\nb\n"),
        ("no code here", None),
    ],
)
def test_extract_code(reply, code):
    assert extract_code(reply) == code


def test_truncate_keeps_head_and_tail():
    text = "HEAD" + "x" * 1000 + "TAIL"
    out = truncate(text, 100)
    assert out.startswith("HEAD") and out.endswith("TAIL")
    assert "908 of 1,008 characters cut" in out
    assert truncate("short", 100) == "short"
