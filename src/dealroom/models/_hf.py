"""The ``hf`` provider: a transformers model that generates in-process, token-exact.

One call::

    chat(messages) ──> prompt ids: the previous call of this conversation's prompt + sampled ids,
          │            then the new messages' tokens (else the whole conversation, piece by piece;
          │            see dealroom.models._chat)
          ▼  (the model's worker thread: one generation at a time, off the event loop)
    transformers' generate (KV cache, on the model's device; this client's generator draws
          │            each token) ──> stop at an end-of-sequence token, at the end of the
          │            first ```python block, at a stop string, or at max_tokens
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
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError, ModelError
from dealroom.models._chat import REPLY, chat_pieces, decode, encode_pieces
from dealroom.models._hfload import LoadedModel, acquire, release, require
from dealroom.models._result import ChatResult
from dealroom.models._spec import ModelSpec, Prices, hf_options
from dealroom.runs import TokenRecord
from dealroom.types import Usage

if TYPE_CHECKING:
    import torch
    from torch import Tensor
    from transformers import GenerationConfig, PreTrainedTokenizerBase

DEFAULT_MAX_TOKENS = 1024
UNLOADED_CONTEXT = 2048
"""``context_window`` reported before the weights are loaded (``check()`` loads them)."""
HISTORY = 64
"""Conversations whose last call is kept for the next turn's prompt (per client)."""
_OPEN_CODE = re.compile(r"```(?:python|py|repl)?[ \t]*\n")


def code_closed(text: str) -> bool:
    """True once ``text`` holds a complete ```python block (the root's turn is over).

    >>> code_closed("Plan.\\n```python\\nprint(1)\\n```"), code_closed("```python\\nprint(")
    (True, False)
    """
    opened = _OPEN_CODE.search(text)
    return opened is not None and "```" in text[opened.end():]


@dataclass
class Sampling:
    """How one completion is sampled."""

    max_tokens: int
    temperature: float
    top_p: float = 1.0
    top_k: int = 0
    stop: tuple[str, ...] = ()


def _history_key(messages: list[dict[str, Any]]) -> str:
    plain = [[m.get("role"), m.get("content")] for m in messages]
    return hashlib.sha1(json.dumps(plain, ensure_ascii=False).encode()).hexdigest()


