"""The oracle sub-agent: its spec, what it answers, and that it never answers past the pages
it was sent."""

import asyncio
import doctest
import json
import random
import re

import pytest

from dealroom.errors import ConfigError, ModelError
from dealroom.harness import run_agent
from dealroom.models import OracleSettings, _oracle, open_model, resolve_model_spec, split_spec
from dealroom.room import Room, load_answer_key

CITE = re.compile(r"\[(D\d{5}) p\.(\d+)\]")
LINE = re.compile(r"^ISSUE: .+ \| SEVERITY: (high|medium|low) \| AMOUNT: .+ \| DOC: (D\d{5}) \| "
                  r"PAGE: (\d+)$")


def test_the_docstrings_examples_hold():
    assert doctest.testmod(_oracle).failed == 0


def test_spec_strings_give_the_knobs_and_refuse_bad_ones():
    spec = resolve_model_spec("oracle:recall=0.7,noise=0.1,seed=3")
    assert (spec.kind, spec.name) == ("oracle", "oracle:recall=0.7,noise=0.1,seed=3")
    assert spec.options == {"recall": 0.7, "noise": 0.1, "seed": 3}
    assert resolve_model_spec("oracle").options == {"recall": 1.0, "noise": 0.0, "seed": 0}
    assert split_spec("scripted") == ("scripted", {})
    with pytest.raises(ConfigError, match="has no option depth"):
        resolve_model_spec("oracle:depth=2")
    with pytest.raises(ConfigError, match="recall must be between 0 and 1"):
        resolve_model_spec("oracle:recall=1.5")
    with pytest.raises(ConfigError, match="seed an integer"):
        resolve_model_spec("oracle:seed=x")
    with pytest.raises(ConfigError, match="write oracle:KEY=VALUE"):
        resolve_model_spec("oracle:recall")
    with pytest.raises(ConfigError, match="simulated sub-agent"):
        resolve_model_spec("oracle", role="root")


def _random_calls(room: Room, n: int, seed: int) -> list[dict]:
    """Sub-call records over random documents and page ranges of ``room``."""
    rng = random.Random(seed)
    calls = []
    for _ in range(n):
        docs = []
        for doc in rng.sample(room.docs, rng.randint(1, 3)):
            first = rng.randint(1, doc.pages)
            docs.append({"id": doc.id, "pages": [first, rng.randint(first, doc.pages)]})
        calls.append({"room": str(room.path), "prompt": "read", "docs": docs,
                      "truncated": False})
    return calls


def _evidence_pages(finding: dict) -> set[tuple[str, int]]:
    return {(e["doc"], e["page"]) for e in finding["evidence"]}


def test_the_oracle_never_answers_a_finding_outside_the_pages_it_was_sent(generated_room):
    room = Room.open(generated_room)
    findings = load_answer_key(generated_room)["findings"]
    for call in _random_calls(room, 300, seed=5):
        sent = {(d["id"], p) for d in call["docs"] for p in range(d["pages"][0],
                                                                  d["pages"][1] + 1)}
        text = _oracle.answer(findings, call, "", OracleSettings())
        expected = [f for f in findings if _evidence_pages(f) & sent]
        if not expected:
            assert text == "NONE"
            continue
        lines = text.splitlines()
        assert len(lines) == len(expected)
        for line, finding in zip(lines, expected, strict=True):
            match = LINE.match(line)
            assert match, line
            assert (match.group(2), int(match.group(3))) in sent
            cited = {(d, int(p)) for d, p in CITE.findall(line)}
            assert cited and cited <= sent & _evidence_pages(finding)


def test_recall_noise_and_seeds(generated_room):
    room = Room.open(generated_room)
    findings = load_answer_key(generated_room)["findings"]
    whole = [{"room": str(room.path), "docs": [{"id": d.id, "pages": [1, d.pages]}
                                               for d in room.docs], "prompt": "read"}][0]
    full = _oracle.answer(findings, whole, "", OracleSettings()).splitlines()
    assert len(full) == len(findings)
    assert _oracle.answer(findings, whole, "", OracleSettings(recall=0.0)) == "NONE"
    halves = {_oracle.answer(findings, whole, "", OracleSettings(recall=0.5, seed=s))
              for s in range(6)}
    assert len(halves) > 1  # seeds give distinct samples
    assert _oracle.answer(findings, whole, "", OracleSettings(recall=0.5, seed=2)) == \
        _oracle.answer(findings, whole, "", OracleSettings(recall=0.5, seed=2))
    noisy = _oracle.answer(findings, whole, "", OracleSettings(noise=1.0)).splitlines()
    wrong = [line for line in noisy if line not in full]
    assert len(wrong) == len(full)  # one look-alike per true line at noise 1
    sent = {(d["id"], p) for d in whole["docs"] for p in range(1, d["pages"][1] + 1)}
    for line in wrong:
        match = LINE.match(line)
        assert match and "outstanding" in line and (match.group(2), int(match.group(3))) in sent


def test_a_page_cut_to_fit_counts_only_for_the_text_that_was_sent(generated_room):
    findings = load_answer_key(generated_room)["findings"]
    evidence = findings[0]["evidence"][0]
    call = {"room": str(generated_room), "truncated": True,
            "docs": [{"id": evidence["doc"], "pages": [1, evidence["page"]]}]}
    assert evidence["doc"] not in _oracle.answer(findings, call, "nothing here",
                                                 OracleSettings())
    sent = " ".join(evidence["fact"].lower().split())
    assert evidence["doc"] in _oracle.answer(findings, call, sent, OracleSettings())


def test_a_call_without_the_slice_record_is_refused():
    oracle = open_model("oracle")
    with pytest.raises(ModelError, match="answers only the sub-calls of a run"):
        asyncio.run(oracle.chat([{"role": "user", "content": "=== D00001 | x ==="}]))


def test_a_run_with_the_oracle_answers_from_the_slices_it_sent(generated_room, tmp_path):
    result = run_agent(generated_room, tmp_path / "run", root="scripted", sub="oracle",
                       max_turns=8)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["sub"] == "oracle" and config["simulators"] == ["oracle"]
    assert result.metrics["simulators"] == ["oracle"]
    events = [json.loads(x) for x in (tmp_path / "run" / "trajectory.jsonl").open()]
    answered = 0
    for e in (e for e in events if e["type"] == "model_call" and e["role"] == "sub"):
        sent = {(d["id"], p) for d in e["input"]["docs"]
                for p in range(d["pages"][0], d["pages"][1] + 1)}
        for line in e["output"].splitlines():
            if line == "NONE":
                continue
            answered += 1
            assert {(d, int(p)) for d, p in CITE.findall(line)} <= sent
    assert answered >= 3


def test_a_room_without_an_answer_key_stops_the_run_before_anything_is_written(
        small_room, tmp_path):
    with pytest.raises(ConfigError, match="cannot run on .*has no answer key"):
        run_agent(small_room, tmp_path / "run", root="scripted", sub="oracle")
    assert not (tmp_path / "run").exists()
