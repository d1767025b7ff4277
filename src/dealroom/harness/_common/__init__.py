"""What every harness's run shares: opening the run, fanning out its events, finishing it."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dealroom.errors import ConfigError
from dealroom.harness._deliver import Deliverables, check_deliverables
from dealroom.harness._protocol import HarnessSettings, Listener
from dealroom.harness._subs import named_specs, sub_roles
from dealroom.runs import Metrics, RunFolder, RunRecorder, check_fork_copied
from dealroom.types import Usage

if TYPE_CHECKING:
    from dealroom.measure import CoverageProbe
    from dealroom.models import ModelClient
    from dealroom.room import Instructions, Room

S = TypeVar("S", bound=HarnessSettings)


@dataclass
class RunResult:
    """Where a run is and how it ended."""

    run_dir: Path
    status: str
    reason: str
    turns: int
    memo_path: Path
    """The main deliverable (``output/memo.md`` unless the task names others)."""
    metrics: Metrics
    """``metrics.json`` as written."""
    deliverables: dict[str, Path] = field(default_factory=dict)
    """Every deliverable's name → its file in ``output/``."""


@dataclass
class RunEvents:
    """Where a run's events go: the recorder first, then the coverage probe, then listeners."""

    recorder: RunRecorder
    probe: CoverageProbe
    """The run's live CoverageProbe; it sees every event before the listeners do."""
    listeners: tuple[Listener, ...] = ()
    """Callables ``(event, probe)`` told of every event, e.g. the CLI's live display."""

    def emit(self, type: str, agent: str = "root", depth: int = 0,
             **fields: Any) -> dict[str, Any]:
        """Record one event and tell the probe and the listeners."""
        event = self.recorder.event(type, agent=agent, depth=depth, **fields)
        self.probe.observe_event(event)
        for listener in self.listeners:
            listener(event, self.probe)
        return event


@dataclass
class OpenRun:
    """A run under way: its room, folder, instructions and event sink."""

    room: Room
    """The open :class:`~dealroom.room.Room`."""
    folder: RunFolder
    instructions: Instructions
    """The task's :class:`~dealroom.room.Instructions` (never its rubric)."""
    events: RunEvents
    deliverables: Deliverables
    """Writes ``output/``: each deliverable under the task's file name, in its format."""
    previous: list[dict[str, Any]] = field(default_factory=list)
    """The events of the interrupted attempt(s) a resumed run continues."""

    def settings(self, cls: type[S]) -> S:
        """The harness settings ``cls`` recorded in ``config.json``."""
        recorded = self.folder.config.get("settings", {})
        unknown = sorted(set(recorded) - set(cls.__dataclass_fields__))
        if unknown:
            raise ConfigError(f"{self.folder.path} records settings this dealroom does not "
                              f"know ({', '.join(unknown)}): resume it with the version that "
                              "started it")
        return cls(**recorded)

    def spent(self) -> tuple[Usage, float]:
        """What the earlier attempts (or a fork's source, up to its turn) spent: the usage of
        their model calls and their seconds; a resumed run's budget counts them as used."""
        usage = sum((Usage.from_dict(e.get("usage") or {}) for e in self.previous
                     if e.get("type") in ("model_call", "compaction")), Usage())
        return usage, float(self.previous[-1].get("t", 0.0)) if self.previous else 0.0

    def inherited_subs(self) -> set[str]:
        """Call ids of the sub-calls a fork copied from its source: its fixture, not calls
        this run made, so they do not count towards ``degraded``."""
        forked = self.folder.config.get("forked_from")
        copied = self.previous[:forked["events"] if forked else 0]
        return {e["call_id"] for e in copied
                if e.get("type") == "model_call" and e.get("role") == "sub"}

    def finish(self, status: str, reason: str, turns: int) -> RunResult:
        """Close the trajectory and write ``metrics.json`` from the events in memory."""
        from dealroom.measure import run_metrics

        recorder = self.events.recorder
        recorder.close()
        self.deliverables.finish()
        events = self.previous + recorder.written
        metrics = run_metrics(dict(self.folder.config), events, run=self.folder.name,
                              room=self.events.probe)
        self.folder.write_metrics(metrics)
        return RunResult(self.folder.path, status, reason, turns, self.folder.memo_path, metrics,
                         self.deliverables.paths)


_CONFIG_EXTRA: ContextVar[dict[str, Any] | None] = ContextVar("dealroom_config_extra",
                                                              default=None)
"""Keys ``run_agent`` adds to the config of the run it starts (``budgetmix``)."""


@contextlib.contextmanager
def config_extra(**keys: Any) -> Iterator[None]:
    """Within this block, :func:`open_run` writes ``keys`` into the new run's ``config.json``
    (``run_agent(budgetmix=...)`` uses it, so that no harness has to pass them on)."""
    token = _CONFIG_EXTRA.set({k: v for k, v in keys.items() if v is not None})
    try:
        yield
    finally:
        _CONFIG_EXTRA.reset(token)


