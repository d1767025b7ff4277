"""``dealroom eval sweep``: every episode of a spec, on a process pool or Ray, resumable.

    SWEEP/
      sweep.json        the spec, its rooms, the episode index and each episode's status,
                        attempts and ``resumed`` (times it was resumed after an interruption)
      rooms/<name>/     rooms the spec generates (sweep.json records the secret's digest only)
      episodes/<room>/<root>__<sub>/d<depth>-T<T>-s<seed>/   an ordinary run folder each
      .locks/           one lock file per episode, held while a worker works on it

The run folders are the truth: started again with the same spec, a sweep skips what is judged,
judges what ended, resumes what was interrupted (``dealroom resume``) and runs the rest; an
episode is never run twice (see :mod:`dealroom.eval._episode`). A failing episode is recorded
with its error in ``sweep.json`` and the sweep goes on; it is tried again with ``retry_failed``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from dealroom._util.files import json_safe, read_json, write_json_atomic
from dealroom._util.secrets import redact_secrets
from dealroom.errors import ConfigError
from dealroom.eval._episode import episode_dir, episode_state, outcome, run_episode
from dealroom.eval._executor import check_backend, execute
from dealroom.eval._spec import (
    ROOMS,
    EpisodeSpec,
    SweepRoom,
    SweepSpec,
    check_policies,
    episodes,
    load_spec,
    resolve_rooms,
)
from dealroom.eval._sweep_record import (
    SWEEP_JSON,
    SWEEP_VERSION,
    EpisodeEntry,
    SweepRecord,
    check_sweep_written,
    read_sweep,
)

WRITE_EVERY_S = 1.0
"""Least seconds between two rewrites of ``sweep.json`` while episodes finish."""


@dataclass
class SweepProgress:
    """Where a sweep stands, as its progress bar shows it."""

    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    pass_rates: tuple[float, ...] = ()

    @property
    def pass_rate(self) -> float:
        """Mean criteria pass rate of the judged episodes so far (NaN before any)."""
        return sum(self.pass_rates) / len(self.pass_rates) if self.pass_rates else float("nan")


@dataclass
class SweepResult:
    """What :func:`run_sweep` did."""

    path: Path
    episodes: int
    done: int
    failed: int
    skipped: int
    """Episodes that were already done when the sweep started."""
    resumed: int
    seconds: float
    """Wall time of the whole call: preparing (generating rooms, building indexes) and running."""
    workers: int
    backend: str
    statuses: dict[str, int] = field(default_factory=dict)
    """Episodes done, by their run's end status (``submitted``, ``errors``, ...): all of the
    sweep's, those done before this call included."""


Progress = Callable[[SweepProgress], None]


