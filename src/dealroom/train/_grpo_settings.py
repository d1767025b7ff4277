"""GRPO's settings and its spec file, validated when built (before any work).

``SPEC.toml`` of ``dealroom train grpo``::

    model = "hf:local"              # the root policy: an hf: base or an SFT checkpoint
    sub = "oracle"                  # frozen sub-agents: any model spec
    judge = "reference"             # reward = this judge's criteria pass rate
    rooms = ["rooms/*"]             # training rooms (folders or globs, relative to the spec)
    heldout = ["heldout/*"]         # held-out rooms, evaluated every eval_every steps
    budgetmix = [8, 16, 32, 64]     # optional: each group's visible turn budget from a plan
    [[generate]]                    # and/or training rooms generated into CKPT/rooms/
    docs = 20
    secret = "fixed"
    [settings]                      # further harness settings (cell_timeout, output_limit, ...)
    [grpo]                          # GRPOSettings fields
    group_size = 8
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from dealroom._util.files import read_toml
from dealroom._util.schema import Schema, as_tuple
from dealroom.errors import ConfigError
from dealroom.eval import GeneratedRooms
from dealroom.harness import label_specs, subs_label
from dealroom.train._reward import PASS, RewardSetting, check_reward_setting
from dealroom.train._rollout import POLICY
from dealroom.train._settings import Count, LoRASettings, Positive, Rate, check_reporting

if TYPE_CHECKING:
    from dealroom.harness import Harness

Unit = Annotated[float, Field(gt=0, lt=1)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class GRPOSettings(LoRASettings):
    """How ``train_grpo`` optimizes the root. Every field is a key of the spec's ``[grpo]``,
    the LoRA fields of :class:`LoRASettings` first (dropout off by default here)."""

    lora_dropout: Annotated[float, Field(ge=0, lt=1)] = 0.0
    """Dropout on the LoRA input, 0 to 1."""

    group_size: Annotated[int, Field(ge=2, json_schema_extra={
        "why": "a group-relative advantage needs two rollouts or more"})] = 8
    """G: rollouts per group (one room, one turn budget); group-relative advantages."""
    batch_size: Positive = 24
    """B: episodes trained on per step, a multiple of G (B / G groups)."""
    steps: Positive = 40
    """Training steps (each: rollouts, then one update)."""
    extra_groups: Count = 4
    """Most groups drawn per step beyond B / G, to replace groups dropped for zero reward
    variance (oversampling)."""
    rollout_retries: Count = 2
    """Times a crashed rollout is replaced (each crash is recorded) before its group is lost."""
    learning_rate: Rate = 1e-5
    """AdamW learning rate of the LoRA weights."""
    weight_decay: NonNegative = 0.0
    """AdamW weight decay."""
    max_grad_norm: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0
    """Gradient-norm clip of each optimizer step."""
    activation_checkpointing: bool = True
    """Recompute the policy's activations in the backward pass (the update's memory grows
    with one layer's activations, not all of them); about a third slower. Both engines."""
    minibatches: Positive = 1
    """Optimizer steps per training step; the step's episodes are split among them."""
    clip_low: Unit = 0.2
    """The ratio is clipped below at 1 - clip_low."""
    clip_high: Unit = 0.28
    """The ratio is clipped above at 1 + clip_high (DAPO's clip-higher)."""
    tis_cap: Annotated[float, Field(ge=1, allow_inf_nan=False)] = 2.0
    """Truncated importance sampling: each token's weight pi_old / pi_behaviour against the
    recorded behaviour logprobs is capped at this value."""
    max_staleness: Count = 1
    """Rollouts made by a policy more than this many steps older than the one trained are
    dropped (the off-policy cap)."""
    kl_coef: NonNegative = 0.0
    """Weight of the KL penalty to the base model (k3 estimator); 0 turns it off."""
    scale_rewards: bool = True
    """Divide a group's advantages by its reward standard deviation (false: Dr. GRPO)."""
    reward: RewardSetting = PASS
    """A rollout's reward (docs/training.md, "The reward"): ``pass``, its ``scores.json``
    headline (the positive criteria's pass rate where the rubric has negative criteria,
    which an empty memo cannot raise; else the total; ``headline`` is its old name);
    ``total`` (the pass rate over all criteria); ``pass+evidence`` (the headline plus
    evidence_weight times the evidence F1); ``package.module:function`` (yours, called with
    the scores and the run folder); or a table ``{kind = "pass+evidence", evidence_weight =
    1.0}``. The held-out pass rate is the total with ``total``, else the headline."""
    temperature: Annotated[float, Field(gt=0, le=2, json_schema_extra={
        "why": "GRPO needs sampled, varied rollouts (greedy decoding gives a group one "
               "answer)"})] = 1.0
    """Sampling temperature of the root during rollouts (and of the loss's logprobs)."""
    max_new_tokens: Positive = 512
    """Most tokens the root samples per reply."""
    max_turns: Positive = 30
    """The turn budget T of every rollout, when no BudgetMix budgets are given."""
    eval_every: Count = 0
    """Steps between held-out evaluations (a sweep over heldout); 0: none."""
    save_every: Positive = 5
    """Steps between checkpoints (CKPT/checkpoint-N), the point --resume restarts from."""
    seed: Count = 0
    """Seed of the LoRA initialization, rollout sampling and BudgetMix plan."""
    report_to: str = "none"
    """Also log to tensorboard or wandb (comma-separated); none: CKPT/log.jsonl only."""
    engine: Literal["dealroom", "trl"] = "dealroom"
    """What updates the policy: dealroom (this package's own loop) or trl (TRL's
    GRPOTrainer through its rollout_func, over the same rollouts; see docs/training.md)."""
    serve: str = ""
    """Base URL (http://HOST:PORT/v1) of a vLLM OpenAI-compatible server serving the policy's
    base model with runtime LoRA loading: the adapter is pushed to it before each step's
    rollouts, which it samples with token ids and logprobs; empty: sample in this process
    (see docs/training.md, "A served policy")."""
    rollout_workers: Positive = 1
    """Rollouts run at a time. Above 1 needs serve: each rollout then runs in a worker
    process of its own (or a Ray task), sampled by the policy server; an in-process policy
    runs rollout_batch at a time instead."""
    rollout_batch: Positive = 8
    """Rollouts an in-process policy runs at a time (tasks of one event loop): the replies
    they have due at the same moment generate as one batch (docs/training.md, "GRPO: batched
    rollouts"); 1: one rollout at a time."""
    rollout_backend: Literal["process", "ray"] = "process"
    """Where rollouts run when rollout_workers is above 1: process (worker processes on this
    machine) or ray (Ray tasks on a cluster's nodes; CKPT must be on storage they share)."""
    ray_address: str = ""
    """The Ray cluster rollout tasks join (HEAD:6379); empty: a local one started for them."""
    async_rollouts: bool = False
    """Sample the next step's B / G groups while this step's update runs, with the adapter
    served for this step: those rollouts are one step stale (the truncated importance
    sampling corrects for it). Needs serve and max_staleness of at least 1."""
    train_subs: bool = False
    """Also train on the policy's other sequences of each rollout (docs/training.md, "Sub-agents
    trained with the root"): each sub-call the policy answered (``sub = "policy"``) and each
    child's (``rlm``, ``rlm_batch``) conversation is a sequence of its own with the rollout's
    advantage, its mask on that call's sampled tokens. Engine dealroom only."""
    watch_gap: Annotated[float, Field(ge=0, le=1)] = 0.3
    """The watch flags a step whose reward mean exceeds the latest held-out pass rate by more
    than this (see CKPT/watch.jsonl)."""
    stop_on_watch: bool = False
    """Stop training (TrainingWatchError) at the first watched sign: a rollout reaching for
    a hidden part of the room, or a reward gap over watch_gap; false: warn and log only."""

    @field_validator("reward", mode="before")
    @classmethod
    def _reward(cls, value: Any) -> Any:
        return check_reward_setting(value)

    @model_validator(mode="after")
    def _check_grpo(self) -> GRPOSettings:
        if self.batch_size % self.group_size:
            raise ConfigError(f"batch_size {self.batch_size} is not a multiple of group_size "
                              f"{self.group_size}: give whole groups")
        if self.minibatches > self.batch_size:
            raise ConfigError("minibatches must be at most batch_size")
        if self.engine == "trl" and self.train_subs:
            raise ConfigError("train_subs works with engine dealroom: TRL's trainer takes one "
                              "sequence per rollout")
        if self.engine == "trl" and (self.minibatches > 1 or self.eval_every):
            raise ConfigError("engine trl takes one optimizer step per step and no held-out "
                              "evaluation: set minibatches = 1 and eval_every = 0 (evaluate "
                              "its checkpoints with dealroom eval sweep), or use engine "
                              "dealroom")
        self._check_serving()
        check_reporting(self.report_to)
        return self

    def _check_serving(self) -> None:
        if self.serve and not self.serve.startswith(("http://", "https://")):
            raise ConfigError(f"serve must be the server's base URL, e.g. "
                              f"http://127.0.0.1:8000/v1, got {self.serve!r}")
        if self.serve and self.engine == "trl":
            raise ConfigError("serve works with engine dealroom: TRL's trainer samples in "
                              "its own process or its own vLLM")
        if self.remote_rollouts and not self.serve:
            raise ConfigError("rollout_workers above 1 (or rollout_backend = \"ray\") needs "
                              "serve: rollouts run side by side only when a policy server "
                              "samples them; an in-process policy runs rollout_batch at a "
                              "time")
        if self.async_rollouts and not (self.serve and self.max_staleness >= 1):
            raise ConfigError("async_rollouts needs serve (the policy server samples while "
                              "the update runs) and max_staleness of at least 1 (its "
                              "rollouts are one step stale)")
        if self.ray_address and self.rollout_backend != "ray":
            raise ConfigError("ray_address names a Ray cluster: use it with rollout_backend = "
                              "\"ray\"")

    @property
    def remote_rollouts(self) -> bool:
        """Rollouts run in worker processes or Ray tasks, not in this process."""
        return self.rollout_workers > 1 or self.rollout_backend == "ray"

    @property
    def groups(self) -> int:
        """Groups trained on per step: B / G."""
        return self.batch_size // self.group_size


