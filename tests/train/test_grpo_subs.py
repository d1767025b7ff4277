"""Sub-agents trained with the root (``train_subs``, ``sub = "policy"``): the policy's sub-calls
and children are recorded token-exact, become sequences of their own with the rollout's
advantage, and the update trains on them; without train_subs nothing changes."""

import json
import math

import pytest

from dealroom.errors import ConfigError
from dealroom.train import GRPOSettings, train_grpo
from dealroom.train._grpo_settings import spec_from_dict

FAST = dict(group_size=2, batch_size=2, steps=1, max_new_tokens=12, max_turns=3,
            save_every=1, lora_rank=4, lora_alpha=8, learning_rate=1e-2, extra_groups=0)
ROOT_PROGRAMS = [
    "```python\nr = llm_batch(['List the parties.', 'List the amounts.'])\nprint(r)\n```",
    "```python\nprint(rlm('Name one risk.'))\nsubmit()\n```",
]


def forced_policy(loaded, name):
    """The policy in memory made to write the root's programs above: each reply's ids are
    scored by the model at temperature 1 (teacher forcing), so its token record is what
    sampling those ids would have recorded. The sub-calls and the child (played by the
    sub-agent model, here the policy) are sampled for real."""
    import time

    import torch

    from dealroom.models import HFModelClient
    from dealroom.models._hfbatch import Sampling
    from dealroom.train._grpo_loss import token_logprobs

    class Forced(HFModelClient):
        async def chat(self, messages, *, max_tokens=None, temperature=None, stop=None,
                       response_format=None):
            tok = loaded.tokenizer
            prompt, reused = self._prompt(tok, messages)
            replies = sum(m["role"] == "assistant" for m in messages)
            text = ROOT_PROGRAMS[min(replies, 1)]
            ids = tok.encode(text, add_special_tokens=False) + [tok.eos_token_id]
            whole = torch.tensor([prompt + ids])
            where = torch.arange(len(prompt) - 1, len(prompt) + len(ids) - 1)
            with torch.no_grad():
                logprobs = token_logprobs(loaded.model, whole, 1.0, where)[0].tolist()
            return self._result(loaded, messages, prompt, reused, (ids, logprobs, True, "stop"),
                                Sampling(len(ids), 1.0), time.perf_counter())

    return Forced(loaded, name=name)


class ScriptedJudge:
    """Passes every criterion of the first rollout judged, fails the rest's."""

    name = "scripted"
    args: dict = {}

    def __init__(self):
        self.calls = 0

    async def __call__(self, task, deliverables):
        from dealroom.judge import CriterionResult, Scores

        verdict = "pass" if self.calls == 0 else "fail"
        self.calls += 1
        return Scores([CriterionResult(c["id"], c.get("title", ""), verdict, "scripted")
                       for c in task["criteria"]], judge={"name": "scripted"})


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    from dealroom.room import generate_room

    path = tmp_path_factory.mktemp("subs") / "g4"
    generate_room(path, docs=4, seed=1, secret="tests")
    return path


def make_spec(model_dir, room, sub="policy", **grpo):
    return spec_from_dict({"model": f"hf:{model_dir}", "rooms": [str(room)], "sub": sub,
                           "settings": {"depth": 2}, "grpo": {**FAST, **grpo}})


def run_training(model_dir, room, out, monkeypatch, **grpo):
    """One GRPO step with the forced root; returns the result and the rollouts seen."""
    from dealroom.train import _grpo_step

    def client(loaded, model, seed, max_new_tokens, step, *, follows=None):
        if follows is not None:  # the sub-calls: the policy, sampled for real
            return real(loaded, model, seed, max_new_tokens, step, follows=follows)
        named = real(loaded, model, seed, max_new_tokens, step)
        loaded.batcher.leave(named)  # only its name is used
        return forced_policy(loaded, named.name)

    real = _grpo_step.policy_client
    monkeypatch.setattr(_grpo_step, "policy_client", client)
    seen = []
    result = train_grpo(make_spec(model_dir, room, **grpo), out, judge=ScriptedJudge(),
                        on_rollout=seen.append)
    return result, seen


