"""``run_agent`` and ``resume_run``: the Python API behind ``dealroom run`` and ``resume``.

Harnesses register by name (``rlm``, ``toolloop``) in the ``dealroom.harnesses`` entry-point
group, loaded lazily; built-ins use the same hook as third-party code.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError
from dealroom.harness._common import RunResult

GROUP = "dealroom.harnesses"
BUILTIN_HARNESSES = {
    "rlm": "dealroom.harness.rlm._run:HARNESS",
    "toolloop": "dealroom.harness.toolloop._loop:HARNESS",
}
Listener = Callable[[dict[str, Any], Any], None]


def harness_names() -> list[str]:
    """Every registered harness, built-in and installed."""
    return sorted(_entry_points())


def get_harness(name: str) -> Any:
    entry = _entry_points().get(name)
    if entry is None:
        raise ConfigError(f"unknown harness {name!r}: choose one of {', '.join(harness_names())}")
    return entry.load()


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    found = {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUP)}
    for name, value in BUILTIN_HARNESSES.items():
        found[name] = importlib.metadata.EntryPoint(name, value, GROUP)
    return found


@contextlib.asynccontextmanager
async def open_models(harness: Any, root: str | Any, sub: str | Any | None, *,
                      models_file: Path | None = None,
                      concurrency: int | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """Open (and preflight) the root and sub-agent clients; spec strings or ready clients."""
    from dealroom.models import check, open_model, resolve_model_spec

    opened: list[Any] = []

    async def one(spec: str | Any, role: str) -> Any:
        if not isinstance(spec, str):
            return spec
        if resolve_model_spec(spec, models_file=models_file, role=role).kind == "scripted":
            return harness.scripted_root()
        client = open_model(spec, models_file=models_file, role=role, concurrency=concurrency)
        opened.append(client)
        await check(client)
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
    from dealroom.eval._runlog import refuse_used_run_dir

    impl = get_harness(harness)
    settings = _settings(impl, options)
    if getattr(settings, "max_cost_usd", None) is not None:
        _require_prices(impl, root, sub, models_file)
    refuse_used_run_dir(Path(out))  # before any model is opened
    async with open_models(impl, root, sub, models_file=models_file,
                           concurrency=concurrency) as (root_client, sub_client):
        return await impl.run(Path(room), Path(out), root=root_client, sub=sub_client,
                              settings=settings, listeners=listeners)


def run_agent(room: Path, out: Path, **kwargs: Any) -> RunResult:
    """Run an agent on a room and write a run folder; the sync front door.

    ``harness``: ``rlm`` (default) or ``toolloop``; ``root``/``sub``: model specs (a models-file
    name, ``local``, ``scripted``, ``MODEL@BASE_URL``) or open clients; the remaining keyword
    arguments are the harness's settings (``depth``, ``max_turns``, ``max_cost_usd``, ...).
    """
    return asyncio.run(run_agent_async(room, out, **kwargs))


async def resume_run_async(run_dir: Path, *, root: Any = None, sub: Any = None,
                           models_file: Path | None = None,
                           listeners: tuple[Listener, ...] = ()) -> RunResult:
    """Finish an interrupted run with the models it was started with (or the ones given)."""
    from dealroom.eval import RunLog

    log = RunLog.read(run_dir)
    impl = get_harness(log.config.get("harness", "rlm"))
    if not hasattr(impl, "resume"):
        raise ConfigError(f"the {impl.name} harness cannot resume runs")
    root = root or log.config["root"]
    sub = sub or log.config.get("sub")
    async with open_models(impl, root, sub, models_file=models_file) as (root_c, sub_c):
        return await impl.resume(Path(run_dir), root=root_c, sub=sub_c, listeners=listeners)


def resume_run(run_dir: Path, **kwargs: Any) -> RunResult:
    """Finish an interrupted run; completed model calls are replayed from its records."""
    return asyncio.run(resume_run_async(run_dir, **kwargs))


def _require_prices(impl: Any, root: str | Any, sub: str | Any | None,
                    models_file: Path | None) -> None:
    """``--max-cost`` governs the root and the sub-agents: each must have prices."""
    from dealroom.models import require_prices, resolve_model_spec

    governed = [(root, "root")] + ([(sub, "sub")] if impl.uses_sub and sub is not None else [])
    require_prices([
        resolve_model_spec(m, models_file=models_file, role=role) if isinstance(m, str) else m
        for m, role in governed
    ])


def _settings(impl: Any, options: dict[str, Any]) -> Any:
    given = {k: v for k, v in options.items() if v is not None}
    known = impl.settings.__dataclass_fields__
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ConfigError(
            f"{', '.join(unknown)} does not apply to the {impl.name} harness "
            f"(its settings: {', '.join(known)})"
        )
    return impl.settings(**given)
