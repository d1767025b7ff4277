"""The mask: 1 exactly on what the assistant produced, whatever the template or the length."""

import asyncio

import pytest

from dealroom.errors import ConfigError
from dealroom.models import open_model
from dealroom.models._chat import decode
from dealroom.train import conversation_rows, tokenize_conversation

SMOL_TEMPLATE = (  # SmolLM2-135M-Instruct's template, as its GGUF ships it: no markers
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def episode(turns=4, output="x = 1"):
    msgs = [{"role": "system", "content": "You are the lead associate. Use the REPL."},
            {"role": "user", "content": f"Review the room. Turn 1 of {turns}."}]
    for k in range(1, turns + 1):
        msgs.append({"role": "assistant",
                     "content": f"Step {k}.\n```python\nprint(room.docs[{k}].title)\n```"})
        msgs.append({"role": "user", "content": f"Turn {k + 1} of {turns}. Output:\n{output}"
                     f" [budget: {turns - k} turns left]"})
    return msgs[:-1]


def runs_of_ones(tokenizer, row):
    """The mask-1 tokens, decoded, one string per maximal run."""
    runs, current = [], []
    for token, bit in zip(row.input_ids, row.assistant_masks, strict=True):
        if bit:
            current.append(token)
        elif current:
            runs.append(decode(tokenizer, current))
            current = []
    if current:
        runs.append(decode(tokenizer, current))
    return runs


@pytest.fixture(params=["markers", "eos"])
def tokenizer(request, tiny_tokenizer):
    """The tiny tokenizer with its {% generation %} template, and with SmolLM2's (none)."""
    import copy

    tok = copy.deepcopy(tiny_tokenizer)
    if request.param == "eos":
        tok.chat_template = SMOL_TEMPLATE
    return tok


def test_mask_ones_decode_to_exactly_the_replies_in_order(tokenizer):
    msgs = episode()
    row = tokenize_conversation(msgs, tokenizer)
    replies = [m["content"] for m in msgs if m["role"] == "assistant"]
    assert runs_of_ones(tokenizer, row) == [r + "<|im_end|>" for r in replies]
    zeros = decode(tokenizer, [t for t, b in zip(row.input_ids, row.assistant_masks,
                                                 strict=True) if not b])
    for m in msgs:
        if m["role"] != "assistant":
            assert m["content"] in zeros
    assert "<|im_start|>assistant\n" in zeros and "print(room" not in zeros
    rendered = tokenizer.apply_chat_template(msgs, tokenize=False)
    assert rendered.startswith(decode(tokenizer, row.input_ids))
    assert row.turns == [0, 1, 2, 3] and row.context_from == 0


def test_the_mask_agrees_with_transformers_own_assistant_mask(tiny_tokenizer):
    msgs = episode()
    ours = tokenize_conversation(msgs, tiny_tokenizer)
    theirs = tiny_tokenizer.apply_chat_template(msgs, tokenize=True, return_dict=True,
                                                return_assistant_tokens_mask=True)
    picked = [t for t, b in zip(theirs["input_ids"], theirs["assistant_masks"], strict=True) if b]
    mine = [t for t, b in zip(ours.input_ids, ours.assistant_masks, strict=True) if b]
    assert decode(tiny_tokenizer, mine) == decode(tiny_tokenizer, picked)


def test_a_tokenizer_that_does_not_give_the_text_back_is_refused(tiny_tokenizer):
    import copy

    from tokenizers import normalizers

    tok = copy.deepcopy(tiny_tokenizer)
    tok.backend_tokenizer.normalizer = normalizers.Lowercase()
    with pytest.raises(ConfigError, match="re-tokenizing it does not give back its text"):
        tokenize_conversation(episode(), tok)


def test_a_template_that_rewrites_earlier_turns_is_refused(tiny_tokenizer):
    import copy

    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] if loop.last "
                         "else m['content'][:3] }}\n{% endfor %}")
    with pytest.raises(ConfigError, match="does not render assistant message"):
        tokenize_conversation(episode(), tok)