@pytest.fixture(scope="module")
def trained(tiny_model_dir, room, tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        return run_training(tiny_model_dir, room, tmp_path_factory.mktemp("subs") / "CKPT",
                            monkeypatch, train_subs=True)


def test_the_policys_sub_calls_and_children_are_recorded_token_exact(trained, tiny_tokenizer):
    from dealroom.models import reply_text
    from dealroom.runs import RunFolder, read_tokens

    result, seen = trained
    for rollout in seen:
        calls = [e for e in RunFolder(rollout.run).events() if e["type"] == "model_call"]
        root = {e["model"] for e in calls if e["role"] == "root"}
        subs = [e for e in calls if e["role"] == "sub"]
        children = [e for e in calls if e["role"] == "child_root"]
        assert len(subs) == 2 and children and rollout.status == "ok"
        for call in subs + children:
            assert call["model"] in root, "the policy answers under the root's name"
            record = read_tokens(rollout.run, call["tokens"])
            assert reply_text(tiny_tokenizer, record) == call["output"]
            assert len(record.logprobs) == len(record.completion_ids) > 0
        assert {e["agent"] for e in children} == {"root/c2-0"}


def test_a_step_with_train_subs_trains_root_child_and_sub_sequences(trained):
    result, seen = trained
    row = result.log[0]
    assert row["groups"] == 1 and math.isfinite(row["loss"])
    assert row["sub_sequences"] == 4 and row["child_sequences"] == 2
    assert row["sequences_missed"] == 0
    assert 0 < row["sub_trained_tokens"] < row["trained_tokens"]
    assert math.isfinite(row["loss_subs"])
    logged = [json.loads(x) for x in (result.out / "log.jsonl").read_text().splitlines()]
    assert logged[-1]["sub_sequences"] == 4


def test_a_sub_sequence_masks_only_the_subs_sampled_tokens(trained, tiny_tokenizer):
    from dealroom.runs import RunFolder, read_tokens
    from dealroom.train._rollout import policy_sequences

    _, seen = trained
    run = seen[0].run
    sequences, missed = policy_sequences(run, tiny_tokenizer)
    assert missed == 0 and [s.kind for s in sequences] == ["child", "sub", "sub"]
    subs = [e for e in RunFolder(run).events() if e.get("role") == "sub"]
    for sequence, call in zip(sequences[1:], subs, strict=True):
        record = read_tokens(run, call["tokens"])
        assert sequence.input_ids == record.prompt_ids + record.completion_ids
        assert sequence.mask == [0] * len(record.prompt_ids) + [1] * len(record.completion_ids)
        assert sequence.behaviour == record.logprobs
    child = sequences[0]  # the child's whole conversation, its replies' ids the mask's
    records = [read_tokens(run, e["tokens"]) for e in RunFolder(run).events()
               if e.get("role") == "child_root"]
    assert [i for i, m in zip(child.input_ids, child.mask, strict=True) if m] == \
        [i for r in records for i in r.completion_ids]
    assert child.behaviour == [p for r in records for p in r.logprobs]
    assert "You are a child agent" in tiny_tokenizer.decode(child.input_ids)


def test_the_loss_on_sub_sequences_is_the_direct_computation(trained, lora_policy,
                                                             tiny_tokenizer):
    """Before the step's optimizer step the policy is the old one: ratio 1, and each token's
    loss is -min(exp(old - behaviour), tis_cap) * A, with A the rollout's advantage."""
    import torch

    from dealroom.train._grpo_loss import token_logprobs
    from dealroom.train._grpo_step import Group, update
    from dealroom.train._rollout import episode_tokens, policy_sequences

    _, seen = trained
    runs = [r for r in seen if r.status == "ok"][:2]
    settings = GRPOSettings(**{**FAST, "train_subs": True, "tis_cap": 1.5})
    advantages = [1.0, -1.0]
    roots = [episode_tokens(r.run, tiny_tokenizer) for r in runs]
    others = [policy_sequences(r.run, tiny_tokenizer)[0] for r in runs]
    group = Group(0, "room", 3, runs, trained=runs, episodes=roots, advantages=advantages,
                  others=others)
    model = lora_policy(scale=0.02)
    expected, tokens = 0.0, 0
    with torch.no_grad():
        for more, advantage in zip(others, advantages, strict=True):
            for seq in more:
                ids = torch.tensor([seq.input_ids])
                where = torch.tensor([i - 1 for i, m in enumerate(seq.mask) if m])
                old = token_logprobs(model, ids, settings.temperature, where)[0]
                tis = torch.clamp(torch.exp(old - torch.tensor(seq.behaviour)), max=1.5)
                expected += float((-tis * advantage).sum())
                tokens += len(where)
    before = {k: v.clone() for k, v in model.state_dict().items() if "lora_" in k}
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    figures = update(model, optimizer, [group], settings, step=0)
    assert figures["sub_trained_tokens"] == tokens
    assert figures["sub_sequences"] == 4 and figures["child_sequences"] == 2
    assert figures["loss_subs"] == pytest.approx(expected / tokens, rel=1e-4)
    root_tokens = sum(sum(e.mask) for e in roots)
    assert figures["trained_tokens"] == root_tokens + tokens

    # the sub sequences move the weights: the same step without them ends elsewhere
    alone = lora_policy(scale=0.02)
    optimizer = torch.optim.AdamW([p for p in alone.parameters() if p.requires_grad], lr=1e-2)
    plain = Group(0, "room", 3, runs, trained=runs, episodes=roots, advantages=advantages)
    update(alone, optimizer, [plain], GRPOSettings(**FAST), step=0)
    after, without = model.state_dict(), alone.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert any(not torch.allclose(after[k], without[k]) for k in before)


def test_without_train_subs_the_root_alone_trains(tiny_model_dir, room, tmp_path, monkeypatch,
                                                  tiny_tokenizer):
    from dealroom.train._rollout import episode_tokens

    result, seen = run_training(tiny_model_dir, room, tmp_path / "CKPT", monkeypatch)
    row = result.log[0]
    assert not {"sub_sequences", "child_sequences", "loss_subs", "sub_trained_tokens",
                "sequences_missed"} & set(row)
    assert row["sub_calls"] == 2, "the policy still answers the sub-calls"
    assert row["trained_tokens"] == sum(sum(episode_tokens(r.run, tiny_tokenizer).mask)
                                        for r in seen)


def test_train_subs_is_refused_with_the_trl_engine_and_policy_is_a_sub_spec(tiny_model_dir,
                                                                           room):
    from dealroom.train._grpo_settings import check_spec

    with pytest.raises(ConfigError, match="train_subs works with engine dealroom"):
        GRPOSettings(**{**FAST, "train_subs": True, "engine": "trl"})
    check_spec(make_spec(tiny_model_dir, room, sub="fast=policy strong=oracle"))


def test_held_out_sweeps_run_the_checkpoint_where_the_spec_says_policy(tiny_model_dir, room):
    from dealroom.train._grpo import _record
    from dealroom.train._rollout import policy_as

    assert policy_as("policy", "hf:CKPT") == "hf:CKPT"
    assert policy_as("fast=policy strong=oracle", "hf:CKPT") == "fast=hf:CKPT strong=oracle"
    assert policy_as("oracle", "hf:CKPT") == "oracle"
    record = _record(make_spec(tiny_model_dir, room))  # train.json: the sub is the root's model
    assert record["models"]["sub"]["model"] == _record(make_spec(
        tiny_model_dir, room, sub=f"hf:{tiny_model_dir}"))["models"]["sub"]["model"]
