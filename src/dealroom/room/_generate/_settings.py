"""Settings of one generated room, validated when built."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from dealroom._util.schema import Schema
from dealroom.errors import ConfigError, InputError

MAX_DOCS = 20_000
TOKENS_PER_DOC = 13_600
"""Default length: 2,270 documents make about 31M tokens, like the seeds' example room."""
MIN_TOKENS_PER_DOC = 100
Profile = Literal["bank", "software", "manufacturer"]
"""The names of ``_profiles.PROFILES`` (a test keeps them the same)."""


class GenerateSettings(Schema):
    """What to generate. A bad value is an InputError naming the key, what is allowed and
    what was given; too few tokens for the documents is a ConfigError that says the least."""

    model_config = ConfigDict(frozen=True)

    docs: Annotated[int, Field(ge=1, le=MAX_DOCS)] = 20
    """Number of documents (1 to 20,000)."""
    seed: int = 0
    """Random seed: the same settings (secret included) always give byte-identical rooms."""
    profile: Profile = "bank"
    """Target-company profile: ``bank``, ``software`` or ``manufacturer``."""
    tokens: Annotated[int, Field(ge=1)] | None = None
    """Total tokens of the room (``dealroom-words-v1``); default 13,600 per document. Text
    such as ``31M`` or ``500k`` is read as a count (:func:`parse_count`)."""
    workers: Annotated[int, Field(ge=1)] | None = None
    """Worker processes writing documents; default one per available CPU, at most 4."""
    secret: Annotated[str, Field(pattern=r"\S", json_schema_extra={
        "allowed": "a non-empty string (or left out to draw one)"})] | None = Field(
        None, validate_default=True)
    """The room's secret: every document, the rubric and the answer key depend on it as much as
    on ``seed``, so nothing an agent can see regenerates the room. ``None`` draws a fresh one
    (kept in ``answer_key/generation.json``); give it back to regenerate the same bytes."""

    @field_validator("secret", mode="before")
    @classmethod
    def _draw_secret(cls, secret: Any) -> Any:
        return secrets.token_hex(16) if secret is None else secret

    @field_validator("tokens", mode="before")
    @classmethod
    def _read_count(cls, tokens: Any) -> Any:
        return parse_count(tokens) if isinstance(tokens, str) else tokens

    @model_validator(mode="after")
    def _enough_tokens(self) -> GenerateSettings:
        floor = self.docs * MIN_TOKENS_PER_DOC
        if self.tokens is not None and self.tokens < floor:
            raise ConfigError(f"tokens={self.tokens:,} is too few for {self.docs:,} documents:"
                              f" give at least {floor:,} ({MIN_TOKENS_PER_DOC} per document)")
        return self

    @property
    def key(self) -> str:
        """What seeds every random draw: ``seed`` keyed by ``secret`` (HMAC-SHA256)."""
        assert self.secret is not None  # drawn when built
        return hmac.new(self.secret.encode(), f"dealroom-room:{self.seed}".encode(),
                        hashlib.sha256).hexdigest()

    @property
    def total_tokens(self) -> int:
        return self.tokens if self.tokens is not None else self.docs * TOKENS_PER_DOC

    @property
    def worker_count(self) -> int:
        if self.workers is not None:
            return self.workers
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            cpus = os.cpu_count() or 1
        return max(1, min(4, cpus))


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMbB]?)\s*$")


def parse_count(text: str | int) -> int:
    """``80M`` → 80,000,000; ``500k`` → 500,000; plain integers (commas and ``_`` allowed)."""
    if isinstance(text, int):
        return text
    match = _SIZE.match(str(text).replace(",", "").replace("_", ""))
    if not match:
        raise InputError(f"cannot read {text!r} as a count: write e.g. 31000000, 31M or 500k")
    scale = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)
