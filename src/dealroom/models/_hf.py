"""The ``hf`` provider: a transformers model that generates in-process, token-exact.

One call::

    chat(messages) ──> prompt ids: the previous call of this conversation's prompt + sampled ids,
          │            then the new messages' tokens (else the whole conversation, piece by piece;
          │            see dealroom.models._chat)
          ▼  (the model's worker thread, off the event loop: calls due at the same moment
          │   generate as one batch, see dealroom.models._hfbatch)
    transformers' generate (KV cache, on the model's device; this client's generator draws
          │            each of its tokens) ──> stop at an end-of-sequence token, at the end
          │            of the first ```python block, at a stop string, or at max_tokens
          ▼
    ChatResult(text, usage, ..., tokens=TokenRecord(prompt_ids, completion_ids, logprobs, eos))

Reusing the previous call's ids makes a multi-turn episode one token sequence: what the model
sampled in turn k is, unchanged, part of what it is shown in turn k+1. The text of a reply is
its sampled ids decoded (an end-of-sequence token left out); with a stop string it ends at the
last whole token before the stop. Spec options: see :func:`dealroom.models._spec.hf_spec`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError, ModelError
from dealroom.models._chat import REPLY, chat_pieces, decode, encode_pieces
from dealroom.models._hfbatch import Row, Sampling
from dealroom.models._hfload import LoadedModel, acquire, release, require
from dealroom.models._result import ChatResult
from dealroom.models._spec import ModelSpec, Prices, hf_options
from dealroom.runs import TokenRecord
from dealroom.types import Usage

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase

DEFAULT_MAX_TOKENS = 1024
UNLOADED_CONTEXT = 2048
"""``context_window`` reported before the weights are loaded (``check()`` loads them)."""
HISTORY = 64
"""Conversations whose last call is kept for the next turn's prompt (per client)."""


def _history_key(messages: list[dict[str, Any]]) -> str:
    plain = [[m.get("role"), m.get("content")] for m in messages]
    return hashlib.sha1(json.dumps(plain, ensure_ascii=False).encode()).hexdigest()


