"""``dealroom train sft`` and ``train self-distill``: LoRA fine-tuning of an ``hf:`` root and
the rejection-sampling self-distillation loop (see dealroom.train)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dealroom.cli import app
from dealroom.train import SFTSettings, field_help

train_app = typer.Typer(name="train", help="Post-train the root model.", no_args_is_help=True)
app.add_typer(train_app)
_D = SFTSettings()
_H = field_help(SFTSettings)


@train_app.command("sft")
def sft(
    dataset: Annotated[Path, typer.Argument(
        metavar="DS", help="Dataset folder (tokenized.jsonl) or file.")],
    model: Annotated[str, typer.Option("--model", help="Model to train: hf:local, hf:PATH.")],
    out: Annotated[Path, typer.Option("--out", help="New checkpoint folder (CKPT).")],
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue the training in --out from its last checkpoint.")] = False,
    merge: Annotated[bool, typer.Option(
        "--merge", help="Also write CKPT/merged: base and adapter as one model.")] = False,
    lora_rank: Annotated[int, typer.Option(help=_H["lora_rank"])] = _D.lora_rank,
    lora_alpha: Annotated[int, typer.Option(help=_H["lora_alpha"])] = _D.lora_alpha,
    lora_dropout: Annotated[float, typer.Option(help=_H["lora_dropout"])] = _D.lora_dropout,
    lora_targets: Annotated[str, typer.Option(help=_H["lora_targets"])] = _D.lora_targets,
    learning_rate: Annotated[float, typer.Option(help=_H["learning_rate"])] = _D.learning_rate,
    lr_scheduler: Annotated[str, typer.Option(help=_H["lr_scheduler"])] = _D.lr_scheduler,
    warmup_ratio: Annotated[float, typer.Option(help=_H["warmup_ratio"])] = _D.warmup_ratio,
    weight_decay: Annotated[float, typer.Option(help=_H["weight_decay"])] = _D.weight_decay,
    epochs: Annotated[float, typer.Option(help=_H["epochs"])] = _D.epochs,
    max_steps: Annotated[int | None, typer.Option(help=_H["max_steps"])] = _D.max_steps,
    max_length: Annotated[int, typer.Option(help=_H["max_length"])] = _D.max_length,
    batch_size: Annotated[int, typer.Option(help=_H["batch_size"])] = _D.batch_size,
    grad_accum: Annotated[int, typer.Option(help=_H["grad_accum"])] = _D.grad_accum,
    seed: Annotated[int, typer.Option(help=_H["seed"])] = _D.seed,
    save_steps: Annotated[int, typer.Option(help=_H["save_steps"])] = _D.save_steps,
    save_limit: Annotated[int, typer.Option(help=_H["save_limit"])] = _D.save_limit,
    activation_checkpointing: Annotated[bool, typer.Option(
        help=_H["activation_checkpointing"])] = _D.activation_checkpointing,
    report_to: Annotated[str, typer.Option(help=_H["report_to"])] = _D.report_to,
) -> None:
    """Fine-tune an hf: model with LoRA on exported, masked rows; logs to CKPT/log.jsonl."""
    from dealroom.cli.display_train import render_sft_result, training_progress
    from dealroom.train import train_sft

    settings = SFTSettings(
        lora_rank=lora_rank, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
        lora_targets=lora_targets, learning_rate=learning_rate, lr_scheduler=lr_scheduler,
        warmup_ratio=warmup_ratio, weight_decay=weight_decay, epochs=epochs,
        max_steps=max_steps, max_length=max_length, batch_size=batch_size,
        grad_accum=grad_accum, seed=seed, save_steps=save_steps, save_limit=save_limit,
        activation_checkpointing=activation_checkpointing, report_to=report_to,
    )
    with training_progress() as progress:
        result = train_sft(dataset, model, out, settings, resume=resume, merge=merge,
                           progress=progress)
    render_sft_result(result)


@train_app.command("grpo")
def grpo(
    spec: Annotated[Path, typer.Argument(help="The GRPO spec (SPEC.toml): policy, frozen "
                                              "sub-agents, rooms, judge, [grpo] settings.")],
    out: Annotated[Path, typer.Option("--out", help="New checkpoint folder (CKPT).")],
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue the training in --out from its last checkpoint "
                         "(the current step's finished rollouts are reused).")] = False,
    budgetmix: Annotated[str | None, typer.Option(
        "--budgetmix", help="Turn budgets, e.g. 8,16,32,64: each group's visible budget "
                            "from a BudgetMix plan, audited every step.")] = None,
) -> None:
    """Train the root with GRPO in the harness, sub-agents frozen; logs to CKPT/log.jsonl."""
    from dealroom.cli.display_train import render_grpo_result, render_watch_sign, work_progress
    from dealroom.errors import ConfigError
    from dealroom.train import train_grpo

    budgets = None
    if budgetmix is not None:
        try:
            budgets = [int(b) for b in budgetmix.split(",")]
        except ValueError:
            raise ConfigError(f"--budgetmix takes whole turn budgets, e.g. 8,16,32,64; got "
                              f"{budgetmix!r}") from None
    with work_progress("GRPO steps") as progress:
        result = train_grpo(spec, out, resume=resume, budgetmix=budgets, progress=progress,
                            on_sign=render_watch_sign)
    render_grpo_result(result)


@train_app.command("self-distill")
def self_distill(
    spec: Annotated[Path, typer.Argument(help="Self-distillation spec (TOML): model, the sweep "
                                              "part, the select and sft tables.")],
    out: Annotated[Path, typer.Option("--out", help="Folder of the loop (DIR): its rounds, "
                                                    "rounds.json.")],
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds to train; the last "
                                                         "checkpoint is then sampled once "
                                                         "more for its pass rate.")] = 1,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="Episodes run in parallel in each round's sweep (default: one per "
                          "CPU; each loads its own copy of the model).")] = None,
) -> None:
    """Sample K runs per room with the root, judge, select, SFT; repeat (resumable)."""
    from dealroom.cli.display_train import distill_progress, render_distill_result
    from dealroom.train import self_distill as run_loop

    with distill_progress() as progress:
        result = run_loop(spec, out, rounds, workers=workers, progress=progress)
    render_distill_result(result)
