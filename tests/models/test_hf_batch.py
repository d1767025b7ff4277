"""Batched sampling of hf: models: replies due together generate as one padded batch, with
the tokens and logprobs each would have had alone."""

import asyncio

import pytest

from dealroom.models import HFModelClient, load_hf_model, resolve_model_spec
from dealroom.models._hfbatch import Batcher

CHATS = [
    [{"role": "user", "content": "List the documents."}],
    [{"role": "system", "content": "You review data rooms for a buyer, one turn at a time."},
     {"role": "user", "content": "Turn 1 of 3. Read the index and say what is missing."}],
    [{"role": "user", "content": "Go."}],
]
"""Prompts of different lengths: the batch pads them on the left."""
SYSTEM = {"role": "system", "content": "You are the lead associate on an M&A due diligence "
                                       "review; the data room is far too large to read."}
GROUP = [[SYSTEM, {"role": "user", "content": "Review the room."}]] * 2 + \
    [[SYSTEM, {"role": "user", "content": "Go."}]]
"""A group's episodes: the same first prompt (and a third with the same system prompt), whose
shared head the batch computes once."""
SEEDS, MAX_TOKENS = (3, 4, 5), (6, 20, 13)
"""Rows end at different steps: an ended row must draw nothing more from its generator,
or the next turn's tokens differ."""


def _episode_turns(tiny_model_dir, *, batched, chats=CHATS, **sampling):
    """Two turns of three clients over one loaded model: side by side in lock-step (their
    calls one batch per turn), or one client after the other."""
    loaded = load_hf_model(f"hf:{tiny_model_dir},device=cpu")
    loaded.batcher = Batcher(lockstep_wait_s=120)  # a batch waits for all: no clock in it
    options = "".join(f",{k}={v}" for k, v in sampling.items())
    clients = [HFModelClient(loaded, spec=resolve_model_spec(
        f"hf:{tiny_model_dir},seed={seed},max_tokens={limit}{options}"), lockstep=batched)
        for seed, limit in zip(SEEDS, MAX_TOKENS, strict=True)]

    async def turns(client, chat):
        first = await client.chat(chat, temperature=1.0)
        convo = [*chat, {"role": "assistant", "content": first.text},
                 {"role": "user", "content": "Turn 2. Output:\n(no output)"}]
        second = await client.chat(convo, temperature=1.0)
        await client.aclose()
        return first.tokens, second.tokens

    async def go():
        if batched:
            return await asyncio.gather(*(turns(c, chat)
                                          for c, chat in zip(clients, chats, strict=True)))
        return [await turns(c, chat) for c, chat in zip(clients, chats, strict=True)]

    try:
        return asyncio.run(go()), dict(loaded.batcher.sizes)
    finally:
        loaded.batcher.close()


@pytest.mark.parametrize(("chats", "sampling"), [
    (CHATS, {}), (CHATS, {"top_k": 20, "top_p": 0.9}), (GROUP, {"top_k": 20, "top_p": 0.9})])
def test_batched_and_one_at_a_time_sampling_give_the_same_tokens_and_logprobs(
        tiny_model_dir, chats, sampling, monkeypatch):
    from dealroom.models import _hfbatch

    heads = []
    compute_head = _hfbatch._head_cache
    monkeypatch.setattr(_hfbatch, "_head_cache",
                        lambda loaded, head, rows, memo: heads.append(len(head)) or
                        compute_head(loaded, head, rows, memo))
    alone, alone_sizes = _episode_turns(tiny_model_dir, batched=False, chats=chats, **sampling)
    together, sizes = _episode_turns(tiny_model_dir, batched=True, chats=chats, **sampling)
    assert bool(heads) == (chats is GROUP), "a group's shared head is computed once"
    if heads:  # each turn's batch computed the head its prompts share (the system prompt...)
        turns = [[t[k].prompt_ids for t in together] for k in (0, 1)]
        assert heads == [_hfbatch.shared_length(p) for p in turns] and min(heads) > 50
    assert alone_sizes == {1: 6}
    assert sizes == {3: 2}, "each turn's three calls were one batch"
    for one, other in zip(alone, together, strict=True):
        for a, b in zip(one, other, strict=True):
            assert (a.prompt_ids, a.completion_ids, a.eos, a.prompt_reused) == \
                   (b.prompt_ids, b.completion_ids, b.eos, b.prompt_reused)
            # float32 rounding only: left padding changes the shapes of the matrix products
            # (and the attention mask) that compute the same logits, to about 1e-6
            assert b.logprobs == pytest.approx(a.logprobs, abs=1e-4)
    assert len({len(t[0].completion_ids) for t in alone}) > 1, "rows end at different steps"


