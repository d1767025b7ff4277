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
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from dealroom._util.files import read_toml
from dealroom._util.schema import Schema
from dealroom.errors import ConfigError
from dealroom.eval import GeneratedRoom, SweepSpec, spec_from_dict
from dealroom.train._reward import TOTAL, RewardSetting, check_reward_setting
from dealroom.train._settings import SFTSettings

SELECT_KEYS = ("min_pass_rate", "min_coverage", "top_k", "room_median", "reward")
LOOP_KEYS = ("model", "adapter", "select", "sft")
"""Keys of the loop's own; every other top-level key belongs to the sweep part."""
SWEEP_KEYS = tuple(name for name in SweepSpec.model_fields if name != "roots")
"""The sweep part's keys: every key of a sweep spec but ``roots`` (the loop sets it)."""

Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class SelectBars(Schema):
    """The ``[select]`` table: the export's rejection sampling (see ``select_runs``)."""

    model_config = ConfigDict(frozen=True)

    min_pass_rate: Share | None = None
    """Keep a run whose criteria pass rate is at least this share; none: no bar."""
    min_coverage: Share | None = None
    """Keep a run whose coverage of the room is at least this share; none: no bar."""
    top_k: Annotated[int, Field(ge=1)] | None = None
    """Keep at most this many runs per room (the best first); none: every one above the bars."""
    room_median: bool = True
    """Leave out a run whose pass rate is under the median of its room's judged runs."""
    reward: RewardSetting = TOTAL
    """What runs are ranked by, and the room median taken of: a reward spec as GRPO's
    (docs/training.md, "The reward"): ``total`` (the pass rate over all criteria, the
    default), ``pass`` (the headline), ``pass+evidence`` (or a table ``{kind =
    "pass+evidence", evidence_weight = 0.5}``) or ``package.module:function``. The bars
    stay on the pass rate and coverage."""
    train_subs: bool = False
    """Also train on the kept runs' children and sub-calls with recorded token ids (``export
    sft --train-subs``): useful where the sweep's sub-agent is the root's own ``hf:`` model."""

    @field_validator("reward", mode="before")
    @classmethod
    def _reward(cls, value: Any) -> Any:
        return check_reward_setting(value)


