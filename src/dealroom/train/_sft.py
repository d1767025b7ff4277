"""Supervised fine-tuning with LoRA: TRL's SFTTrainer on pre-tokenized, masked rows.

    DS/tokenized.jsonl ──rows {input_ids, assistant_masks, run}──▶ SFTTrainer + PEFT LoRA
                                                                      │ every step
    CKPT/ train.json        what was trained, from what, with which settings   ▼
          log.jsonl         one row per optimizer step ◀──────────────── StepLog
          checkpoint-N/     every save_steps (adapter, optimizer, scheduler, RNG): --resume
          adapter_config.json, adapter_model.safetensors   the result: hf:CKPT
          merged/           with merge: base and adapter in one model: hf:CKPT/merged
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.files import write_json_atomic, write_text_atomic
from dealroom.errors import ConfigError, MissingDependency
from dealroom.train._settings import SFTSettings, lora_config

if TYPE_CHECKING:
    from peft import LoraConfig, PeftModel

    from dealroom.models import ModelSpec
    from dealroom.train._trl import CountingSFTTrainer

TOKENIZED = "tokenized.jsonl"
MERGED = "merged"
ADAPTER = "adapter_config.json"
TRAIN_VERSION = 1
_EXTRA = ("torch", "transformers", "trl", "peft", "datasets", "accelerate")


@dataclass
class SFTResult:
    """What ``train_sft`` produced."""

    out: Path
    """The checkpoint folder (a PEFT adapter: ``hf:CKPT``)."""
    steps: int
    """Optimizer steps done, resumed ones included."""
    loss: float | None
    """Loss of the last step."""
    rows: int
    """Training rows in the dataset."""
    seconds: float
    """Wall time of this call."""
    merged: Path | None = None
    """The merged model folder, when asked for."""


def read_rows(dataset: Path, max_length: int) -> list[dict[str, list[int]]]:
    """The rows of ``DS/tokenized.jsonl`` (or that file), checked; a ConfigError names the line."""
    path = Path(dataset)
    path = path / TOKENIZED if path.is_dir() else path
    if not path.is_file():
        raise ConfigError(f"{path} does not exist: give a dataset folder written by "
                          "`dealroom export sft` (it holds tokenized.jsonl)")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
            ids, mask = row["input_ids"], row["assistant_masks"]
        except (ValueError, KeyError, TypeError):
            raise ConfigError(f"{where}: not a row with input_ids and assistant_masks") from None
        if not ids or len(ids) != len(mask) or not all(isinstance(i, int) for i in ids):
            raise ConfigError(f"{where}: input_ids must be token ids, as many as assistant_masks")
        if not set(mask) <= {0, 1} or 1 not in mask:
            raise ConfigError(f"{where}: assistant_masks must be 0/1 with at least one 1")
        if len(ids) > max_length:
            raise ConfigError(f"{where}: {len(ids):,} tokens, above max_length {max_length:,}: "
                              "raise --max-length or export with a shorter one")
        rows.append({"input_ids": ids, "assistant_masks": mask})
    if not rows:
        raise ConfigError(f"{path} holds no rows")
    return rows


def _record(model: str, dataset: Path, settings: SFTSettings,
            adapter: Path | None) -> dict[str, Any]:
    return {"version": TRAIN_VERSION, "kind": "sft", "base": model,
            "dataset": str(Path(dataset).resolve()), "settings": settings.to_dict(),
            "adapter": str(Path(adapter).resolve()) if adapter else None}


def _prepare_out(out: Path, model: str, dataset: Path, settings: SFTSettings,
                 adapter: Path | None, resume: bool) -> str | None:
    """Refuse a used folder (or a resume that does not match); return the checkpoint to
    resume from, if any."""
    from transformers.trainer_utils import get_last_checkpoint

    from dealroom.models import TRAIN_RECORD

    wanted = _record(model, dataset, settings, adapter)
    if not resume:
        if out.exists() and any(out.iterdir()):
            raise ConfigError(f"{out} already holds files: choose a new --out folder, or "
                              f"continue that training with --resume")
        return None
    try:
        stored = json.loads((out / TRAIN_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ConfigError(f"{out} holds no {TRAIN_RECORD}: nothing to resume") from None
    for key in ("base", "dataset", "settings", "adapter"):
        if stored.get(key) != wanted[key]:
            raise ConfigError(f"--resume: {key} differs from the training in {out} "
                              f"(was {stored.get(key)!r}); resume with the same arguments")
    last = get_last_checkpoint(str(out))
    if last is None:
        raise ConfigError(f"{out} holds no checkpoint-N folder yet: start again without "
                          "--resume in a new folder")
    _cut_log(out, int(last.rsplit("-", 1)[1]))
    return last


def _cut_log(out: Path, step: int) -> None:
    """Drop log rows past the checkpoint a resume restarts from (they will be redone)."""
    from dealroom.train._trl import LOG

    path = out / LOG
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
        keep = [line for line in lines if line.strip() and json.loads(line)["step"] <= step]
        write_text_atomic(path, "".join(f"{line}\n" for line in keep))


def train_sft(dataset: Path, model: str, out: Path, settings: SFTSettings | None = None, *,
              resume: bool = False, merge: bool = False, adapter: Path | None = None,
              progress: Callable[[int, int], None] | None = None) -> SFTResult:
    """Fine-tune the ``hf:`` model ``model`` with LoRA on the rows of ``dataset`` into ``out``.

    ``adapter`` continues training that LoRA adapter of ``model`` (its rank, alpha and
    targets; the other settings apply) instead of a new one, so ``out`` is again an adapter
    of ``model``; ``resume`` continues an interrupted training in ``out`` from its last
    checkpoint (same arguments); ``merge`` also writes ``out/merged``; ``progress(step,
    total)`` after each step.
    """
    from dealroom.models import TRAIN_RECORD, resolve_model_spec

    started = time.perf_counter()
    settings = settings or SFTSettings()
    spec = resolve_model_spec(model, role="root")
    if spec.kind != "hf":
        raise ConfigError(f"train needs an in-process model: give hf:local or hf:PATH, not "
                          f"{model!r}")
    _require_extra()
    for reporter in set(settings.reporters()) - {"none"}:
        _require_reporter(reporter)
    rows = read_rows(dataset, settings.max_length)
    out = Path(out)
    if adapter is not None and spec.options.get("adapter"):
        raise ConfigError(f"{model} already names an adapter: give the base model and "
                          "adapter= separately")
    if adapter is not None and not (Path(adapter) / ADAPTER).is_file():
        raise ConfigError(f"adapter {adapter}: no {ADAPTER} there (not a LoRA adapter)")
    last = _prepare_out(out, model, dataset, settings, adapter, resume)
    with warnings.catch_warnings():  # the pinned libraries' deprecation notices, not the user's
        warnings.simplefilter("ignore", FutureWarning)
        trainer = _trainer(spec, rows, out, settings, adapter, progress)
        if last is None:  # the model loaded and fits the data: the folder becomes a training
            out.mkdir(parents=True, exist_ok=True)
            write_json_atomic(out / TRAIN_RECORD,
                              {**_record(model, dataset, settings, adapter),
                               "status": "running"})
        trainer.train(resume_from_checkpoint=last)
        trainer.save_model(str(out))
    steps = trainer.state.global_step
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    merged = _merge(trainer, out) if merge else None
    record = json.loads((out / TRAIN_RECORD).read_text(encoding="utf-8"))
    write_json_atomic(out / TRAIN_RECORD, {**record, "status": "done", "steps": steps,
                                           "rows": len(rows)})
    return SFTResult(out, steps, losses[-1] if losses else None, len(rows),
                     time.perf_counter() - started, merged)


def _require_extra() -> None:
    import importlib.util

    for package in _EXTRA:
        if importlib.util.find_spec(package) is None:
            raise MissingDependency(package, extra="train", feature="training")


def _require_reporter(name: str) -> None:
    """``report_to`` integrations are the user's own installs, not part of the extra."""
    import importlib.util

    if importlib.util.find_spec(name) is None:
        raise MissingDependency(name, feature=f"report_to={name}")


