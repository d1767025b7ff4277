"""The Harness contract: what every harness registered in ``dealroom.harnesses`` provides."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import Field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    from dealroom.harness._common import RunResult
    from dealroom.measure import CoverageProbe
    from dealroom.models import ModelClient

Listener = Callable[[dict[str, Any], "CoverageProbe"], None]
"""Told of every event with the run's live CoverageProbe: ``listener(event, probe)``."""


class HarnessSettings(Protocol):
    """What ``run_agent`` reads of a harness's settings dataclass."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    max_turns: int

    def __init__(self, **options: Any) -> None: ...


@runtime_checkable
class Harness(Protocol):
    """An agent loop that reviews a room into a run folder.

    ``run_agent`` opens the models (``root``, and ``sub`` when :attr:`uses_sub`), builds
    :attr:`settings` from the caller's options and calls :meth:`run`; ``resume_run`` reads
    the run folder's config and calls :meth:`resume`. Both return a
    :class:`~dealroom.harness.RunResult`. Implementations start their run with
    :func:`~dealroom.harness.open_run` (or :func:`~dealroom.harness.reopen_run`), which writes
    the run folder's config and events in the one format of :mod:`dealroom.runs`.
    """

    name: str
    """The name it is registered under (``rlm``, ``toolloop``); recorded as ``harness``."""
    settings: type[HarnessSettings]
    """Its settings dataclass; every field is a ``dealroom run`` flag."""
    uses_sub: bool
    """Whether it calls a sub-agent model (then ``--sub`` is opened and passed as ``sub``)."""

    def scripted_root(self, **options: str) -> ModelClient:
        """The model that ``--root scripted`` stands for: a ScriptedModel playing its policy;
        ``options`` are those of ``scripted:KEY=VALUE,...`` (a ConfigError names one it does
        not know)."""
        ...

    async def run(self, room_dir: Path, out: Path, *, root: ModelClient, sub: ModelClient | None,
                  settings: Any, listeners: tuple[Listener, ...] = (),
                  concurrency: int | None = None) -> RunResult:
        """Review ``room_dir`` with the open clients ``root`` and ``sub`` into the new run folder
        ``out``; ``concurrency`` (the per-endpoint limit the models were opened with) is
        recorded so that a resume opens them the same way."""
        ...

    async def resume(self, run_dir: Path, *, root: ModelClient, sub: ModelClient | None,
                     listeners: tuple[Listener, ...] = ()) -> RunResult:
        """Finish the interrupted run in ``run_dir``, repeating no completed model call."""
        ...
