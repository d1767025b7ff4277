"""``run_agent`` and ``resume_run``: the Python API behind ``dealroom run`` and ``resume``.

Harnesses register by name (``rlm``, ``toolloop``) in the ``dealroom.harnesses`` entry-point
group, loaded lazily through the hook providers and judges use; built-ins are registered the
same way as third-party code. Each entry is a :class:`~dealroom.harness.Harness`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from dealroom._util.plugins import Registry
from dealroom.errors import ConfigError
from dealroom.harness._common import RunResult
from dealroom.harness._deliver import check_deliverables
from dealroom.harness._protocol import Harness, Listener
from dealroom.runs import RunFolder

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
async def open_models(harness: Harness, root: str | Any, sub: str | Any | None, *,
                      models_file: Path | None = None, concurrency: int | None = None,
                      room: Path | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """Open (and preflight) the root and sub-agent clients; spec strings or ready clients.

    ``scripted:KEY=VALUE,...`` gives the options to the harness's scripted root. A client
    with ``check_room`` (the oracle) is asked whether it can work on ``room``."""
    from dealroom.models import check, open_model, resolve_model_spec

    opened: list[Any] = []

    async def one(spec: str | Any, role: str) -> Any:
        client = spec
        if isinstance(spec, str):
            resolved = resolve_model_spec(spec, models_file=models_file, role=role)
            if resolved.kind == "scripted":
                return harness.scripted_root(**resolved.options)
            client = open_model(resolved, concurrency=concurrency)
            opened.append(client)
            await check(client)
        check_room = getattr(client, "check_room", None)
        if room is not None and check_room is not None:
            check_room(Path(room))
        return client

    try:
        root_client = await one(root, "root")
        sub_client = await one(sub, "sub") if harness.uses_sub and sub is not None else None
        yield root_client, sub_client
    finally:
        for client in opened:
            await client.aclose()


async def run_agent_async(room: Path, out: Path, *, harness: str = "rlm",
                          root: str | Any = "scripted", sub: str | Any = "local",
                          models_file: Path | None = None, concurrency: int | None = None,
                          listeners: tuple[Listener, ...] = (), **options: Any) -> RunResult:
    """Run ``harness`` on ``room`` into the new run folder ``out`` (see :func:`run_agent`)."""
    from dealroom.room import load_instructions

    impl = get_harness(harness)
    settings = _settings(impl, options)
    if getattr(settings, "max_cost_usd", None) is not None:
        _require_prices(impl, root, sub, models_file)
    RunFolder.check_new(Path(out))  # before any model is opened
    check_deliverables(load_instructions(Path(room)).deliverables)
    async with open_models(impl, root, sub, models_file=models_file, concurrency=concurrency,
                           room=Path(room)) as (root_client, sub_client):
        return await impl.run(Path(room), Path(out), root=root_client, sub=sub_client,
                              settings=settings, listeners=listeners, concurrency=concurrency)


def run_agent(room: Path, out: Path, **kwargs: Any) -> RunResult:
    """Run an agent on a room and write a run folder; the sync front door.

    ``harness``: ``rlm`` (default) or ``toolloop``; ``root``/``sub``: model specs (a models-file
    name, ``local``, ``scripted`` or ``scripted:KEY=VALUE,...``, ``oracle``, ``MODEL@BASE_URL``)
    or open clients; ``concurrency``: parallel
    calls per endpoint (recorded; ``resume_run`` uses it again); the remaining keyword
    arguments are the harness's settings (``depth``, ``max_turns``, ``max_cost_usd``, ...).
    """
    return asyncio.run(run_agent_async(room, out, **kwargs))


async def resume_run_async(run_dir: Path, *, root: Any = None, sub: Any = None,
                           models_file: Path | None = None, concurrency: int | None = None,
                           listeners: tuple[Listener, ...] = ()) -> RunResult:
    """Finish an interrupted run with the models (and concurrency) it was started with, or
    the ones given."""
    folder = RunFolder.open(run_dir)
    check_deliverables(folder.deliverables)  # before any model is opened
    config = folder.config
    impl = get_harness(config.get("harness", "rlm"))
    root = root or config.get("root")
    sub = sub or config.get("sub")
    if not root:
        raise ConfigError(f"{run_dir} names no root model in its config: pass root=")
    if concurrency is None:
        concurrency = config.get("concurrency")
    async with open_models(impl, root, sub, models_file=models_file, concurrency=concurrency,
                           room=folder.room) as (root_c, sub_c):
        return await impl.resume(Path(run_dir), root=root_c, sub=sub_c, listeners=listeners)


def resume_run(run_dir: Path, **kwargs: Any) -> RunResult:
    """Finish an interrupted run; completed model calls are replayed from its records."""
    return asyncio.run(resume_run_async(run_dir, **kwargs))


def _require_prices(impl: Harness, root: str | Any, sub: str | Any | None,
                    models_file: Path | None) -> None:
    """``--max-cost`` governs the root and the sub-agents: each must have prices."""
    from dealroom.models import require_prices, resolve_model_spec

    governed = [(root, "root")] + ([(sub, "sub")] if impl.uses_sub and sub is not None else [])
    require_prices([
        resolve_model_spec(m, models_file=models_file, role=role) if isinstance(m, str) else m
        for m, role in governed
    ])


def _settings(impl: Harness, options: dict[str, Any]) -> Any:
    given = {k: v for k, v in options.items() if v is not None}
    known = impl.settings.__dataclass_fields__
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ConfigError(
            f"{', '.join(unknown)} does not apply to the {impl.name} harness "
            f"(its settings: {', '.join(known)})"
        )
    return impl.settings(**given)
