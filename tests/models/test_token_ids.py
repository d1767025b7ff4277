"""tokens=true: an OpenAI-compatible endpoint that returns token ids and logprobs (vLLM's
``return_token_ids``) gives each call a token record, as ``hf:`` models do, so a served root's
runs export and train on the exact tokens it sampled."""

import asyncio
import json

import pytest

from dealroom.errors import ModelError
from dealroom.models import open_model, resolve_model_spec
from dealroom.models._wire import BadReply, Reply, token_record
from dealroom.testing import MockOpenAIServer, chat_completion_body

HELLO = [{"role": "user", "content": "Is consent required?"}]


def vllm_body(text, prompt_ids, completion_ids, *, stop_reason=None, logprobs=None):
    """A chat completion as vLLM's OpenAI server answers with return_token_ids and logprobs."""
    body = chat_completion_body(text, usage={"prompt_tokens": len(prompt_ids),
                                             "completion_tokens": len(completion_ids)})
    body["prompt_token_ids"] = prompt_ids
    choice = body["choices"][0]
    choice["token_ids"] = completion_ids
    choice["stop_reason"] = stop_reason
    values = logprobs if logprobs is not None else [-0.25] * len(completion_ids)
    choice["logprobs"] = {"content": [{"token": str(i), "logprob": p, "top_logprobs": []}
                                      for i, p in zip(completion_ids, values, strict=False)]}
    return body


def reply_of(body):
    return Reply("x", "stop", "mock", body.get("usage"), streamed=False, body=body)


def test_a_vllm_body_becomes_a_token_record():
    record = token_record(reply_of(vllm_body("yes", [1, 2, 3], [7, 8, 2])))
    assert (record.prompt_ids, record.completion_ids) == ([1, 2, 3], [7, 8, 2])
    assert record.logprobs == [-0.25] * 3 and record.eos  # stopped at the end of sequence
    cut = token_record(reply_of(vllm_body("yes", [1], [7, 8], stop_reason="```")))
    assert not cut.eos  # a stop string ended it: the last id is text, not an end token
    for broken in (vllm_body("x", [], [7]), vllm_body("x", [1], [7, 8], logprobs=[-1.0]),
                   vllm_body("x", [1], [7], logprobs=[None]), chat_completion_body("x")):
        with pytest.raises(BadReply, match="token ids|logprobs"):
            token_record(reply_of(broken))


def test_the_spec_option_asks_for_tokens_without_streaming():
    def answer(request):
        return vllm_body("yes", [5, 6], [9, 2])

    async def go():
        async with MockOpenAIServer(answer) as srv:
            spec = resolve_model_spec(f"served@{srv.base_url}#tokens=true")
            async with open_model(spec) as client:
                result = await client.chat(HELLO, max_tokens=8)
            return srv.requests, result

    requests, result = asyncio.run(go())
    sent = requests[0]
    assert sent["logprobs"] is True and sent["return_token_ids"] is True
    assert "stream" not in sent
    assert result.tokens.completion_ids == [9, 2] and result.tokens.prompt_ids == [5, 6]


def test_a_reply_with_tokens_keeps_its_control_characters():
    """The text stays what its token ids decode to (training checks it against them); other
    replies have control characters stripped."""
    text = "ok\x10 then\x15"

    async def go(tokens):
        async with MockOpenAIServer(lambda req: vllm_body(text, [5], [9, 2])) as srv:
            spec = srv.spec.replace(tokens=tokens, stream=False)
            async with open_model(spec) as client:
                return await client.chat(HELLO)

    exact, plain = asyncio.run(go(True)), asyncio.run(go(False))
    assert exact.text == text and exact.stripped == 0
    assert plain.text == "ok then" and plain.stripped == 2


def test_an_endpoint_without_token_ids_is_a_clear_error_not_retried():
    async def go():
        async with MockOpenAIServer(lambda req: chat_completion_body("yes")) as srv:
            spec = srv.spec.replace(tokens=True)
            async with open_model(spec) as client:
                with pytest.raises(ModelError, match="tokens=true needs an endpoint") as err:
                    await client.chat(HELLO)
            return srv.calls, err.value

    calls, error = asyncio.run(go())
    assert calls == 1 and error.kind == "no_tokens"


def test_a_served_roots_run_exports_its_sampled_tokens(small_room, tiny_model_dir,
                                                       tiny_tokenizer, tmp_path):
    """The root served over HTTP the way vLLM serves it (the tiny model's tokenizer makes the
    ids); export uses those ids as they are."""
    from dealroom.harness import run_agent
    from dealroom.models import ScriptedModel
    from dealroom.train import export_sft

    replies = ["```python\nprint(room.tree())\n```", "```python\nsubmit()\n```"]

    def answer(request):  # the reply to turn k (a preflight probe is answered as turn 1)
        text = replies[sum(m["role"] == "assistant" for m in request["messages"])]
        shown = tiny_tokenizer.apply_chat_template(request["messages"], tokenize=False,
                                                   add_generation_prompt=True)
        prompt = tiny_tokenizer(shown, add_special_tokens=False)["input_ids"]
        ids = tiny_tokenizer(text, add_special_tokens=False)["input_ids"]
        return vllm_body(text, prompt, [*ids, tiny_tokenizer.eos_token_id])

    with MockOpenAIServer(answer) as srv:
        run = run_agent(small_room, tmp_path / "runs" / "served",
                        root=f"policy@{srv.base_url}#tokens=true",
                        sub=ScriptedModel(["x"], cycle=True), max_turns=3).run_dir
    records = [json.loads(line) for line in (run / "tokens.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["eos"] for r in records)
    (run / "scores.json").write_text(json.dumps({"pass_rate": 0.0, "n_errors": 0}))
    export_sft([run], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}")
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    assert manifest["kept"][0]["token_source"] == "sampled"
    row = json.loads((tmp_path / "DS" / "tokenized.jsonl").read_text())
    trained = [t for t, bit in zip(row["input_ids"], row["assistant_masks"], strict=True) if bit]
    assert trained == [t for r in records for t in r["completion_ids"]]
