"""The budget and sampling fields that every harness's settings share, as schema types."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_TEMPERATURE = 2.0
"""The highest sampling temperature the OpenAI-compatible API takes."""
_NO_LIMIT = {"why": "omit it for no limit"}

TokenLimit = Annotated[int, Field(gt=0, json_schema_extra=_NO_LIMIT)]
"""A token budget: a positive integer (None: no limit)."""
Limit = Annotated[float, Field(gt=0, allow_inf_nan=False, json_schema_extra=_NO_LIMIT)]
"""A dollar or seconds budget: a positive finite number (None: no limit)."""
Temperature = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
"""A sampling temperature, 0 to 2 (MAX_TEMPERATURE)."""
