"""``run_agent`` and ``resume_run``: the Python API behind ``dealroom run`` and ``resume``.

Harnesses register by name (``rlm``, ``toolloop``) in the ``dealroom.harnesses`` entry-point
group, loaded lazily through the hook providers and judges use; built-ins are registered the
same way as third-party code. Each entry is a :class:`~dealroom.harness.Harness`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.plugins import Registry
from dealroom.errors import ConfigError, InputError
from dealroom.harness._common import RunResult, config_extra, run_config
from dealroom.harness._deliver import check_deliverables
from dealroom.harness._protocol import Harness, HarnessSettings, Listener
from dealroom.harness._subs import SubModels, sub_roles
from dealroom.runs import BudgetMixLabel, RunFolder, fork_point, fork_run_folder

if TYPE_CHECKING:
    from typing import TypeAlias

    from dealroom.models import ModelClient

    SubSpec: TypeAlias = "str | ModelClient | Mapping[str, str | ModelClient] | None"
    """One sub-agent model (named ``default``), or name → model (the first is the default)."""

GROUP = "dealroom.harnesses"
BUILTIN_HARNESSES = {
    "rlm": "dealroom.harness.rlm._run:HARNESS",
    "toolloop": "dealroom.harness.toolloop._loop:HARNESS",
}
HARNESSES = Registry(GROUP, BUILTIN_HARNESSES, "harness")


def harness_names() -> list[str]:
    """Every registered harness, built-in and installed."""
    return HARNESSES.names()


def get_harness(name: str) -> Harness:
    """The harness registered as ``name``; a ConfigError lists the known ones."""
    harness = HARNESSES.load(name)
    if not isinstance(harness, Harness):
        raise ConfigError(f"harness {name!r} does not provide the Harness protocol "
                          "(name, settings, uses_sub, scripted_root, run, resume)")
    return harness


@contextlib.asynccontextmanager
async def open_models(harness: Harness, root: str | ModelClient,
                      sub: SubSpec, *, models_file: Path | None = None,
                      concurrency: int | None = None, room: Path | None = None,
                      ) -> AsyncIterator[tuple[ModelClient, ModelClient | None]]:
    """Open (and preflight) the root and sub-agent clients; spec strings or ready clients.

    ``scripted:KEY=VALUE,...`` gives the options to the harness's scripted root. A client
    with ``check_room`` (the oracle) is asked whether it can work on ``room``."""
    from dealroom.models import check, open_model, resolve_model_spec

    opened: list[ModelClient] = []

    async def one(spec: str | ModelClient, role: str) -> ModelClient:
        if isinstance(spec, str):
            resolved = resolve_model_spec(spec, models_file=models_file, role=role)
            if resolved.kind == "scripted":
                return harness.scripted_root(**resolved.options)
            client = open_model(resolved, concurrency=concurrency)
            opened.append(client)
            await check(client)
            if (probe := getattr(client, "server_facts", None)) is not None:
                await probe()  # the server's window and count, before anything is sized
        else:
            client = spec
        check_room = getattr(client, "check_room", None)
        if room is not None and check_room is not None:
            check_room(Path(room))
        return client

    try:
        root_client = await one(root, "root")
        sub_client = await one(sub, "sub") if harness.uses_sub and sub is not None and \
            not isinstance(sub, Mapping) else None
        if harness.uses_sub and isinstance(sub, Mapping):  # named sub-agents, the first default
            sub_client = SubModels({name: await one(spec, "sub") for name, spec in sub.items()})
        yield root_client, sub_client
    finally:
        for client in opened:
            await client.aclose()


async def run_agent_async(room: Path, out: Path, *, harness: str = "rlm",
                          root: str | ModelClient = "scripted",
                          sub: SubSpec = "local",
                          models_file: Path | None = None, concurrency: int | None = None,
                          listeners: tuple[Listener, ...] = (),
                          budgetmix: BudgetMixLabel | None = None, **options: Any) -> RunResult:
    """Run ``harness`` on ``room`` into the new run folder ``out`` (see :func:`run_agent`)."""
    from dealroom.room import load_instructions

    impl = get_harness(harness)
    settings = _settings(impl, options)
    if getattr(settings, "max_cost_usd", None) is not None:
        _require_prices(impl, root, sub, models_file)
    _check_budgetmix(budgetmix)
    RunFolder.check_new(Path(out))  # before any model is opened
    check_deliverables(load_instructions(Path(room)).deliverables)
    async with open_models(impl, root, sub, models_file=models_file, concurrency=concurrency,
                           room=Path(room)) as (root_client, sub_client):
        with config_extra(budgetmix=budgetmix):
            return await impl.run(Path(room), Path(out), root=root_client, sub=sub_client,
                                  settings=settings, listeners=listeners,
                                  concurrency=concurrency)


def run_agent(room: Path, out: Path, *, harness: str = "rlm",
              root: str | ModelClient = "scripted", sub: SubSpec = "local",
              models_file: Path | None = None, concurrency: int | None = None,
              listeners: tuple[Listener, ...] = (),
              budgetmix: BudgetMixLabel | None = None, **options: Any) -> RunResult:
    """Run an agent on a room and write a run folder; the sync front door.

    ``harness``: ``rlm`` (default) or ``toolloop``; ``root``/``sub``: model specs (a models-file
    name, ``local``, ``scripted`` or ``scripted:KEY=VALUE,...``, ``oracle``, ``MODEL@BASE_URL``)
    or open clients; ``concurrency``: parallel calls per endpoint (recorded; ``resume_run``
    uses it again); ``budgetmix``: the BudgetMix plan entry the run follows,
    ``{plan, step, group}``, recorded in ``config.json`` (see
    ``dealroom.eval.BudgetMixPlan.run_options``); the remaining keyword arguments are the
    harness's settings (``depth``, ``max_turns``, ``max_cost_usd``, ...).
    """
    return asyncio.run(run_agent_async(
        room, out, harness=harness, root=root, sub=sub, models_file=models_file,
        concurrency=concurrency, listeners=listeners, budgetmix=budgetmix, **options))


async def resume_run_async(run_dir: Path, *, root: str | ModelClient | None = None,
                           sub: SubSpec = None,
                           models_file: Path | None = None, concurrency: int | None = None,
                           listeners: tuple[Listener, ...] = (),
                           allow_model_change: bool = False) -> RunResult:
    """Finish an interrupted run with the models (and concurrency) it was started with, or
    the ones given; a model that is now another endpoint or model id than the run recorded
    is refused unless ``allow_model_change`` (see :func:`check_same_models`)."""
    folder = RunFolder.open(run_dir)
    check_deliverables(folder.deliverables)  # before any model is opened
    check_same_room(folder, folder.events())
    config = folder.config
    impl = get_harness(config.get("harness", "rlm"))
    root = root or config.get("root")
    sub = sub or config.get("subs") or config.get("sub")
    if not root:
        raise ConfigError(f"{run_dir} names no root model in its config: pass root=")
    if concurrency is None:
        concurrency = config.get("concurrency")
    async with open_models(impl, root, sub, models_file=models_file, concurrency=concurrency,
                           room=folder.room) as (root_c, sub_c):
        if not allow_model_change:
            check_same_models(folder, {"root": root_c, **sub_roles(sub_c)})
        return await impl.resume(Path(run_dir), root=root_c, sub=sub_c, listeners=listeners)


def check_same_models(folder: RunFolder, clients: dict[str, ModelClient | None]) -> None:
    """Raise ConfigError when a model opened to continue ``folder`` is another endpoint or
    model id than the one its ``config.json`` records for that role (the models file may have
    changed since): continuing would mix two models' work in one run."""
    from dealroom.models import model_change, model_record

    recorded = folder.config.get("models") or {}
    for role, client in clients.items():
        if client is None:
            continue
        change = model_change(recorded.get(role), dict(model_record(client)))
        if change is not None:
            raise ConfigError(
                f"{folder.path} was run with another {role} model than {client.name!r} is now "
                f"({change}): continuing would mix two models in one run. Point the spec back "
                "at the recorded endpoint, or pass --allow-model-change (allow_model_change="
                "True) to continue anyway")