async def open_run(harness: str, room_dir: Path, out: Path, *, root: ModelClient,
                   sub: ModelClient | None = None, settings: HarnessSettings,
                   listeners: tuple[Listener, ...] = (),
                   concurrency: int | None = None) -> OpenRun:
    """Open the room, create the run folder ``out`` with its config, start the coverage probe
    and record ``run_start``. ``root`` and ``sub`` are the open clients (``sub`` None for a
    harness without sub-agents). A deliverable dealroom cannot write (a ``.pdf``) is refused
    before the folder is made."""
    from dealroom.measure import CoverageProbe
    from dealroom.room import Room, load_instructions

    room = Room.open(room_dir)
    instructions = load_instructions(room_dir)
    check_deliverables(instructions.deliverables)
    probe = CoverageProbe(room)  # its index is read on first use, or sooner by the harness
    config = run_config(harness, room_dir, settings, root=root, sub=sub, concurrency=concurrency,
                        deliverables=instructions.deliverables)
    folder = RunFolder.create(out, {**config, **(_CONFIG_EXTRA.get() or {})})
    events = RunEvents(RunRecorder(folder), probe, tuple(listeners))
    counts = {role: str(getattr(m, "counts_source", "")) for role, m in (("root", root),
                                                                       ("sub", sub))
              if isinstance(getattr(m, "counts_source", None), str)}
    events.emit("run_start", room=room.name, docs=room.totals["docs"],
                tokens=room.totals["tokens"], room_digest=room_digest(room_dir),
                counts_source=counts,
                warnings=estimate_warnings(settings, counts))
    return OpenRun(room, folder, instructions, events, Deliverables(folder))


def room_digest(room: Path) -> str:
    """SHA-256 over the room's documents (id, path, file hash): another room, or one whose
    documents changed, has another digest."""
    import hashlib

    from dealroom.room import load_manifest

    digest = hashlib.sha256()
    for doc in sorted(load_manifest(room).documents, key=lambda d: d.id):
        digest.update(f"{doc.id}\t{doc.path}\t{doc.sha256}\n".encode())
    return digest.hexdigest()


def estimate_warnings(settings: HarnessSettings, counts: dict[str, str]) -> list[str]:
    """A token or cost budget that will be enforced on words-v1 estimates says so: for each
    served model whose server counts no tokens (its usage, where it reports none, is a
    guess)."""
    budgets = [name for name, key in (("token", "max_tokens"), ("cost", "max_cost_usd"))
               if getattr(settings, key, None) is not None]
    if not budgets:
        return []
    return [f"the {role} model's server counts no tokens: where it reports no usage, the "
            f"{' and '.join(budgets)} budget is enforced on words-v1 estimates"
            for role, source in counts.items() if source == "estimate"]


async def reopen_run(run_dir: Path, *, listeners: tuple[Listener, ...] = ()) -> OpenRun:
    """Continue an interrupted run: its room and probe as they were, ``resumed`` recorded."""
    from dealroom.measure import CoverageProbe
    from dealroom.room import Room, load_instructions

    folder = RunFolder.open(run_dir)
    previous = folder.events()
    check_fork_copied(folder, previous)
    if RunFolder.ended(previous):
        raise ConfigError(f"{run_dir} already finished; start a new run instead")
    room = Room.open(folder.room)
    deliverables = Deliverables(folder)  # as the run started (memo.md for older runs)
    instructions = replace(load_instructions(room.path), deliverables=deliverables.files)
    probe = CoverageProbe(room)
    await asyncio.to_thread(probe.observe_events, previous)
    events = RunEvents(RunRecorder.reopen(folder, previous), probe, tuple(listeners))
    events.emit("resumed", previous_events=len(previous))
    return OpenRun(room, folder, instructions, events, deliverables, previous)


def run_config(harness: str, room_dir: Path, settings: HarnessSettings, *,
               root: ModelClient | None = None, sub: ModelClient | None = None,
               concurrency: int | None = None,
               deliverables: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``config.json`` record (:class:`~dealroom.runs.RunConfig`): enough to rebuild the run
    (each role's model: its endpoint, model id, window, route and prices; settings,
    deliverables, concurrency; which are simulators)."""
    from dealroom.models import model_record
    from dealroom.room import DEFAULT_DELIVERABLES

    roles = {role: m for role, m in (("root", root), ("sub", sub)) if m is not None}
    models = {**roles, **sub_roles(sub)}  # the default sub itself, and each named one
    return {
        "harness": harness,
        "room": str(Path(room_dir).resolve()),
        **{role: m.name for role, m in roles.items()},
        **({"subs": subs} if (subs := named_specs(sub)) else {}),
        "settings": asdict(settings),
        "models": {role: model_record(m) for role, m in models.items()},
        "simulators": sorted({m.name for m in models.values() if getattr(m, "simulator", False)}),
        "deliverables": dict(deliverables or DEFAULT_DELIVERABLES),
        "concurrency": concurrency,
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
