"""Batched sampling for ``hf:`` models: the replies due at the same moment generate together.

    chat (client A) ─┐                       ┌─▶ A's reply, the moment A's row ends (its
    chat (client B) ─┼─▶ Batcher (one worker ─┤    episode runs its code while B's goes on)
    chat (client C) ─┘   thread per model)    └─▶ B's, C's ...

The worker takes the calls waiting and waits a little for more: :data:`WINDOW_S` (calls made
at the same instant, such as a fan-out of sub-calls), or, while lock-step clients are open (a
GRPO group's episodes), until each of them has a call waiting, at most
:data:`LOCKSTEP_WAIT_S` after the first one (or after the last batch ended); at most
``max_batch`` calls form a batch. A batch is one ``generate`` with one KV cache: the prompts'
shared head computed once (and kept for the next batch while the weights are unchanged), each
row's own tail after it, padded in front, with an attention mask (positions count from each
prompt's first token).

Each row is sampled as it would be alone: its client's generator draws its tokens from its own
logits (temperature, top-k, top-p) and its logprob is kept on the device; a row that has ended
draws nothing more. So a fixed seed gives the same tokens batched or one at a time, and the
same logprobs up to float rounding (padding changes the shapes of the matrix products, not
what they compute).
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dealroom.errors import ModelError
from dealroom.models._chat import decode

if TYPE_CHECKING:
    import torch
    from torch import Tensor
    from transformers import GenerationConfig, PreTrainedTokenizerBase

    from dealroom.models._hfload import LoadedModel

MAX_BATCH = 16
"""Most calls generated as one batch."""
WINDOW_S = 0.01
"""How long the first call waiting is held for others made at the same instant."""
LOCKSTEP_WAIT_S = 2.0
"""How long a lock-step client's call waits for the other lock-step clients' calls."""
SHARED_MIN = 16
"""Fewest leading prompt ids shared by a batch's rows for them to be computed once."""
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


Outcome = tuple[list[int], list[float], bool, str]
"""A reply's sampled ids, their logprobs, whether it ended at end-of-sequence, finish reason."""


@dataclass
class Row:
    """One reply generated in a batch; ``finish`` turns it into the call's result."""

    prompt: list[int]
    sampling: Sampling
    generator: torch.Generator | None
    finish: Callable[[Row], Any]
    future: Future[Any] | None = None
    ids: list[int] = field(default_factory=list)
    chosen: list[Tensor] = field(default_factory=list)
    hit: bool = False
    """A closed code block or a stop string ended it."""
    ended: bool = False

    def end(self) -> None:
        """The row is over: hand its result (or the error building it) to its caller."""
        self.ended = True
        if self.future is None or self.future.done():
            return
        try:
            self.future.set_result(self.finish(self))
        except Exception as exc:  # noqa: BLE001 - the caller's error, raised where it waits
            self.future.set_exception(exc)

    def outcome(self, tokenizer: PreTrainedTokenizerBase, stops: set[int]) -> Outcome:
        """The sampled ids and logprobs (one read from the device), cut at a stop string."""
        import torch

        ids = list(self.ids)
        logprobs = torch.stack(self.chosen).tolist()[:len(ids)] if self.chosen else []
        if ids and ids[-1] in stops:
            return ids, logprobs, True, "stop"
        if self.hit:
            return cut(tokenizer, ids, logprobs, self.sampling)
        return ids, logprobs, False, "length"


def stopped(tokenizer: PreTrainedTokenizerBase, ids: list[int], sampling: Sampling) -> bool:
    """Whether the reply ``ids`` has closed its code block or reached a stop string."""
    piece = decode(tokenizer, ids[-1:])
    if "`" not in piece and not any(s and s[-1] in piece for s in sampling.stop):
        return False
    text = decode(tokenizer, ids)
    return code_closed(text) or any(s and s in text for s in sampling.stop)


