"""The GRPO objective, as plain torch functions over one episode's tokens.

For the tokens the root sampled (mask 1), with A the episode's group-relative advantage,
``logp`` the policy being trained, ``old`` the policy before this step's update and
``behaviour`` the logprobs recorded when the rollout was sampled::

    ratio  = exp(logp - old)
    tis    = min(exp(old - behaviour), tis_cap)          truncated importance sampling
    loss_t = -tis * min(ratio * A, clip(ratio, 1 - clip_low, 1 + clip_high) * A)
             + kl_coef * (exp(ref - logp) - (ref - logp) - 1)    k3 KL to the base (optional)

and the loss is the mean of ``loss_t`` over every trained token of the minibatch (token-mean,
DAPO-style: a long episode weighs by its tokens, not as one sample).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import Tensor


def group_advantages(rewards: Sequence[float], scale: bool = True) -> list[float]:
    """Each reward minus the group's mean, divided by the group's standard deviation when
    ``scale``; all zero for a group without variance (such a group teaches nothing).

    >>> group_advantages([1.0, 0.0])
    [1.0, -1.0]
    >>> group_advantages([0.5, 0.5, 0.5])
    [0.0, 0.0, 0.0]
    """
    mean = sum(rewards) / len(rewards)
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))
    if std < 1e-8:
        return [0.0] * len(rewards)
    return [(r - mean) / std if scale else r - mean for r in rewards]


CHUNK_ELEMENTS = 1 << 25
"""Logits computed at once in :func:`token_logprobs`: positions per chunk times the
vocabulary (32M float32 values, 128 MB)."""


def token_logprobs(model: Any, input_ids: Tensor, temperature: float,
                   where: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Log-probability of the next token at each prediction position ``where`` (position i
    predicts token i + 1; default every position but the last) of ``input_ids`` (shape
    [1, n]) under ``model`` at ``temperature``, and each such position's entropy.

    The full distribution is never held: the final hidden states go through the output
    layer a chunk of positions at a time, each chunk's log-probabilities are taken as the
    chosen logit less the log-sum-exp (a selective log-softmax), and with gradients on each
    chunk is recomputed in the backward pass instead of kept (activation checkpointing of the
    head). The entropy, logged and not trained, is computed in the same chunks without a
    graph."""
    import torch

    n = input_ids.shape[1]
    if where is None:
        where = torch.arange(n - 1, device=input_ids.device)
    targets = input_ids[0, where + 1]
    hidden, head = _final_hidden(model, input_ids)
    vocab = hidden.shape[-1] if head is None else head.weight.shape[0]
    head = head or _same  # a model whose logits are not its head over the hidden states
    step = max(1, CHUNK_ELEMENTS // vocab)
    parts = []
    for start in range(0, len(where), step):
        rows = hidden[where[start:start + step]]
        if torch.is_grad_enabled():
            parts.append(torch.utils.checkpoint.checkpoint(
                _chunk_logp, head, rows, targets[start:start + step], temperature,
                use_reentrant=False))
        else:
            parts.append(_chunk_logp(head, rows, targets[start:start + step], temperature))
    if not parts:
        empty = hidden.new_zeros(0, dtype=torch.float32)
        return empty, empty
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def _final_hidden(model: Any, input_ids: Tensor) -> tuple[Tensor, Any]:
    """``(hidden [n, d], output layer)`` of a causal LM (a PEFT model too); for a model that
    scales or caps its logits past the head, ``(logits [n, vocab], None)``."""
    config = model.config
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    decoder, head = base.get_decoder(), base.get_output_embeddings()
    capped = getattr(config, "final_logit_softcapping", None) or getattr(
        config, "logit_scale", None)
    if capped or decoder is None or head is None or decoder is base:
        return model(input_ids=input_ids).logits[0], None
    return decoder(input_ids=input_ids, use_cache=False).last_hidden_state[0], head


def _same(logits: Tensor) -> Tensor:
    return logits


def _chunk_logp(head: Callable[[Tensor], Tensor], hidden: Tensor, targets: Tensor,
                temperature: float) -> tuple[Tensor, Tensor]:
    """The chosen tokens' log-probabilities for one chunk of positions, and their entropy
    (without a graph)."""
    import torch

    logits = head(hidden).float() / temperature
    logp = logits.gather(-1, targets[:, None])[:, 0] - torch.logsumexp(logits, dim=-1)
    with torch.no_grad():
        detached = torch.log_softmax(logits.detach(), dim=-1)
        entropy = -(detached.exp() * detached).sum(-1)
    return logp, entropy


@dataclass
class LossParts:
    """Sums over a minibatch's trained tokens, to average when the minibatch is done."""

    loss: Tensor | float = 0.0
    """The summed per-token loss (a tensor with a graph once a token was added)."""
    tokens: int = 0
    clipped: int = 0
    """Tokens whose clipped term was the smaller one (its gradient is cut)."""
    entropy: float = 0.0
    kl: float = 0.0
    other_loss: float = 0.0
    """The summed per-token loss of the sequences that are not a root's (``train_subs``)."""
    other_tokens: int = 0
    """Their trained tokens."""


def token_loss(logp: Tensor, old: Tensor, behaviour: Tensor, advantage: float, *,
               clip_low: float, clip_high: float, tis_cap: float, ref: Tensor | None = None,
               kl_coef: float = 0.0) -> tuple[Tensor, Tensor, Tensor]:
    """The per-token loss (see the module docstring), which tokens were clipped, and the
    per-token KL estimate (zeros without ``ref``); all tensors over the trained tokens."""
    import torch

    ratio = torch.exp(logp - old)
    tis = torch.clamp(torch.exp(old - behaviour), max=tis_cap)
    plain = ratio * advantage
    clipped = torch.clamp(ratio, 1 - clip_low, 1 + clip_high) * advantage
    loss = -tis * torch.minimum(plain, clipped)
    kl = torch.zeros_like(logp)
    if ref is not None:
        delta = ref - logp
        kl = torch.exp(delta) - delta - 1
        loss = loss + kl_coef * kl
    return loss, clipped < plain, kl
