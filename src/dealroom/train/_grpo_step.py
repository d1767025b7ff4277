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
import os
import socket
import statistics
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.eval import Stopped
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
    policy_sequences,
    remote_rollout,
    run_rollout,
    sub_seed,
    unless_stopped,
    uses_policy,
)
from dealroom.train._serve import publish, served_client
from dealroom.train._subseq import CHILD, ROOT, SUB

if TYPE_CHECKING:
    import torch
    from torch import Tensor

    from dealroom.eval import BudgetMixPlan
    from dealroom.judge import Judge
    from dealroom.models import LoadedModel, ModelClient

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
    others: list[list[Episode]] = field(default_factory=list)
    """Each trained rollout's other sequences (``train_subs``: its children's and its
    sub-calls'), trained with its advantage; empty lists without train_subs."""
    missed: int = 0
    """Of those, the sequences left out for want of an exact token record."""
    fate: str = "kept"
    """kept, dropped (zero reward variance) or lost (fewer than two usable rollouts)."""


@dataclass
class StepContext:
    """What a step needs from the training around it."""

    spec: GRPOSpec
    out: Path
    loaded: LoadedModel
    """The policy in memory (a LoadedModel over the PEFT model)."""
    rooms: list[str]
    plan: BudgetMixPlan | None = None
    """The BudgetMix plan, when budgets are mixed."""
    judge: Judge | None = None
    """The judge (a name or a Judge object)."""
    done: dict[tuple[int, int, int, int], Rollout] = field(default_factory=dict)
    """Rollouts already finished for this step (from rollouts.jsonl), by (step, slot, index,
    attempt)."""
    on_rollout: Callable[[Rollout], None] | None = None
    served: str | None = None
    """The adapter name the policy server samples this step's rollouts with (``serve``)."""
    stop: threading.Event | None = None
    """Set to stop the rollouts sampled with this context (the look-ahead's, when training
    fails): running ones are killed, none more is started."""


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


def collect(ctx: StepContext, step: int, ahead: list[Group] | None = None) -> list[Group]:
    """Every group drawn for ``step``, kept ones and replaced ones: as many groups at once as
    are still wanted. ``ahead``: the step's first groups, sampled during the last update
    (``async_rollouts``)."""
    settings = ctx.spec.grpo
    if settings.serve:
        ctx.served = publish(ctx.loaded.model, ctx.out, settings.serve, step)
    groups = list(ahead or [])
    slot, slots = len(groups), settings.groups + settings.extra_groups
    while (kept := sum(g.fate == "kept" for g in groups)) < settings.groups and slot < slots:
        width = min(settings.groups - kept, slots - slot)
        groups += _groups(ctx, step, range(slot, slot + width))
        slot += width
    return groups


def sample_ahead(ctx: StepContext, step: int) -> list[Group]:
    """The first B / G groups of ``step``, sampled by the adapter served for ``step - 1``
    (called while that step's update runs): their rollouts are one step stale."""
    return _groups(ctx, step, range(ctx.spec.grpo.groups), version=step - 1)


def _groups(ctx: StepContext, step: int, slots: range, version: int | None = None
            ) -> list[Group]:
    """The groups of ``slots``: every place run (a crashed attempt run again, up to
    ``rollout_retries`` times), then each group kept, dropped or lost. ``version``: the
    updates the sampling policy has had (``step`` unless sampled ahead)."""
    settings = ctx.spec.grpo
    entries = {slot: slot_entry(ctx, step, slot) for slot in slots}
    groups = {slot: Group(slot, *entries[slot][:2]) for slot in slots}
    places = [(slot, index) for slot in slots for index in range(settings.group_size)]
    for attempt in range(settings.rollout_retries + 1):
        finished = _run_all(ctx, step, [(slot, index, attempt, *entries[slot])
                                        for slot, index in places],
                            step if version is None else version)
        again = []
        for (slot, index), rollout in zip(places, finished, strict=True):
            if rollout.status == CRASHED:
                groups[slot].crashed.append(rollout)
                again.append((slot, index))
            else:
                groups[slot].rollouts.append(rollout)
        places = again
        if not places:
            break
    for group in groups.values():
        group.rollouts.sort(key=lambda r: r.index)
        _decide_fate(ctx, group)
    return list(groups.values())