def check_same_room(folder: RunFolder, events: list[dict[str, Any]],
                    room: Path | None = None) -> None:
    """Raise InputError when the room ``config.json`` names is not the one the run recorded
    at its start: another number of documents, or both another name and another token count
    (a room moved or ingested again keeps its documents and tokens, not always its name).
    Replaying a run's records against another room would mix the two."""
    from dealroom.room import load_manifest

    start = next((e for e in events if e.get("type") == "run_start"
                  and e.get("agent", "root") == "root"), None)
    if start is None:
        return
    room = folder.room if room is None else room
    manifest = load_manifest(room)
    docs, tokens = len(manifest.documents), manifest.totals()["tokens"]
    if start.get("docs") != docs or (start.get("room") != manifest.name
                                     and start.get("tokens") != tokens):
        raise InputError(f"{folder.path}/config.json names the room {room} "
                         f"({manifest.name!r}, {docs} documents), but the run was recorded on "
                         f"{start.get('room')!r} ({start.get('docs')} documents): give the run "
                         "its own room back in config.json")


def resume_run(run_dir: Path, *, root: str | ModelClient | None = None,
               sub: SubSpec = None, models_file: Path | None = None,
               concurrency: int | None = None, listeners: tuple[Listener, ...] = (),
               allow_model_change: bool = False) -> RunResult:
    """Finish an interrupted run; completed model calls are replayed from its records. A
    model that is now another endpoint or model id than recorded is refused unless
    ``allow_model_change``."""
    return asyncio.run(resume_run_async(run_dir, root=root, sub=sub, models_file=models_file,
                                        concurrency=concurrency, listeners=listeners,
                                        allow_model_change=allow_model_change))


def _require_prices(impl: Harness, root: str | ModelClient, sub: SubSpec,
                    models_file: Path | None) -> None:
    """``--max-cost`` governs the root and the sub-agents: each must have prices."""
    from dealroom.models import require_prices, resolve_model_spec

    subs = list(sub.values()) if isinstance(sub, Mapping) else [sub]
    governed = [(root, "root")] + ([(s, "sub") for s in subs]
                                   if impl.uses_sub and sub is not None else [])
    require_prices([
        resolve_model_spec(m, models_file=models_file, role=role) if isinstance(m, str) else m
        for m, role in governed
    ])
