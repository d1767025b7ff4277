"""The reward spec of GRPO and self-distillation: a run's reward from its judged scores.

    reward = "pass"                     # the scores' headline pass rate (the default)
    reward = "total"                    # the pass rate over all criteria
    reward = "pass+evidence"            # headline + evidence_weight x evidence F1 (weight 0.5)
    reward = {kind = "pass+evidence", evidence_weight = 1.0}
    reward = "my_rewards:grounded"      # a function of yours: (scores, run_dir) -> reward

A user function is named ``package.module:function`` and imported when the spec is loaded (it
must be importable where rollouts run). It is called with the run's
:class:`~dealroom.judge.Scores` and its folder and returns a number, or a mapping of named terms
whose sum is the reward. Every reward has *terms*, logged per rollout and per step: ``pass``
(the pass figure, always), ``evidence`` (the evidence F1, with ``pass+evidence``; a room
without gold citations scores 0), or the function's (its number as ``user``). See
docs/training.md, "The reward".
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from dealroom._util.schema import Schema
from dealroom.errors import ConfigError

if TYPE_CHECKING:
    from dealroom.judge import Scores

PASS, TOTAL, PASS_EVIDENCE = "pass", "total", "pass+evidence"
BUILT_IN = (PASS, TOTAL, PASS_EVIDENCE)
OLD_NAMES = {"headline": PASS}
"""Names a spec may still give: ``headline`` is ``pass`` (its name before the reward spec)."""
_FUNCTION = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_KINDS = ('"pass" (the headline pass rate), "total", "pass+evidence", or a function '
          'as "package.module:function"')


class RewardError(ValueError):
    """A user reward function raised or returned something that is not a reward."""


class RewardTable(Schema):
    """``reward = {kind = ..., evidence_weight = ...}``: the reward spec as a table."""

    model_config = ConfigDict(frozen=True)

    kind: Annotated[str, Field(json_schema_extra={"why": _KINDS})] = PASS
    """``pass``, ``total``, ``pass+evidence`` or ``package.module:function``."""
    evidence_weight: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.5
    """The weight of the evidence F1 in ``pass+evidence`` (reward = pass + weight x F1)."""

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, kind: Any) -> Any:
        kind = OLD_NAMES.get(kind, kind) if isinstance(kind, str) else kind
        if isinstance(kind, str):
            check_kind(kind)
        return kind

    @model_validator(mode="after")
    def _weight_applies(self) -> RewardTable:
        if "evidence_weight" in self.model_fields_set and self.kind != PASS_EVIDENCE:
            raise ConfigError(f"reward: evidence_weight weighs the evidence term of kind "
                              f"\"pass+evidence\", not of {self.kind!r}")
        return self


RewardSetting = str | RewardTable
"""What a spec's ``reward`` key holds: a kind, or a :class:`RewardTable`."""


def check_reward_setting(value: Any) -> Any:
    """A spec's ``reward`` as stored: an old name given as today's, a kind checked (its
    function imported); a table is checked by :class:`RewardTable`."""
    if isinstance(value, str):
        value = OLD_NAMES.get(value, value)
        check_kind(value)
        return value
    if isinstance(value, Mapping):
        try:
            return RewardTable(**value)
        except ConfigError as exc:
            message = str(exc)
            raise type(exc)(message if message.startswith("reward") else f"reward: {message}") \
                from None
    if isinstance(value, RewardTable):
        return value
    raise ConfigError(f"reward must be {_KINDS}, or a table such as {{kind = "
                      f"\"pass+evidence\", evidence_weight = 0.5}}; got {value!r}")


def check_kind(kind: str) -> None:
    """Raise ConfigError unless ``kind`` is a built-in reward or an importable function."""
    if kind not in BUILT_IN:
        user_function(kind)


def user_function(path: str) -> Callable[..., Any]:
    """The function ``package.module:function`` names; ConfigError when it cannot be had."""
    if not _FUNCTION.match(path):
        raise ConfigError(f"reward must be {_KINDS}; got {path!r}")
    module, name = path.split(":")
    try:
        found = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ConfigError(f"reward {path!r}: cannot import {module}: {exc}") from None
    except AttributeError:
        raise ConfigError(f"reward {path!r}: {module} has no {name}") from None
    if not callable(found):
        raise ConfigError(f"reward {path!r}: {name} is not a function")
    return found  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Reward:
    """A checked reward spec; calling it gives a judged run's reward and its terms."""

    kind: str = PASS
    evidence_weight: float = 0.5

    @property
    def pass_figure(self) -> str:
        """Which pass rate the ``pass`` term is: ``total`` or ``headline``."""
        return "total" if self.kind == TOTAL else "headline"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "evidence_weight": self.evidence_weight}

    def __call__(self, scores: Scores, run_dir: Path) -> tuple[float, dict[str, float]]:
        """(reward, terms) of a run judged ``scores`` (RewardError from a user function)."""
        passed = scores.pass_rate if self.kind == TOTAL else scores.headline
        terms = {"pass": _number(passed)}
        if self.kind in (PASS, TOTAL):
            return terms["pass"], terms
        if self.kind == PASS_EVIDENCE:
            f1 = scores.evidence.f1 if scores.evidence is not None else math.nan
            terms["evidence"] = _number(f1)
            return terms["pass"] + self.evidence_weight * terms["evidence"], terms
        return _user(self.kind, scores, run_dir, terms)


def _number(value: float) -> float:
    return 0.0 if math.isnan(value) else float(value)


def _user(path: str, scores: Scores, run_dir: Path,
          terms: dict[str, float]) -> tuple[float, dict[str, float]]:
    try:
        given = user_function(path)(scores, Path(run_dir))
    except Exception as exc:  # noqa: BLE001 - the rollout gets no reward, and says why
        raise RewardError(f"the reward function {path} raised {type(exc).__name__}: "
                          f"{exc}") from None
    parts = dict(given) if isinstance(given, Mapping) else {"user": given}
    for name, value in parts.items():
        if not isinstance(value, int | float) or isinstance(value, bool) \
                or not math.isfinite(value):
            raise RewardError(f"the reward function {path} gave {name} = {value!r}, not a "
                              "finite number")
    return float(sum(parts.values())), {**terms, **{str(k): float(v) for k, v in parts.items()}}


def reward_of(setting: RewardSetting | Mapping[str, Any] | Reward | None) -> Reward:
    """The :class:`Reward` of a spec's ``reward`` (a kind, a table, or None: ``pass``)."""
    if isinstance(setting, Reward):
        return setting
    if setting is None:
        return Reward()
    if isinstance(setting, str):
        return Reward(check_reward_setting(setting))
    table = setting if isinstance(setting, RewardTable) else RewardTable(**dict(setting))
    return Reward(table.kind, table.evidence_weight)
