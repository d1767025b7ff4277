"""A tiny chat model built in code, for tests and examples: no download, loads in a second;
and a loopback stand-in for vLLM's server with runtime LoRA loading over such a model.

``tiny_model(folder)`` writes a 2-layer Llama with a byte-level BPE tokenizer and a ChatML
template whose ``{% generation %}`` markers make the assistant mask, then returns the folder:
``hf:FOLDER`` loads it through the same path as any model. ``LoraServer(folder)`` serves it
as ``GRPOSettings.serve`` expects of vLLM.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.models import LoopbackServer

if TYPE_CHECKING:
    from aiohttp import web

    from dealroom.models import ChatResult, LoadedModel

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{% if message['role'] == 'assistant' %}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}{{ '\\n' }}"
    "{% else %}{{ message['content'] + '<|im_end|>\\n' }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
CORPUS = [
    "You are the lead associate on an M&A due diligence review.",
    "Turn 2 of 8. Output:\nD00001 Share Purchase Agreement 12 pages",
    "```python\nprint(room.tree())\nhits = room.grep('change of control')\n```",
    "results = llm_batch([{'prompt': 'List obligations', 'docs': [d.id]} for d in room.docs])",
    "memo.finding('Contracts', 'Change of control', 'Consent needed [D00042 p.3]')\nsubmit()",
]


def tiny_tokenizer(vocab_size: int = 384):  # type: ignore[no-untyped-def]
    """A byte-level BPE tokenizer (any text round-trips) with ChatML special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    core.train_from_iterator(CORPUS * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", bos_token="<|im_start|>",
                                        unk_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_model(folder: Path, *, seed: int = 0, layers: int = 2, hidden: int = 32) -> Path:
    """Write a tiny Llama chat model (weights, config, tokenizer) to ``folder``; return it."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=8192, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    folder = Path(folder)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


class LoraServer(LoopbackServer):
    """vLLM's OpenAI-compatible server with runtime LoRA loading, as ``serve`` uses it, over an
    ``hf:`` base model in this process (loopback, for tests): ``/v1/load_lora_adapter`` and
    ``/v1/unload_lora_adapter`` load PEFT adapters by name through dealroom's own loading path;
    a chat completion names a loaded adapter, is sampled with it (``seed`` from the request)
    and answers, as vLLM does with ``return_token_ids`` and ``logprobs``, with its prompt and
    completion token ids and each sampled token's logprob. Only the engine differs from vLLM.

    ``loads`` and ``unloads`` record the adapter names pushed, in order; ``requests`` every
    chat request body."""

    thread_name = "lora-server"

    def __init__(self, base: str | Path) -> None:
        super().__init__()
        self.base = str(base)
        self.adapters: dict[str, LoadedModel] = {}
        self.loads: list[tuple[str, str]] = []
        self.unloads: list[str] = []
        self.requests: list[dict[str, Any]] = []

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/load_lora_adapter", self._load)
        app.router.add_post("/v1/unload_lora_adapter", self._unload)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)

    async def astop(self) -> None:
        """Stop serving and release the loaded adapters' worker threads."""
        await super().astop()
        for loaded in self.adapters.values():
            loaded.batcher.close()

    async def _models(self, request: web.Request) -> web.Response:
        from aiohttp import web

        return web.json_response({"data": [{"id": n} for n in [self.base, *self.adapters]]})

    async def _load(self, request: web.Request) -> web.Response:
        from aiohttp import web

        from dealroom.models import load_hf_model

        body = await request.json()
        name, path = body["lora_name"], body["lora_path"]
        if name in self.adapters:
            return web.Response(status=400, text=f"The lora adapter '{name}' has already been "
                                                 "loaded.")
        self.adapters[name] = await asyncio.to_thread(load_hf_model,
                                                      f"hf:{self.base},adapter={path}")
        self.loads.append((name, path))
        return web.Response(text=f"Success: LoRA adapter '{name}' added successfully.")

    async def _unload(self, request: web.Request) -> web.Response:
        from aiohttp import web

        name = (await request.json())["lora_name"]
        loaded = self.adapters.pop(name, None)
        if loaded is None:
            return web.Response(status=404, text=f"The lora adapter '{name}' cannot be found.")
        loaded.batcher.close()
        self.unloads.append(name)
        return web.Response(text=f"Success: LoRA adapter '{name}' removed successfully.")

    async def _chat(self, request: web.Request) -> web.Response:
        from aiohttp import web

        from dealroom.models import HFModelClient, resolve_model_spec

        body = await request.json()
        self.requests.append(body)
        loaded = self.adapters.get(body.get("model"))
        if loaded is None:
            return web.json_response({"error": {"message": f"The model `{body.get('model')}` "
                                                           "does not exist."}}, status=404)
        spec = resolve_model_spec(f"hf:{self.base},seed={int(body.get('seed') or 0)}",
                                  role="root")
        client = HFModelClient(loaded, name=body["model"], spec=spec)
        result = await client.chat(body["messages"],
                                   max_tokens=body.get("max_completion_tokens")
                                   or body.get("max_tokens"),
                                   temperature=body.get("temperature"), stop=body.get("stop"))
        return web.json_response(vllm_completion(result))


def vllm_completion(result: ChatResult) -> dict[str, Any]:
    """A ChatResult with its token record as vLLM's chat completion with ``return_token_ids``
    and ``logprobs`` (``stop_reason`` None when it ended at the end-of-sequence token)."""
    record = result.tokens
    assert record is not None, "an hf: model's reply carries its token record"
    stopped = "stop" if record.eos or result.finish_reason == "stop" else result.finish_reason
    return {
        "id": "chatcmpl-lora", "object": "chat.completion", "model": result.model,
        "prompt_token_ids": record.prompt_ids,
        "choices": [{
            "index": 0, "message": {"role": "assistant", "content": result.text},
            "finish_reason": stopped,
            "stop_reason": None if record.eos or stopped != "stop" else "stop string",
            "token_ids": record.completion_ids,
            "logprobs": {"content": [{"token": str(i), "logprob": p, "top_logprobs": []}
                                     for i, p in zip(record.completion_ids, record.logprobs,
                                                     strict=True)]}}],
        "usage": {"prompt_tokens": len(record.prompt_ids),
                  "completion_tokens": len(record.completion_ids)},
    }
