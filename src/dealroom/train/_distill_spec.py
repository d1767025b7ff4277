"""The self-distillation spec (``SPEC.toml``), validated on load.

    model = "hf:local,threads=2,max_tokens=256"   # the root: base model and generation options
    adapter = "ckpt"                              # optional: round 1 starts from this adapter
    rooms = ["rooms/*"]                           # the sweep part: every sweep key but roots
    subs = ["oracle"]
    samples = 4                                   # K runs per room and round
    max_turns = [12]
    judge = "reference"
    [select]                                      # the export's rejection sampling
    min_pass_rate = 0.5
    min_coverage = 0.3
    top_k = 2
    [sft]                                         # SFTSettings fields
    max_steps = 50
    lora_rank = 16

Round 1 samples with ``model`` (plus ``adapter=`` when one is given: a ``dealroom train sft``
checkpoint of ``model`` to go on from); round N+1 with ``model`` plus
``adapter=DIR/round-N/ckpt``.
Each round's sweep spec is the sweep part with ``roots = [that root]`` and the rooms and
models file made absolute (``DIR/round-N/sweep.toml``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealroom._util.files import read_toml
from dealroom.errors import ConfigError
from dealroom.eval import SweepSpec, spec_from_dict
from dealroom.train._select import check_bars
from dealroom.train._settings import SFTSettings

SELECT_KEYS = ("min_pass_rate", "min_coverage", "top_k")
LOOP_KEYS = ("model", "adapter", "select", "sft")
"""Keys of the loop's own; every other top-level key belongs to the sweep part."""


@dataclass(frozen=True)
class DistillSpec:
    """What ``self_distill`` runs: the root, the sweep each round samples with, the selection
    and the SFT settings."""

    model: str
    """The root's ``hf:`` spec (base model and generation options); rounds add ``adapter=``."""
    sweep: dict[str, Any]
    """The sweep part, as ``SPEC.toml`` gives it, with rooms and models made absolute."""
    min_pass_rate: float | None = None
    min_coverage: float | None = None
    top_k: int | None = None
    sft: SFTSettings = field(default_factory=SFTSettings)
    adapter: str | None = None
    """A LoRA adapter of ``model`` that round 1 samples with and trains on from (absolute)."""

    def root(self, adapter: Path | None) -> str:
        """The root spec of a round: ``model``, with ``adapter`` when there is one."""
        return self.model if adapter is None else f"{self.model},adapter={adapter}"

    def sweep_spec(self, root: str) -> SweepSpec:
        return spec_from_dict({**self.sweep, "roots": [root]}, "self-distill spec")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "adapter": self.adapter, "sweep": self.sweep,
                "select": {k: getattr(self, k) for k in SELECT_KEYS},
                "sft": self.sft.to_dict()}


def load_distill_spec(path: Path) -> DistillSpec:
    """Read and validate ``SPEC.toml``; a ConfigError names the key at fault."""
    path = Path(path)
    where = f"self-distill spec {path}"
    data = read_toml(path, where)
    return distill_spec_from_dict(data, path.resolve().parent, where)


