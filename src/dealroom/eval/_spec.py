"""The sweep spec (``SPEC.toml``), validated on load, and the episodes it stands for.

    rooms = ["rooms/a", "rooms/*"]      # folders or globs, relative to the spec file
    [[generate]]                        # and/or rooms to generate into SWEEP/rooms/
    docs = 20
    seed = 1
    secret = "fixed"                    # required: the same secret gives the same room
    harness = "rlm"
    roots = ["scripted", "scripted:coverage=0.3"]
    subs = ["oracle"]
    depth = [1]
    max_turns = [4, 30]                 # the turn budgets T
    samples = 3                         # K samples per (room, policy, T): seeds 0..K-1
    judge = "reference"
    budget_visible = true

The product of rooms, roots, subs, depth, turn budgets and seeds is the list of episodes. A
sample's seed goes to the policies that take one (``scripted``, ``oracle``), added to their own
(``oracle:seed=3`` at sample 1 runs as ``oracle:seed=4``). With ``budget_visible = false`` the
root is never told T, so a run's first T turns do not depend on its budget: only the largest T
is run, and the other budgets are read from its memo history (truncated Pass@(K,T)).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from dealroom._util.files import read_toml
from dealroom._util.schema import Schema, as_tuple
from dealroom.errors import ConfigError, DealroomError, InputError
from dealroom.harness import label_specs, sub_specs, subs_label

if TYPE_CHECKING:
    from dealroom.harness import Harness

ROOMS = "rooms"
"""The sweep's folder of generated rooms."""
_SLUG = re.compile(r"[^A-Za-z0-9._=,+@-]+")
_CAPS = ("max_cost_usd", "max_tokens", "max_seconds")
MAX_EPISODES = 100_000
"""The most episodes one sweep may have (the product of rooms, policies, T and K)."""
MAX_GLOB_MATCHES = 10_000
"""The most paths one ``rooms`` glob may match before the sweep refuses it as too wide."""


Strings = tuple[str, ...]
AtLeastOne = Annotated[int, Field(ge=1)]


class GeneratedRoom(Schema):
    """A room the sweep generates (``[[generate]]``): the generator's arguments."""

    model_config = ConfigDict(frozen=True)

    docs: AtLeastOne
    """Documents in the room."""
    secret: Annotated[str, Field(json_schema_extra={
        "why": "the same secret gives the same room, so the sweep can be reproduced"})]
    """Keys the generator's draws: fixed here so that the sweep is reproducible (recorded)."""
    seed: int = 0
    """The generator's seed."""
    profile: str = "bank"
    """The company profile: bank, software or manufacturer."""
    tokens: int | None = None
    """The room's size in tokens (default: the generator's for ``docs``)."""
    name: str = ""
    """The room's folder under ``SWEEP/rooms/`` (default ``g<docs>-s<seed>``)."""

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str) -> str:
        if name and (name.startswith(".") or slug(name) != name or len(name) > 100):
            raise InputError(f"name {name[:80]!r} is no plain folder name "
                             "(letters, digits, . _ = , + @ -, not starting with a dot, at "
                             "most 100 characters): the room is written to SWEEP/rooms/NAME")
        return name

    def folder_name(self) -> str:
        return self.name or f"g{self.docs}-s{self.seed}"


def generated_room(table: object, where: str = "") -> GeneratedRoom:
    """A ``[[generate]]`` table as a GeneratedRoom; unknown keys and bad values refused."""
    at = f"{where}: " if where else ""
    if isinstance(table, GeneratedRoom):
        return table
    if not isinstance(table, dict):
        raise ConfigError(f"{at}generate must be [[generate]] tables")
    try:
        return GeneratedRoom(**table)
    except ConfigError as exc:
        raise type(exc)(f"{at}[[generate]] {exc}") from None


GeneratedRooms = Annotated[tuple[GeneratedRoom, ...], BeforeValidator(
    lambda value: tuple(generated_room(t) for t in as_tuple(value)))]
"""A spec's ``[[generate]]`` key: its tables as GeneratedRooms (one table stands for a list of
one), each checked by :func:`generated_room`."""