class HFModelClient:
    """A ModelClient over an in-process transformers model (see the module docstring).

    Build it from a spec with :func:`create`, or around a model already in memory (a policy
    being trained) with ``HFModelClient(LoadedModel(model, tokenizer, device), name=...)``.
    """

    def __init__(self, loaded: LoadedModel | None = None, *, name: str = "hf",
                 spec: ModelSpec | None = None, lockstep: bool = False,
                 follows: HFModelClient | None = None) -> None:
        self.spec = spec
        self.name = name
        self.model = spec.model if spec else name
        self.prices = Prices()
        options = spec.options if spec else {}
        self._seed = int(options.get("seed", 0))
        self._top_p = float(options.get("top_p", 1.0))
        self._top_k = int(options.get("top_k", 0))
        self._max_tokens = (spec.max_output_tokens if spec else None) or DEFAULT_MAX_TOKENS
        self._loaded = loaded
        self._owned = False
        self._lockstep = lockstep
        """Its calls wait for the other lock-step clients' (a GRPO group's episodes)."""
        self._member: object = follows or self
        """Whose calls its calls count as in the lock-step: ``follows``, the root of the
        episode whose sub-calls it answers (that episode has a call due while they wait)."""
        self._generator: torch.Generator | None = None
        self._history: OrderedDict[str, tuple[list[int], TokenRecord]] = OrderedDict()
        if loaded is not None and lockstep:
            loaded.batcher.join(self)

    @property
    def context_window(self) -> int:
        return self._loaded.context_window if self._loaded else UNLOADED_CONTEXT

    async def _ready(self) -> LoadedModel:
        if self._loaded is None:
            assert self.spec is not None
            self._loaded = await asyncio.to_thread(acquire, self.spec.model, self.spec.options)
            self._owned = True
            if self._lockstep:
                self._loaded.batcher.join(self)
        return self._loaded

    async def check(self) -> None:
        """Preflight: load the weights now, so a bad path fails before any work."""
        await self._ready()

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResult:
        """Generate one reply in the model's worker thread, in one batch with the other calls
        due at the same moment; see the module docstring.

        ``response_format`` is not enforced here (no constrained decoding): the reply comes
        unconstrained, with ``structured`` None."""
        loaded = await self._ready()
        sampling = Sampling(max_tokens or self._max_tokens,
                            1.0 if temperature is None else float(temperature),
                            self._top_p, self._top_k, tuple(stop or ()))
        start = time.perf_counter()
        future = loaded.batcher.submit(self._member, loaded,
                                       lambda: self._row(loaded, messages, sampling, start))
        try:
            result: ChatResult = await asyncio.wrap_future(future)
        except RuntimeError as exc:  # torch's errors
            raise ModelError(f"generation failed: {exc}", model=self.name) from None
        return result

    def _row(self, loaded: LoadedModel, messages: list[dict[str, Any]], sampling: Sampling,
             start: float) -> Row:
        """The call's batch row (in the worker): its prompt, its sampling, this client's
        generator, and how its sampled ids become the call's result."""
        import torch

        prompt, reused = self._prompt(loaded.tokenizer, messages)
        room = loaded.context_window - len(prompt)
        if room < 1:
            raise ModelError(f"the prompt has {len(prompt):,} tokens, the context window "
                             f"{loaded.context_window:,}", model=self.name)
        sampling.max_tokens = min(sampling.max_tokens, room)
        if self._generator is None:
            self._generator = torch.Generator(device=loaded.device).manual_seed(self._seed)

        def finish(row: Row) -> ChatResult:
            ids, logprobs, eos, reason = row.outcome(loaded.tokenizer, loaded.stop_ids)
            return self._result(loaded, messages, prompt, reused, (ids, logprobs, eos, reason),
                                sampling, start)

        return Row(prompt, sampling, self._generator, finish)

    def _result(self, loaded: LoadedModel, messages: list[dict[str, Any]], prompt: list[int],
                reused: int, outcome: tuple[list[int], list[float], bool, str],
                sampling: Sampling, start: float) -> ChatResult:
        """The call's ChatResult; the conversation is remembered for its next turn."""
        ids, logprobs, eos, finish = outcome
        record = TokenRecord(prompt, ids, logprobs, eos=eos, prompt_reused=reused)
        text = decode(loaded.tokenizer, ids[:-1] if eos else ids)
        reply = [*messages, {"role": "assistant", "content": text}]
        self._history[_history_key(reply)] = (prompt + ids, record)
        while len(self._history) > HISTORY:
            self._history.popitem(last=False)
        usage = Usage(input_tokens=len(prompt), output_tokens=len(ids), calls=1)
        return ChatResult(text=text, usage=usage, model=self.model, finish_reason=finish,
                          latency_s=time.perf_counter() - start, tokens=record,
                          max_tokens=sampling.max_tokens)

    def _prompt(self, tokenizer: PreTrainedTokenizerBase,
                messages: list[dict[str, Any]]) -> tuple[list[int], int]:
        """The prompt ids, and how many lead ids were carried over from the previous call."""
        pieces = chat_pieces(tokenizer, messages, add_generation_prompt=True)
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"),
                   default=None)
        cached = self._history.get(_history_key(messages[:last + 1])) if last is not None else None
        if cached is None:
            return encode_pieces(tokenizer, pieces, check=False)[0], 0
        before, record = cached
        turn = sum(m.get("role") == "assistant" for m in messages[:last])
        at = next(i for i, p in enumerate(pieces) if p.kind == REPLY and p.turn == turn)
        tail, _ = encode_pieces(tokenizer, pieces[at + 1:], {turn: record}, check=False)
        return before + tail, len(before)

    async def aclose(self) -> None:
        """Leave the lock-step and release this client's hold on the shared weights."""
        if self._loaded is not None:
            self._loaded.batcher.leave(self)
        if self._owned and self._loaded is not None:
            loaded, self._loaded, self._owned = self._loaded, None, False
            await asyncio.to_thread(release, loaded)

    async def __aenter__(self) -> HFModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def create(spec: ModelSpec) -> HFModelClient:
    """Provider factory for ``hf``; the weights load on ``check()`` or the first call."""
    require("torch", "transformers")
    if spec.options:
        hf_options(spec.options, where=f"model '{spec.name}'")
    if not spec.model:
        raise ConfigError(f"model '{spec.name}': an hf model needs a PATH (or local)")
    return HFModelClient(name=spec.name, spec=spec)