def distill_spec_from_dict(data: dict[str, Any], base: Path,
                           where: str = "self-distill spec") -> DistillSpec:
    """A :class:`DistillSpec` from a parsed table; relative paths are relative to ``base``."""
    sweep_keys = [name for name in SweepSpec.model_fields if name != "roots"]
    if "roots" in data:
        raise ConfigError(f"{where}: roots is set by the loop (round 1: model, then model with "
                          "each round's adapter): give model = \"hf:...\" instead")
    unknown = sorted(set(data) - set(sweep_keys) - set(LOOP_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {', '.join(map(repr, unknown))}; the keys are "
                          f"{', '.join(LOOP_KEYS)} and the sweep's {', '.join(sweep_keys)}")
    model = data.get("model")
    if not isinstance(model, str) or not model.startswith("hf:"):
        raise ConfigError(f"{where}: model must be the root to train, an hf: spec such as "
                          "\"hf:local,threads=2\"")
    if "adapter=" in model:
        raise ConfigError(f"{where}: model names an adapter; give the base model, and the "
                          "adapter to start from as adapter = \"DIR\"")
    adapter = data.get("adapter")
    if adapter is not None:
        if not isinstance(adapter, str):
            raise ConfigError(f"{where}: adapter must be a folder (a LoRA adapter of model)")
        adapter = str(base / adapter) if not Path(adapter).is_absolute() else adapter
        if not (Path(adapter) / "adapter_config.json").is_file():
            raise ConfigError(f"{where}: adapter {adapter} is not a LoRA adapter (no "
                              "adapter_config.json): give a dealroom train sft checkpoint")
    select = _table(data, "select", where)
    unknown = sorted(set(select) - set(SELECT_KEYS))
    if unknown:
        raise ConfigError(f"{where}: [select] has no key {', '.join(map(repr, unknown))}; its "
                          f"keys are {', '.join(SELECT_KEYS)}")
    try:
        check_bars(*(select.get(k) for k in SELECT_KEYS))
    except (ConfigError, TypeError) as exc:
        raise ConfigError(f"{where}: [select] {exc}") from None
    sweep = _absolute({k: v for k, v in data.items() if k not in LOOP_KEYS}, base)
    spec = DistillSpec(model, sweep, **{k: select.get(k) for k in SELECT_KEYS},
                       sft=_settings(_table(data, "sft", where), where), adapter=adapter)
    _check_sampled(spec.sweep_spec(model), where)  # a valid sweep: refused now, not later
    return spec


def _check_sampled(sweep: SweepSpec, where: str) -> None:
    """Several runs per room are only worth selecting from when they can differ."""
    k = len(sweep.seeds) or sweep.samples
    temperature = sweep.settings.get("temperature", 0.0)
    if k > 1 and not temperature:
        raise ConfigError(f"{where}: {k} samples per room at temperature 0 (greedy decoding, "
                          "the harness's default) are one run repeated, with nothing to "
                          "select among: set settings = {temperature = 0.7}, or samples = 1")


def _table(data: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {name} must be a table ([{name}])")
    return value


def _settings(table: dict[str, Any], where: str) -> SFTSettings:
    known = list(SFTSettings.model_fields)
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"{where}: [sft] has no key {', '.join(map(repr, unknown))}; its keys "
                          f"are the SFT settings {', '.join(known)}")
    try:
        return SFTSettings(**table)
    except (ConfigError, TypeError) as exc:
        raise ConfigError(f"{where}: [sft] {exc}") from None


def _absolute(sweep: dict[str, Any], base: Path) -> dict[str, Any]:
    """Rooms and the models file relative to the spec's folder, made absolute."""
    out = dict(sweep)
    if "rooms" in out:
        rooms = out["rooms"] if isinstance(out["rooms"], list) else [out["rooms"]]
        out["rooms"] = [r if not isinstance(r, str) or Path(r).is_absolute() else str(base / r)
                        for r in rooms]
    if isinstance(out.get("models"), str) and not Path(out["models"]).is_absolute():
        out["models"] = str(base / out["models"])
    return out


def to_toml(table: dict[str, Any]) -> str:
    """A flat table of TOML values (strings, numbers, booleans, lists, tables) as TOML text.

    >>> print(to_toml({"rooms": ["a"], "samples": 2, "settings": {"cell_timeout": 5.0}}))
    rooms = ["a"]
    samples = 2
    settings = {cell_timeout = 5.0}
    <BLANKLINE>
    """
    return "".join(f"{_key(k)} = {_value(v)}\n" for k, v in table.items() if v is not None)


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()
                               if v is not None) + "}"
    raise ConfigError(f"cannot write {value!r} in a sweep spec")
