"""GRPO rollouts: whole dealroom episodes run by the real harness, judged, made into tokens.

    policy (in memory) ──HFModelClient──▶ run_agent(room, CKPT/rollouts/step-S/gG/rK-aA,
                                                     sub=frozen spec, max_turns=T, budgetmix=...)
                                          ajudge_run ──▶ reward (the reward spec: _reward)
    run folder ──agent_conversation + tokens.jsonl──▶ conversation_rows (the shared mask)
               ──▶ Episode(input_ids, mask, behaviour logprobs at the mask's tokens)

Every rollout is an ordinary run folder, so evaluation, the viewer and the report read it as
any run. A rollout whose judge erred on a criterion has no reward (``judge_error``, counted,
never a silent 0); a rollout whose episode raised is ``crashed`` (its error recorded) and is
replaced by the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
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

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from dealroom.judge import Judge
    from dealroom.models import HFModelClient, LoadedModel, ModelClient

T = TypeVar("T")
OK, JUDGE_ERROR, CRASHED, UNTRAINABLE = "ok", "judge_error", "crashed", "untrainable"


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


def policy_client(loaded: LoadedModel, model: str, seed: int, max_new_tokens: int,
                  step: int) -> HFModelClient:
    """A ModelClient over the policy in memory, sampling with ``seed``, in lock-step with the
    other rollouts' clients (their replies due together generate as one batch)."""
    from dealroom.models import HFModelClient, resolve_model_spec

    head, *options = model.split(",")
    kept = [o for o in options if o.split("=", 1)[0] not in ("seed", "max_tokens")]
    spec = resolve_model_spec(",".join([head, *kept, f"seed={seed}",
                                        f"max_tokens={max_new_tokens}"]), role="root")
    return HFModelClient(loaded, name=f"{spec.name},grpo_step={step}", spec=spec,
                         lockstep=True)


async def run_rollout(rollout: Rollout, client: ModelClient, *, sub: str, judge: str | Judge,
                      harness: str,
                      temperature: float, settings: dict[str, Any],
                      budgetmix: BudgetMixLabel | None, reward: Any = "pass") -> Rollout:
    """Run, judge and measure one rollout in place (``client`` is closed once the episode
    ends); failures become its status. ``reward``: the reward spec
    (:attr:`GRPOSettings.reward`, as its ``to_dict`` gives it)."""
    from dealroom.harness import run_agent_async, sub_specs
    from dealroom.judge import ajudge_run
    from dealroom.train._reward import RewardError, reward_of

    run_dir = Path(rollout.run)
    if run_dir.exists():  # a rollout cut short by a kill: it is run again from the start
        shutil.rmtree(run_dir)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        await run_agent_async(Path(rollout.room), run_dir, harness=harness, root=client,
                              sub=sub_specs(sub.split()), max_turns=rollout.max_turns,
                              temperature=temperature,
                              budgetmix=budgetmix, **settings)
    except Exception as exc:  # noqa: BLE001 - a crashed rollout is recorded and replaced
        rollout.status, rollout.error = CRASHED, _error(exc)
        return rollout
    finally:  # the episode is over: its lock-step peers stop waiting for its calls
        await client.aclose()
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
        return run_closing(item, served_client(**served), **options).to_dict()
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


def episode_tokens(run_dir: Path, tokenizer: PreTrainedTokenizerBase) -> Episode | None:
    """The rollout's whole root conversation as one row of the shared mask, with the
    behaviour logprobs of its sampled tokens; None when a reply has no token record that
    decodes to it (nothing exact to train on)."""
    from dealroom.models import reply_text
    from dealroom.train._mask import tokenize_conversation

    segments = agent_segments(RunFolder(run_dir).events())
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
    return Episode(row.input_ids, row.assistant_masks,
                   [p for r in records for p in r.logprobs])
