"""docs/schemas/ holds the JSON Schema of each typed contract, generated from its model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dealroom.cli._schemas import CONTRACTS, render, schema, tables, with_tables

DOCS = Path(__file__).parents[1] / "docs" / "schemas"


@pytest.mark.parametrize("stem", sorted(CONTRACTS))
def test_each_schema_file_is_current(stem: str) -> None:
    path = DOCS / f"{stem}.schema.json"
    assert path.read_text(encoding="utf-8") == render(CONTRACTS[stem]), (
        "regenerate: python -m dealroom.cli._schemas docs/schemas")


def test_no_stale_schema_file_is_left() -> None:
    assert {p.name for p in DOCS.glob("*.json")} == {f"{s}.schema.json" for s in CONTRACTS}


def test_a_schema_says_what_the_model_refuses() -> None:
    sweep = schema(CONTRACTS["sweep-spec"])
    assert sweep["additionalProperties"] is False
    assert sweep["properties"]["samples"]["minimum"] == 1
    assert "turn budgets" in sweep["properties"]["max_turns"]["description"]
    grpo = json.loads((DOCS / "grpo-spec.schema.json").read_text())
    settings = grpo["$defs"]["GRPOSettings"]["properties"]
    assert settings["engine"]["enum"] == ["dealroom", "trl"]
    assert settings["group_size"]["minimum"] == 2
    spec = grpo["properties"]
    assert spec["budgetmix"]["uniqueItems"] is True and spec["budgetmix"]["items"] == {
        "type": "integer"}
    assert spec["generate"]["items"] == {"$ref": "#/$defs/GeneratedRoom"}
    assert "temperature" in spec["settings"]["propertyNames"]["not"]["enum"]


def test_the_architecture_tables_are_generated_from_the_records() -> None:
    doc = (DOCS.parent / "architecture.md").read_text(encoding="utf-8")
    assert with_tables(doc) == doc, "regenerate: python -m dealroom.cli._schemas docs/schemas"
    made = tables()
    assert "| `forked_from` | Only in a fork" in made["config.json"]
    assert "| `resumed` | `previous_events` |" in made["trajectory events"]
    stale = doc.replace("| `memo` | `sections`, `chars` |", "| `memo` | `sections` |")
    assert with_tables(stale) == doc


@pytest.mark.parametrize("page,block", [("measurement.md", "metrics.json"),
                                        ("judging.md", "scores.json"),
                                        ("evaluation.md", "sweep.json")])
def test_the_run_and_sweep_records_keys_are_generated_into_their_pages(page: str,
                                                                       block: str) -> None:
    doc = (DOCS.parent / page).read_text(encoding="utf-8")
    assert f"<!-- generated: {block} -->" in doc
    assert with_tables(doc) == doc, "regenerate: python -m dealroom.cli._schemas docs/schemas"
    made = tables()
    assert "| `behaviour.turns` | Root turns used. |" in made["metrics.json"]
    assert "| `criteria_results[].verdict` | `pass`, `fail` or `error`" in made["scores.json"]
    assert "| `episodes[].seed` | The sample's seed. |" in made["sweep.json"]


def test_the_record_schemas_are_versioned_and_keep_unknown_keys() -> None:
    for stem in ("metrics", "scores", "sweep"):
        made = schema(CONTRACTS[stem])
        assert made["properties"]["version"]["type"] == "integer"
        assert made.get("additionalProperties", True) is not False  # newer keys are read
