"""One GRPO step: draw groups of rollouts until B / G groups have reward variance, then one
update of the LoRA policy on their root-sampled tokens.

Groups are drawn slot by slot (slot ``j`` of step ``s``: its room and turn budget from the
BudgetMix plan, or the rooms in turn at ``max_turns``). A crashed rollout is recorded and run
again with a new seed (``rollout_retries`` times); a rollout without reward (judge error) or
without exact tokens is left out of its group; a group left with fewer than two rollouts is
``lost``, one whose rewards are all equal is ``dropped`` (it has no gradient), and each is
replaced by the next slot, up to ``extra_groups`` beyond B / G (oversampling).
"""

from __future__ import annotations

import asyncio
import hashlib
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealroom.runs import append_jsonl
from dealroom.train._grpo_loss import LossParts, group_advantages, token_logprobs, token_loss
from dealroom.train._grpo_settings import GRPOSettings, GRPOSpec
from dealroom.train._rollout import (
    CRASHED,
    OK,
    UNTRAINABLE,
    Episode,
    Rollout,
    episode_tokens,
    policy_client,
    run_rollout,
)
from dealroom.train._serve import publish, served_client

ROLLOUTS = "rollouts.jsonl"
"""``CKPT/rollouts.jsonl``: every rollout as it finished (what --resume reuses)."""
ROLLOUT_DIR = "rollouts"


@dataclass
class Group:
    """A group's rollouts and, once kept, each rollout's advantage."""

    slot: int
    room: str
    max_turns: int
    rollouts: list[Rollout] = field(default_factory=list)
    """The rollouts that count: the last attempt of each place in the group."""
    crashed: list[Rollout] = field(default_factory=list)
    """Attempts that crashed and were replaced."""
    trained: list[Rollout] = field(default_factory=list)
    """The rollouts trained on (a kept group's usable ones), as ``episodes``."""
    episodes: list[Episode] = field(default_factory=list)
    advantages: list[float] = field(default_factory=list)
    fate: str = "kept"
    """kept, dropped (zero reward variance) or lost (fewer than two usable rollouts)."""


@dataclass
class StepContext:
    """What a step needs from the training around it."""

    spec: GRPOSpec
    out: Path
    loaded: Any
    """The policy in memory (a LoadedModel over the PEFT model)."""
    rooms: list[str]
    plan: Any = None
    """The BudgetMix plan, when budgets are mixed."""
    judge: Any = None
    """The judge (a name or a Judge object)."""
    done: dict[tuple[int, int, int, int], Rollout] = field(default_factory=dict)
    """Rollouts already finished for this step (from rollouts.jsonl), by (step, slot, index,
    attempt)."""
    on_rollout: Callable[[Rollout], None] | None = None
    served: str | None = None
    """The adapter name the policy server samples this step's rollouts with (``serve``)."""


def rollout_seed(seed: int, *parts: int) -> int:
    """A sampling seed for one attempt of one rollout, stable across runs and resumes."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def slot_entry(ctx: StepContext, step: int, slot: int) -> tuple[str, int, dict[str, Any] | None]:
    """The room, turn budget and BudgetMix label of a group slot."""
    if ctx.plan is not None:
        entry = ctx.plan.entry(step, slot)
        return entry.room, entry.max_turns, ctx.plan.run_options(step, slot)["budgetmix"]
    settings = ctx.spec.grpo
    slots = settings.groups + settings.extra_groups
    return ctx.rooms[(step * slots + slot) % len(ctx.rooms)], settings.max_turns, None


def collect(ctx: StepContext, step: int) -> list[Group]:
    """Every group drawn for ``step``, kept ones and replaced ones."""
    settings = ctx.spec.grpo
    if settings.serve:
        ctx.served = publish(ctx.loaded.model, ctx.out, settings.serve, step)
    groups: list[Group] = []
    slot = 0
    while (sum(g.fate == "kept" for g in groups) < settings.groups
           and slot < settings.groups + settings.extra_groups):
        groups.append(_group(ctx, step, slot))
        slot += 1
    return groups


def _group(ctx: StepContext, step: int, slot: int) -> Group:
    settings = ctx.spec.grpo
    room, max_turns, label = slot_entry(ctx, step, slot)
    group = Group(slot, room, max_turns)
    for index in range(settings.group_size):
        for attempt in range(settings.rollout_retries + 1):
            rollout = ctx.done.get((step, slot, index, attempt))
            if rollout is None:
                rollout = _run(ctx, step, slot, index, attempt, room, max_turns, label)
            if rollout.status != CRASHED:
                group.rollouts.append(rollout)
                break
            group.crashed.append(rollout)
    usable = []
    for rollout in group.rollouts:
        if rollout.status != OK:
            continue
        episode = episode_tokens(Path(rollout.run), ctx.loaded.tokenizer)
        if episode is None:
            rollout.status = UNTRAINABLE
            continue
        usable.append((rollout, episode))
    rewards = [r.reward for r, _ in usable]
    if len(usable) < 2:
        group.fate = "lost"
    elif max(rewards) - min(rewards) < 1e-12:  # type: ignore[operator]
        group.fate = "dropped"
    else:
        group.episodes = [e for _, e in usable]
        group.advantages = group_advantages(rewards, settings.scale_rewards)  # type: ignore[arg-type]
        group.trained = [r for r, _ in usable]
    return group


def _run(ctx: StepContext, step: int, slot: int, index: int, attempt: int, room: str,
         max_turns: int, label: dict[str, Any] | None) -> Rollout:
    settings = ctx.spec.grpo
    run = ctx.out / ROLLOUT_DIR / f"step-{step + 1:04d}" / f"g{slot:02d}" / f"r{index}-a{attempt}"
    rollout = Rollout(str(run), step, slot, index, attempt, room, max_turns, policy_step=step)
    seed = rollout_seed(settings.seed, step, slot, index, attempt)
    if ctx.served:
        client = served_client(settings.serve, ctx.served, seed, settings.max_new_tokens,
                               ctx.loaded.context_window)
    else:
        client = policy_client(ctx.loaded, ctx.spec.model, seed, settings.max_new_tokens, step)
    ctx.loaded.model.eval()
    rollout = asyncio.run(_closing(client, run_rollout(
        rollout, client, sub=ctx.spec.sub, judge=ctx.judge or ctx.spec.judge,
        harness=ctx.spec.harness, temperature=settings.temperature,
        settings=ctx.spec.settings, budgetmix=label)))
    append_jsonl(ctx.out / ROLLOUTS, rollout.to_dict())
    if ctx.on_rollout is not None:
        ctx.on_rollout(rollout)
    return rollout


async def _closing(client: Any, rollout: Any) -> Rollout:
    """Await ``rollout``, then close the root client's connections."""
    try:
        return await rollout
    finally:
        await client.aclose()


