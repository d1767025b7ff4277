"""Run folder records validated on read by their pydantic types: each event type's own fields
(a discriminated union on ``type``), ``config.json`` (after its migration), lenient where the
format is open (unknown keys and types, keys older folders lack)."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter

from dealroom.cli._schemas import schema
from dealroom.errors import ConfigError, InputError
from dealroom.runs import (
    EVENT_TYPES,
    RUN_VERSION,
    RunFolder,
    TrajectoryEvent,
    _config,
    migrate_config,
)


def folder_with(tmp_path, events, config=None):
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(config or {"version": 1, "harness": "rlm"}))
    (run / "trajectory.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return RunFolder.open(run)


def event(seq, kind, **fields):
    return {"seq": seq, "t": 0.5, "type": kind, "agent": "root", "depth": 0, **fields}


@pytest.mark.parametrize("kind,field,value,noun", [
    ("run_start", "docs", "20", "an integer"),
    ("model_call", "input", ["hello"], "an object"),
    ("model_call", "latency_s", "fast", "a number"),
    ("cell", "timed_out", "no", "true or false"),
    ("compaction", "turns", ["1", "4"], "an integer"),
    ("sandbox", "degraded", "none", "a list"),
    ("tool", "output_chars", 1.5, "an integer"),
    ("resumed", "previous_events", True, "an integer"),
])
def test_each_event_type_s_own_fields_are_checked(tmp_path, kind, field, value, noun):
    folder = folder_with(tmp_path, [event(0, "run_start", room="r", docs=1, tokens=9),
                                    event(1, kind, **{field: value})])
    with pytest.raises(InputError, match=rf"trajectory.jsonl event seq=1: {field}\S* is "
                                         rf".*, not {noun}: the run folder is damaged"):
        folder.events()


def test_unknown_fields_and_types_and_missing_fields_are_read(tmp_path):
    events = [event(0, "run_end", status="submitted", reason="done", turns=2, extra={"a": 1}),
              event(1, "future_kind", turn="anything"), {"seq": 2, "type": "memo"}]
    assert folder_with(tmp_path, events).events() == events  # as written, nothing added


def test_an_event_without_a_type_is_named(tmp_path):
    with pytest.raises(InputError, match="event seq=0: type is missing"):
        folder_with(tmp_path, [{"seq": 0, "turn": 1}]).events()


@pytest.mark.parametrize("change,message", [
    ({"simulators": "oracle"}, "simulators is 'oracle', not a list"),
    ({"forked_from": {"run": "/r", "turn": "3", "events": 9, "root": None}},
     r"forked_from.turn is '3', not an integer"),
    ({"deliverables": {"memo": 1}}, "deliverables.memo is 1, not a string"),
    ({"settings": {"max_turns": "30"}}, "settings: max_turns is '30', not an integer"),
])
def test_config_fields_have_their_types(tmp_path, change, message):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"version": 1, "harness": "rlm", **change}))
    with pytest.raises(InputError, match=message):
        RunFolder.open(run)


def test_migrate_config_brings_each_older_version_to_the_current_one(monkeypatch):
    assert migrate_config({"harness": "rlm"}) == {"harness": "rlm", "version": RUN_VERSION}
    for bad in (RUN_VERSION + 1, 0, "1", True):
        with pytest.raises(ConfigError, match="upgrade dealroom"):
            migrate_config({"version": bad})
    # the next format: version 2 renames a key; a version-1 config reads as version 2
    monkeypatch.setattr(_config, "RUN_VERSION", 2)
    monkeypatch.setitem(_config.MIGRATIONS, 1, lambda d: {("policy" if k == "root" else k): v
                                                         for k, v in d.items()})
    assert _config.migrate_config({"root": "scripted"}) == {"policy": "scripted", "version": 2}
    assert _config.migrate_config({"version": 2, "policy": "p"}) == {"version": 2, "policy": "p"}


def test_the_trajectory_event_schema_has_every_event_type():
    defs = schema("dealroom.runs:TrajectoryEvent")["$defs"]
    assert {record.__name__ for record in EVENT_TYPES.values()} <= set(defs)
    assert defs["Cell"]["properties"]["turn"] == {
        "description": "The root turn whose reply held the code.", "title": "Turn",
        "type": "integer"}
    assert TypeAdapter(TrajectoryEvent).validate_python(event(0, "wave", wave=1))["wave"] == 1


def test_a_config_with_null_models_and_keys_of_its_own_opens(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    config = {"harness": "toolloop", "root": None, "sub": None, "concurrency": None, "x": [1]}
    (run / "config.json").write_text(json.dumps(config))
    assert RunFolder.open(run).config == {**config, "version": RUN_VERSION}
