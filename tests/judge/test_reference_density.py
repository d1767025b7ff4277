"""List detection on dense rubrics: large rooms put many rubric amounts within 0.5% of each other.

A 5,000-document room's rubric holds hundreds of amounts, so one figure of a finding is often
within tolerance of several other findings' amounts. Stating it must not make a paragraph "a
list"; stating three other findings' figures still must.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dealroom.judge import reference_judge
from dealroom.judge._reference import LISTED, Others, others_of
from dealroom.room import generate_room, load_manifest
from dealroom.room._generate._findings import usd

N_FINDINGS = 400
BASE, STEP = 1_000_000, 1_000
"""Finding k's amount is BASE + STEP·k: each lies within 0.5% of 10 to 14 other findings'."""


def _name(k: int) -> str:
    return f"Party{k:03d} Holdings"


def _doc(k: int) -> str:
    return f"D{k + 1:05d}"


def _dense_task() -> dict:
    criteria = []
    for k in range(N_FINDINGS):
        finding = f"F-{k:03d}"
        criteria.append(
            {
                "id": f"C-{2 * k + 1:03d}",
                "title": f"{_name(k)} exposure",
                "type": "monetary",
                "finding": finding,
                "expect": {
                    "cite": [_doc(k)],
                    "amounts": [{"value": BASE + STEP * k, "tolerance": (BASE + STEP * k) * 0.005}],
                    "terms": [[_name(k)]],
                },
            }
        )
        criteria.append(
            {
                "id": f"C-{2 * k + 2:03d}",
                "title": f"{_name(k)} severity",
                "type": "severity",
                "finding": finding,
                "expect": {"cite": [_doc(k)], "terms": [[_name(k)]], "severity": "high"},
            }
        )
    return {"title": "dense", "instructions": "", "criteria": criteria}


def _verdicts(task: dict, memo: str) -> dict[str, str]:
    scores = asyncio.run(reference_judge()(task, {"memo": memo}))
    return {r.id: r.verdict for r in scores.criteria_results}


def _paragraph(k: int, extra: str = "") -> str:
    return (
        f"{_name(k)} may claim indemnity under its agreement [{_doc(k)} p.2]; the exposure is "
        f"{usd(BASE + STEP * k)}.{extra} Severity: High."
    )


@pytest.fixture(scope="module")
def dense() -> dict:
    return _dense_task()


def test_the_rubric_is_dense(dense: dict) -> None:
    others = others_of(dense)["C-401"]  # finding 200: $1,200,000
    near = [v for v in others.amounts if abs(v - 1_200_000) <= 1_200_000 * 0.005]
    assert len(near) >= 2 * LISTED


def test_a_finding_stating_its_own_amount_is_not_a_list(dense: dict) -> None:
    # the amount is within 0.5% of a dozen other findings' amounts: one figure, one finding
    memo = "# Key Findings\n\n" + "\n\n".join(_paragraph(k) for k in (0, 200, 399))
    verdicts = _verdicts(dense, memo)
    for k in (0, 200, 399):
        assert verdicts[f"C-{2 * k + 1:03d}"] == "pass", k
        assert verdicts[f"C-{2 * k + 2:03d}"] == "pass", k


def test_two_figures_of_other_findings_are_allowed_three_are_a_list(dense: dict) -> None:
    monetary = "C-401"  # finding 200
    # figures of findings 100 and 300 (each also near many other amounts), one in two formats
    two = _paragraph(200, " It is the sum of $1.1 million ($1,100,000) and $1,300,000 of fees.")
    assert _verdicts(dense, two)[monetary] == "pass"
    three = _paragraph(200, " Compare $1,100,000, $1,300,000 and $1,050,000.")
    assert _verdicts(dense, three)[monetary] == "fail"
    # figures near other findings' amounts but no rubric amount exactly: still three figures
    near = _paragraph(200, " Compare $1,100,400, $1,300,300 and $1,050,200.")
    assert _verdicts(dense, near)[monetary] == "fail"


def test_count_amounts_counts_stated_figures_not_rubric_amounts() -> None:
    others = Others(amounts=(100.0, 100.3, 100.6, 200.0, 300.0))
    assert others.count_amounts((100.3,)) == 1  # within 0.5% of three amounts: one figure
    assert others.count_amounts((100.3, 100.3, -100.3)) == 1
    assert others.count_amounts((100.0, 100.3, 100.6)) == 3
    assert others.count_amounts((100.0, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6)) == 3
    assert others.count_amounts((150.0, 250.0)) == 0
    assert others.count_amounts((100.0, 200.0, 300.0)) == 3
    # the finding's own figures are not counted, whatever they are near
    own = Others(amounts=(100.0, 100.6, 200.0), own=(100.3,))
    assert own.count_amounts((100.3, 200.0)) == 1


def test_stuffing_a_dense_rubric_passes_nothing(dense: dict) -> None:
    ks = range(N_FINDINGS)
    amounts = [
        t for k in ks for t in (usd(BASE + STEP * k), f"${(BASE + STEP * k) / 1e6:g} million")
    ]
    everything = (
        " ".join(f"[{_doc(k)}]" for k in ks)
        + " "
        + ", ".join(amounts + [_name(k) for k in ks])
        + ". Severity: High."
    )
    memos = {
        "one_paragraph": everything,
        "per_finding_lines": "\n".join(
            f"- {_name(k)} [{_doc(k)}] Severity: High. " + ", ".join(amounts) for k in ks
        ),
        "with_headings": "# Key Findings\n\n## High-severity findings\n\n" + everything,
    }
    for style, memo in memos.items():
        passed = [i for i, v in _verdicts(dense, memo).items() if v == "pass"]
        assert passed == [], (style, passed[:5])


def _stuffing(room: Path, task: dict) -> dict[str, str]:
    """Memos that list every document id, rubric amount, date and party name of the room."""
    ids = [d.id for d in load_manifest(room).documents]
    values = sorted({a["value"] for c in task["criteria"] for a in c["expect"].get("amounts", [])})
    amounts = [t for v in values for t in (usd(v), f"${v / 1e6:g} million")]
    dates = sorted({d for c in task["criteria"] for d in c["expect"].get("dates", [])})
    parties = sorted(
        {c["expect"]["terms"][0][0] for c in task["criteria"] if c["expect"].get("terms")}
    )
    labels = "Severity: High. Severity: Medium. Severity: Low."
    everything = " ".join(f"[{i}]" for i in ids) + " " + ", ".join(amounts + dates + parties)
    cited = sorted({d for c in task["criteria"] for d in c["expect"].get("cite", [])})
    return {
        "one_paragraph": f"{everything} {labels}",
        "bullets_with_everything": "\n".join(f"- {everything}" for _ in range(3)),
        "with_headings": "# Executive Summary\n\n# Key Findings\n\n"
        + everything
        + "\n\n# Recommended Next Steps\n",
        "bag_cited": " ".join(parties + amounts + dates)
        + f" {labels} "
        + " ".join(f"[{d} p.1]" for d in cited),
        "table_of_cited_docs": "| Document | Parties | Amounts |\n|---|---|---|\n"
        + "\n".join(f"| [{d}] | {', '.join(parties)} | {', '.join(amounts)} |" for d in cited),
    }


@pytest.mark.slow
@pytest.mark.parametrize("seed", [5, 6])
def test_five_thousand_document_room(tmp_path: Path, seed: int) -> None:
    room = tmp_path / f"r5k-{seed}"
    generate_room(room, docs=5000, secret="tests", seed=seed, tokens=6_000_000, workers=2)
    task = json.loads((room / "task.json").read_text())
    assert len(task["criteria"]) >= 1200
    gold = (room / "answer_key" / "gold_memo.md").read_text()
    verdicts = _verdicts(task, gold)
    assert [k for k, v in verdicts.items() if v != "pass"] == []
    positives = [
        c["id"]
        for c in task["criteria"]
        if c["type"] != "formatting" and not c["expect"].get("negative")
    ]
    for style, memo in _stuffing(room, task).items():
        verdicts = _verdicts(task, memo)
        passed = [i for i in positives if verdicts[i] == "pass"]
        assert passed == [], (style, passed[:10])
