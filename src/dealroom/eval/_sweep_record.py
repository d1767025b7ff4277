"""``sweep.json``: a sweep folder's typed, versioned index (docs/evaluation.md, "Logged metrics").

A TypedDict (plain JSON on disk, a plain dict in memory) read through :data:`SWEEP_MIGRATIONS`
and validated: a key older files lack is allowed, a key present has its type (an InputError
naming the file and the key). Written only after :func:`check_sweep_written`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from dealroom._util.files import read_json
from dealroom._util.records import Migration, Record, migrate
from dealroom.errors import ConfigError
from dealroom.runs import ModelRecord

SWEEP_JSON = "sweep.json"
SWEEP_VERSION = 1
"""Format version of ``sweep.json`` written now."""
SWEEP_MIGRATIONS: dict[int, Migration] = {}
"""Version N → the function that turns a ``sweep.json`` of version N into one of N + 1
(none yet: version 1 is current)."""

_CONFIG = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)


@with_config(_CONFIG)
class SweepRoomRecord(TypedDict, total=False):
    """One room of the sweep (``rooms[]``)."""

    name: str
    """Unique within the sweep: the episodes' first folder level."""
    path: str
    """The room folder, absolute."""
    generated: dict[str, Any] | None
    """The generator's arguments for a room the sweep generated, the secret as
    ``secret_sha256`` (its digest: the secret stays in the spec and in the room's
    ``answer_key/generation.json``); null for a room folder."""


@with_config(_CONFIG)
class EpisodeTiming(TypedDict, total=False):
    """Seconds an episode's last attempt spent running and judging."""

    run_s: float
    """Seconds running (or resuming) the episode."""
    judge_s: float
    """Seconds judging it."""


@with_config(_CONFIG)
class EpisodeEntry(TypedDict, total=False):
    """One episode of the index (``episodes[]``): its spec, then how it stands."""

    id: str
    """``<room>/<root>__<sub>/d<depth>-T<T>-s<seed>``: its run folder under ``episodes/``."""
    room: str
    """The room's name in the sweep."""
    room_path: str
    """The room folder."""
    root: str
    """The root policy as the spec names it."""
    sub: str | None
    """The sub-agent policy as the spec names it."""
    depth: int
    """Recursion depth of the policy."""
    max_turns: int
    """Root turn budget T."""
    seed: int
    """The sample's seed."""
    root_spec: str
    """The spec the root ran with: the policy with the sample's seed."""
    sub_spec: str | None
    """The spec the sub-agent ran with."""
    options: dict[str, Any]
    """Its harness settings."""
    by_turn: bool
    """Also judged turn by turn (the episodes at the largest T)."""
    status: str
    """``pending``, ``done`` or ``failed``."""
    run_status: str | None
    """``run_end``'s status."""
    pass_rate: float | None
    """``scores.json``'s ``pass_rate`` once judged."""
    all_pass: bool | None
    """``scores.json``'s ``all_pass`` once judged."""
    error: str | None
    """Why the episode failed."""
    attempts: int
    """Times a worker took the episode up."""
    resumed: int
    """Times it was resumed after an interruption."""
    seconds: float | None
    """Seconds the last attempt took."""
    timing: EpisodeTiming | None
    """``run_s``, ``judge_s`` of the last attempt."""
    models: dict[str, ModelRecord] | None
    """Role → which endpoint and model played it: its run's ``config.json`` ``models``
    (docs/architecture.md), once it ran; absent in older sweeps."""


@with_config(_CONFIG)
class SweepRecord(TypedDict, total=False):
    """The keys of ``sweep.json``: the spec, its rooms, and the episode index with each
    episode's status, rewritten atomically as episodes finish."""

    version: int
    """Format version of this file (:data:`SWEEP_VERSION`); files without it are 1."""
    spec: dict[str, Any]
    """The spec as loaded (a generator secret as its digest)."""
    spec_file: str
    """The spec file, absolute."""
    models: str | None
    """The models file the spec names, absolute; null when none."""
    created_at: str
    """UTC time the sweep was first prepared, ISO 8601."""
    updated_at: str
    """UTC time of this rewrite."""
    rooms: list[SweepRoomRecord]
    """The sweep's rooms."""
    counts: dict[str, int]
    """Episodes by status."""
    episodes: list[EpisodeEntry]
    """The episode index."""


SWEEP_RECORD: Record[SweepRecord] = Record(
    SweepRecord, damaged="the sweep folder is damaged or was edited")


def read_sweep(path: Path) -> SweepRecord:
    """``sweep.json`` at ``path``, brought to :data:`SWEEP_VERSION` and validated."""
    data = read_json(path, ConfigError, "")
    if isinstance(data, dict):
        try:
            data = migrate(data, SWEEP_VERSION, SWEEP_MIGRATIONS)
        except ConfigError as exc:
            raise ConfigError(f"{path} has {exc}") from None
    return SWEEP_RECORD.read(data, str(path))


def check_sweep_written(record: SweepRecord) -> None:
    """Raise ValueError unless ``record`` is a whole ``sweep.json`` of today."""
    SWEEP_RECORD.check_written(record, SWEEP_JSON, SweepRecord.__annotations__)