def _decide_fate(ctx: StepContext, group: Group) -> None:
    """Keep the group (with its advantages), or drop or lose it."""
    usable = []
    for rollout in group.rollouts:
        if rollout.status != OK:
            continue
        episode = episode_tokens(Path(rollout.run), ctx.loaded.tokenizer)
        if episode is None:
            rollout.status = UNTRAINABLE
            continue
        usable.append((rollout, episode))
    rewards = [r.reward or 0.0 for r, _ in usable]  # an OK rollout has its reward
    if len(usable) < 2:
        group.fate = "lost"
    elif max(rewards) - min(rewards) < 1e-12:
        group.fate = "dropped"
    else:
        group.episodes = [e for _, e in usable]
        group.advantages = group_advantages(rewards, ctx.spec.grpo.scale_rewards)  # type: ignore[arg-type]
        group.trained = [r for r, _ in usable]
        group.others = [[] for _ in usable]
        if ctx.spec.grpo.train_subs:
            for k, (rollout, _) in enumerate(usable):
                group.others[k], missed = policy_sequences(Path(rollout.run),
                                                           ctx.loaded.tokenizer)
                group.missed += missed


Item = tuple[int, int, int, str, int, dict[str, Any] | None]
"""(slot, index, attempt, room, max_turns, BudgetMix label) of one rollout to run."""


def _run_all(ctx: StepContext, step: int, items: list[Item], version: int) -> list[Rollout]:
    """The rollouts of ``items``, in order: those finished before a kill as they were, the
    rest run side by side here (:func:`_run_here`), or in worker processes or Ray tasks."""
    rollouts, todo = [], []
    for slot, index, attempt, room, max_turns, label in items:
        rollout = ctx.done.get((step, slot, index, attempt))
        if rollout is None:
            run = (ctx.out / ROLLOUT_DIR / f"step-{step + 1:04d}" / f"g{slot:02d}"
                   / f"r{index}-a{attempt}")
            rollout = Rollout(str(run), step, slot, index, attempt, room, max_turns,
                              policy_step=version)
            todo.append((rollout, label))
        rollouts.append(rollout)
    finished = _run_remote(ctx, todo) if ctx.spec.grpo.remote_rollouts \
        else _run_here(ctx, todo)
    return [finished.get(r.run, r) for r in rollouts]


def _options(ctx: StepContext, label: dict[str, Any] | None) -> dict[str, Any]:
    """What :func:`run_rollout` takes besides the rollout and the client."""
    return {"sub": ctx.spec.sub, "judge": ctx.judge or ctx.spec.judge,
            "harness": ctx.spec.harness, "temperature": ctx.spec.grpo.temperature,
            "settings": ctx.spec.settings, "budgetmix": label,
            "reward": ctx.spec.grpo.to_dict()["reward"]}


def _seed(ctx: StepContext, rollout: Rollout) -> int:
    return rollout_seed(ctx.spec.grpo.seed, rollout.step, rollout.slot, rollout.index,
                        rollout.attempt)


def _served(ctx: StepContext, rollout: Rollout) -> dict[str, Any]:
    """:func:`served_client`'s arguments for ``rollout``."""
    settings = ctx.spec.grpo
    return {"serve": settings.serve, "name": ctx.served, "seed": _seed(ctx, rollout),
            "max_new_tokens": settings.max_new_tokens,
            "context_window": ctx.loaded.context_window}