class SweepSpec(Schema):
    """What a sweep runs. Every field is a top-level key of ``SPEC.toml``."""

    model_config = ConfigDict(frozen=True)

    rooms: Strings = ()
    """Room folders or globs (relative to the spec file's folder)."""
    generate: GeneratedRooms = ()
    """Rooms to generate into ``SWEEP/rooms/`` before the episodes."""
    harness: str = "rlm"
    """The harness every episode runs in."""
    roots: Strings = ("scripted",)
    """Root policies (model specs)."""
    subs: Strings = ("local",)
    """Sub-agent specs (ignored by a harness without sub-agents); ``dealroom run``'s default.
    An entry may be a table of named ones, ``{fast = "A", strong = "B"}`` (the first the
    default), recorded as the label ``"fast=A strong=B"`` (``--sub fast=A --sub strong=B``)."""
    depth: tuple[AtLeastOne, ...] = (1,)
    """Recursion depths."""
    max_turns: tuple[AtLeastOne, ...] = (30,)
    """The turn budgets T."""
    samples: AtLeastOne = 1
    """K samples per (room, policy, T), seeds 0..K-1 (or ``seeds``)."""
    seeds: tuple[int, ...] = ()
    """The samples' seeds, when not 0..K-1 (K = their number)."""
    judge: str = "reference"
    """``reference`` or a judge model spec; every episode is judged as it finishes."""
    budget_visible: bool = True
    """Tell the root "Turn k of T"; false: only the largest T runs (see the module)."""
    max_cost_usd: float | None = None
    """Each episode's cost cap in USD."""
    max_tokens: int | None = None
    """Each episode's token cap."""
    max_seconds: float | None = None
    """Each episode's wall-clock cap."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Further harness settings for every episode (``cell_timeout``, ``slice_tokens``, ...)."""
    models: str | None = None
    """A models file naming the models (relative to the spec file)."""
    concurrency: AtLeastOne | None = None
    """Parallel calls per endpoint, per episode."""

    @field_validator("rooms", "roots", "subs", "depth", "max_turns", "seeds", mode="before")
    @classmethod
    def _listed(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name != "subs":
            return as_tuple(value)
        if isinstance(value, dict):  # one table of named sub-agents
            value = [value]
        return tuple(subs_label(v) for v in as_tuple(value))

    @model_validator(mode="after")
    def _check(self) -> SweepSpec:
        if not self.rooms and not self.generate:
            raise ConfigError("the sweep names no rooms: give rooms = [...] or [[generate]]")
        for name in ("roots", "depth", "max_turns"):
            if not getattr(self, name):
                raise ConfigError(f"{name} is empty: give at least one")
        if self.samples > MAX_EPISODES:
            raise InputError(f"samples = {self.samples:,} is more than a sweep may run "
                             f"({MAX_EPISODES:,} episodes): give fewer samples")
        if self.seeds and len(self.seeds) != self.samples and self.samples != 1:
            raise ConfigError(f"seeds has {len(self.seeds)} values but samples = "
                              f"{self.samples}: give one of them, or as many seeds as samples")
        if len(set(self.seed_list())) != len(self.seed_list()):
            raise ConfigError("seeds must differ from each other (each is one sample)")
        reserved = {"max_turns", "depth", "budget_visible", *_CAPS} & set(self.settings)
        if reserved:
            raise ConfigError(f"set {', '.join(sorted(reserved))} at the top level of the "
                              "spec, not in [settings]")
        return self

    def seed_list(self) -> list[int]:
        return list(self.seeds) if self.seeds else list(range(self.samples))

    @property
    def k(self) -> int:
        """Samples per (room, policy, T)."""
        return len(self.seed_list())

    def run_turns(self) -> list[int]:
        """The budgets episodes run at: every T, or only the largest when it is hidden."""
        return sorted(set(self.max_turns)) if self.budget_visible else [max(self.max_turns)]


def load_spec(path: Path) -> SweepSpec:
    """Read and validate ``SPEC.toml``; a ConfigError names the key at fault."""
    path = Path(path)
    data = read_toml(path, f"sweep spec {path}")
    return spec_from_dict(data, f"sweep spec {path}")


def spec_from_dict(data: dict[str, Any], where: str = "sweep spec") -> SweepSpec:
    """A :class:`SweepSpec` from a parsed TOML (or JSON) table; scalars stand for lists."""
    try:
        return SweepSpec(**data)
    except ConfigError as exc:
        raise type(exc)(f"{where}: {exc}") from None


# -- rooms and episodes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepRoom:
    """One room of the sweep."""

    name: str
    """Unique within the sweep: the episodes' first folder level."""
    path: str
    generated: dict[str, Any] | None = None
    """The generator's arguments (secret included) for a room the sweep generated."""


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode: an ordinary run folder under ``SWEEP/episodes/<id>``."""

    id: str
    room: str
    """The room's name in the sweep."""
    room_path: str
    root: str
    """The root policy as the spec names it (the policy an episode is a sample of)."""
    sub: str | None
    depth: int
    max_turns: int
    seed: int
    root_spec: str
    """The spec the episode runs with: the policy with the sample's seed."""
    sub_spec: str | None
    options: dict[str, Any]
    """The harness settings (max_turns, depth, budget_visible, caps, [settings])."""
    by_turn: bool
    """Also judged turn by turn (the episodes at the largest T)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def resolve_rooms(spec: SweepSpec, base: Path, sweep: Path) -> list[SweepRoom]:
    """The spec's rooms: folders and glob matches (relative to ``base``), then the generated
    ones (under ``sweep/rooms/``); a ConfigError names one that does not exist."""
    paths: list[Path] = []
    for pattern in spec.rooms:
        full = pattern if Path(pattern).is_absolute() else str(base / pattern)
        if glob.has_magic(full):
            found = _glob_rooms(pattern, full)
            if not found:
                raise ConfigError(f"rooms: {pattern!r} matches no room folder")
            paths += found
        elif not (Path(full) / "room.json").is_file():
            raise ConfigError(f"rooms: {pattern!r} is not a room (no room.json in {full})")
        else:
            paths.append(Path(full))
    rooms: list[SweepRoom] = []
    names: set[str] = set()
    for path in dict.fromkeys(p.resolve() for p in paths):
        rooms.append(SweepRoom(_unique(path.name, names), str(path)))
    for gen in spec.generate:
        name = _unique(gen.folder_name(), names)
        rooms.append(SweepRoom(name, str((sweep / ROOMS / name).resolve()), gen.to_dict()))
    return rooms


def _glob_rooms(pattern: str, full: str) -> list[Path]:
    """The room folders ``full`` matches; an InputError when it matches more than
    :data:`MAX_GLOB_MATCHES` paths (``/*/*``: a glob over the whole machine)."""
    found = []
    for n, match in enumerate(glob.iglob(full)):
        if n >= MAX_GLOB_MATCHES:
            raise InputError(f"rooms: {pattern!r} matches more than {MAX_GLOB_MATCHES:,} paths: "
                             "narrow it to the folder that holds the rooms")
        if os.path.isfile(os.path.join(match, "room.json")):
            found.append(Path(match))
    return sorted(found)


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = slug(name), 2
    while candidate in taken:
        candidate, n = f"{slug(name)}-{n}", n + 1
    taken.add(candidate)
    return candidate


def slug(text: str) -> str:
    """A folder name for ``text``.

    >>> slug("scripted:coverage=0.3"), slug("qwen@http://127.0.0.1:8000/v1")
    ('scripted_coverage=0.3', 'qwen@http_127.0.0.1_8000_v1')
    """
    return _SLUG.sub("_", text).strip("_") or "_"


def seeded_parts(spec: str) -> tuple[str, dict[str, str], str] | None:
    """``(head, options, separator)`` of a spec whose policy takes a ``seed`` option —
    ``scripted:...``, ``oracle:...``, ``hf:PATH,...`` — so that it can be written back with
    another seed; None for the others.

    >>> seeded_parts("oracle:recall=0.7"), seeded_parts("hf:local,seed=1"), seeded_parts("x")
    (('oracle', {'recall': '0.7'}, ':'), ('hf:local', {'seed': '1'}, ','), None)
    """
    from dealroom.models import split_spec

    if spec.startswith("hf:"):
        head, *items = spec.split(",")
        return head, dict(i.split("=", 1) for i in items if "=" in i), ","
    base, options = split_spec(spec)
    return (base, options, ":") if base in ("scripted", "oracle") else None


def join_parts(head: str, options: dict[str, str], separator: str) -> str:
    return head + (separator + ",".join(f"{k}={v}" for k, v in options.items())
                   if options else "")


def _seeded_subs(label: str | None, seed: int) -> str | None:
    """A sub-agent label with the sample's seed in each spec that takes one."""
    subs = sub_specs(label.split()) if label else None
    if not isinstance(subs, dict):
        return with_seed(label, seed)
    return " ".join(f"{name}={with_seed(spec, seed)}" for name, spec in subs.items())


def with_seed(spec: str | None, seed: int) -> str | None:
    """``spec`` for sample ``seed``: its own seed plus the sample's, for the policies that take
    one (``scripted``, ``oracle``, ``hf:``); other specs as they are.

    >>> with_seed("oracle:recall=0.7,seed=3", 1), with_seed("scripted", 2), with_seed("local", 2)
    ('oracle:recall=0.7,seed=4', 'scripted:seed=2', 'local')
    """
    parts = seeded_parts(spec) if spec else None
    if parts is None:
        return spec
    head, options, separator = parts
    try:
        options["seed"] = str(int(options.get("seed", 0)) + seed)
    except ValueError:
        raise ConfigError(f"{spec!r}: seed must be an integer") from None
    return join_parts(head, options, separator)


def episodes(spec: SweepSpec, rooms: list[SweepRoom], harness_fields: set[str],
             uses_sub: bool) -> list[EpisodeSpec]:
    """Every episode of the sweep, in a stable order."""
    subs: list[str | None] = list(spec.subs) if uses_sub else [None]
    caps = {k: getattr(spec, k) for k in _CAPS if getattr(spec, k) is not None}
    top = max(spec.max_turns)
    count = (len(rooms) * len(spec.roots) * len(subs) * len(spec.depth) * len(spec.run_turns())
             * spec.k)
    if count > MAX_EPISODES:
        raise InputError(f"the sweep has {count:,} episodes, more than {MAX_EPISODES:,}: give "
                         "fewer rooms, policies, budgets or samples (or split it in sweeps)")
    out = []
    for room, root, sub, depth, turns, seed in itertools.product(
            rooms, spec.roots, subs, spec.depth, spec.run_turns(), spec.seed_list()):
        options: dict[str, Any] = {"max_turns": turns, **caps, **spec.settings}
        if "depth" in harness_fields:
            options.update(depth=depth, budget_visible=spec.budget_visible)
        policy = slug(root) + ("" if sub is None else f"__{slug(sub)}")
        out.append(EpisodeSpec(
            id=f"{room.name}/{policy}/d{depth}-T{turns}-s{seed}", room=room.name,
            room_path=room.path, root=root, sub=sub, depth=depth, max_turns=turns, seed=seed,
            root_spec=with_seed(root, seed) or root, sub_spec=_seeded_subs(sub, seed),
            options=options, by_turn=turns == top))
    return out


def check_policies(spec: SweepSpec, rooms: list[SweepRoom], harness: Harness,
                   models_file: Path | None) -> None:
    """Refuse, before anything runs, a policy that cannot run: an unknown model, bad options,
    bad settings, or the oracle on a room without an answer key."""
    from dealroom.models import resolve_model_spec
    from dealroom.room import load_answer_key

    for root in spec.roots:
        resolved = resolve_model_spec(root, models_file=models_file, role="root")
        if resolved.kind == "scripted":
            harness.scripted_root(**resolved.options)
    subs = [s for label in spec.subs for s in label_specs(label)] if harness.uses_sub else ()
    kinds = {sub: resolve_model_spec(sub, models_file=models_file, role="sub").kind
             for sub in subs}
    if "oracle" in kinds.values():
        for room in rooms:
            if room.generated is None:
                try:
                    load_answer_key(Path(room.path))
                except DealroomError as exc:
                    raise ConfigError(f"subs: the oracle cannot run on room {room.name}: "
                                      f"{exc}") from None
    _check_judge(spec.judge, rooms)
    _learn_judge_secrets(spec.judge, models_file)
    known = set(harness.settings.__dataclass_fields__)
    unknown = sorted(set(spec.settings) - known)
    if unknown:
        raise ConfigError(f"settings: {', '.join(unknown)} does not apply to the "
                          f"{harness.name} harness (its settings: {', '.join(sorted(known))})")
    for depth in spec.depth:
        options = {"max_turns": max(spec.max_turns), **spec.settings,
                   **{k: getattr(spec, k) for k in _CAPS if getattr(spec, k) is not None}}
        if "depth" in known:
            options.update(depth=depth, budget_visible=spec.budget_visible)
        elif depth != 1 or not spec.budget_visible:
            raise ConfigError(f"depth and budget_visible do not apply to the {harness.name} "
                              "harness")
        harness.settings(**options)


def _learn_judge_secrets(judge: str, models_file: Path | None) -> None:
    """Resolve a judge model's spec here, in the process that writes ``sweep.json``, so that
    its secrets are redacted from the errors its episodes report (a judge that does not
    resolve fails in its episodes, as it did)."""
    from dealroom.judge import judge_names
    from dealroom.models import resolve_model_spec

    if judge not in judge_names():
        with contextlib.suppress(DealroomError):
            resolve_model_spec(judge, models_file=models_file, role="judge")


def _check_judge(judge: str, rooms: list[SweepRoom]) -> None:
    """A judge that needs no model (``reference``) checks each given room's rubric now."""
    import asyncio

    from dealroom.judge import judge_names, open_judge
    from dealroom.room import load_task

    if judge not in judge_names():
        return

    async def check() -> None:
        async with open_judge(judge) as ready:
            checker = getattr(ready, "check_task", None)
            for room in rooms:
                if checker is not None and room.generated is None:
                    try:
                        checker(load_task(Path(room.path)), room.name)
                    except DealroomError as exc:
                        raise ConfigError(f"judge: {exc} (in the spec: judge = \"MODEL\")"
                                          ) from None

    asyncio.run(check())
