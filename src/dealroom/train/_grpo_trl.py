"""GRPO's ``engine = "trl"``: the same rollouts, updated by TRL's GRPOTrainer.

    GRPOTrainer(model=PEFT policy, args=GRPOConfig from GRPOSettings,
                reward_funcs=[the recorded reward], rollout_func=_Rollouts(ctx),
                train_dataset=prompts that only label each step's group slots)
    rollout_func(prompts, trainer)      once per step: B prompts, each group's G in a row
        collect(ctx, step)              dealroom's own groups: zero-variance groups oversampled,
                                        crashed rollouts replaced, the BudgetMix audit, the watch
        each kept rollout ──▶ prompt_ids      the episode's tokens before the root's first reply
                              completion_ids  the rest of the episode, REPL output included
                              env_mask        the shared mask over completion_ids (0: environment)
                              logprobs        behaviour logprobs (0.0 on the environment's tokens)
                              reward          the judged pass rate (the reward function reads it)

TRL then computes the group-relative advantages, the DAPO loss on env_mask tokens with the
two-sided clip, the KL when beta > 0, and writes ``checkpoint-N`` (resumed with --resume).
What TRL's interface cannot carry, and how it is filled:

- a kept group with fewer than G usable rollouts (a judge error, no exact tokens), or a step
  with fewer kept groups than B / G: each missing place is a one-token placeholder with
  env_mask 0 (nothing trained). A placeholder in a kept group takes the group's mean reward,
  so the group's mean advantage is unchanged; a placeholder group's rewards are all 0 (no
  gradient);
- without vLLM, TRL recomputes the old logprobs itself and does not correct for the
  behaviour policy: ``tis_cap`` has no effect. Rollouts are on-policy (staleness 0);
- ``minibatches`` and ``eval_every`` belong to dealroom's engine and are refused with this one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import TrainerCallback

from dealroom._util.files import write_json_atomic
from dealroom.train._grpo_step import Group, StepContext, collect
from dealroom.train._rollout import Episode

if TYPE_CHECKING:
    from transformers import TrainerControl, TrainerState, TrainingArguments
    from trl import GRPOConfig

    from dealroom.train._grpo_settings import GRPOSettings


def trl_config(settings: GRPOSettings, out: Path, model: Any) -> GRPOConfig:
    """GRPOSettings as TRL's GRPOConfig: one generation per optimizer step of B episodes,
    on the device and in the precision ``model`` is loaded in."""
    from trl import GRPOConfig

    first = next(model.parameters())
    device, dtype = first.device, str(getattr(model, "dtype", first.dtype))
    return GRPOConfig(
        output_dir=str(out), per_device_train_batch_size=settings.batch_size,
        num_generations=settings.group_size, generation_batch_size=settings.batch_size,
        gradient_accumulation_steps=1, num_iterations=1, max_steps=settings.steps,
        learning_rate=settings.learning_rate, weight_decay=settings.weight_decay,
        max_grad_norm=settings.max_grad_norm, lr_scheduler_type="constant",
        beta=settings.kl_coef, epsilon=settings.clip_low, epsilon_high=settings.clip_high,
        loss_type="dapo", scale_rewards="group" if settings.scale_rewards else "none",
        temperature=settings.temperature, max_completion_length=None,
        logging_steps=1, save_steps=settings.save_every, save_strategy="steps",
        report_to=[r for r in settings.reporters() if r != "none"] or "none",
        seed=settings.seed, use_cpu=device.type == "cpu", bf16=dtype == "torch.bfloat16",
        fp16=dtype == "torch.float16", remove_unused_columns=False,
        shuffle_dataset=False, dataloader_num_workers=0, disable_tqdm=True,
        gradient_checkpointing=settings.activation_checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False},
    )


class _Rollouts:
    """TRL's ``rollout_func``: one step's groups from dealroom's engine, as TRL's samples."""

    def __init__(self, ctx: StepContext, audit: Callable[[int], None],
                 watch: Callable[[int, list[Group]], dict[str, Any]]) -> None:
        self.ctx, self.audit, self.watch = ctx, audit, watch
        self.figures: dict[int, dict[str, Any]] = {}
        """The rollout side of each step's log row, by 1-based step."""

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        settings = self.ctx.spec.grpo
        step = trainer.state.global_step
        if len(prompts) != settings.batch_size:
            raise RuntimeError(f"TRL asked for {len(prompts)} rollouts; the step has "
                               f"{settings.batch_size}")
        training = trainer.model.training
        clock = time.perf_counter()
        groups = collect(self.ctx, step)  # samples in eval mode; TRL's loss runs in train mode
        rollout_s = time.perf_counter() - clock
        trainer.model.train(training)
        self.audit(step)
        self.figures[step + 1] = {**self.watch(step, groups), "rollout_s": round(rollout_s, 3)}
        tokenizer = self.ctx.loaded.tokenizer
        pad = tokenizer.eos_token_id if tokenizer.pad_token_id is None else tokenizer.pad_token_id
        samples = [s for g in groups if g.fate == "kept" for s in _group_samples(g, settings, pad)]
        samples = samples[:settings.batch_size]
        while len(samples) < settings.batch_size:
            samples.append(_placeholder(0.0, pad))
        return {key: [s[key] for s in samples] for key in
                ("prompt_ids", "completion_ids", "logprobs", "env_mask", "reward")}


