"""``config.json``: how a run was configured, written once, atomically, when it starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import with_config
from typing_extensions import TypedDict

from dealroom._util.records import migrate
from dealroom.runs._events import RECORD_CONFIG

RUN_VERSION = 1
"""Format version of run folders (``config.json`` and the trajectory events) written now."""


@with_config(RECORD_CONFIG)
class ForkedFrom(TypedDict):
    """Where a forked run (``dealroom resume RUN --from-turn J --out NEW``) came from."""

    run: str
    """The source run folder, absolute."""
    turn: int
    """The root turn J after which the new policy took over (it played turn J + 1 on)."""
    events: int
    """How many events of the source were copied: this run's events with ``seq`` below it
    are the source's first J turns, replayed, not played again."""
    root: str | None
    """The source's root model (spec name): the policy that played turns 1..J."""


@with_config(RECORD_CONFIG)
class BudgetMixLabel(TypedDict):
    """The BudgetMix plan entry a run follows (``dealroom budgetmix audit`` checks it)."""

    plan: str
    """The plan's ``id`` (a digest of its entries)."""
    step: int
    """The training step of the entry (0-based)."""
    group: int
    """The group within the step (0-based)."""


@with_config(RECORD_CONFIG)
class RunConfig(TypedDict, total=False):
    """The keys of ``config.json``: enough to rebuild the run (``dealroom resume`` does).
    Validated on read (every key optional, as older folders lack later ones; a key present
    has its type, the names of models and the room may be null), after
    :func:`migrate_config`."""

    version: int
    """Format version of the run folder (:data:`RUN_VERSION`); folders without it are 1."""
    harness: str
    """The registered harness that ran: ``rlm``, ``toolloop``; ``repl`` for a REPL session."""
    room: str | None
    """The room folder, as an absolute path."""
    root: str | None
    """The root model's spec name (absent for a REPL session)."""
    sub: str | None
    """The sub-agent model's spec name (absent for harnesses without sub-agents)."""
    settings: dict[str, Any]
    """The harness's settings dataclass as a dict (``RLMSettings``, ``ToolLoopSettings``)."""
    models: dict[str, dict[str, Any]]
    """Each model's spec name → its prices (``Prices``), for cost accounting."""
    deliverables: dict[str, str]
    """Deliverable name → file name in ``output/``: the task's when the run started. Absent in
    older runs (``{"memo": "memo.md"}``)."""
    simulators: list[str]
    """Spec names of the run's models that are simulators, not models (the ``oracle``
    sub-agent answers from the answer key): their ``model_call`` events are simulated."""
    concurrency: int | None
    """Parallel calls per endpoint the run was started with (None: each model's default);
    ``dealroom resume`` opens the models with it again. Absent in older runs (None)."""
    started_at: str | None
    """UTC start time, ISO 8601 to the second."""
    forked_from: ForkedFrom
    """Only in a fork (``dealroom resume RUN --from-turn J --out NEW``): ``{run, turn, events,
    root}``, the source run, the root turn J after which the new policy took over, how many of
    the source's events were copied (those with a smaller ``seq`` are turns 1..J, replayed),
    and the source's root."""
    budgetmix: BudgetMixLabel
    """Only in a run of a BudgetMix plan: ``{plan, step, group}``, the plan's ``id`` and the
    entry the run follows (``dealroom budgetmix audit`` checks it)."""


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""Version N → the function that turns a ``config.json`` of version N into one of N + 1 (and
rewrites what else of the folder it must). Version 1 is the first: a folder without
``version`` is 1, and none is older. The next format change adds ``MIGRATIONS[1]`` here and
raises :data:`RUN_VERSION` to 2."""


def migrate_config(data: dict[str, Any]) -> dict[str, Any]:
    """``config.json`` as the current version (:data:`RUN_VERSION`) reads it: each migration
    from the folder's version on applied in turn (none yet: version 1 is current). A version
    newer than this dealroom's, or not a number, is a ConfigError.

    >>> migrate_config({"harness": "rlm"})["version"]
    1
    """
    return migrate(data, RUN_VERSION, MIGRATIONS)
