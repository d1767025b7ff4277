"""ServedModelServer: a loopback endpoint that answers the way a reasoning model behind vLLM
does, for tests and benchmarks (exported by ``dealroom.testing``).

On top of :class:`~dealroom.testing.MockOpenAIServer` it has:

* reasoning in the shape a server sends it: ``field`` (``reasoning_content``, vLLM's reasoning
  parser; streamed as ``delta.reasoning_content``), ``reasoning`` (the key OpenRouter and
  other gateways use), ``inline`` (``<think>R</think>A`` in the content, no parser) or
  ``closing`` (``R</think>A``: the chat template opened the block in the prompt);
* a context window counted with a real tokenizer (``count``: a function of the text; the
  SmolLM2 BPE tokenizer of the embedded model by :func:`smollm2_count`): a request whose
  prompt and ``max_tokens`` pass it gets vLLM's HTTP 400 (``This model's maximum context
  length is N tokens. However, you requested M tokens (X in the messages, Y in the
  completion)...``), counted in :attr:`ServedModelServer.refusals`;
* ``POST /tokenize`` (``{"model", "messages"}`` or ``{"prompt"}`` → ``{"count",
  "max_model_len", "tokens"}``) and ``max_model_len`` in ``GET /v1/models``;
* with ``chat_template``, llama.cpp's ``GET /props`` (``{"chat_template", ...}``);
* replies as :class:`Completion` (answer, reasoning, ``finish_reason``), so a script can
  send prose around several code blocks, a reply cut inside a code block or inside its
  reasoning (``finish_reason`` ``length``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from dealroom.models._mock import MockOpenAIServer, Reply, chat_completion_body

CHAT_OVERHEAD = 4
"""Tokens the chat template adds per message (ChatML's ``<|im_start|>role`` ... ``<|im_end|>``)."""


@dataclass(frozen=True)
class Completion:
    """What the model produced for one request."""

    answer: str
    reasoning: str | None = None
    finish_reason: str = "stop"


@functools.cache
def smollm2_count() -> Callable[[str], int]:
    """Tokens of a text by the SmolLM2 BPE tokenizer (from the embedded model's GGUF, offline;
    needs the ``train`` extra's transformers and gguf)."""
    from dealroom.models._hfload import load_hf_tokenizer

    tokenizer = load_hf_tokenizer("hf:local")
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def words_count(text: str) -> int:
    """Tokens by words-v1 (``dealroom.room.count_tokens``): the default counter."""
    from dealroom.room import count_tokens

    return int(count_tokens(text))


class ServedModelServer(MockOpenAIServer):
    """A vLLM-like loopback endpoint (see the module docstring). ``reply`` gives a string
    (the answer) or a :class:`Completion`; ``reasoning`` is the shape reasoning is sent in;
    ``context_window`` (None: unbounded) is counted with ``count``; ``tokenize=False`` serves
    no ``/tokenize`` (as llama.cpp's server and hosted APIs); ``report_usage=False`` sends no
    ``usage``; ``chat_template`` is served at ``GET /props`` as llama.cpp's server does."""

    thread_name = "served-model-server"

    def __init__(self, reply: Reply | str, *, reasoning: str = "field",
                 context_window: int | None = None,
                 count: Callable[[str], int] = words_count, tokenize: bool = True,
                 report_usage: bool = True, chat_template: str | None = None,
                 **options: Any) -> None:
        super().__init__(reply, **options)
        self.chat_template = chat_template
        self.tokenize = tokenize
        self.report_usage = report_usage
        if reasoning not in ("field", "reasoning", "inline", "closing"):
            raise ValueError(f"unknown reasoning shape {reasoning!r}")
        self.shape = reasoning
        self.context_window = context_window
        self.count = count
        self.refusals = 0
        """Requests refused for length (HTTP 400)."""
        self.tokenize_calls = 0

    # -- counting --------------------------------------------------------------------------
    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        """The prompt's tokens as this server counts them (content plus template)."""
        return sum(self.count(str(m.get("content") or "")) + CHAT_OVERHEAD for m in messages)

    def _refusal_for_length(self, body: dict[str, Any]) -> web.Response | None:
        if self.context_window is None:
            return None
        prompt = self.prompt_tokens(body.get("messages") or [])
        asked = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        if prompt + asked <= self.context_window:
            return None
        self.refusals += 1
        message = (f"This model's maximum context length is {self.context_window} tokens. "
                   f"However, you requested {prompt + asked} tokens ({prompt} in the messages, "
                   f"{asked} in the completion). Please reduce the length of the messages or "
                   "completion.")
        return web.json_response({"object": "error", "message": message,
                                  "type": "BadRequestError", "param": None, "code": 400},
                                 status=400)

    # -- answering -------------------------------------------------------------------------
    def _refusal(self, body: dict[str, Any]) -> web.Response | None:
        return self._refusal_for_length(body) or super()._refusal(body)

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        body, ended = await self._admit(request)
        if ended is not None:
            return ended
        if (fault := self._next_fault()) is not None:
            return await self._fault(request, fault)
        if self.latency:
            import asyncio

            await asyncio.sleep(self.latency)
        result = await self._reply(body)
        done = result if isinstance(result, Completion) else Completion(str(result))
        counts = {"prompt_tokens": self.prompt_tokens(body.get("messages") or []),
                  "completion_tokens": self.count(done.answer) + self.count(done.reasoning or "")}
        counts["total_tokens"] = counts["prompt_tokens"] + counts["completion_tokens"]
        message = self._message(done)
        usage = counts if self.report_usage else None
        if body.get("stream") and self.streams:
            return self._streamed(message, done.finish_reason, usage)
        reply = chat_completion_body("", model=self.model, usage=usage,
                                     finish_reason=done.finish_reason)
        reply["choices"][0]["message"] = {"role": "assistant", **message}
        return web.json_response(reply)

    def _message(self, done: Completion) -> dict[str, Any]:
        if done.reasoning is None:
            return {"content": done.answer}
        if self.shape in ("field", "reasoning"):
            key = "reasoning_content" if self.shape == "field" else "reasoning"
            return {"content": done.answer or None, key: done.reasoning}
        opened = "<think>" if self.shape == "inline" else ""
        closed = "</think>" if done.answer or done.finish_reason != "length" else ""
        return {"content": f"{opened}{done.reasoning}{closed}{done.answer}"}

    def _streamed(self, message: dict[str, Any], finish: str,
                  usage: dict[str, Any] | None) -> web.Response:
        def chunk(delta: dict[str, Any], reason: str | None = None, **extra: Any) -> bytes:
            event = {"id": "chatcmpl-served", "object": "chat.completion.chunk",
                     "model": self.model, **extra,
                     "choices": [] if extra else [{"index": 0, "delta": delta,
                                                   "finish_reason": reason}]}
            return f"data: {json.dumps(event)}\n\n".encode()

        parts = [chunk({"role": "assistant", "content": ""})]
        for key in ("reasoning_content", "reasoning", "content"):
            text = message.get(key) or ""
            step = max(1, len(text) // 6)
            parts += [chunk({key: text[i:i + step]}) for i in range(0, len(text), step)]
        parts.append(chunk({}, finish))
        if usage is not None:
            parts.append(chunk({}, usage=usage))
        parts.append(b"data: [DONE]\n\n")
        return web.Response(body=b"".join(parts), content_type="text/event-stream")

    # -- the other routes ------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        if denied := self._deny(request):
            return denied
        return web.json_response({"object": "list", "data": [
            {"id": self.model, "object": "model", "owned_by": "dealroom",
             "max_model_len": self.context_window}]})

    async def _tokenize(self, request: web.Request) -> web.Response:
        self.tokenize_calls += 1
        body = json.loads(await request.read())
        if "messages" in body:
            count = self.prompt_tokens(body["messages"])
        else:
            count = self.count(str(body.get("prompt") or ""))
        return web.json_response({"count": count, "max_model_len": self.context_window,
                                  "tokens": list(range(count))})

    async def _props(self, request: web.Request) -> web.Response:
        return web.json_response({"chat_template": self.chat_template,
                                  "default_generation_settings": {"n_ctx": self.context_window}})

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        if self.tokenize:
            app.router.add_post("/tokenize", self._tokenize)
        if self.chat_template is not None:
            app.router.add_get("/props", self._props)
