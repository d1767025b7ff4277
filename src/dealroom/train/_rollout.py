"""GRPO rollouts: whole dealroom episodes run by the real harness, judged, made into tokens.

    policy (in memory) ──HFModelClient──▶ run_agent(room, CKPT/rollouts/step-S/gG/rK-aA,
                                                     sub=frozen spec, max_turns=T, budgetmix=...)
                                          ajudge_run ──▶ reward (the reward spec: _reward)
    run folder ──agent_conversation + tokens.jsonl──▶ conversation_rows (the shared mask)
               ──▶ Episode(input_ids, mask, behaviour logprobs at the mask's tokens)

With ``sub = "policy"`` a second client over the policy answers the sub-calls (and plays the
children); with ``train_subs`` those calls become sequences of their own
(:func:`policy_sequences`), trained with the rollout's advantage.

Every rollout is an ordinary run folder, so evaluation, the viewer and the report read it as
any run. A rollout whose judge erred on a criterion has no reward (``judge_error``, counted,
never a silent 0); a rollout whose episode raised is ``crashed`` (its error recorded) and is
replaced by the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import socket
import threading
import traceback
from collections.abc import Awaitable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dealroom.runs import (
    BudgetMixLabel,
    RunFolder,
    agent_conversation,
    agent_segments,
    read_tokens,
    whole_reply,
)
from dealroom.train._subseq import CHILD, ROOT, SUB, call_row, child_agents, root_models, sub_calls

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from dealroom.judge import Judge
    from dealroom.models import HFModelClient, LoadedModel, ModelClient

T = TypeVar("T")
OK, JUDGE_ERROR, CRASHED, UNTRAINABLE = "ok", "judge_error", "crashed", "untrainable"
POLICY = "policy"
"""The sub-agent spec that stands for the policy being trained (``sub = "policy"``)."""


@dataclass
class Rollout:
    """One rollout as ``CKPT/rollouts.jsonl`` records it."""

    run: str
    """Its run folder."""
    step: int
    slot: int
    """The group slot of the step (group slots past B / G are the oversampled ones)."""
    index: int
    """The rollout's place in its group, 0..G-1."""
    attempt: int
    room: str
    max_turns: int
    policy_step: int
    """Updates the policy had had when it sampled this rollout (its version)."""
    status: str = OK
    """ok, judge_error (no reward), crashed (replaced) or untrainable (no usable tokens)."""
    reward: float | None = None
    terms: dict[str, float] = field(default_factory=dict)
    """The reward's terms (``pass``, ``evidence``, a reward function's; see ``_reward``)."""
    error: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    """coverage, sub_calls, waves, max_wave, memo_incremental, root_tokens."""
    worker: str = ""
    """Where it ran: ``host:pid`` of the process (the trainer's, a worker's or a Ray task's)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Episode:
    """A rollout as the loss reads it."""

    input_ids: list[int]
    mask: list[int]
    """1 on the root's sampled tokens, 0 on everything the environment wrote."""
    behaviour: list[float]
    """The recorded logprob of each mask-1 token, in order."""
    kind: str = "root"
    """Whose sequence: the root's, a child's or a sub-call's (``train_subs``)."""


def policy_client(loaded: LoadedModel, model: str, seed: int, max_new_tokens: int,
                  step: int, *, follows: HFModelClient | None = None) -> HFModelClient:
    """A ModelClient over the policy in memory, sampling with ``seed``, in lock-step with the
    other rollouts' clients (their replies due together generate as one batch). With
    ``follows`` (the root's client), the client that answers that episode's sub-calls
    (``sub = "policy"``): the same name, its own seed, its calls counted as the root's in the
    lock-step."""
    from dealroom.models import HFModelClient, resolve_model_spec

    head, *options = model.split(",")
    kept = [o for o in options if o.split("=", 1)[0] not in ("seed", "max_tokens")]
    spec = resolve_model_spec(",".join([head, *kept, f"seed={seed}",
                                        f"max_tokens={max_new_tokens}"]), role="root")
    name = follows.name if follows is not None else f"{spec.name},grpo_step={step}"
    return HFModelClient(loaded, name=name, spec=spec, lockstep=follows is None,
                         follows=follows)