def run_sweep(spec_path: Path, out: Path, *, workers: int | None = None,
              backend: str = "process", address: str | None = None,
              retry_failed: bool = False, progress: Progress | None = None) -> SweepResult:
    """Run (or continue) the sweep ``spec_path`` describes in the folder ``out``."""
    workers = check_backend(backend, workers, address)  # before anything is written
    started = time.monotonic()
    plan = prepare(Path(spec_path), Path(out))
    index = plan.index
    todo = [e for e in plan.episodes
            if index[e.id]["status"] != "done" and (retry_failed or index[e.id]["status"]
                                                     != "failed")]
    skipped = sum(1 for e in plan.episodes if index[e.id]["status"] == "done")
    state = SweepProgress(total=len(plan.episodes), done=skipped,
                          failed=sum(1 for e in index.values() if e["status"] == "failed"),
                          pass_rates=tuple(rate for e in index.values()
                                           if e["status"] == "done"
                                           and (rate := e.get("pass_rate")) is not None))
    writer = _IndexWriter(plan)
    counts = {"left": len(todo), "resumed": 0}

    def finished(episode_id: str, result: dict[str, Any]) -> None:
        if result.get("did") == "failed" and "id" not in result:  # its worker died
            result = {**result, "error": f"{result['error']}; run the sweep again with "
                                         "--retry-failed to resume it"}
        entry = index[episode_id]
        state.failed -= entry["status"] == "failed"
        entry.update(cast(EpisodeEntry, {k: result.get(k) for k in (
            "status", "run_status", "pass_rate", "all_pass", "error", "seconds", "timing")}))
        if result.get("models"):
            entry["models"] = result["models"]
        entry["attempts"] = entry.get("attempts", 0) + 1
        entry["resumed"] = entry.get("resumed", 0) + (result.get("did") == "resume")
        counts["left"] -= 1
        counts["resumed"] += result.get("did") == "resume"
        state.done += result["status"] == "done"
        state.failed += result["status"] == "failed"
        if result["status"] == "done" and result.get("pass_rate") is not None:
            state.pass_rates += (result["pass_rate"],)
        state.running = min(workers, counts["left"])
        writer.write(force=result["status"] == "failed")
        if progress:
            progress(state)

    state.running = min(workers, len(todo))
    if progress:
        progress(state)
    args = _arguments(plan)
    jobs = [(e.id, (e.to_dict(), *args)) for e in _order(todo, plan)] if todo else []
    try:
        execute(run_episode, jobs, finished, workers=workers, backend=backend, address=address)
    finally:
        writer.write(force=True)
    statuses = Counter(str(e["run_status"]) for e in index.values()
                       if e["status"] == "done" and e.get("run_status"))
    return SweepResult(Path(out), len(plan.episodes), state.done, state.failed, skipped,
                       counts["resumed"], round(time.monotonic() - started, 3), workers, backend,
                       dict(sorted(statuses.items())))


# -- preparing: the spec, the rooms, the index -----------------------------------------------------


@dataclass
class SweepPlan:
    """A loaded, checked sweep: its spec, rooms, episodes and index (``id`` → entry)."""

    path: Path
    spec: SweepSpec
    rooms: list[SweepRoom]
    episodes: list[EpisodeSpec]
    index: dict[str, EpisodeEntry]
    record: SweepRecord
    """``sweep.json`` as it will be written (the index entries are ``index``'s)."""


def prepare(spec_path: Path, out: Path) -> SweepPlan:
    """Load and check the spec, refuse a folder made from another spec, generate the rooms it
    names, build their indexes and read every episode's state from its run folder."""
    from dealroom.harness import get_harness

    spec = load_spec(spec_path)
    base = spec_path.resolve().parent
    models_file = (base / spec.models) if spec.models else None
    if models_file is not None and not models_file.is_file():
        raise ConfigError(f"models: {models_file} does not exist")
    harness = get_harness(spec.harness)
    rooms = resolve_rooms(spec, base, out)
    check_policies(spec, rooms, harness, models_file)
    previous = _previous(out, spec)
    fields = set(harness.settings.__dataclass_fields__)
    eps = episodes(spec, rooms, fields, harness.uses_sub)
    _generate(rooms)
    _open_rooms(rooms)
    old = {e.get("id"): e for e in (previous or {}).get("episodes", [])}
    index: dict[str, EpisodeEntry] = {}
    for ep in eps:
        entry = cast(EpisodeEntry, {**ep.to_dict(), "status": "pending", "run_status": None,
                                    "pass_rate": None, "all_pass": None, "error": None,
                                    "attempts": 0})
        before: EpisodeEntry = old.get(ep.id, {})
        state = episode_state(episode_dir(out, entry), ep.by_turn)
        if state == "done":
            entry.update(outcome(episode_dir(out, entry)))
        elif before.get("status") == "failed":
            entry["status"], entry["error"] = "failed", before.get("error")
        entry["attempts"] = before.get("attempts", 0)
        entry["resumed"] = before.get("resumed", 0)
        index[ep.id] = entry
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    record: SweepRecord = {
        "version": SWEEP_VERSION, "spec": redact_secrets(json_safe(spec.to_dict())),
        "spec_file": str(spec_path.resolve()), "models": str(models_file) if models_file else None,
        "created_at": (previous or {}).get("created_at", now),
        "rooms": redact_secrets([asdict(r) for r in rooms]),
        "episodes": list(index.values())}
    plan = SweepPlan(out, spec, rooms, eps, index, record)
    _IndexWriter(plan).write(force=True)
    return plan


