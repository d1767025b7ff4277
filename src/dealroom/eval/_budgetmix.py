"""BudgetMix: a training schedule of explicit turn budgets, and the audit that runs kept to it.

A plan has ``steps`` training steps of ``groups`` groups each; every group is one room under
one turn budget T, the same for every rollout of the group, and its root is told "Turn k of T"
on each turn. Whoever runs the plan labels each run with its entry (``run_agent(...,
**plan.run_options(step, group))`` writes ``budgetmix: {plan, step, group}`` into
``config.json``); :func:`audit_budgetmix` checks every run against its entry.

**The balancing rule.** Number the groups ``i = step * groups + group``. With the budgets and
the rooms each shuffled once by the seed (``B`` and ``R`` budgets and rooms, ``L =
lcm(B, R)``), group ``i`` gets budget ``i mod B`` and room ``(i + i div L) mod R``. So the
budgets cycle without a gap: within every step and over the whole plan each budget's count is
within one of every other's; rooms cycle too, so each room's count is within one of every
other's; and the shift by ``i div L`` walks through every (room, budget) pair once per ``B * R``
groups, so each pair's count is within one of every other's.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationError, model_validator

from dealroom._util.files import read_json, write_json_atomic
from dealroom._util.schema import Schema, explain, field_reader
from dealroom.errors import ConfigError, InputError
from dealroom.runs import RunFolder

PLAN_VERSION: Literal[1] = 1
RULE = ("group i = step * groups + group gets budget B'[i mod |B|] and room "
        "R'[(i + i div lcm(|R|, |B|)) mod |R|], B' and R' the budgets and rooms shuffled by the "
        "seed")
_TOLD = re.compile(r"\bTurn (\d+) of (\w+)")


def _no_repeats(budgets: list[int]) -> list[int]:
    if len(set(budgets)) != len(budgets):
        raise InputError(f"budgets lists a budget twice: {budgets}")
    return budgets


Budgets = Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1, json_schema_extra={
    "uniqueItems": True, "why": "positive whole turn budgets, each once, e.g. 8,16,32,64"}),
    AfterValidator(_no_repeats)]


class BudgetMixEntry(Schema):
    """One group of one step: its room and its turn budget."""

    model_config = ConfigDict(frozen=True)

    step: Annotated[int, Field(ge=0)]
    """The training step, from 0."""
    group: Annotated[int, Field(ge=0)]
    """The group within the step, from 0."""
    room: str
    """The room folder, absolute."""
    max_turns: Annotated[int, Field(ge=1)]
    """The group's turn budget T: ``settings.max_turns`` of its runs, told as "Turn k of T"."""


class BudgetMixPlan(Schema):
    """The schedule ``dealroom budgetmix plan`` writes (PLAN.json)."""

    model_config = ConfigDict(frozen=True)

    version: Literal[1] = PLAN_VERSION
    """The format's version."""
    id: str = ""
    """A digest of the entries: what a run's ``budgetmix.plan`` names (computed when the plan
    is made; a file whose entries no longer give it was edited, and is refused)."""
    budgets: Budgets
    """The turn budgets the groups are given."""
    groups: Annotated[int, Field(ge=1)]
    """Groups per training step."""
    steps: Annotated[int, Field(ge=1)]
    """Training steps."""
    seed: int = 0
    """Shuffles the budgets and the rooms."""
    rooms: list[str] = Field(min_length=1)
    """The room folders, absolute."""
    rule: str = RULE
    """The balancing rule, in words."""
    entries: list[BudgetMixEntry] = Field(default_factory=list)
    """Every group of every step, in order (``steps * groups`` of them)."""

    @model_validator(mode="after")
    def _check(self) -> BudgetMixPlan:
        digest = _digest(self.entries)
        if self.id and self.id != digest:
            raise ConfigError("its entries were changed; make a new plan with "
                              "`dealroom budgetmix plan`")
        if len(self.entries) != self.steps * self.groups:
            raise ConfigError(f"it has {len(self.entries)} entries, not steps * groups = "
                              f"{self.steps * self.groups}; make a new plan with "
                              "`dealroom budgetmix plan`")
        object.__setattr__(self, "id", digest)  # frozen: set once, here
        return self

    def entry(self, step: int, group: int) -> BudgetMixEntry:
        """The entry of ``group`` in ``step``; a ConfigError when the plan has none."""
        if not (0 <= step < self.steps and 0 <= group < self.groups):
            raise ConfigError(f"the plan has steps 0-{self.steps - 1} and groups "
                              f"0-{self.groups - 1}: no step {step} group {group}")
        return self.entries[step * self.groups + group]

    def run_options(self, step: int, group: int) -> dict[str, Any]:
        """Keywords for ``run_agent(entry.room, out, ...)`` that make a run follow the entry:
        its ``max_turns`` and the ``budgetmix`` label recorded in ``config.json``."""
        entry = self.entry(step, group)
        return {"max_turns": entry.max_turns,
                "budgetmix": {"plan": self.id, "step": step, "group": group}}

    def save(self, path: Path) -> None:
        """Write PLAN.json; an existing file is never overwritten."""
        path = Path(path)
        if path.exists():
            raise ConfigError(f"{path} already exists: choose another --out")
        write_json_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path: Path) -> BudgetMixPlan:
        """Read PLAN.json; a ConfigError when it is not a plan or was edited by hand."""
        data = read_json(path, ConfigError, f"{path} does not exist: give a PLAN.json")
        if not isinstance(data, dict):
            raise InputError(f"{path} is not a BudgetMix plan: it holds no JSON object")
        if not data.get("id"):
            raise ConfigError(f"{path} does not match its id: it has none; make a new plan "
                              "with `dealroom budgetmix plan`")
        try:
            return cls(**data)
        except InputError as exc:
            raise InputError(f"{path} is not a BudgetMix plan: {exc}") from None
        except ConfigError as exc:
            raise ConfigError(f"{path} does not match its id: {exc}") from None