def _run_here(ctx: StepContext, todo: list[tuple[Rollout, dict[str, Any] | None]]
              ) -> dict[str, Rollout]:
    """Run the rollouts of ``todo`` in this process, ``rollout_batch`` at a time as tasks of
    one event loop, each recorded as it finishes. With the in-memory policy their clients
    step in lock-step, so the replies they are due at the same moment generate as one batch
    (see dealroom.models._hfbatch); a set ``ctx.stop`` cancels the running ones."""
    finished: dict[str, Rollout] = {}
    width = ctx.spec.grpo.rollout_batch

    async def one(rollout: Rollout, label: dict[str, Any] | None,
                  gate: asyncio.Semaphore, client: ModelClient | None) -> None:
        try:  # a client made ahead is closed even when its rollout never starts
            async with gate:
                client = client or _client(ctx, rollout)
                if ctx.stop is not None and ctx.stop.is_set():
                    return
                rollout.worker = f"{socket.gethostname()}:{os.getpid()}"
                await run_rollout(rollout, client, **_options(ctx, label),
                                  sub_client=_sub_client(ctx, rollout, client))
        finally:
            if client is not None:
                await client.aclose()
        finished[rollout.run] = _finished(ctx, rollout)

    async def run_all() -> None:
        gate = asyncio.Semaphore(width)
        # the first ones' clients are all in the lock-step before any episode calls, so
        # their first replies are one batch
        clients = [_client(ctx, r) if k < width else None for k, (r, _) in enumerate(todo)]
        await asyncio.gather(*(one(rollout, label, gate, client)
                               for (rollout, label), client in zip(todo, clients, strict=True)))

    if todo:
        asyncio.run(unless_stopped(run_all(), ctx.stop, "the step's rollouts"))
    if len(finished) < len(todo):
        raise Stopped("stopped before the step's rollouts were run")
    return finished


def _client(ctx: StepContext, rollout: Rollout) -> ModelClient:
    """The rollout's root: the served policy, or the one in memory (in lock-step)."""
    if ctx.served:  # the model in memory is not touched (an update may be running)
        return served_client(**_served(ctx, rollout))
    ctx.loaded.model.eval()
    return policy_client(ctx.loaded, ctx.spec.model, _seed(ctx, rollout),
                         ctx.spec.grpo.max_new_tokens, rollout.step)


def _sub_client(ctx: StepContext, rollout: Rollout, root: ModelClient) -> ModelClient | None:
    """The policy's client for the rollout's sub-calls when ``sub`` names ``policy``: served,
    or over the model in memory (its calls counted as ``root``'s in the lock-step)."""
    if not uses_policy(ctx.spec.sub):
        return None
    seed = sub_seed(_seed(ctx, rollout))
    if ctx.served:
        return served_client(**{**_served(ctx, rollout), "seed": seed})
    return policy_client(ctx.loaded, ctx.spec.model, seed, ctx.spec.grpo.max_new_tokens,
                         rollout.step, follows=root)  # type: ignore[arg-type]


def _run_remote(ctx: StepContext, todo: list[tuple[Rollout, dict[str, Any] | None]]
                ) -> dict[str, Rollout]:
    """Run the rollouts of ``todo`` side by side (``rollout_workers`` at a time) in worker
    processes or Ray tasks; each is recorded as it finishes."""
    from dealroom.eval import execute

    settings = ctx.spec.grpo
    by_run = {r.run: r for r, _ in todo}
    finished: dict[str, Rollout] = {}

    def record(run: str, result: dict[str, Any]) -> None:
        if "run" not in result:  # the worker process or Ray task died
            rollout = by_run[run]
            rollout.status, rollout.error = CRASHED, result.get("error")
        else:
            rollout = Rollout(**result)
        finished[run] = _finished(ctx, rollout)

    jobs = [(r.run, (r.to_dict(), _served(ctx, r), _options(ctx, label))) for r, label in todo]
    execute(remote_rollout, jobs, record, workers=settings.rollout_workers,
            backend=settings.rollout_backend, address=settings.ray_address or None,
            stop=ctx.stop)
    return finished


def _finished(ctx: StepContext, rollout: Rollout) -> Rollout:
    append_jsonl(ctx.out / ROLLOUTS, rollout.to_dict())
    if ctx.on_rollout is not None:
        ctx.on_rollout(rollout)
    return rollout


# -- the update -----------------------------------------------------------------------------


