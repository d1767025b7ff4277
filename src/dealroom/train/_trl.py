"""The thin layer over TRL: an SFTTrainer that counts what each step trains on, and the
callback that writes ``CKPT/log.jsonl`` and feeds the progress bar. Imported only once the
``train`` extra is known to be installed."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback
from trl import SFTTrainer

from dealroom.runs import append_jsonl

if TYPE_CHECKING:
    from transformers import TrainerControl, TrainerState, TrainingArguments

LOG = "log.jsonl"
IGNORE = -100


@dataclass
class StepCounts:
    """Tokens seen in the current optimizer step, over its micro-batches."""

    tokens: int = 0
    trained: int = 0


class CountingSFTTrainer(SFTTrainer):
    """SFTTrainer that adds each training micro-batch's token counts to ``counts``."""

    def __init__(self, *args: Any, counts: StepCounts, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.counts = counts
        self.remove_callback(PrinterCallback)
        self.remove_callback(ProgressCallback)

    def compute_loss(self, model: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if model.training:
            labels = inputs["labels"]
            attention = inputs.get("attention_mask")
            total = int(attention.sum()) if attention is not None else labels.numel()
            self.counts.tokens += total
            self.counts.trained += int((labels != IGNORE).sum())
        return super().compute_loss(model, inputs, *args, **kwargs)


class StepLog(TrainerCallback):
    """One ``log.jsonl`` row per optimizer step (see docs/training.md, "Logged metrics")."""

    def __init__(self, path: Path, counts: StepCounts,
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.path = path
        self.counts = counts
        self.progress = progress
        self._started = 0.0
        self._seconds = 0.0

    def on_step_begin(self, args: TrainingArguments, state: TrainerState,
                      control: TrainerControl, **kwargs: Any) -> None:
        self._started = time.perf_counter()

    def on_step_end(self, args: TrainingArguments, state: TrainerState,
                    control: TrainerControl, **kwargs: Any) -> None:
        self._seconds = time.perf_counter() - self._started
        if self.progress is not None:
            self.progress(state.global_step, state.max_steps)

    def on_log(self, args: TrainingArguments, state: TrainerState,
               control: TrainerControl, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
        if not logs or "loss" not in logs:
            return
        counts, self.counts.tokens, self.counts.trained = (
            StepCounts(self.counts.tokens, self.counts.trained), 0, 0)
        append_jsonl(self.path, {
            "step": state.global_step,
            "epoch": round(float(logs.get("epoch", state.epoch or 0.0)), 4),
            "loss": float(logs["loss"]),
            "learning_rate": float(logs.get("learning_rate", 0.0)),
            "grad_norm": _number(logs.get("grad_norm")),
            "tokens": counts.tokens,
            "masked_share": round(counts.trained / counts.tokens, 4) if counts.tokens else 0.0,
            "entropy": _number(logs.get("entropy")),
            "token_accuracy": _number(logs.get("mean_token_accuracy")),
            "step_seconds": round(self._seconds, 3),
        })


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