def _group_samples(group: Group, settings: Any, pad: int) -> list[dict[str, Any]]:
    rewards = [r.reward for r in group.trained]
    mean = sum(rewards) / len(rewards)  # type: ignore[arg-type]
    samples = [_sample(e, r) for e, r in zip(group.episodes, rewards, strict=True)]
    return samples + [_placeholder(mean, pad)] * (settings.group_size - len(samples))


def _sample(episode: Episode, reward: float | None) -> dict[str, Any]:
    """An episode as one TRL sample: prompt, completion, env_mask and behaviour logprobs."""
    first = episode.mask.index(1)
    mask = episode.mask[first:]
    behaviour = iter(episode.behaviour)
    logprobs = [next(behaviour) if bit else 0.0 for bit in mask]
    return {"prompt_ids": episode.input_ids[:first], "completion_ids": episode.input_ids[first:],
            "env_mask": mask, "logprobs": logprobs, "reward": reward}


def _placeholder(reward: float, pad: int) -> dict[str, Any]:
    return {"prompt_ids": [pad], "completion_ids": [pad], "env_mask": [0], "logprobs": [0.0],
            "reward": reward}


def recorded_reward(prompts: list[Any], completions: list[Any], reward: list[float],
                    **_: Any) -> list[float]:
    """TRL's reward function: the judged pass rate each rollout already has."""
    return list(reward)


def train_with_trl(ctx: StepContext, model: Any, start: int, resume: bool,
                   audit: Callable[[int], None],
                   watch: Callable[[int, list[Group]], dict[str, Any]],
                   log_row: Callable[[dict[str, Any]], None],
                   progress: Callable[[int, int], None] | None) -> None:
    """Run TRL's GRPOTrainer over ``model`` (a PEFT policy) until ``spec.grpo.steps``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from trl import GRPOTrainer

    settings = ctx.spec.grpo
    rollouts = _Rollouts(ctx, audit, watch)
    slots = settings.batch_size // settings.group_size
    labels = Dataset.from_dict({"prompt": [f"step {s + 1} group {g}"
                                           for s in range(settings.steps) for g in range(slots)]})
    trainer = GRPOTrainer(model=model, reward_funcs=[recorded_reward],  # type: ignore[list-item]
                          args=trl_config(settings, ctx.out, model), train_dataset=labels,
                          processing_class=ctx.loaded.tokenizer, rollout_func=rollouts)
    trainer.add_callback(_LogCallback(rollouts, ctx.out, log_row, progress, settings.steps))
    trainer.train(resume_from_checkpoint=str(ctx.out / f"checkpoint-{start}")
                  if resume and start else None)


class _LogCallback(TrainerCallback):
    """Each TRL log row merged with its step's rollout figures into ``CKPT/log.jsonl``; each
    checkpoint marked complete as dealroom's engine marks it (``state.json``)."""

    KEYS = ("loss", "entropy", "kl", "grad_norm", "learning_rate")
    """TRL's log keys that are dealroom's too."""

    def __init__(self, rollouts: _Rollouts, out: Path, log_row: Callable[[dict[str, Any]], None],
                 progress: Callable[[int, int], None] | None, steps: int) -> None:
        self.rollouts, self.out, self.log_row = rollouts, out, log_row
        self.progress, self.steps = progress, steps
        self.started = time.perf_counter()

    def on_step_begin(self, args: TrainingArguments, state: TrainerState,
                      control: TrainerControl, **kwargs: Any) -> None:
        self.started = time.perf_counter()

    def on_log(self, args: TrainingArguments, state: TrainerState,
               control: TrainerControl, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
        step = state.global_step
        if not logs or "loss" not in logs or step not in self.rollouts.figures:
            return
        figures = self.rollouts.figures.pop(step)
        step_s = round(time.perf_counter() - self.started, 3)
        clipped = [v for k, v in logs.items() if k.startswith("clip_ratio/region_mean")]
        row = {"step": step, **figures,
               **{key: logs.get(key) for key in self.KEYS},
               "clip_fraction": clipped[0] if clipped else None, "staleness": 0.0,
               "train_s": round(max(0.0, step_s - figures["rollout_s"]), 3), "step_s": step_s,
               "engine": "trl"}
        self.log_row(row)
        if self.progress is not None:
            self.progress(step, self.steps)

    def on_save(self, args: TrainingArguments, state: TrainerState,
                control: TrainerControl, **kwargs: Any) -> None:
        folder = self.out / f"checkpoint-{state.global_step}"
        if folder.is_dir():
            write_json_atomic(folder / "state.json", {"step": state.global_step, "engine": "trl"})