def update(model: Any, optimizer: torch.optim.Optimizer, groups: list[Group],
           settings: GRPOSettings, step: int) -> dict[str, Any]:
    """One training step on the kept groups' episodes; the loss figures of the log."""
    import torch

    items = [(e, a, r) for g in groups if g.fate == "kept"
             for e, a, r in _sequences(g)
             if step - r.policy_step <= settings.max_staleness]
    counts = {**{f"{kind}_sequences": sum(e.kind == kind for e, _, _ in items)
                 for kind in (CHILD, SUB)},
              "sequences_missed": sum(g.missed for g in groups if g.fate == "kept")} \
        if settings.train_subs else {}
    if not items:
        return {"loss": None, "clip_fraction": None, "entropy": None, "kl": None,
                "grad_norm": None, "trained_tokens": 0, "staleness": None,
                **({"loss_subs": None, "sub_trained_tokens": 0, **counts}
                   if settings.train_subs else {})}
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
        for name in ("tokens", "clipped", "entropy", "kl", "other_loss", "other_tokens"):
            setattr(total, name, getattr(total, name) + getattr(parts, name))
    model.eval()
    subs = {"loss_subs": total.other_loss / total.other_tokens if total.other_tokens else None,
            "sub_trained_tokens": total.other_tokens, **counts} if settings.train_subs else {}
    return {"loss": total.loss / len([b for b in batches if b]),
            "clip_fraction": total.clipped / total.tokens, "entropy": total.entropy / total.tokens,
            "kl": total.kl / total.tokens if settings.kl_coef else None,
            "grad_norm": statistics.fmean(norms), "trained_tokens": total.tokens,
            "staleness": statistics.fmean(step - r.policy_step for _, _, r in items), **subs}


def _sequences(group: Group) -> list[tuple[Episode, float, Rollout]]:
    """A kept group's sequences with their advantage and rollout: each rollout's root episode,
    then its other sequences (``train_subs``) with the same advantage (the parent's reward
    propagated to its children and sub-calls)."""
    others = group.others or [[] for _ in group.episodes]
    return [(e, a, r) for episode, a, r, more in zip(group.episodes, group.advantages,
                                                       group.trained, others, strict=True)
            for e in (episode, *more)]


def _prepare(model: Any, episode: Episode,
             settings: GRPOSettings) -> tuple[Tensor, Tensor, Tensor | None]:
    """Positions of the trained tokens (as predictions), the policy's logprobs there before
    the update, and the base model's (for the KL) when asked; all on the model's device."""
    import torch

    if episode.mask[0]:
        raise ValueError("an episode cannot start with a sampled token")
    device = model_device(model)
    ids = torch.tensor([episode.input_ids], device=device)
    where = torch.tensor([i - 1 for i, bit in enumerate(episode.mask) if bit], device=device)
    with torch.no_grad():
        old = token_logprobs(model, ids, settings.temperature, where)[0]
        ref = None
        if settings.kl_coef:
            with model.disable_adapter():
                ref = token_logprobs(model, ids, settings.temperature, where)[0]
    return where, old, ref


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of ``model``'s weights: where every tensor it meets is created."""
    return next(model.parameters()).device


def _accumulate(model: Any, episode: Episode, advantage: float,
                prepared: tuple[Tensor, Tensor, Tensor | None],
                settings: GRPOSettings, tokens: int, parts: LossParts) -> None:
    import torch

    where, old, ref = prepared
    ids = torch.tensor([episode.input_ids], device=where.device)
    logp, entropy = token_logprobs(model, ids, settings.temperature, where)
    behaviour = torch.tensor(episode.behaviour, dtype=logp.dtype, device=where.device)
    loss, clipped, kl = token_loss(
        logp, old, behaviour, advantage,
        clip_low=settings.clip_low, clip_high=settings.clip_high, tis_cap=settings.tis_cap,
        ref=ref, kl_coef=settings.kl_coef)
    scaled = loss.sum() / tokens  # token-mean over the minibatch
    scaled.backward()
    parts.loss = float(parts.loss) + float(scaled.detach())
    parts.tokens += len(where)
    parts.clipped += int(clipped.sum())
    parts.entropy += float(entropy.detach().sum())
    parts.kl += float(kl.detach().sum())
    if episode.kind != ROOT:
        parts.other_loss += float(loss.detach().sum())
        parts.other_tokens += len(where)