def sub_seed(seed: int) -> int:
    """The sampling seed of the policy's sub-calls in the rollout sampled with ``seed``."""
    digest = hashlib.sha256(f"sub:{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def uses_policy(sub: str) -> bool:
    """Whether the sub-agent label names the policy (``policy``, or ``NAME=policy``)."""
    from dealroom.harness import label_specs

    return POLICY in label_specs(sub)


def policy_as(sub: str, model: str) -> str:
    """The sub-agent label with ``model`` in place of ``policy`` (a held-out sweep's).

    >>> policy_as("fast=policy strong=oracle", "hf:CKPT")
    'fast=hf:CKPT strong=oracle'
    """
    words = sub.split()
    return " ".join(model if w == POLICY else w[:-len(POLICY)] + model
                    if w.endswith(f"={POLICY}") else w for w in words)


def _subs(sub: str, policy: ModelClient | None) -> Any:
    """``run_agent``'s ``sub``: the label's specs, ``policy`` standing for ``policy``."""
    from dealroom.errors import ConfigError
    from dealroom.harness import sub_specs

    subs = sub_specs(sub.split())
    if not uses_policy(sub):
        return subs
    if policy is None:
        raise ConfigError('sub = "policy" needs the policy\'s client for its sub-calls')
    if isinstance(subs, dict):
        return {name: policy if spec == POLICY else spec for name, spec in subs.items()}
    return policy


async def run_rollout(rollout: Rollout, client: ModelClient, *, sub: str, judge: str | Judge,
                      harness: str,
                      temperature: float, settings: dict[str, Any],
                      budgetmix: BudgetMixLabel | None, reward: Any = "pass",
                      sub_client: ModelClient | None = None) -> Rollout:
    """Run, judge and measure one rollout in place (``client`` and ``sub_client`` are closed
    once the episode ends); failures become its status. ``reward``: the reward spec
    (:attr:`GRPOSettings.reward`, as its ``to_dict`` gives it); ``sub_client``: the policy's
    client for the sub-calls when ``sub`` names ``policy``."""
    from dealroom.harness import run_agent_async
    from dealroom.judge import ajudge_run
    from dealroom.train._reward import RewardError, reward_of

    run_dir = Path(rollout.run)
    if run_dir.exists():  # a rollout cut short by a kill: it is run again from the start
        shutil.rmtree(run_dir)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        await run_agent_async(Path(rollout.room), run_dir, harness=harness, root=client,
                              sub=_subs(sub, sub_client), max_turns=rollout.max_turns,
                              temperature=temperature,
                              budgetmix=budgetmix, **settings)
    except Exception as exc:  # noqa: BLE001 - a crashed rollout is recorded and replaced
        rollout.status, rollout.error = CRASHED, _error(exc)
        return rollout
    finally:  # the episode is over: its lock-step peers stop waiting for its calls
        await client.aclose()
        if sub_client is not None:
            await sub_client.aclose()
    try:
        scores = await ajudge_run(run_dir, judge)
    except Exception as exc:  # noqa: BLE001 - a judge failure gives no reward, counted
        rollout.status, rollout.error = JUDGE_ERROR, _error(exc)
    else:
        if scores.n_errors or not scores.n_criteria:
            rollout.status = JUDGE_ERROR
            rollout.error = f"the judge could not score {scores.n_errors} of " \
                            f"{scores.n_criteria} criteria"
        else:
            try:
                rollout.reward, rollout.terms = reward_of(reward)(scores, run_dir)
            except RewardError as exc:  # a user reward function failed: no reward
                rollout.status, rollout.error = JUDGE_ERROR, str(exc)
    rollout.metrics = rollout_metrics(run_dir)
    return rollout


def run_closing(rollout: Rollout, client: ModelClient, *, stop: threading.Event | None = None,
                **options: Any) -> Rollout:
    """:func:`run_rollout` in an event loop of its own; the root client is closed after.

    Once ``stop`` is set the episode is cancelled where it stands (its model calls abandoned,
    its sandbox ended) and ``Stopped`` is raised; its partial folder is run again on resume."""

    rollout.worker = f"{socket.gethostname()}:{os.getpid()}"

    async def run() -> Rollout:
        try:
            return await unless_stopped(run_rollout(rollout, client, **options), stop,
                                         rollout.run)
        finally:
            await client.aclose()

    return asyncio.run(run())


async def unless_stopped(work: Awaitable[T], stop: threading.Event | None, what: str) -> T:
    """Await ``work``, cancelling it and raising Stopped once ``stop`` is set."""
    from dealroom.eval import POLL_S, Stopped

    task = asyncio.ensure_future(work)
    while stop is not None and not task.done():
        if stop.is_set():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise Stopped(f"stopped during {what}")
        await asyncio.wait({task}, timeout=POLL_S)
    return await task


def remote_rollout(rollout: dict[str, Any], served: dict[str, Any],
                   options: dict[str, Any]) -> dict[str, Any]:
    """One rollout in a worker process or a Ray task, sampled by the policy server
    (``served``: :func:`~dealroom.train._serve.served_client`'s arguments); returns the
    finished rollout as a dict, a failure of any kind as a crashed one."""
    from dealroom.train._serve import served_client

    item = Rollout(**rollout)
    try:
        sub = served_client(**{**served, "seed": sub_seed(served["seed"])}) \
            if uses_policy(options["sub"]) else None
        return run_closing(item, served_client(**served), **options, sub_client=sub).to_dict()
    except Exception as exc:  # noqa: BLE001 - the caller records and replaces it
        item.status, item.error = CRASHED, _error(exc)
        return item.to_dict()


def _error(exc: BaseException) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" at {Path(last[0].filename).name}:{last[0].lineno}" if last else ""
    return f"{type(exc).__name__}: {exc}{where}"


def rollout_metrics(run_dir: Path) -> dict[str, Any]:
    """The logged (never rewarded) figures of a finished rollout."""
    folder = RunFolder(run_dir)
    metrics = folder.metrics() or {}
    behaviour = metrics.get("behaviour") or {}
    coverage = (metrics.get("coverage") or {}).get("coverage")
    root_tokens = sum(len(read_tokens(run_dir, c["tokens"]).completion_ids)
                      for c in agent_conversation(folder.events()).calls if c.get("tokens"))
    return {"coverage": coverage, "sub_calls": behaviour.get("sub_calls", 0),
            "waves": behaviour.get("waves", 0), "max_wave": behaviour.get("max_wave", 0),
            "memo_incremental": behaviour.get("memo_incremental"), "root_tokens": root_tokens,
            "turns": behaviour.get("turns", 0)}


def episode_tokens(run_dir: Path, tokenizer: PreTrainedTokenizerBase, *, agent: str = "root",
                   events: list[dict[str, Any]] | None = None) -> Episode | None:
    """The rollout's whole root conversation (or child ``agent``'s) as one row of the shared
    mask, with the behaviour logprobs of its sampled tokens; None when a reply has no token
    record that decodes to it (nothing exact to train on)."""
    from dealroom.models import reply_text
    from dealroom.train._mask import tokenize_conversation

    if events is None:
        events = RunFolder(run_dir).events()
    segments = agent_segments(events, agent)
    if len(segments) != 1:  # no one sequence holds every reply (dropped reasoning, compaction)
        return None
    records = []
    for call in segments[0].calls:
        record = read_tokens(run_dir, call["tokens"]) if call.get("tokens") else None
        if record is None or reply_text(tokenizer, record) != whole_reply(call):
            return None
        records.append(record)
    if not records:
        return None
    row = tokenize_conversation(segments[0].messages, tokenizer, sampled=records)
    sampled = [i for r in records for i in r.completion_ids]
    trained = [i for i, bit in zip(row.input_ids, row.assistant_masks, strict=True) if bit]
    if trained != sampled:  # the row is not the token sequence the root extended
        return None
    behaviour = [p for r in records for p in r.logprobs]
    if len(behaviour) != len(sampled):  # a record without logprobs: no behaviour policy
        return None
    return Episode(row.input_ids, row.assistant_masks, behaviour,
                   ROOT if agent == "root" else CHILD)


def policy_sequences(run_dir: Path, tokenizer: PreTrainedTokenizerBase
                     ) -> tuple[list[Episode], int]:
    """The rollout's other sequences the policy sampled (``train_subs``): each child's
    conversation, then each sub-call the policy answered (its prompt, then its sampled ids);
    and how many of them had no exact record (left out)."""
    events = RunFolder(run_dir).events()
    models = root_models(events)
    sequences: list[Episode] = []
    missed = 0
    for agent in child_agents(events, models):
        episode = episode_tokens(run_dir, tokenizer, agent=agent, events=events)
        missed += episode is None
        sequences += [episode] if episode is not None else []
    calls, unrecorded = sub_calls(run_dir, events, tokenizer, models)
    for sub in calls:
        if len(sub.record.logprobs) != len(sub.record.completion_ids):
            unrecorded += 1
            continue
        row = call_row(sub.record)
        sequences.append(Episode(row.input_ids, row.assistant_masks, list(sub.record.logprobs),
                                 SUB))
    return sequences, missed + unrecorded
