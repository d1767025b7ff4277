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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


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


def token_logprobs(model: Any, input_ids: Any, temperature: float) -> tuple[Any, Any]:
    """Log-probability of each next token of ``input_ids`` (shape [1, n]) under ``model`` at
    ``temperature``, and each position's entropy: two tensors of n - 1 values (position i
    predicts token i + 1)."""
    import torch

    logits = model(input_ids=input_ids).logits[0, :-1].float() / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, input_ids[0, 1:, None])[:, 0]
    with torch.no_grad():  # logged, not trained: no graph over the whole vocabulary
        detached = logp_all.detach()
        entropy = -(detached.exp() * detached).sum(-1)
    return logp, entropy


@dataclass
class LossParts:
    """Sums over a minibatch's trained tokens, to average when the minibatch is done."""

    loss: Any = 0.0
    """The summed per-token loss (a tensor with a graph once a token was added)."""
    tokens: int = 0
    clipped: int = 0
    """Tokens whose clipped term was the smaller one (its gradient is cut)."""
    entropy: float = 0.0
    kl: float = 0.0


def token_loss(logp: Any, old: Any, behaviour: Any, advantage: float, *, clip_low: float,
               clip_high: float, tis_cap: float, ref: Any = None,
               kl_coef: float = 0.0) -> tuple[Any, Any, Any]:
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