def test_a_lockstep_batch_waits_for_every_member_and_a_closed_one_is_not_waited_for(
        tiny_model_dir):
    loaded = load_hf_model(f"hf:{tiny_model_dir},device=cpu")
    loaded.batcher = Batcher(lockstep_wait_s=120)
    spec = resolve_model_spec(f"hf:{tiny_model_dir},max_tokens=4")
    a, b, idle = (HFModelClient(loaded, spec=spec, lockstep=True) for _ in range(3))

    async def go():
        calls = [asyncio.create_task(c.chat(CHATS[0])) for c in (a, b)]
        await asyncio.sleep(0.5)
        assert not any(c.done() for c in calls), "the batch waits for the third member"
        await idle.aclose()  # it will call no more: the batch of two goes
        return await asyncio.gather(*calls)

    try:
        results = asyncio.run(go())
    finally:
        loaded.batcher.close()
    assert all(r.tokens.completion_ids for r in results)
    assert dict(loaded.batcher.sizes) == {2: 1}


def test_a_batch_makes_every_tensor_on_the_models_device(tiny_model_dir, monkeypatch):
    """The batch's generation runs with ``meta`` as the default device, the model on the
    CPU: a tensor made without naming the model's device lands on ``meta`` and fails, as a
    CPU tensor fed to a CUDA model would; the tokens are those sampled on the CPU."""
    import torch

    from dealroom.models import _hfbatch

    plain = _hfbatch.sample_batch

    def elsewhere(*args):  # the worker thread's default device (torch.device is per thread)
        with torch.device("meta"):
            return plain(*args)

    alone, _ = _episode_turns(tiny_model_dir, batched=True, top_k=20, top_p=0.9)
    monkeypatch.setattr(_hfbatch, "sample_batch", elsewhere)
    on_meta, sizes = _episode_turns(tiny_model_dir, batched=True, top_k=20, top_p=0.9)
    assert sizes == {3: 2}
    for one, other in zip(alone, on_meta, strict=True):
        for a, b in zip(one, other, strict=True):
            assert (a.completion_ids, a.logprobs) == (b.completion_ids, b.logprobs)


def test_a_head_kept_from_the_last_batch_is_not_reused_once_the_weights_change(
        tiny_model_dir):
    """The next batch reuses the last one's head (its KV cache) only while the weights are
    those it was computed with: after an in-place change (an optimizer step), the logprobs
    are those of a batch that never saw the old head."""
    import torch

    from dealroom.models._hfbatch import Memo, Row, Sampling, sample_batch

    loaded = load_hf_model(f"hf:{tiny_model_dir},device=cpu")
    try:
        tokens = loaded.tokenizer("You review data rooms for a buyer, turn by turn. " * 3)
        head = tokens["input_ids"]

        def batch(memo):
            rows = [Row(head + tail, Sampling(4, 1.0), torch.Generator().manual_seed(k),
                        lambda row: None) for k, tail in enumerate(([5, 6], [7]))]
            sample_batch(loaded, rows, memo)
            return [x for r in rows for x in torch.stack(r.chosen).tolist()]

        memo = Memo()
        batch(memo)
        assert memo.head is not None and len(memo.head[0]) == len(head)
        with torch.no_grad():
            for weight in loaded.model.parameters():
                weight.mul_(1.5)
        assert batch(memo) == pytest.approx(batch(Memo()), abs=1e-5)
    finally:
        loaded.batcher.close()