# -- the update -----------------------------------------------------------------------------


def update(model: Any, optimizer: Any, groups: list[Group], settings: GRPOSettings,
           step: int) -> dict[str, Any]:
    """One training step on the kept groups' episodes; the loss figures of the log."""
    import torch

    items = [(e, a, r) for g in groups if g.fate == "kept"
             for e, a, r in zip(g.episodes, g.advantages, g.trained, strict=True)
             if step - r.policy_step <= settings.max_staleness]
    if not items:
        return {"loss": None, "clip_fraction": None, "entropy": None, "kl": None,
                "grad_norm": None, "trained_tokens": 0, "staleness": None}
    prepared = [_prepare(model, e, settings) for e, _, _ in items]
    batches = [list(range(k, len(items), settings.minibatches))
               for k in range(settings.minibatches)]
    total = LossParts(loss=0.0)
    norms = []
    model.train()
    for batch in (b for b in batches if b):
        optimizer.zero_grad()
        tokens = sum(len(prepared[k][0]) for k in batch)
        parts = LossParts()
        for k in batch:
            _accumulate(model, items[k][0], items[k][1], prepared[k], settings, tokens, parts)
        norms.append(float(torch.nn.utils.clip_grad_norm_(
            [p for p in model.parameters() if p.requires_grad], settings.max_grad_norm)))
        optimizer.step()
        total.loss += float(parts.loss)
        for name in ("tokens", "clipped", "entropy", "kl"):
            setattr(total, name, getattr(total, name) + getattr(parts, name))
    model.eval()
    return {"loss": total.loss / len([b for b in batches if b]),
            "clip_fraction": total.clipped / total.tokens, "entropy": total.entropy / total.tokens,
            "kl": total.kl / total.tokens if settings.kl_coef else None,
            "grad_norm": statistics.fmean(norms), "trained_tokens": total.tokens,
            "staleness": statistics.fmean(step - r.policy_step for _, _, r in items)}


def _prepare(model: Any, episode: Episode, settings: GRPOSettings) -> tuple[Any, Any, Any]:
    """Positions of the trained tokens (as predictions), the policy's logprobs there before
    the update, and the base model's (for the KL) when asked."""
    import torch

    if episode.mask[0]:
        raise ValueError("an episode cannot start with a sampled token")
    ids = torch.tensor([episode.input_ids])
    where = torch.tensor([i - 1 for i, bit in enumerate(episode.mask) if bit])
    with torch.no_grad():
        old = token_logprobs(model, ids, settings.temperature)[0][where]
        ref = None
        if settings.kl_coef:
            with model.disable_adapter():
                ref = token_logprobs(model, ids, settings.temperature)[0][where]
    return where, old, ref


def _accumulate(model: Any, episode: Episode, advantage: float, prepared: tuple[Any, Any, Any],
                settings: GRPOSettings, tokens: int, parts: LossParts) -> None:
    import torch

    where, old, ref = prepared
    ids = torch.tensor([episode.input_ids])
    logp, entropy = token_logprobs(model, ids, settings.temperature)
    loss, clipped, kl = token_loss(
        logp[where], old, torch.tensor(episode.behaviour), advantage,
        clip_low=settings.clip_low, clip_high=settings.clip_high, tis_cap=settings.tis_cap,
        ref=ref, kl_coef=settings.kl_coef)
    scaled = loss.sum() / tokens  # token-mean over the minibatch
    scaled.backward()
    parts.loss = float(parts.loss) + float(scaled.detach())
    parts.tokens += len(where)
    parts.clipped += int(clipped.sum())
    parts.entropy += float(entropy[where].detach().sum())
    parts.kl += float(kl.detach().sum())