def _trainer(spec: ModelSpec, rows: list[dict[str, list[int]]], out: Path,
             settings: SFTSettings, adapter: Path | None,
             progress: Callable[[int, int], None] | None) -> CountingSFTTrainer:
    import datasets
    from trl import SFTConfig

    from dealroom.models import load_hf_model
    from dealroom.train._trl import LOG, CountingSFTTrainer, StepCounts, StepLog

    loaded = load_hf_model(spec)
    model, tokenizer, device = _dequantized(loaded.model), loaded.tokenizer, loaded.device
    dtype = str(model.dtype).removeprefix("torch.")
    vocab = model.get_input_embeddings().num_embeddings
    if max(max(r["input_ids"]) for r in rows) >= vocab:
        raise ConfigError(f"the dataset holds token ids beyond {spec.name}'s vocabulary of "
                          f"{vocab:,}: it was tokenized for another model")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    args = SFTConfig(
        output_dir=str(out), per_device_train_batch_size=settings.batch_size,
        gradient_accumulation_steps=settings.grad_accum, learning_rate=settings.learning_rate,
        lr_scheduler_type=settings.lr_scheduler, warmup_steps=settings.warmup_ratio,
        weight_decay=settings.weight_decay, num_train_epochs=settings.epochs,
        max_steps=settings.max_steps or -1, max_length=settings.max_length,
        seed=settings.seed, data_seed=settings.seed, logging_steps=1,
        save_strategy="steps", save_steps=settings.save_steps,
        save_total_limit=settings.save_limit, report_to=settings.reporters(),
        activation_checkpointing=settings.activation_checkpointing, disable_tqdm=True,
        use_cpu=device == "cpu", bf16=dtype == "bfloat16", fp16=dtype == "float16",
        packing=False, dataset_num_proc=None,
    )
    lora: LoraConfig | None = lora_config(settings)
    if adapter is not None:  # continue that adapter: TRL trains a PeftModel as it is
        model, lora = _trainable_adapter(model, Path(adapter)), None
    counts = StepCounts()
    datasets.disable_progress_bars()
    return CountingSFTTrainer(
        model=model.train(), args=args, train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer, peft_config=lora, counts=counts,
        callbacks=[StepLog(out / LOG, counts, progress)],
    )


def _dequantized(model: Any) -> Any:
    """``model`` without the GGUF quantizer it was loaded through (``hf:local``): its weights
    are already plain floats, but the trainer refuses a model that names a quantizer."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None and quantizer.quantization_config.quant_method == "gguf":
        model.hf_quantizer = None
        model.is_quantized = False
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
    return model


def _trainable_adapter(model: Any, adapter: Path) -> PeftModel:
    """``model`` wrapped in the LoRA adapter of folder ``adapter``, its weights trainable."""
    from peft import PeftModel

    return PeftModel.from_pretrained(model, str(adapter), is_trainable=True)


def _merge(trainer: Any, out: Path) -> Path:
    """Base and adapter as one plain model folder (the start of RL)."""
    merged = trainer.model.merge_and_unload()
    path = out / MERGED
    merged.save_pretrained(str(path))
    trainer.processing_class.save_pretrained(str(path))
    return path