RESERVED = ("budget_visible", "max_turns", "temperature")
"""Harness settings the spec sets elsewhere ([grpo] or budgetmix), refused in [settings]."""


class GRPOSpec(Schema):
    """What a GRPO training runs on: the policy, the frozen sub-agents, rooms and judge. Every
    field is a top-level key of ``SPEC.toml``; scalars stand for lists of one."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)

    model: Annotated[str, Field(json_schema_extra={
        "why": "the root policy GRPO trains, e.g. model = \"hf:local\""})]
    """The root policy: ``hf:local``, ``hf:PATH`` or an SFT checkpoint ``hf:CKPT``."""
    rooms: tuple[str, ...] = ()
    """Training rooms: folders or globs, relative to the spec file."""
    generate: GeneratedRooms = ()
    """Training rooms to generate into ``CKPT/rooms/`` (the sweep's ``[[generate]]``)."""
    heldout: tuple[str, ...] = ()
    """Held-out rooms (folders or globs) for the evaluation every ``eval_every`` steps."""
    sub: Annotated[str, BeforeValidator(subs_label)] = "oracle"
    """The sub-agents' model spec, or a table of named ones (``sub = {fast = "A",
    strong = "B"}``, the first the default; recorded as the label ``"fast=A strong=B"``).
    Frozen, except ``policy``: the policy being trained answers the sub-calls (trained on
    with ``train_subs``)."""
    judge: str = "reference"
    """The judge whose criteria pass rate is the reward."""
    harness: str = "rlm"
    """The harness the episodes run in."""
    budgetmix: Annotated[tuple[int, ...], Field(json_schema_extra={"uniqueItems": True})] = ()
    """Turn budgets for BudgetMix (one per group, visible to the root), each once, e.g.
    ``[8, 16, 32, 64]``; empty: max_turns."""
    settings: Annotated[dict[str, Any], Field(json_schema_extra={
        "propertyNames": {"not": {"enum": list(RESERVED)}}})] = Field(default_factory=dict)
    """Further harness settings of every rollout (``cell_timeout``, ``output_limit``, ...);
    not max_turns, temperature or budget_visible, which [grpo] and budgetmix set."""
    grpo: GRPOSettings = Field(default_factory=GRPOSettings)
    """The ``[grpo]`` table."""

    @field_validator("rooms", "heldout", "budgetmix", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return as_tuple(value)

    @field_validator("budgetmix")
    @classmethod
    def _distinct(cls, budgets: tuple[int, ...]) -> tuple[int, ...]:
        if len(set(budgets)) != len(budgets):
            raise ConfigError(f"budgetmix lists a budget twice: {list(budgets)}")
        return budgets

    @field_validator("settings")
    @classmethod
    def _not_reserved(cls, settings: dict[str, Any]) -> dict[str, Any]:
        reserved = set(RESERVED) & set(settings)
        if reserved:
            raise ConfigError(f"set {', '.join(sorted(reserved))} in [grpo] (or budgetmix), "
                              "not in [settings]")
        return settings

    @field_validator("grpo", mode="wrap")
    @classmethod
    def _in_table(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ConfigError as exc:
            raise type(exc)(f"[grpo] {exc}") from None

    @model_validator(mode="after")
    def _has_rooms(self) -> GRPOSpec:
        if not self.rooms and not self.generate:
            raise ConfigError("the spec names no training rooms: give rooms = [...] or "
                              "[[generate]]")
        return self


def load_grpo_spec(path: Path, *, budgetmix: list[int] | None = None) -> tuple[GRPOSpec, Path]:
    """Read and validate ``SPEC.toml``; returns the spec and the folder its paths are relative
    to. ``budgetmix`` (the ``--budgetmix`` flag) replaces the spec's."""
    path = Path(path)
    data = read_toml(path, f"GRPO spec {path}")
    if budgetmix is not None:
        data["budgetmix"] = budgetmix
    try:
        return spec_from_dict(data), path.parent.resolve()
    except ConfigError as exc:
        raise type(exc)(f"GRPO spec {path}: {exc}") from None


def spec_from_dict(data: dict[str, Any]) -> GRPOSpec:
    """A :class:`GRPOSpec` from a parsed table; unknown keys and impossible values refused."""
    return GRPOSpec(**data)


def check_spec(spec: GRPOSpec) -> Harness:
    """Refuse what the harness cannot run (a budget below its minimum, unknown settings, an
    unknown sub-agent or judge) before any work; returns the harness."""
    from dealroom.harness import get_harness
    from dealroom.judge import judge_names
    from dealroom.models import resolve_model_spec

    harness = get_harness(spec.harness)
    known = set(harness.settings.__dataclass_fields__)
    unknown = sorted(set(spec.settings) - known)
    if unknown:
        raise ConfigError(f"settings: {', '.join(unknown)} does not apply to the "
                          f"{harness.name} harness (its settings: {', '.join(sorted(known))})")
    for budget in spec.budgetmix or (spec.grpo.max_turns,):
        try:
            harness.settings(**spec.settings, max_turns=budget,
                             temperature=spec.grpo.temperature)
        except (ConfigError, TypeError) as exc:
            raise ConfigError(f"turn budget {budget}: {exc}") from None
    if resolve_model_spec(spec.model, role="root").kind != "hf":
        raise ConfigError(f"model: GRPO trains an in-process model: give hf:local or hf:PATH, "
                          f"not {spec.model!r}")
    for sub in label_specs(spec.sub):
        if sub != POLICY:
            resolve_model_spec(sub, role="sub")
    if spec.judge not in judge_names():
        resolve_model_spec(spec.judge, role="judge")
    return harness