class DistillSpec(Schema):
    """What ``self_distill`` runs: the root, the sweep each round samples with, the selection
    and the SFT settings. The loop's keys are model, adapter, [select] and [sft]; every other
    top-level key of ``SPEC.toml`` is a sweep key (all but roots), kept in ``sweep``."""

    model_config = ConfigDict(frozen=True)

    model: Annotated[str, Field(json_schema_extra={
        "why": "the root to train, an hf: spec such as \"hf:local,threads=2\""})]
    """The root to train, an ``hf:`` spec (base model and generation options, no adapter);
    rounds add ``adapter=``."""
    adapter: str | None = None
    """A LoRA adapter of ``model`` (a ``dealroom train sft`` checkpoint) that round 1 samples
    with and trains on from; relative to the spec file."""
    select: SelectBars = Field(default_factory=SelectBars)
    """The ``[select]`` table."""
    sft: SFTSettings = Field(default_factory=SFTSettings)
    """The ``[sft]`` table: SFTSettings fields."""
    sweep: dict[str, Any] = Field(default_factory=dict)
    """The sweep part, as ``SPEC.toml`` gives it, with rooms and models made absolute."""

    @model_validator(mode="before")
    @classmethod
    def _sweep_part(cls, data: Any) -> Any:
        """The top-level keys that are not the loop's are the sweep part."""
        if not isinstance(data, dict):
            return data
        if "roots" in data:
            raise ConfigError("roots is set by the loop (round 1: model, then model with each "
                              "round's adapter): give model = \"hf:...\" instead")
        unknown = sorted(set(data) - set(SWEEP_KEYS) - set(LOOP_KEYS))
        if unknown:
            raise ConfigError(f"unknown key {', '.join(map(repr, unknown))}; the keys are "
                              f"{', '.join(LOOP_KEYS)} and the sweep's {', '.join(SWEEP_KEYS)}")
        return {**{k: v for k, v in data.items() if k in LOOP_KEYS},
                "sweep": {k: v for k, v in data.items() if k not in LOOP_KEYS}}

    @field_validator("model")
    @classmethod
    def _hf_root(cls, model: str) -> str:
        if not model.startswith("hf:"):
            raise ConfigError("model must be the root to train, an hf: spec such as "
                              f"\"hf:local,threads=2\", got {model!r}")
        if "adapter=" in model:
            raise ConfigError("model names an adapter; give the base model, and the adapter to "
                              "start from as adapter = \"DIR\"")
        return model

    @field_validator("adapter")
    @classmethod
    def _lora_adapter(cls, adapter: str | None) -> str | None:
        if adapter is not None and not (Path(adapter) / "adapter_config.json").is_file():
            raise ConfigError(f"adapter {adapter} is not a LoRA adapter (no "
                              "adapter_config.json): give a dealroom train sft checkpoint")
        return adapter

    @field_validator("select", "sft", mode="wrap")
    @classmethod
    def _in_table(cls, value: Any, handler: ValidatorFunctionWrapHandler,
                  info: ValidationInfo) -> Any:
        try:
            return handler(value)
        except ConfigError as exc:
            raise type(exc)(f"[{info.field_name}] {exc}") from None

    @model_validator(mode="after")
    def _sampled(self) -> DistillSpec:
        """A valid sweep (refused now, not in round 1) whose runs per room can differ: several
        runs are only worth selecting from when they are sampled."""
        sweep = self.sweep_spec(self.model)
        k = len(sweep.seeds) or sweep.samples
        if k > 1 and not sweep.settings.get("temperature", 0.0):
            raise ConfigError(f"{k} samples per room at temperature 0 (greedy decoding, the "
                              "harness's default) are one run repeated, with nothing to select "
                              "among: set settings = {temperature = 0.7}, or samples = 1")
        return self

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The file's shape: the loop's keys and, beside them, the sweep's (not ``sweep``)."""
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        target["properties"].pop("sweep")
        sweep = SweepSpec.model_json_schema()["properties"]
        sweep["generate"]["items"] = handler(GeneratedRoom.__pydantic_core_schema__)
        target["properties"].update({k: sweep[k] for k in SWEEP_KEYS})
        return schema

    @property
    def min_pass_rate(self) -> float | None:
        return self.select.min_pass_rate

    @property
    def min_coverage(self) -> float | None:
        return self.select.min_coverage

    @property
    def top_k(self) -> int | None:
        return self.select.top_k

    @property
    def room_median(self) -> bool:
        return self.select.room_median

    def root(self, adapter: Path | None) -> str:
        """The root spec of a round: ``model``, with ``adapter`` when there is one."""
        return self.model if adapter is None else f"{self.model},adapter={adapter}"

    def sweep_spec(self, root: str) -> SweepSpec:
        return spec_from_dict({**self.sweep, "roots": [root]}, "the sweep part")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "adapter": self.adapter, "sweep": self.sweep,
                "select": self.select.to_dict(), "sft": self.sft.to_dict()}


def load_distill_spec(path: Path) -> DistillSpec:
    """Read and validate ``SPEC.toml``; a ConfigError names the file and the key at fault."""
    path = Path(path)
    where = f"self-distill spec {path}"
    data = read_toml(path, where)
    return distill_spec_from_dict(data, path.resolve().parent, where)


def distill_spec_from_dict(data: dict[str, Any], base: Path,
                           where: str = "self-distill spec") -> DistillSpec:
    """A :class:`DistillSpec` from a parsed table; relative paths are relative to ``base``."""
    try:
        return DistillSpec(**_absolute(data, base))
    except ConfigError as exc:
        raise type(exc)(f"{where}: {exc}") from None


def _absolute(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Rooms, the models file and the adapter relative to the spec's folder, made absolute."""
    out = dict(data)
    if "rooms" in out:
        rooms = out["rooms"] if isinstance(out["rooms"], list) else [out["rooms"]]
        out["rooms"] = [r if not isinstance(r, str) or Path(r).is_absolute() else str(base / r)
                        for r in rooms]
    for key in ("models", "adapter"):
        if isinstance(out.get(key), str) and not Path(out[key]).is_absolute():
            out[key] = str(base / out[key])
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