def test_recorded_sampled_ids_are_used_as_they_are(tiny_model_dir, tiny_tokenizer):
    """An hf: episode: the row is the token sequence the model was shown and extended."""
    async def play():
        msgs = episode(turns=1)[:2]
        records = []
        async with open_model(f"hf:{tiny_model_dir},device=cpu,seed=1,max_tokens=10") as m:
            for k in range(3):
                result = await m.chat(msgs, temperature=1.0)
                records.append(result.tokens)
                msgs = [*msgs, {"role": "assistant", "content": result.text},
                        {"role": "user", "content": f"Turn {k + 2} of 4. Output:\nok"}]
        return msgs[:-1], records

    msgs, records = asyncio.run(play())
    row = tokenize_conversation(msgs, tiny_tokenizer, sampled=records)
    last = records[-1]
    assert row.input_ids == last.prompt_ids + last.completion_ids
    sampled = [i for i, b in enumerate(row.assistant_masks) if b]
    expected = []
    for r in records:  # each reply sits right after the prompt it was sampled from
        expected += list(range(len(r.prompt_ids), len(r.prompt_ids) + len(r.completion_ids)))
    assert sampled == expected
    assert all(later.prompt_reused == len(r.prompt_ids) + len(r.completion_ids)
               for r, later in zip(records, records[1:], strict=False))
    wrong = [records[0], records[0], records[2]]
    with pytest.raises(ConfigError, match="do not decode to its content"):
        tokenize_conversation(msgs, tiny_tokenizer, sampled=wrong)
    with pytest.raises(ConfigError, match="2 token records for 3"):
        tokenize_conversation(msgs, tiny_tokenizer, sampled=records[:2])


def test_long_episodes_split_turn_by_turn_with_the_head_kept(tokenizer):
    msgs = episode(turns=8, output="D00001 " * 12)
    whole = tokenize_conversation(msgs, tokenizer)
    limit = len(whole.input_ids) // 3
    result = conversation_rows(msgs, tokenizer, max_length=limit)
    replies = [m["content"] for m in msgs if m["role"] == "assistant"]
    assert len(result.rows) > 2 and not result.skipped
    trained = [t for row in result.rows for t in row.turns]
    assert trained == list(range(8)), "every reply trained once, in order"
    head = decode(tokenizer, whole.input_ids)[:40]
    for row in result.rows:
        assert len(row.input_ids) <= limit
        assert decode(tokenizer, row.input_ids).startswith(head)
        assert runs_of_ones(tokenizer, row) == [replies[t] + "<|im_end|>" for t in row.turns]
        assert row.context_from <= row.turns[0]
    assert any(row.context_from > 0 for row in result.rows), "some context was cut"


def test_earlier_replies_that_fit_stay_as_context_with_mask_0(tiny_tokenizer):
    msgs = episode(turns=3)
    msgs[6]["content"] = "```python\n" + "y = 2\n" * 40 + "```"
    whole = tokenize_conversation(msgs, tiny_tokenizer)
    result = conversation_rows(msgs, tiny_tokenizer, max_length=len(whole.input_ids) - 5)
    first, second = result.rows
    assert (first.turns, second.turns, second.context_from) == ([0, 1], [2], 1)
    text = decode(tiny_tokenizer, second.input_ids)
    assert msgs[4]["content"] in text and msgs[2]["content"] not in text
    assert runs_of_ones(tiny_tokenizer, second) == [msgs[6]["content"] + "<|im_end|>"]


def test_a_reply_longer_than_the_limit_is_skipped_and_reported(tiny_tokenizer):
    msgs = episode(turns=3)
    msgs[4]["content"] = "```python\n" + "x = 1\n" * 200 + "```"
    result = conversation_rows(msgs, tiny_tokenizer, max_length=200)
    assert result.skipped == [1]
    assert [row.turns for row in result.rows] == [[0], [2]]
    assert conversation_rows(msgs, tiny_tokenizer).rows[0].turns == [0, 1, 2]
    assert conversation_rows(msgs[:2], tiny_tokenizer).rows == []


def test_a_sampled_end_of_turn_stands_in_for_the_templates_close(tokenizer):
    from dealroom.models import TokenRecord
    from dealroom.models._chat import encode

    msgs = episode(turns=2)
    replies = [m["content"] for m in msgs if m["role"] == "assistant"]
    eos = tokenizer.eos_token_id
    ended = [TokenRecord([], encode(tokenizer, r) + [eos], eos=True) for r in replies]
    assert tokenize_conversation(msgs, tokenizer, sampled=ended) == \
        tokenize_conversation(msgs, tokenizer)
    cut = [TokenRecord([], encode(tokenizer, r)) for r in replies]  # stopped at the fence
    row = tokenize_conversation(msgs, tokenizer, sampled=cut)
    assert runs_of_ones(tokenizer, row) == replies
    assert decode(tokenizer, row.input_ids).count("<|im_end|>") == 4  # the close is the env's