def _digest(entries: list[BudgetMixEntry]) -> str:
    body = json.dumps([e.model_dump() for e in entries], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()[:12]


def budgetmix_run_options(label: str, room: Path, *, max_turns: int | None = None,
                          budget_visible: bool | None = None) -> dict[str, Any]:
    """The ``run_agent`` keywords of ``dealroom run ROOM --budgetmix PLAN:STEP:GROUP``: the
    entry's ``max_turns`` and its label; a ConfigError when the label is malformed, ``room``
    is not the entry's room, ``max_turns`` is another budget, or the budget is hidden."""
    path, step, group = (str(label).rsplit(":", 2) + ["", ""])[:3]
    if not (step.isdigit() and group.isdigit()):
        raise ConfigError(f"--budgetmix takes PLAN:STEP:GROUP (plan.json:0:3), not {label!r}")
    plan = BudgetMixPlan.load(Path(path))
    options = plan.run_options(int(step), int(group))
    entry = plan.entry(int(step), int(group))
    if str(Path(room).resolve()) != entry.room:
        raise ConfigError(f"step {step} group {group} of {path} runs on {entry.room}, not "
                          f"{room}: give that room")
    if max_turns is not None and max_turns != entry.max_turns:
        raise ConfigError(f"step {step} group {group} of {path} has the turn budget "
                          f"{entry.max_turns}: leave out --max-turns {max_turns}")
    if budget_visible is False:
        raise ConfigError("a BudgetMix run is told 'Turn k of T': leave out --budget-hidden")
    return options


def make_budgetmix_plan(budgets: list[int], groups: int, rooms: Sequence[str | Path], steps: int,
                        seed: int = 0) -> BudgetMixPlan:
    """The plan of ``steps`` steps of ``groups`` groups over ``rooms`` (folders or globs) and
    turn ``budgets``, balanced by the rule in this module's docstring."""
    head = {"budgets": list(budgets), "groups": groups, "steps": steps, "seed": seed}
    try:  # before the rooms are looked for
        field_reader(BudgetMixPlan, tuple(head)).model_validate(head)
    except ValidationError as exc:
        raise InputError(explain(exc, BudgetMixPlan)) from None
    folders = expand_rooms(rooms)
    rng = random.Random(seed)
    order_b, order_r = list(budgets), list(folders)
    rng.shuffle(order_b)
    rng.shuffle(order_r)
    nb, nr = len(order_b), len(order_r)
    span = math.lcm(nb, nr)
    entries = [BudgetMixEntry(step=i // groups, group=i % groups,
                              room=order_r[(i + i // span) % nr], max_turns=order_b[i % nb])
               for i in range(steps * groups)]
    return BudgetMixPlan(budgets=list(budgets), groups=groups, steps=steps, seed=seed,
                         rooms=folders, entries=entries)


def expand_rooms(rooms: Sequence[str | Path]) -> list[str]:
    """Room folders (globs expanded, each checked to hold a room.json), resolved, in order,
    each once."""
    found: dict[str, None] = {}
    for given in rooms:
        matches = sorted(glob.glob(str(given))) if glob.has_magic(str(given)) else [str(given)]
        if not matches:
            raise ConfigError(f"no room matches {given}")
        for match in matches:
            if not (Path(match) / "room.json").is_file():
                raise ConfigError(f"{match} is not a room (it has no room.json)")
            found.setdefault(str(Path(match).resolve()))
    if not found:
        raise ConfigError("give at least one room with --rooms")
    return list(found)


# -- the audit -----------------------------------------------------------------------------


@dataclass
class RunAudit:
    """One run against its plan entry."""

    run: str
    step: int | None
    group: int | None
    max_turns: int | None
    """The entry's budget (None when the run names no entry of the plan)."""
    violations: list[str]


@dataclass
class BudgetMixAudit:
    """Every run checked: ``ok`` when none has a violation; ``entries``: each entry of the plan
    with the number of runs that name it (``missing``: those with none)."""

    plan: str
    runs: list[RunAudit]
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(not r.violations for r in self.runs)

    @property
    def missing(self) -> list[dict[str, Any]]:
        """The plan entries no run names."""
        return [e for e in self.entries if not e["runs"]]

    def to_dict(self) -> dict[str, Any]:
        return {"plan": self.plan, "ok": self.ok, "runs": [asdict(r) for r in self.runs],
                "entries": self.entries, "missing": self.missing}


def audit_budgetmix(plan: BudgetMixPlan, run_dirs: list[Path]) -> BudgetMixAudit:
    """Check each run (expand sweeps first with :func:`dealroom.runs.find_runs`): it names an
    entry of ``plan``, ran on its room with its ``max_turns``, and its root was told "Turn k
    of T" with that T on every turn it was called; and count the runs of each entry (a run
    that names an entry counts for it even with violations)."""
    runs = [_audit_run(plan, Path(r)) for r in run_dirs]
    named = Counter((r.step, r.group) for r in runs if r.max_turns is not None)
    entries = [{**e.model_dump(), "runs": named[(e.step, e.group)]} for e in plan.entries]
    return BudgetMixAudit(plan.id, runs, entries)


def _audit_run(plan: BudgetMixPlan, run_dir: Path) -> RunAudit:
    folder = RunFolder.open(run_dir)
    config = folder.config
    label = config.get("budgetmix")
    if not isinstance(label, dict):
        return RunAudit(str(run_dir), None, None, None,
                        ["names no plan entry (config.json has no budgetmix)"])
    step, group = label.get("step"), label.get("group")
    if label.get("plan") != plan.id:
        return RunAudit(str(run_dir), step, group, None,
                        [f"follows plan {label.get('plan')}, not this plan ({plan.id})"])
    try:
        entry = plan.entry(step, group)
    except (ConfigError, TypeError):
        return RunAudit(str(run_dir), step, group, None,
                        [f"step {step} group {group} is not an entry of the plan"])
    violations = []
    try:
        room = str(folder.room.resolve())
    except ConfigError:
        room = str(config.get("room"))
    if room != entry.room:
        violations.append(f"ran on {room}, the entry's room is {entry.room}")
    recorded = (config.get("settings") or {}).get("max_turns")
    if recorded != entry.max_turns:
        violations.append(f"max_turns is {recorded}, the entry's budget is {entry.max_turns}")
    violations += told_violations(folder.events(), entry.max_turns)
    return RunAudit(str(run_dir), step, group, entry.max_turns, violations)


def told_violations(events: list[dict[str, Any]], max_turns: int) -> list[str]:
    """Each root turn whose model call was not told "Turn k of ``max_turns``" (read from the
    messages recorded with the call)."""
    out = []
    for e in events:
        if not (e.get("type") == "model_call" and e.get("agent") == "root"
                and e.get("role") == "root"):
            continue
        turn = e.get("turn")
        told = [t for m in (e.get("input") or {}).get("messages", []) if m.get("role") == "user"
                for k, t in _TOLD.findall(str(m.get("content", ""))) if int(k) == turn]
        if not told:
            out.append(f"turn {turn} was not told its turn budget")
        elif told[-1] != str(max_turns):
            out.append(f"turn {turn} was told 'Turn {turn} of {told[-1]}', the entry's budget "
                       f"is {max_turns}")
    return out