def cut(tokenizer: PreTrainedTokenizerBase, ids: list[int], logprobs: list[float],
        sampling: Sampling) -> Outcome:
    """At a stop string, keep the whole tokens before it; a closed code block stays."""
    text = decode(tokenizer, ids)
    found = [text.find(s) for s in sampling.stop if s and s in text]
    if not found or code_closed(text[:min(found)]):
        return ids, logprobs, False, "stop"
    keep = len(ids)
    while keep and len(decode(tokenizer, ids[:keep])) > min(found):
        keep -= 1
    return ids[:keep], logprobs[:keep], False, "stop"


@dataclass
class Memo:
    """What a model's batches keep for the next: each token id's decoded text, and the last
    shared head's ids, KV cache (batch 1) and the weights' version it was computed with."""

    pieces: dict[int, str] = field(default_factory=dict)
    head: tuple[list[int], Any, tuple[tuple[int, int], ...]] | None = None


@dataclass
class _Job:
    member: object
    loaded: LoadedModel
    prepare: Callable[[], Row]
    future: Future[Any]
    since: float


class Batcher:
    """Collects a loaded model's calls and generates those due together as one batch (see
    the module docstring). ``sizes`` counts the batches run by their size."""

    def __init__(self, max_batch: int = MAX_BATCH, lockstep_wait_s: float | None = None
                 ) -> None:
        self.max_batch, self.lockstep_wait_s = max_batch, lockstep_wait_s
        """``lockstep_wait_s``: None for :data:`LOCKSTEP_WAIT_S`."""
        self.sizes: Counter[int] = Counter()
        self.memo = Memo()
        self._cond = threading.Condition()
        self._pending: list[_Job] = []
        self._lockstep: set[object] = set()
        self._free_since = 0.0
        self._thread: threading.Thread | None = None
        self._closed = False

    def join(self, member: object) -> None:
        """``member``'s calls wait for the other lock-step members' (see the docstring)."""
        with self._cond:
            self._lockstep.add(member)

    def leave(self, member: object) -> None:
        """``member`` calls no more: the others stop waiting for it."""
        with self._cond:
            self._lockstep.discard(member)
            self._cond.notify_all()

    def submit(self, member: object, loaded: LoadedModel,
               prepare: Callable[[], Row]) -> Future[Any]:
        """Queue a call: ``prepare`` builds its row in the worker; the future gets the row's
        ``finish`` result."""
        future: Future[Any] = Future()
        with self._cond:
            if self._closed:
                raise ModelError("the model was released: open it again")
            self._pending.append(_Job(member, loaded, prepare, future, time.monotonic()))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, daemon=True,
                                                name="dealroom-hf")
                self._thread.start()
            self._cond.notify_all()
        return future

    def close(self) -> None:
        """Stop the worker once its batch ends; calls still waiting fail."""
        with self._cond:
            self._closed = True
            self.memo.head = None
            waiting, self._pending = self._pending, []
            self._cond.notify_all()
        for job in waiting:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(ModelError("the model was released"))

    def _work(self) -> None:
        while (batch := self._next()) is not None:
            self._run(batch)
            with self._cond:
                self._free_since = time.monotonic()

    def _next(self) -> list[_Job] | None:
        with self._cond:
            while not self._pending and not self._closed:
                self._cond.wait()
            while not self._closed and not self._full():
                left = self._deadline() - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            if self._closed:
                return None
            batch, self._pending = (self._pending[:self.max_batch],
                                    self._pending[self.max_batch:])
            return batch

    def _full(self) -> bool:
        if len(self._pending) >= self.max_batch:
            return True
        waiting = {job.member for job in self._pending}
        return bool(self._lockstep) and self._lockstep <= waiting

    def _deadline(self) -> float:
        lockstep = any(job.member in self._lockstep for job in self._pending)
        wait = (LOCKSTEP_WAIT_S if self.lockstep_wait_s is None else self.lockstep_wait_s) \
            if lockstep else WINDOW_S
        return max(self._pending[0].since, self._free_since) + wait

    def _run(self, batch: list[_Job]) -> None:
        rows = []
        for job in batch:
            if not job.future.set_running_or_notify_cancel():
                continue  # its caller gave up waiting
            try:
                row = job.prepare()
            except Exception as exc:  # noqa: BLE001 - this call's error, raised to its caller
                job.future.set_exception(exc)
                continue
            row.future = job.future
            rows.append(row)
        if not rows:
            return
        self.sizes[len(rows)] += 1
        try:
            sample_batch(batch[0].loaded, rows, self.memo)
        except Exception as exc:  # noqa: BLE001 - every row not yet ended fails with it
            for row in rows:
                if row.future is not None and not row.future.done():
                    row.future.set_exception(exc)


