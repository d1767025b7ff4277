"""``config.json``: how a run was configured, written once, atomically, when it starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import with_config
from typing_extensions import TypedDict

from dealroom._util.records import migrate
from dealroom.runs._events import RECORD_CONFIG

RUN_VERSION = 2
"""Format version of run folders (``config.json`` and the trajectory events) written now:
2 since ``models`` is keyed by role and says which endpoint and model each role used."""


@with_config(RECORD_CONFIG)
class AskRecord(TypedDict):
    """The follow-up question an ask folder (``RUN/asks/N``, ``dealroom ask``) answers."""

    number: int
    """N: the run's first question is 1."""
    question: str
    """The question as asked."""
    after_turn: int
    """The run's last root turn: its turns 1..J are replayed, the question comes after."""


@with_config(RECORD_CONFIG)
class ModelRecord(TypedDict, total=False):
    """Which endpoint and model played a role (``dealroom.models.model_record``): the
    resolved spec and what the server said about itself. Secrets never: the route is the
    proxy's URL without credentials, TLS settings and headers are named, not given. A folder
    of version 1 has ``name`` and ``prices`` only."""

    name: str
    """The spec string as given (``--sub plain``: ``plain``)."""
    kind: str
    """The provider: ``openai``, ``local``, ``hf``, ``oracle``, ``scripted``, or a plug-in's."""
    model: str
    """The model id sent to the endpoint."""
    base_url: str | None
    """The endpoint's base URL (None for in-process models and the scripted root)."""
    context_window: int
    """The window the run used, in tokens."""
    context_window_from: str
    """Where it came from: ``spec`` (given), ``server`` (``max_model_len``, ``/props``),
    ``default`` (32,768: neither said), ``provider`` (the model itself, e.g. ``hf:``)."""
    prices: dict[str, float]
    """List prices in USD per 1M tokens (``Prices``), for cost accounting."""
    priced: bool
    """Whether prices were given (so a zero is a real zero)."""
    sampling: dict[str, Any]
    """Sampling settings of the spec: ``max_output_tokens``, an ``hf`` model's ``top_p``,
    ``top_k``, ``seed``..., the keys of ``extra_body`` (the run's temperature is in
    ``settings``)."""
    route: str | None
    """``direct``, or the forward proxy's URL without credentials (None: no HTTP)."""
    route_from: str | None
    """Where the proxy was set: ``proxy`` (the spec) or the environment variable's name."""
    tls: list[str]
    """Names of the TLS settings in force (``ca_bundle``, ``client_cert``, ``client_key``,
    ``verify`` when false, ``REQUESTS_CA_BUNDLE``), never their values."""
    headers: list[str]
    """Names of the extra request headers, never their values."""
    api_key_env: str | None
    """The environment variable the API key was read from (its name)."""
    source: str | None
    """The models file the spec came from."""
    server: dict[str, Any] | None
    """What the server said about itself when checked: ``{id, max_model_len, from}``
    (``from``: ``/v1/models``, ``chat``, ``/props``); None when it was not asked."""


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
    """The sub-agent model's spec name (absent for harnesses without sub-agents); with named
    sub-agents, the default's (the first)."""
    subs: dict[str, str]
    """Only in a run with named sub-agents (``--sub fast=A --sub strong=B``): name → spec
    name, the first the default; ``models`` has each as ``sub.NAME``."""
    settings: dict[str, Any]
    """The harness's settings dataclass as a dict (``RLMSettings``, ``ToolLoopSettings``)."""
    models: dict[str, ModelRecord]
    """Role (``root``, ``sub``, ``sub.NAME`` for named sub-agents) → which endpoint and model
    played it (:class:`ModelRecord`).
    Children run on the ``sub`` model, each agent's compactions on its own model; the judge's
    is in ``scores.json``."""
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
    ask: AskRecord
    """Only in an ask folder (``RUN/asks/N``, ``dealroom ask``): ``{number, question,
    after_turn}``; ``forked_from`` names the run it reopened."""
    budgetmix: BudgetMixLabel
    """Only in a run of a BudgetMix plan: ``{plan, step, group}``, the plan's ``id`` and the
    entry the run follows (``dealroom budgetmix audit`` checks it)."""


def _models_by_role(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 → 2: ``models`` (spec name → prices) becomes role → ``{name, prices}``."""
    old = data.get("models")
    if not isinstance(old, dict):
        return data
    new = {role: {"name": data[role], "prices": old[data[role]]} for role in ("root", "sub")
           if isinstance(data.get(role), str) and data[role] in old}
    named = {record["name"] for record in new.values()}
    new.update({name: {"name": name, "prices": prices} for name, prices in old.items()
                if name not in named})
    return {**data, "models": new}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _models_by_role}
"""Version N → the function that turns a ``config.json`` of version N into one of N + 1 (and
rewrites what else of the folder it must). Version 1 is the first: a folder without
``version`` is 1, and none is older."""


def model_prices(config: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Spec name → prices of each model ``config`` records (for cost accounting); reads a
    current ``models`` (role → record) and a version-1 one (name → prices) alike."""
    out: dict[str, dict[str, float]] = {}
    for key, value in (config.get("models") or {}).items():
        if isinstance(value, dict) and isinstance(value.get("prices"), dict):
            out[str(value.get("name", key))] = value["prices"]
        elif isinstance(value, dict):
            out[key] = value
    return out


def migrate_config(data: dict[str, Any]) -> dict[str, Any]:
    """``config.json`` as the current version (:data:`RUN_VERSION`) reads it: each migration
    from the folder's version on applied in turn. A version
    newer than this dealroom's, or not a number, is a ConfigError.

    >>> migrate_config({"harness": "rlm"})["version"]
    2
    """
    return migrate(data, RUN_VERSION, MIGRATIONS)
