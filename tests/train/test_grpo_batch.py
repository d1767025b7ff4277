"""GRPO's rollouts in this process run side by side: a group's episodes step in lock-step and
their replies generate as one batch, with the tokens one-at-a-time rollouts sample."""

import json
from collections import Counter

import pytest

from dealroom.train import train_grpo
from dealroom.train._grpo_settings import spec_from_dict


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    from dealroom.room import generate_room

    path = tmp_path_factory.mktemp("grpo-batch") / "g6"
    generate_room(path, docs=6, seed=1, secret="tests")
    return path


class PassJudge:
    """Every criterion passes (the verdicts do not depend on the order of judging)."""

    name = "pass"
    args: dict = {}

    async def __call__(self, task, deliverables):
        from dealroom.judge import CriterionResult, Scores

        return Scores([CriterionResult(c["id"], c.get("title", ""), "pass", "ok")
                       for c in task["criteria"]], judge={"name": "pass"})


def _train(model_dir, room, out, rollout_batch, monkeypatch):
    """One step of one group of three rollouts; the size of every batch generated."""
    from dealroom.models import _hfbatch

    sizes = Counter()
    sample = getattr(_hfbatch.sample_batch, "original", _hfbatch.sample_batch)

    def counted(loaded, rows, pieces):
        sizes[len(rows)] += 1
        return sample(loaded, rows, pieces)

    counted.original = sample
    monkeypatch.setattr(_hfbatch, "sample_batch", counted)
    monkeypatch.setattr(_hfbatch, "LOCKSTEP_WAIT_S", 120)  # a batch waits for every episode
    spec = spec_from_dict({"model": f"hf:{model_dir}", "rooms": [str(room)], "sub": "oracle",
                           "grpo": {"group_size": 3, "batch_size": 3, "steps": 1,
                                    "max_new_tokens": 16, "max_turns": 2, "extra_groups": 0,
                                    "lora_rank": 4, "lora_alpha": 8,
                                    "rollout_batch": rollout_batch}})
    result = train_grpo(spec, out, judge=PassJudge())
    return result, sizes


def _tokens(out):
    from dealroom.runs import read_all_tokens

    rollouts = [json.loads(x) for x in (out / "rollouts.jsonl").read_text().splitlines()]
    return {r["index"]: (r["status"], list(read_all_tokens(r["run"]).values()))
            for r in rollouts}


def test_a_groups_rollouts_generate_as_one_batch_and_sample_what_one_at_a_time_does(
        tiny_model_dir, room, tmp_path, monkeypatch):
    alone, alone_sizes = _train(tiny_model_dir, room, tmp_path / "alone", 1, monkeypatch)
    together, sizes = _train(tiny_model_dir, room, tmp_path / "together", 3, monkeypatch)
    assert set(alone_sizes) == {1}
    assert sizes[3] >= 2, f"each turn of the three episodes was one batch: {sizes}"
    assert alone.log[0]["rollouts"] == together.log[0]["rollouts"] == 3
    assert alone.log[0]["root_tokens"] == together.log[0]["root_tokens"] > 0
    one, other = _tokens(alone.out), _tokens(together.out)
    assert sorted(one) == sorted(other) == [0, 1, 2]
    for index, (status, records) in one.items():
        assert other[index][0] == status == "ok"
        assert len(records) == len(other[index][1]) == 2, "two turns, two token records"
        for a, b in zip(records, other[index][1], strict=True):
            assert (a.prompt_ids, a.completion_ids, a.eos) == \
                   (b.prompt_ids, b.completion_ids, b.eos)
            assert b.logprobs == pytest.approx(a.logprobs, abs=1e-4)  # padding's rounding