def sample_batch(loaded: LoadedModel, rows: list[Row], memo: Memo) -> None:
    """Generate ``rows`` as one batch with transformers' ``generate`` (padding, attention
    mask, KV cache, the loop on the model's device): :class:`_Picker` draws each row's token
    with the row's generator, :class:`_Stop` ends each row at end-of-sequence, a closed code
    block, a stop string or its ``max_tokens`` and calls its ``end``. The per-token host reads
    are generate's own and ``_Stop``'s one id per row.

    The prompts' shared head (a group's episodes share their first prompt, then its system
    prompt and task) is computed once (:func:`_head_cache`, which keeps it for the next
    batch) and each row's own tail follows it, padded in front: ``head | pad… | tail``; a
    row alone is one plain prompt."""
    import torch

    stops, tokenizer = loaded.stop_ids, loaded.tokenizer
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(stops)
    shared = shared_length([r.prompt for r in rows]) if len(rows) > 1 else 0
    if shared < SHARED_MIN or not _cache_shareable(loaded.model):
        shared = 0
    head, tails = rows[0].prompt[:shared], [r.prompt[shared:] for r in rows]
    width = max(len(tail) for tail in tails)
    ids = torch.tensor([head + [pad] * (width - len(t)) + t for t in tails],
                       device=loaded.device)
    mask = torch.tensor([[1] * shared + [0] * (width - len(t)) + [1] * len(t) for t in tails],
                        device=loaded.device)
    with torch.inference_mode():
        cache = _head_cache(loaded, head, len(rows), memo) if shared else None
        loaded.model.generate(
            input_ids=ids, attention_mask=mask, cache=cache,
            generation_config=_generation_config(max(r.sampling.max_tokens for r in rows),
                                                 stops, pad),
            logits_processor=[_Picker(rows)],
            stopping_criteria=[_Stop(tokenizer, rows, memo.pieces, stops)])
    for row in rows:
        if not row.ended:
            row.end()


def shared_length(prompts: list[list[int]]) -> int:
    """How many leading ids every prompt shares, leaving each at least one of its own (the
    one whose logits draw its first token).

    >>> shared_length([[1, 2, 3, 4], [1, 2, 3, 5, 6]]), shared_length([[1, 2], [1, 2, 7]])
    (3, 1)
    """
    first, most = prompts[0], min(len(p) for p in prompts) - 1
    return min([most, *(_common(first, p) for p in prompts[1:])])