def _previous(out: Path, spec: SweepSpec) -> SweepRecord | None:
    """The folder's ``sweep.json``, refused when it was made from another spec."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file: give --out a folder for the sweep")
    path = out / SWEEP_JSON
    if not path.is_file():
        if out.is_dir() and any(p.name not in (ROOMS,) for p in out.iterdir()):
            raise ConfigError(f"{out} holds files and no {SWEEP_JSON}: give --out a new folder")
        return None
    previous = read_sweep(path)
    # a key added since: its default; a secret recorded in plain (before digests): its digest
    before = redact_secrets({**_defaults(), **(previous.get("spec") or {})})
    now = redact_secrets(json_safe(spec.to_dict()))
    differ = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    if differ:
        raise ConfigError(f"{out} is a sweep of another spec (it differs in "
                          f"{', '.join(differ)}): give --out a new folder, or run the spec it "
                          "was made from; nothing was changed")
    return previous


def _defaults() -> dict[str, Any]:
    """Each spec key's default, as ``sweep.json`` records it."""
    return {name: json_safe(list(value) if isinstance(value, tuple) else value)
            for name, field in SweepSpec.model_fields.items()
            for value in [field.get_default(call_default_factory=True)]}


def _generate(rooms: list[SweepRoom]) -> None:
    """Generate the rooms the spec names (once: a room already there must match)."""
    from dealroom.room import generate_room

    for room in rooms:
        if room.generated is None:
            continue
        path, args = Path(room.path), dict(room.generated)
        args.pop("name", None)
        recorded = path / "answer_key" / "generation.json"
        if recorded.is_file():
            made = read_json(recorded, ConfigError, "")
            if any(made.get(k) != args.get(k) for k in ("docs", "seed", "profile", "secret")):
                raise ConfigError(f"{path} was generated with other settings than the spec's "
                                  "[[generate]] entry: give --out a new folder")
            continue
        generate_room(path, docs=args["docs"], seed=args["seed"], profile=args["profile"],
                      tokens=args["tokens"], secret=args["secret"])


def _open_rooms(rooms: list[SweepRoom]) -> None:
    """Build each room's index once, here, before workers open it."""
    from dealroom.room import Room

    for room in rooms:
        Room.open(room.path)


class _IndexWriter:
    """Rewrites ``sweep.json`` atomically, at most every :data:`WRITE_EVERY_S` seconds unless
    forced (a failure, the end)."""

    def __init__(self, plan: SweepPlan) -> None:
        self.plan = plan
        self.last = 0.0

    def write(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < WRITE_EVERY_S:
            return
        self.last = now
        record = self.plan.record
        record["episodes"] = list(self.plan.index.values())
        record["updated_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        counts: dict[str, int] = {}
        for entry in record["episodes"]:
            counts[entry["status"]] = counts.get(entry["status"], 0) + 1
        record["counts"] = counts
        record = json_safe(record)
        check_sweep_written(record)
        write_json_atomic(self.plan.path / SWEEP_JSON, record)


# -- backends ------------------------------------------------------------------------------------


def _arguments(plan: SweepPlan) -> tuple[Any, ...]:
    spec = plan.spec
    models = plan.record["models"]
    return str(plan.path), spec.judge, models, spec.harness, spec.concurrency


def _order(todo: list[EpisodeSpec], plan: SweepPlan) -> list[EpisodeSpec]:
    """Largest first (room tokens x turns), so that the pool's last wave is short."""
    from dealroom.room import load_manifest

    size = {r.name: load_manifest(Path(r.path)).totals()["tokens"] for r in plan.rooms}
    return sorted(todo, key=lambda e: -size[e.room] * e.max_turns)
