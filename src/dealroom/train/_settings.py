"""Settings of supervised fine-tuning, validated when built. Every field is a flag of
``dealroom train sft`` (``lora_rank`` is ``--lora-rank``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, model_validator

from dealroom._util.schema import Schema, field_help
from dealroom.errors import ConfigError

if TYPE_CHECKING:
    from peft import LoraConfig

REPORTERS = ("none", "tensorboard", "wandb")
SCHEDULERS = ("linear", "cosine", "constant", "constant_with_warmup")

Positive = Annotated[int, Field(ge=1)]
Count = Annotated[int, Field(ge=0)]
Rate = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]

__all__ = ["LoRASettings", "SFTSettings", "field_help"]


class LoRASettings(Schema):
    """The LoRA adapter a trainer fits; the first fields of SFTSettings and GRPOSettings."""

    lora_rank: Positive = 16
    """Rank r of the LoRA matrices."""
    lora_alpha: Positive = 32
    """LoRA scaling numerator: updates are scaled by ``lora_alpha / lora_rank``."""
    lora_dropout: Annotated[float, Field(ge=0, lt=1)] = 0.05
    """Dropout on the LoRA input, 0 to 1."""
    lora_targets: str = "all-linear"
    """Modules that get adapters: ``all-linear`` or comma-separated names (``q_proj,v_proj``)."""

    @model_validator(mode="after")
    def _check_lora(self) -> LoRASettings:
        if not peft_targets(self.lora_targets):
            raise ConfigError("lora_targets names no module: give all-linear or q_proj,v_proj")
        return self

    def targets(self) -> str | list[str]:
        """``lora_targets`` as PEFT takes it."""
        return peft_targets(self.lora_targets)

    def reporters(self) -> list[str]:
        """``report_to`` as the trainer takes it."""
        return reporters(str(getattr(self, "report_to", "none")))


class SFTSettings(LoRASettings):
    """How ``train_sft`` fine-tunes a model with LoRA."""

    learning_rate: Rate = 2e-4
    """Peak learning rate of AdamW."""
    lr_scheduler: str = "linear"
    """Learning-rate schedule after warm-up: linear, cosine, constant, constant_with_warmup."""
    warmup_ratio: Annotated[float, Field(ge=0, lt=1)] = 0.0
    """Share of the steps spent warming the learning rate up from 0."""
    weight_decay: Annotated[float, Field(ge=0)] = 0.0
    """AdamW weight decay."""
    epochs: Annotated[float, Field(gt=0, le=1000)] = 1.0
    """Passes over the dataset (ignored when ``max_steps`` is set)."""
    max_steps: Positive | None = None
    """Optimizer steps to run; overrides ``epochs``."""
    max_length: Positive = 4096
    """Longest row in tokens; a longer row is refused (re-export with a smaller length)."""
    batch_size: Positive = 1
    """Rows per micro-batch."""
    grad_accum: Positive = 4
    """Micro-batches per optimizer step (effective batch: ``batch_size * grad_accum``)."""
    seed: Count = 0
    """Seed of initialization, shuffling and dropout."""
    save_steps: Positive = 50
    """Steps between checkpoints (``CKPT/checkpoint-N``), the point ``--resume`` restarts from."""
    save_limit: Positive = 2
    """Checkpoints kept; older ones are deleted."""
    activation_checkpointing: bool = True
    """Recompute activations in the backward pass: less memory (what lets 4,096-token rows
    fit), about a third slower."""
    report_to: str = "none"
    """Also log to ``tensorboard`` or ``wandb`` (comma-separated), through the trainer's own
    integrations; ``none`` logs to ``CKPT/log.jsonl`` only."""

    @model_validator(mode="after")
    def _check_sft(self) -> SFTSettings:
        if self.lr_scheduler not in SCHEDULERS:
            raise ConfigError(f"lr_scheduler must be one of {', '.join(SCHEDULERS)}, got "
                              f"{self.lr_scheduler!r}")
        check_reporting(self.report_to)
        return self

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SFTSettings:
        """Settings recorded by an earlier version: keys it no longer has are left out."""
        return cls(**{k: v for k, v in data.items() if k in cls.model_fields})


DEFAULT_MAX_LENGTH: int = SFTSettings.model_fields["max_length"].default
"""The longest row by default (``SFTSettings().max_length``)."""


# -- shared by SFTSettings and GRPOSettings ---------------------------------------------------
def peft_targets(lora_targets: str) -> str | list[str]:
    """``"all-linear"`` or ``"q_proj, v_proj"`` as PEFT's ``target_modules`` takes it."""
    names = [t.strip() for t in lora_targets.split(",") if t.strip()]
    return "all-linear" if names == ["all-linear"] else names


def reporters(report_to: str) -> list[str]:
    """``report_to`` as the trainer takes it (``["none"]`` when empty)."""
    return [r.strip() for r in report_to.split(",") if r.strip()] or ["none"]


def check_reporting(report_to: str) -> None:
    """Raise ConfigError when ``report_to`` names an unknown integration."""
    chosen = reporters(report_to)
    if set(chosen) - set(REPORTERS) or ("none" in chosen and len(chosen) > 1):
        raise ConfigError(f"report_to must be none, or tensorboard and/or wandb; "
                          f"got {report_to!r}")


def lora_config(settings: LoRASettings) -> LoraConfig:
    """The PEFT ``LoraConfig`` of ``settings`` (its ``lora_*`` fields) for a causal LM."""
    from peft import LoraConfig

    return LoraConfig(r=settings.lora_rank, lora_alpha=settings.lora_alpha,
                      lora_dropout=settings.lora_dropout,
                      target_modules=peft_targets(settings.lora_targets),
                      task_type="CAUSAL_LM")
