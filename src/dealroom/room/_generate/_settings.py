"""Settings of one generated room, validated when built."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass

from dealroom.errors import ConfigError
from dealroom.room._generate._profiles import PROFILES

MAX_DOCS = 20_000
TOKENS_PER_DOC = 13_600
"""Default length: 2,270 documents make about 31M tokens, like the seeds' example room."""
MIN_TOKENS_PER_DOC = 100


@dataclass(frozen=True)
class GenerateSettings:
    """What to generate. Fields are checked in ``__post_init__``; errors say what to do."""

    docs: int = 20
    """Number of documents (1 to 20,000)."""
    seed: int = 0
    """Random seed: the same settings (secret included) always give byte-identical rooms."""
    profile: str = "bank"
    """Target-company profile: ``bank``, ``software`` or ``manufacturer``."""
    tokens: int | None = None
    """Total tokens of the room (``dealroom-words-v1``); default 13,600 per document."""
    workers: int | None = None
    """Worker processes writing documents; default one per available CPU, at most 4."""
    secret: str | None = None
    """The room's secret: every document, the rubric and the answer key depend on it as much as
    on ``seed``, so nothing an agent can see regenerates the room. ``None`` draws a fresh one
    (kept in ``answer_key/generation.json``); give it back to regenerate the same bytes."""

    def __post_init__(self) -> None:
        if self.secret is None:
            object.__setattr__(self, "secret", secrets.token_hex(16))
        if not isinstance(self.secret, str) or not self.secret.strip():
            raise ConfigError("secret must be a non-empty string (or left out to draw one)")
        if isinstance(self.docs, bool) or not isinstance(self.docs, int):
            raise ConfigError(f"docs must be a whole number, not {self.docs!r}")
        if not 1 <= self.docs <= MAX_DOCS:
            raise ConfigError(f"docs must be between 1 and {MAX_DOCS:,}, not {self.docs}")
        if self.profile not in PROFILES:
            raise ConfigError(f"unknown profile {self.profile!r}: choose one of "
                              f"{', '.join(sorted(PROFILES))}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ConfigError(f"seed must be a whole number, not {self.seed!r}")
        if self.tokens is not None:
            floor = self.docs * MIN_TOKENS_PER_DOC
            if isinstance(self.tokens, bool) or not isinstance(self.tokens, int):
                raise ConfigError(f"tokens must be a whole number, not {self.tokens!r}")
            if self.tokens < floor:
                raise ConfigError(f"tokens={self.tokens:,} is too few for {self.docs:,} documents:"
                                  f" give at least {floor:,} ({MIN_TOKENS_PER_DOC} per document)")
        if self.workers is not None and (not isinstance(self.workers, int) or self.workers < 1):
            raise ConfigError(f"workers must be a positive whole number, not {self.workers!r}")

    @property
    def key(self) -> str:
        """What seeds every random draw: ``seed`` keyed by ``secret`` (HMAC-SHA256)."""
        assert self.secret is not None  # drawn in __post_init__
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
        raise ConfigError(f"cannot read {text!r} as a count: write e.g. 31000000, 31M or 500k")
    scale = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)