def _common(a: list[int], b: list[int]) -> int:
    """The length of the prefix ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _cache_shareable(model: Any) -> bool:
    """Whether every layer keeps a plain KV cache (full attention), so a head computed once
    can be repeated for every row."""
    config = model.config.get_text_config(decoder=True)
    kinds = set(getattr(config, "layer_types", None) or ["full_attention"])
    return kinds == {"full_attention"} and not getattr(config, "sliding_window", None)


def _head_cache(loaded: LoadedModel, head: list[int], rows: int, memo: Memo) -> Any:
    """The KV cache of ``head`` (batch 1), repeated for ``rows`` rows. What it shares with
    the last batch's head (the system prompt and task, turn after turn) is taken from
    ``memo`` unless the weights have changed since (a training step); the rest is computed
    and the head kept for the next batch."""
    import copy

    import torch
    from transformers import DynamicCache

    weights = _weights_version(loaded.model)
    kept, cache = 0, None
    if memo.head is not None and memo.head[2] == weights:
        kept = _common(memo.head[0], head)
        if kept:
            cache = copy.deepcopy(memo.head[1])
            if kept < len(memo.head[0]):
                cache.crop(kept - len(memo.head[0]))  # transformers: remove that many
    if cache is None:
        kept, cache = 0, DynamicCache(config=loaded.model.config)
    if kept < len(head):
        loaded.model(input_ids=torch.tensor([head[kept:]], device=loaded.device), cache=cache,
                     use_cache=True, logits_to_keep=1)
    if memo.head is None or kept < len(head) or kept < len(memo.head[0]):
        memo.head = (head, copy.deepcopy(cache), weights)
    cache.batch_repeat_interleave(rows)
    return cache


def _weights_version(model: Any) -> tuple[tuple[int, int], ...]:
    """Each parameter's identity and version counter (bumped by every in-place change, such
    as an optimizer step or loading weights): equal only while the weights are unchanged."""
    return tuple((id(p), p._version) for p in model.parameters())


class _Picker:
    """generate's logits processor that samples: for each row still going it draws the token
    from the row's raw logits (temperature, top-k, top-p; greedy at temperature 0) with the
    row's generator, keeps that token's logprob under log-softmax(logits / temperature) on the
    device, and leaves only that token possible, so generate's own argmax takes it."""

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        import torch

        only = torch.full_like(scores, float("-inf"))
        for k, row in enumerate(self.rows):
            if row.ended:  # generate pads an ended row; nothing is drawn for it
                only[k, 0] = 0.0
                continue
            token, logprob = _pick(scores[k].float(), row.sampling, row.generator)
            row.chosen.append(logprob)
            only[k].scatter_(0, token.view(1), 0.0)
        return only


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
    """generate's stopping criterion: a row ends at an end-of-sequence id, the end of the
    root's code block or a stop string (see :func:`stopped`), or its own ``max_tokens``; its
    result is handed back at once (``Row.end``)."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, rows: list[Row],
                 pieces: dict[int, str], stops: set[int]) -> None:
        self.tokenizer, self.rows, self.pieces, self.stops = tokenizer, rows, pieces, stops

    def __call__(self, input_ids: Tensor, scores: Tensor, **_: object) -> Tensor:
        import torch

        for row, token in zip(self.rows, input_ids[:, -1].tolist(), strict=True):
            if row.ended:
                continue
            row.ids.append(token)
            if token not in self.pieces:
                self.pieces[token] = decode(self.tokenizer, [token])
            piece = self.pieces[token]
            if "`" in piece or any(s and s[-1] in piece for s in row.sampling.stop):
                row.hit = stopped(self.tokenizer, row.ids, row.sampling)
            if token in self.stops or row.hit or len(row.ids) >= row.sampling.max_tokens:
                row.end()
        return torch.tensor([row.ended for row in self.rows], dtype=torch.bool,
                            device=input_ids.device)


def _generation_config(max_tokens: int, stops: set[int], pad: int) -> GenerationConfig:
    """A config under which generate applies nothing of its own to the logits: the model's
    saved defaults (top_k, repetition penalty, ...) are overridden, :class:`_Picker` decides."""
    from transformers import GenerationConfig

    return GenerationConfig(  # type: ignore[no-untyped-call]
        max_new_tokens=max_tokens, do_sample=False, num_beams=1, min_length=0,
        repetition_penalty=1.0, no_repeat_ngram_size=0,
        renormalize_logits=False, eos_token_id=sorted(stops), pad_token_id=pad,
        use_cache=True)
