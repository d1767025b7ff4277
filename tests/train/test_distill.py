"""Self-distillation for real on the tiny model: the spec checked on load, a round end to end
(sweep → export → SFT → the next round's root is the adapter), an interrupted loop resumed
without redoing a finished stage, a round that keeps nothing stopping the loop, and SFT that
continues an adapter."""

import doctest
import json
import re
import tomllib

import pytest
from support.cli import dealroom

from dealroom.errors import ConfigError
from dealroom.train import (
    DistillSpec,
    SFTSettings,
    _distill_spec,
    conversation_rows,
    load_distill_spec,
    self_distill,
    train_sft,
)

SFT = {"max_steps": 2, "grad_accum": 1, "lora_rank": 2, "lora_alpha": 4, "save_steps": 1,
       "lora_dropout": 0.0, "learning_rate": 1e-2}


def toml_value(value):
    return _distill_spec._value(value)


def write_spec(path, model, *, select=None, sft=None, **keys):
    keys = {"model": f"hf:{model},max_tokens=8,threads=2", "subs": ["oracle"], "samples": 2,
            "max_turns": [2], "settings": {"temperature": 0.7}, **keys}
    lines = [f"{k} = {toml_value(v)}" for k, v in keys.items()]
    lines += ["[[generate]]", "docs = 20", "seed = 1", 'secret = "distill"']
    for name, table in (("select", select or {"top_k": 1}), ("sft", sft or SFT)):
        lines += [f"[{name}]"] + [f"{k} = {toml_value(v)}" for k, v in table.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def stamps(folder):
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def test_the_spec_module_examples_hold():
    assert doctest.testmod(_distill_spec).failed == 0


@pytest.mark.parametrize(("change", "message"), [
    ({"roots": ["scripted"]}, "roots is set by the loop"),
    ({"rounds": 3}, "unknown key 'rounds'; the keys are model, adapter, select, sft and"),
    ({"model": "scripted"}, "model must be the root to train, an hf: spec"),
    ({"model": "hf:local,adapter=/x"}, "model names an adapter"),
    ({"model": None}, "missing required key 'model': the root to train, an hf: spec"),
    ({"model": 3}, "model must be a string, got 3"),
    ({"select": {"top_n": 2}}, "[select] unknown key 'top_n'; the keys are min_pass_rate, "
                               "min_coverage, top_k"),
    ({"select": {"min_pass_rate": 2.0}}, "[select] min_pass_rate must be a number in [0, 1], "
                                         "got 2.0"),
    ({"select": {"min_coverage": "high"}}, "[select] min_coverage must be a number, got 'high'"),
    ({"select": {"top_k": True}}, "[select] top_k must be an integer, got True"),
    ({"select": {"top_k": 0}}, "[select] top_k must be an integer of at least 1, got 0"),
    ({"select": 3}, "select must be a table, got 3"),
    ({"select": {"reward": "pass+grounding"}}, '[select] reward must be "pass"'),
    ({"select": {"reward": {"kind": "total", "evidence_weight": 1.0}}},
     "[select] reward: evidence_weight weighs the evidence term"),
    ({"adapter": "nowhere"}, "adapter {tmp}/nowhere is not a LoRA adapter"),
    ({"adapter": 3}, "adapter must be a string, got 3"),
    ({"sft": {"rank": 2}}, "[sft] unknown key 'rank'; the keys are lora_rank"),
    ({"sft": {"lora_rank": 0}}, "[sft] lora_rank must be an integer of at least 1"),
    ({"samples": 0}, "samples must be an integer of at least 1, got 0"),
    ({"max_turns": "x"}, "max_turns[0] must be an integer, got 'x'"),
    ({"samples": 2}, "2 samples per room at temperature 0 (greedy decoding"),
    ({"seeds": [3, 4, 5], "settings": {"temperature": 0}}, "3 samples per room at temperature 0"),
])
def test_bad_specs_are_one_clear_error(tmp_path, change, message):
    data = {k: v for k, v in {"model": "hf:local", "rooms": ["rooms/a"], **change}.items()
            if v is not None}
    with pytest.raises(ConfigError, match=re.escape(message.format(tmp=tmp_path))):
        _distill_spec.distill_spec_from_dict(data, tmp_path)


def test_an_error_in_a_spec_file_names_the_file_and_the_part(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text('model = "hf:local"\nrooms = ["a"]\nsamples = 0\n')
    with pytest.raises(ConfigError, match=re.escape(
            f"self-distill spec {path}: the sweep part: samples must be an integer of at "
            "least 1, got 0")):
        load_distill_spec(path)


def test_the_schema_is_the_files_shape_loop_keys_beside_the_sweeps():
    schema = DistillSpec.model_json_schema()
    keys = set(schema["properties"])
    assert {"model", "adapter", "select", "sft", "rooms", "samples", "generate"} <= keys
    assert not {"roots", "sweep"} & keys and schema["additionalProperties"] is False
    assert "secret" in schema["properties"]["generate"]["items"]["required"]
    refs = set(re.findall(r'"#/\$defs/(\w+)"', json.dumps(schema)))
    assert refs <= set(schema["$defs"]), "every reference resolves"
    assert schema["$defs"]["SelectBars"]["properties"]["top_k"]["anyOf"][0]["minimum"] == 1


def test_a_spec_loads_with_paths_made_absolute_and_writes_a_sweep_spec(tmp_path):
    path = tmp_path / "spec.toml"
    (tmp_path / "start").mkdir()
    (tmp_path / "start" / "adapter_config.json").write_text("{}")
    path.write_text('model = "hf:local,threads=2"\nrooms = ["rooms/*"]\nmodels = "m.toml"\n'
                    'adapter = "start"\n'
                    'samples = 3\n[settings]\ncell_timeout = 5.0\ntemperature = 0.7\n'
                    '[select]\ntop_k = 2\n'
                    'min_coverage = 0.3\n[sft]\nmax_steps = 7\n')
    spec = load_distill_spec(path)
    assert spec.sweep["rooms"] == [str(tmp_path / "rooms/*")]
    assert spec.sweep["models"] == str(tmp_path / "m.toml")
    assert (spec.top_k, spec.min_coverage, spec.min_pass_rate) == (2, 0.3, None)
    assert spec.sft == SFTSettings(max_steps=7) and spec.adapter == str(tmp_path / "start")
    assert spec.root(tmp_path / "ckpt") == f"hf:local,threads=2,adapter={tmp_path / 'ckpt'}"
    written = tomllib.loads(_distill_spec.to_toml({**spec.sweep, "roots": [spec.root(None)]}))
    assert written == {**spec.sweep, "roots": ["hf:local,threads=2"]}


@pytest.fixture(scope="module")
def loop(tmp_path_factory, tiny_model_dir):
    """One round, killed in its training and run again: the folder and what each run did."""
    pytest.importorskip("peft")
    tmp = tmp_path_factory.mktemp("distill")
    spec = write_spec(tmp / "spec.toml", tiny_model_dir)
    out = tmp / "DIR"
    seen = []

    def interrupt(what, done, total):
        seen.append(what)
        if what == "round 1 train":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        self_distill(spec, out, 1, workers=1, progress=interrupt)
    before = stamps(out / "round-1" / "sweep") | stamps(out / "round-1" / "data")
    interrupted = json.loads((out / "rounds.json").read_text())
    again = []
    result = self_distill(spec, out, 1, workers=1,
                          progress=lambda what, done, total: again.append(what))
    return spec, out, result, seen, again, before, interrupted


def test_a_round_samples_judges_selects_and_trains_and_the_next_root_is_its_adapter(loop):
    spec, out, result, *_ = loop
    first, second = result.rounds
    assert result.stopped is None and [r["round"] for r in result.rounds] == [1, 2]
    assert (first["stage"], second["stage"]) == ("done", "evaluated")
    assert first["episodes"] == first["judged"] == 2 and first["failed"] == 0
    assert 0 <= first["pass_rate"] <= 1 and first["kept"] == 1
    assert first["left_out"] == {"not_top_k": 1} and first["rows"] >= 1
    assert first["steps"] == 2 and first["loss"] > 0
    ckpt = out / "round-1" / "ckpt"
    assert (ckpt / "adapter_config.json").is_file()
    assert json.loads((ckpt / "train.json").read_text())["adapter"] is None, "round 1: base"
    assert second["root"] == f"{load_distill_spec(spec).model},adapter={ckpt.resolve()}"
    for run in (out / "round-2" / "sweep" / "episodes").rglob("config.json"):
        assert json.loads(run.read_text())["root"].startswith(second["root"] + ",seed=")
    written = tomllib.loads((out / "round-2" / "sweep.toml").read_text())
    assert written["roots"] == [second["root"]] and written["samples"] == 2
    record = json.loads((out / "rounds.json").read_text())
    assert record["rounds"] == json.loads(json.dumps(result.rounds))
    manifest = json.loads((out / "round-1" / "data" / "manifest.json").read_text())
    assert {k: manifest["selection"][k] for k in ("min_pass_rate", "min_coverage", "top_k",
                                                  "room_median")} \
        == {"min_pass_rate": None, "min_coverage": None, "top_k": 1, "room_median": True}


def test_an_interrupted_loop_continues_in_its_stage_and_redoes_no_finished_one(loop):
    _, out, result, seen, again, before, interrupted = loop
    assert seen[-1] == "round 1 train" and "round 1 export" in seen
    assert interrupted["rounds"][-1]["stage"] == "train", "rounds.json follows the stages"
    assert "round 1 sweep" not in again and "round 1 export" not in again
    assert again[0] == "round 1 train" and again[-1] == "round 2 sweep"
    after = stamps(out / "round-1" / "sweep") | stamps(out / "round-1" / "data")
    assert {p: t for p, t in after.items() if p.name != "sweep.json"} == \
        {p: t for p, t in before.items() if p.name != "sweep.json"}
    log = [json.loads(x) for x in (out / "round-1" / "ckpt" / "log.jsonl").read_text()
           .splitlines()]
    assert [row["step"] for row in log] == [1, 2]
    done = stamps(out)
    rerun = self_distill(out.parent / "spec.toml", out, 1, workers=1)
    assert rerun.rounds == result.rounds and stamps(out).keys() == done.keys()
    assert {p: t for p, t in stamps(out).items() if p.name not in ("sweep.json", "rounds.json")
            } == {p: t for p, t in done.items() if p.name not in ("sweep.json", "rounds.json")}


def test_another_spec_in_the_same_folder_is_refused(loop, tmp_path):
    spec, out, *_ = loop
    other = tmp_path / "other.toml"
    other.write_text(spec.read_text().replace("samples = 2", "samples = 3"))
    with pytest.raises(ConfigError, match="self-distillation of another spec .*sweep"):
        self_distill(other, out, 1)
    with pytest.raises(ConfigError, match="--rounds must be at least 1"):
        self_distill(spec, out, 0)


def test_a_loop_can_start_from_an_adapter_and_a_round_that_keeps_no_run_stops_it(
        loop, tmp_path, tiny_model_dir):
    start = loop[1] / "round-1" / "ckpt"
    spec = write_spec(tmp_path / "spec.toml", tiny_model_dir, samples=1, max_turns=[1],
                      adapter=str(start), select={"min_pass_rate": 1.0})
    result = self_distill(spec, tmp_path / "DIR", 3, workers=1)
    (row,) = result.rounds
    assert row["root"].endswith(f",adapter={start.resolve()}")
    (config,) = (tmp_path / "DIR" / "round-1" / "sweep" / "episodes").rglob("config.json")
    assert json.loads(config.read_text())["root"].startswith(row["root"])
    assert row["stage"] == "stopped" and row["kept"] == 0
    assert row["left_out"] == {"below_pass_rate": 1}
    assert "kept no run to train on" in result.stopped
    assert not (tmp_path / "DIR" / "round-1" / "ckpt").exists()
    assert not (tmp_path / "DIR" / "round-2").exists()


def test_sft_can_continue_an_adapter(tmp_path, tiny_model_dir, tiny_tokenizer):
    """A round trains on from the previous round's adapter: with a learning rate near 0 the
    continued adapter is the previous one, not a fresh one (whose lora_B is zero)."""
    pytest.importorskip("peft")
    from safetensors.torch import load_file

    data = tmp_path / "DS"
    data.mkdir()
    msgs = [{"role": "system", "content": "You are the lead associate."},
            {"role": "user", "content": "Review the room. Turn 1 of 1."},
            {"role": "assistant", "content": "```python\nsubmit()\n```"}]
    (row,) = conversation_rows(msgs, tiny_tokenizer).rows
    (data / "tokenized.jsonl").write_text(json.dumps(
        {"input_ids": row.input_ids, "assistant_masks": row.assistant_masks}) + "\n")
    first = train_sft(data, f"hf:{tiny_model_dir}", tmp_path / "a", SFTSettings(**SFT)).out
    settings = SFTSettings(**{**SFT, "learning_rate": 1e-9, "max_steps": 1})
    second = train_sft(data, f"hf:{tiny_model_dir}", tmp_path / "b", settings, adapter=first).out
    before, after = (load_file(p / "adapter_model.safetensors") for p in (first, second))
    assert before.keys() == after.keys()
    assert all(v.abs().max() > 0 for k, v in after.items() if "lora_B" in k)
    assert all((before[k] - after[k]).abs().max() < 1e-6 for k in before)
    record = json.loads((second / "train.json").read_text())
    assert record["adapter"] == str(first.resolve()) and record["base"] == f"hf:{tiny_model_dir}"
    with pytest.raises(ConfigError, match="not a LoRA adapter"):
        train_sft(data, f"hf:{tiny_model_dir}", tmp_path / "c", settings, adapter=tmp_path)


def test_the_cli_prints_the_pass_rate_per_round_and_refuses_a_bad_spec(loop, tmp_path):
    from typer.testing import CliRunner

    from dealroom.cli import app

    spec, out, result, *_ = loop
    shown = CliRunner().invoke(app, ["train", "self-distill", str(spec), "--out", str(out),
                                     "--rounds", "1", "--workers", "1"])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "pass rate" in text and "2 round 1 2/2" in text and "base" in text
    rate = f"{result.rounds[1]['pass_rate']:.1%}"
    assert rate in text and "rounds.json" in text
    bad = tmp_path / "bad.toml"
    bad.write_text('model = "hf:local"\nrooms = ["x"]\nroot = "scripted"\n')
    refused = dealroom("train", "self-distill", str(bad), "--out", str(tmp_path / "o"))
    assert refused.returncode == 1 and "unknown key 'root'" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "o").exists()