class HFModelClient:
    """A ModelClient over an in-process transformers model (see the module docstring).

    Build it from a spec with :func:`create`, or around a model already in memory (a policy
    being trained) with ``HFModelClient(LoadedModel(model, tokenizer, device), name=...)``.
    """

    def __init__(self, loaded: LoadedModel | None = None, *, name: str = "hf",
                 spec: ModelSpec | None = None) -> None:
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
        self._generator: torch.Generator | None = None
        self._piece_cache: tuple[int, dict[int, str]] = (0, {})
        self._history: OrderedDict[str, tuple[list[int], TokenRecord]] = OrderedDict()

    @property
    def context_window(self) -> int:
        return self._loaded.context_window if self._loaded else UNLOADED_CONTEXT

    async def _ready(self) -> LoadedModel:
        if self._loaded is None:
            assert self.spec is not None
            self._loaded = await asyncio.to_thread(acquire, self.spec.model, self.spec.options)
            self._owned = True
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
        """Generate one reply in the model's worker thread; see the module docstring.

        ``response_format`` is not enforced here (no constrained decoding): the reply comes
        unconstrained, with ``structured`` None."""
        loaded = await self._ready()
        sampling = Sampling(max_tokens or self._max_tokens,
                            1.0 if temperature is None else float(temperature),
                            self._top_p, self._top_k, tuple(stop or ()))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(loaded.executor, self._chat, loaded, messages, sampling)

    def _chat(self, loaded: LoadedModel, messages: list[dict[str, Any]],
              sampling: Sampling) -> ChatResult:
        start = time.perf_counter()
        prompt, reused = self._prompt(loaded.tokenizer, messages)
        room = loaded.context_window - len(prompt)
        if room < 1:
            raise ModelError(f"the prompt has {len(prompt):,} tokens, the context window "
                             f"{loaded.context_window:,}", model=self.name)
        sampling.max_tokens = min(sampling.max_tokens, room)
        try:
            ids, logprobs, eos, finish = self._sample(loaded, prompt, sampling)
        except RuntimeError as exc:
            raise ModelError(f"generation failed: {exc}", model=self.name) from None
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

    def _sample(self, loaded: LoadedModel, prompt: list[int],
                sampling: Sampling) -> tuple[list[int], list[float], bool, str]:
        """Generate with transformers' ``generate`` (KV cache, the loop on the model's device):
        :class:`_Picker` draws each token with this client's generator and records its
        logprob on the device; :class:`_Stop` ends the turn at a closed code block or a stop
        string. The only per-token host reads are generate's own and ``_Stop``'s one id."""
        import torch

        if self._generator is None:
            self._generator = torch.Generator(device=loaded.device).manual_seed(self._seed)
        model, tokenizer, stops = loaded.model, loaded.tokenizer, loaded.stop_ids
        picker = _Picker(sampling, self._generator)
        stop = _Stop(tokenizer, sampling, self._pieces(tokenizer))
        ids_in = torch.tensor([prompt], device=loaded.device)
        with torch.inference_mode():
            out = model.generate(
                input_ids=ids_in, attention_mask=torch.ones_like(ids_in),
                generation_config=_generation_config(sampling.max_tokens, stops, tokenizer),
                logits_processor=[picker], stopping_criteria=[stop])
        ids = out[0, len(prompt):].tolist()
        logprobs = picker.logprobs()[:len(ids)]
        if ids and ids[-1] in stops:
            return ids, logprobs, True, "stop"
        if stop.hit:
            return self._cut(tokenizer, ids, logprobs, sampling)
        return ids, logprobs, False, "length"

    def _pieces(self, tokenizer: PreTrainedTokenizerBase) -> dict[int, str]:
        """Each token id's decoded text, filled as tokens are sampled (per tokenizer)."""
        key = id(tokenizer)
        if self._piece_cache[0] != key:
            self._piece_cache = (key, {})
        return self._piece_cache[1]

    @staticmethod
    def _stopped(tokenizer: PreTrainedTokenizerBase, ids: list[int], sampling: Sampling) -> bool:
        piece = decode(tokenizer, ids[-1:])
        if "`" not in piece and not any(s and s[-1] in piece for s in sampling.stop):
            return False
        text = decode(tokenizer, ids)
        return code_closed(text) or any(s and s in text for s in sampling.stop)

    @staticmethod
    def _cut(tokenizer: PreTrainedTokenizerBase, ids: list[int], logprobs: list[float],
             sampling: Sampling) -> tuple[list[int], list[float], bool, str]:
        """At a stop string, keep the whole tokens before it; a closed code block stays."""
        text = decode(tokenizer, ids)
        found = [text.find(s) for s in sampling.stop if s and s in text]
        if not found or code_closed(text[:min(found)]):
            return ids, logprobs, False, "stop"
        keep = len(ids)
        while keep and len(decode(tokenizer, ids[:keep])) > min(found):
            keep -= 1
        return ids[:keep], logprobs[:keep], False, "stop"

    async def aclose(self) -> None:
        """Release this client's hold on the shared weights."""
        if self._owned and self._loaded is not None:
            loaded, self._loaded, self._owned = self._loaded, None, False
            await asyncio.to_thread(release, loaded)

    async def __aenter__(self) -> HFModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Picker:
    """generate's logits processor that samples: each step it draws the token from the raw
    logits (temperature, top-k, top-p; greedy at temperature 0) with the client's generator,
    keeps that token's logprob under log-softmax(logits / temperature) on the device, and
    leaves only that token possible, so generate's own argmax takes it."""

    def __init__(self, sampling: Sampling, generator: torch.Generator | None) -> None:
        self.sampling, self.generator = sampling, generator
        self.chosen: list[Tensor] = []

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        import torch

        token, logprob = _pick(scores[0].float(), self.sampling, self.generator)
        self.chosen.append(logprob)
        if self.sampling.temperature <= 0:  # generate's argmax takes the same token
            return scores
        only = torch.full_like(scores, float("-inf"))
        return only.scatter_(1, token.view(1, 1), 0.0)

    def logprobs(self) -> list[float]:
        """The sampled tokens' logprobs, in order (one read from the device)."""
        import torch

        return torch.stack(self.chosen).tolist() if self.chosen else []


