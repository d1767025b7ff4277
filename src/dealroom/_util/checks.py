"""Checks of the budget and sampling fields that every harness's settings share."""

from __future__ import annotations

import math
from typing import Any

MAX_TEMPERATURE = 2.0
"""The highest sampling temperature the OpenAI-compatible API takes."""


def check_limits(settings: Any) -> None:
    """Raise InputError unless ``max_tokens``, ``max_cost_usd`` and ``max_seconds`` of
    ``settings`` are None or finite and positive, and ``temperature`` is in [0, 2]."""
    from dealroom.errors import InputError

    for name in ("max_tokens", "max_cost_usd", "max_seconds"):
        value = getattr(settings, name, None)
        if value is not None and not (_finite(value) and value > 0):
            raise InputError(f"{name} must be a positive finite number, got {value!r} (omit "
                             "it for no limit)")
    temperature = getattr(settings, "temperature", 0.0)
    if not (_finite(temperature) and 0 <= temperature <= MAX_TEMPERATURE):
        raise InputError(f"temperature must be between 0 and {MAX_TEMPERATURE:g}, got "
                         f"{temperature!r}")


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
