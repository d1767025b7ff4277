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
SEEDS, MAX_TOKENS = (3, 4, 5), (6, 20, 13)
"""Rows end at different steps: an ended row must draw nothing more from its generator,
or the next turn's tokens differ."""


def _episode_turns(tiny_model_dir, *, batched, **sampling):
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
            return await asyncio.gather(*(turns(c, chat) for c, chat in zip(clients, CHATS)))
        return [await turns(c, chat) for c, chat in zip(clients, CHATS, strict=True)]

    try:
        return asyncio.run(go()), dict(loaded.batcher.sizes)
    finally:
        loaded.batcher.close()


@pytest.mark.parametrize("sampling", [{}, {"top_k": 20, "top_p": 0.9}])
def test_batched_and_one_at_a_time_sampling_give_the_same_tokens_and_logprobs(
        tiny_model_dir, sampling):
    alone, alone_sizes = _episode_turns(tiny_model_dir, batched=False, **sampling)
    together, sizes = _episode_turns(tiny_model_dir, batched=True, **sampling)
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
