"""Settings of supervised fine-tuning, validated when built. Every field is a flag of
``dealroom train sft`` (``lora_rank`` is ``--lora-rank``)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from dealroom.errors import ConfigError

REPORTERS = ("none", "tensorboard", "wandb")
SCHEDULERS = ("linear", "cosine", "constant", "constant_with_warmup")


@dataclass
class LoRASettings:
    """The LoRA adapter a trainer fits; the first fields of SFTSettings and GRPOSettings."""

    lora_rank: int = 16
    """Rank r of the LoRA matrices."""
    lora_alpha: int = 32
    """LoRA scaling numerator: updates are scaled by ``lora_alpha / lora_rank``."""
    lora_dropout: float = 0.05
    """Dropout on the LoRA input, 0 to 1."""
    lora_targets: str = "all-linear"
    """Modules that get adapters: ``all-linear`` or comma-separated names (``q_proj,v_proj``)."""

    def __post_init__(self) -> None:
        for name in ("lora_rank", "lora_alpha"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be an integer of at least 1")
        if not 0 <= self.lora_dropout < 1:
            raise ConfigError("lora_dropout must be in [0, 1)")
        if not peft_targets(self.lora_targets):
            raise ConfigError("lora_targets names no module: give all-linear or q_proj,v_proj")

    def targets(self) -> str | list[str]:
        """``lora_targets`` as PEFT takes it."""
        return peft_targets(self.lora_targets)


@dataclass
class SFTSettings(LoRASettings):
    """How ``train_sft`` fine-tunes a model with LoRA."""

    learning_rate: float = 2e-4
    """Peak learning rate of AdamW."""
    lr_scheduler: str = "linear"
    """Learning-rate schedule after warm-up: linear, cosine, constant, constant_with_warmup."""
    warmup_ratio: float = 0.0
    """Share of the steps spent warming the learning rate up from 0."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    epochs: float = 1.0
    """Passes over the dataset (ignored when ``max_steps`` is set)."""
    max_steps: int | None = None
    """Optimizer steps to run; overrides ``epochs``."""
    max_length: int = 4096
    """Longest row in tokens; a longer row is refused (re-export with a smaller length)."""
    batch_size: int = 1
    """Rows per micro-batch."""
    grad_accum: int = 4
    """Micro-batches per optimizer step (effective batch: ``batch_size * grad_accum``)."""
    seed: int = 0
    """Seed of initialization, shuffling and dropout."""
    save_steps: int = 50
    """Steps between checkpoints (``CKPT/checkpoint-N``), the point ``--resume`` restarts from."""
    save_limit: int = 2
    """Checkpoints kept; older ones are deleted."""
    activation_checkpointing: bool = True
    """Recompute activations in the backward pass: less memory (what lets 4,096-token rows
    fit), about a third slower."""
    report_to: str = "none"
    """Also log to ``tensorboard`` or ``wandb`` (comma-separated), through the trainer's own
    integrations; ``none`` logs to ``CKPT/log.jsonl`` only."""

    def __post_init__(self) -> None:
        super().__post_init__()
        positive = ("max_length", "batch_size", "grad_accum", "save_steps", "save_limit")
        for name in positive:
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(f"{name} must be an integer of at least 1")
        if self.max_steps is not None and self.max_steps < 1:
            raise ConfigError("max_steps must be at least 1 (omit it to train by epochs)")
        if not (math.isfinite(self.learning_rate) and 0 < self.learning_rate < 1):
            raise ConfigError("learning_rate must be between 0 and 1, e.g. 2e-4")
        if not 0 < self.epochs <= 1000:
            raise ConfigError("epochs must be positive (fractions allowed)")
        if not 0 <= self.warmup_ratio < 1:
            raise ConfigError("warmup_ratio must be in [0, 1)")
        if self.weight_decay < 0:
            raise ConfigError("weight_decay must be at least 0")
        if self.seed < 0:
            raise ConfigError("seed must be at least 0")
        if self.lr_scheduler not in SCHEDULERS:
            raise ConfigError(f"lr_scheduler must be one of {', '.join(SCHEDULERS)}")
        check_reporting(self.report_to)

    def reporters(self) -> list[str]:
        return reporters(self.report_to)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SFTSettings:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def field_help(cls: type) -> dict[str, str]:
    """Each dataclass field's docstring, by name: the CLI's help and the docs use them."""
    import ast
    import inspect
    import textwrap

    found = {}
    for klass in reversed([k for k in cls.__mro__ if "__dataclass_fields__" in vars(k)]):
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, after in zip(body, body[1:], strict=False):
            doc = getattr(after, "value", None)
            if isinstance(node, ast.AnnAssign) and isinstance(doc, ast.Constant):
                text = " ".join(str(doc.value).split()).replace("``", "")
                found[node.target.id] = text  # type: ignore[union-attr]
    return found


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


def lora_config(settings: Any) -> Any:
    """The PEFT ``LoraConfig`` of ``settings`` (its ``lora_*`` fields) for a causal LM."""
    from peft import LoraConfig

    return LoraConfig(r=settings.lora_rank, lora_alpha=settings.lora_alpha,
                      lora_dropout=settings.lora_dropout,
                      target_modules=peft_targets(settings.lora_targets),
                      task_type="CAUSAL_LM")
