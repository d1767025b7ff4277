"""The reference judge on a hand-written room of contract text: negative criteria scoped to
their claim, the pass rate on positive criteria, amount ranges and polarity."""

from __future__ import annotations

import json

import pytest

from dealroom.judge import judge_memo, judge_run
from dealroom.room import validate_room
from tests.conftest import HAND_ROOM, make_run

GOLD = (HAND_ROOM / "gold_memo.md").read_text()


def verdict(scores, cid):
    return next(r for r in scores.criteria_results if r.id == cid)


def swap(old: str, new: str) -> str:
    assert old in GOLD
    return GOLD.replace(old, new)


def test_the_hand_written_room_is_valid(hand_room):
    errors = [p for p in validate_room(hand_room) if p.level == "error"]
    assert errors == []


def test_an_empty_memo_scores_0_on_positive_criteria_and_the_gold_memo_keeps_its_score(
        hand_room, tmp_path):
    gold = judge_run(make_run(tmp_path / "gold", GOLD, hand_room))
    empty = judge_run(make_run(tmp_path / "empty", "", hand_room))
    assert gold.pass_rate_judged == 1.0 and gold.n_errors == 1  # C-018 is llm_only
    assert (gold.n_positive, gold.n_positive_passed) == (16, 15)
    assert empty.n_passed == 3 and empty.pass_rate == pytest.approx(3 / 19)
    assert empty.pass_rate_positive == 0.0
    stored = json.loads((tmp_path / "empty" / "scores.json").read_text())
    assert stored["n_positive"] == 16 and stored["n_positive_passed"] == 0
    assert stored["pass_rate_positive"] == 0.0
    assert "positive criteria 0/16 (0.0%)" in stored["summary"]


def test_a_negation_elsewhere_in_the_sentence_does_not_deny_the_claim(hand_room):
    memo = swap("Orion consented to the change of control and waived its termination right "
                "on February 20, 2025 [D00007 p.1]. No action needed.",
                "Orion may terminate the Supply Agreement on a change of control of Harbor "
                "[D00006 p.1], and Meridian could not sell the business on without that risk.")
    assert verdict(judge_memo(hand_room, memo), "C-007").verdict == "fail"
    denied = swap("Orion consented to the change of control and waived its termination right "
                  "on February 20, 2025 [D00007 p.1]. No action needed.",
                  "Orion consented on February 20, 2025 [D00007 p.1], so no consent is "
                  "required from Orion under the supply agreement [D00006 p.1].")
    assert verdict(judge_memo(hand_room, denied), "C-007").verdict == "pass"


@pytest.mark.parametrize("naming", [
    "- Also reviewed: the complaint [D00010 p.1, Pryce v. Harbor, pending docket RG23-118204].",
    "### Pryce Industrial (formerly pending)\n\nReviewed [D00010 p.1] with the release.",
])
def test_naming_the_cured_document_is_not_stating_the_claim(hand_room, naming):
    memo = swap("## Resolved Items", f"{naming}\n\n## Resolved Items")
    assert verdict(judge_memo(hand_room, memo), "C-011").verdict == "pass"
    live = swap("## Resolved Items", "- The Pryce lawsuit remains pending [D00010 p.1].\n\n"
                "## Resolved Items")
    assert verdict(judge_memo(hand_room, live), "C-011").verdict == "fail"


def test_an_amount_range_is_compared_as_a_range(hand_room):
    line = "estimates remediation at $1.45 million, within a range of $1.1 million to $1.8 million"
    ranged = swap(line, "estimates remediation at $1.1\u20131.8 million")
    assert verdict(judge_memo(hand_room, ranged), "C-014").verdict == "pass"
    wide = swap(line, "estimates remediation at $0.5\u20135 million")
    assert verdict(judge_memo(hand_room, wide), "C-014").verdict == "fail"
    upper = swap(line, "estimates remediation at $1.8 million")
    assert verdict(judge_memo(hand_room, upper), "C-014").verdict == "fail"


def test_a_fact_stated_with_the_opposite_polarity_fails(hand_room):
    opposite = swap("Whitfield's severance is double-trigger: it is paid only if her employment "
                    "is terminated without cause or for good reason within 12 months after a "
                    "change in control",
                    "Whitfield's severance is single-trigger: it is paid on a change in control")
    result = verdict(judge_memo(hand_room, opposite), "C-004")
    assert result.verdict == "fail" and "single-trigger" in result.reasoning
    assert verdict(judge_memo(hand_room, GOLD), "C-004").verdict == "pass"
    not_single = swap("Whitfield's severance is double-trigger:",
                      "Whitfield's severance is not single-trigger:")
    assert verdict(judge_memo(hand_room, not_single), "C-004").verdict == "pass"


def test_an_llm_only_criterion_is_not_judgeable_by_the_reference_judge(hand_room):
    memo = GOLD + "\nA cure period of 30 days applies to the change of control default.\n"
    result = verdict(judge_memo(hand_room, memo), "C-018")
    assert result.verdict == "error" and "llm_only" in result.reasoning