async def fork_run_async(run_dir: Path, from_turn: int, out: Path, *,
                         root: str | ModelClient | None = None,
                         sub: SubSpec = None, models_file: Path | None = None,
                         concurrency: int | None = None, listeners: tuple[Listener, ...] = (),
                         allow_model_change: bool = False, **options: Any) -> RunResult:
    """Fork ``run_dir`` after root turn ``from_turn`` into the new run folder ``out`` and play
    on with ``root`` (default: the run's own), within the same budget (see :func:`fork_run`)."""
    source = RunFolder.open(run_dir)
    config = source.config
    if config.get("harness") == "repl":
        raise ConfigError(f"{run_dir} is a REPL session: it has no root policy to continue")
    impl = get_harness(config.get("harness", "rlm"))
    recorded = config.get("settings", {})
    unknown = sorted(set(recorded) - set(impl.settings.__dataclass_fields__))
    if unknown:
        raise ConfigError(f"{run_dir} records settings this dealroom does not know "
                          f"({', '.join(unknown)}): fork it with the version that started it")
    given = {k: v for k, v in options.items() if v is not None}
    settings = _settings(impl, {**recorded, **given})
    events = source.events()
    fork_point(events, from_turn)  # before any model is opened
    check_same_room(source, events)
    if from_turn >= settings.max_turns:
        raise ConfigError(f"max_turns {settings.max_turns} leaves no turn after turn "
                          f"{from_turn}: give --max-turns above {from_turn}")
    RunFolder.check_new(Path(out))
    if Path(out).resolve().is_relative_to(source.path.resolve()):
        raise InputError(f"--out {out} is inside the run it forks ({run_dir}): give a folder "
                         "outside it")
    kept = {role for role, given in (("root", root), ("sub", sub)) if given is None}
    root = root or config.get("root")
    sub = sub or config.get("subs") or config.get("sub")
    if not root:
        raise ConfigError(f"{run_dir} names no root model in its config: pass root=")
    if concurrency is None:
        concurrency = config.get("concurrency")
    async with open_models(impl, root, sub, models_file=models_file, concurrency=concurrency,
                           room=source.room) as (root_c, sub_c):
        if not allow_model_change:  # a role given anew is the fork's point; the others not
            check_same_models(source, {role: c for role, c in {"root": root_c,
                                                               **sub_roles(sub_c)}.items()
                                       if role.partition(".")[0] in kept})
        new = run_config(impl.name, source.room, settings, root=root_c, sub=sub_c,
                         concurrency=concurrency, deliverables=source.deliverables)
        fork_run_folder(source, Path(out), from_turn, new)
        return await impl.resume(Path(out), root=root_c, sub=sub_c, listeners=listeners)


def fork_run(run_dir: Path, from_turn: int, out: Path, *,
             root: str | ModelClient | None = None, sub: SubSpec = None,
             models_file: Path | None = None, concurrency: int | None = None,
             listeners: tuple[Listener, ...] = (), allow_model_change: bool = False,
             **options: Any) -> RunResult:
    """Fork a run after root turn ``from_turn``: ``out`` gets the run's records up to there,
    the harness replays them (the REPL state is rebuilt by re-running cells 1..from_turn
    against the recorded sub-call results; no model call is repeated) and ``root`` plays turn
    ``from_turn + 1`` on, with what the source had left of its budget. ``root``/``sub``: model
    specs or open clients (default: the run's own); other keywords override its settings
    (``max_turns``, ``max_tokens``, ``max_cost_usd``, ``max_seconds``, ``temperature``, ...).
    Both harnesses fork; a REPL session (harness ``repl``) has no policy to continue. A role
    not given anew whose model is now another endpoint or model id than recorded is refused
    unless ``allow_model_change``."""
    return asyncio.run(fork_run_async(
        run_dir, from_turn, out, root=root, sub=sub, models_file=models_file,
        concurrency=concurrency, listeners=listeners, allow_model_change=allow_model_change,
        **options))


def _check_budgetmix(label: BudgetMixLabel | None) -> None:
    if label is None:
        return
    ok = (isinstance(label, dict) and set(label) == {"plan", "step", "group"}
          and isinstance(label["plan"], str)
          and all(isinstance(label[k], int) and label[k] >= 0 for k in ("step", "group")))
    if not ok:
        raise ConfigError(f"budgetmix must be {{plan: str, step: int, group: int}} (the plan "
                          f"entry the run follows), not {label!r}")


def _settings(impl: Harness, options: dict[str, Any]) -> HarnessSettings:
    given = {k: v for k, v in options.items() if v is not None}
    known = impl.settings.__dataclass_fields__
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ConfigError(
            f"{', '.join(unknown)} does not apply to the {impl.name} harness "
            f"(its settings: {', '.join(known)})"
        )
    return impl.settings(**given)