def _pick(logits: Tensor, sampling: Sampling,
          generator: torch.Generator | None) -> tuple[Tensor, Tensor]:
    """One token id and its log-probability under log-softmax(logits / temperature), both as
    0-d tensors on the logits' device (no host read)."""
    import torch

    if sampling.temperature <= 0:
        best = torch.max(logits, dim=-1)
        return best.indices, best.values - torch.logsumexp(logits, dim=-1)
    scaled = logits / sampling.temperature
    logp = torch.log_softmax(scaled, dim=-1)
    kept = scaled
    if sampling.top_k:  # masks, not boolean indexing: nothing is read back to the host
        floor = torch.topk(kept, min(sampling.top_k, kept.numel())).values[-1]
        kept = kept.masked_fill(kept < floor, float("-inf"))
    if sampling.top_p < 1.0:
        order = torch.argsort(kept, descending=True)
        probs = torch.softmax(kept[order], dim=-1)
        drop = torch.cumsum(probs, dim=-1) - probs >= sampling.top_p
        kept = kept.masked_fill(torch.zeros_like(drop).scatter_(0, order, drop), float("-inf"))
    token = torch.multinomial(torch.softmax(kept, dim=-1), 1, generator=generator)
    return token[0], logp.gather(0, token)[0]


class _Stop:
    """generate's stopping criterion for the end of the root's code block and stop strings
    (see :meth:`HFModelClient._stopped`); ``hit`` tells whether it fired."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, sampling: Sampling,
                 pieces: dict[int, str]) -> None:
        self.tokenizer, self.sampling, self.pieces = tokenizer, sampling, pieces
        self.ids: list[int] = []
        self.hit = False

    def __call__(self, input_ids: Tensor, scores: Tensor, **_: object) -> Tensor:
        import torch

        token = int(input_ids[0, -1])
        self.ids.append(token)
        if token not in self.pieces:
            self.pieces[token] = decode(self.tokenizer, [token])
        piece = self.pieces[token]
        if "`" in piece or any(s and s[-1] in piece for s in self.sampling.stop):
            self.hit = HFModelClient._stopped(self.tokenizer, self.ids, self.sampling)
        return torch.full((input_ids.shape[0],), self.hit, dtype=torch.bool,
                          device=input_ids.device)


def _generation_config(max_tokens: int, stops: set[int],
                       tokenizer: PreTrainedTokenizerBase) -> GenerationConfig:
    """A config under which generate applies nothing of its own to the logits: the model's
    saved defaults (top_k, repetition penalty, ...) are overridden, :class:`_Picker` decides."""
    from transformers import GenerationConfig

    pad = tokenizer.pad_token_id
    return GenerationConfig(  # type: ignore[no-untyped-call]
        max_new_tokens=max_tokens, do_sample=False, num_beams=1, min_length=0,
        repetition_penalty=1.0, no_repeat_ngram_size=0,
        renormalize_logits=False, eos_token_id=sorted(stops),
        pad_token_id=pad if pad is not None else min(stops), use_cache=True)


def create(spec: ModelSpec) -> HFModelClient:
    """Provider factory for ``hf``; the weights load on ``check()`` or the first call."""
    require("torch", "transformers")
    if spec.options:
        hf_options(spec.options, where=f"model '{spec.name}'")
    if not spec.model:
        raise ConfigError(f"model '{spec.name}': an hf model needs a PATH (or local)")
    return HFModelClient(name=spec.name, spec=spec)
