"""``config.json``: how a run was configured, written once, atomically, when it starts."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

RUN_VERSION = 1
"""Format version of run folders (``config.json`` and the trajectory events) written now."""


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


class BudgetMixLabel(TypedDict):
    """The BudgetMix plan entry a run follows (``dealroom budgetmix audit`` checks it)."""

    plan: str
    """The plan's ``id`` (a digest of its entries)."""
    step: int
    """The training step of the entry (0-based)."""
    group: int
    """The group within the step (0-based)."""


class RunConfig(TypedDict):
    """The keys of ``config.json``: enough to rebuild the run (``dealroom resume`` does)."""

    version: int
    """Format version of the run folder (:data:`RUN_VERSION`); folders without it are 1."""
    harness: str
    """The registered harness that ran: ``rlm``, ``toolloop``; ``repl`` for a REPL session."""
    room: str
    """The room folder, as an absolute path."""
    root: NotRequired[str]
    """The root model's spec name (absent for a REPL session)."""
    sub: NotRequired[str]
    """The sub-agent model's spec name (absent for harnesses without sub-agents)."""
    settings: dict[str, Any]
    """The harness's settings dataclass as a dict (``RLMSettings``, ``ToolLoopSettings``)."""
    models: dict[str, dict[str, Any]]
    """Each model's spec name → its prices (``Prices``), for cost accounting."""
    deliverables: NotRequired[dict[str, str]]
    """Deliverable name → file name in ``output/``: the task's when the run started. Absent in
    older runs (``{"memo": "memo.md"}``)."""
    simulators: list[str]
    """Spec names of the run's models that are simulators, not models (the ``oracle``
    sub-agent answers from the answer key): their ``model_call`` events are simulated."""
    concurrency: int | None
    """Parallel calls per endpoint the run was started with (None: each model's default);
    ``dealroom resume`` opens the models with it again. Absent in older runs (None)."""
    started_at: str
    """UTC start time, ISO 8601 to the second."""
    forked_from: NotRequired[ForkedFrom]
    """Only in a fork: the run and root turn it continues from."""
    budgetmix: NotRequired[BudgetMixLabel]
    """Only in a run of a BudgetMix plan: the entry it follows (written by whoever runs the
    plan, through ``run_agent(budgetmix=...)``)."""
