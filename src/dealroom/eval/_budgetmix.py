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
from typing import Any

from dealroom._util.files import read_json, write_json_atomic
from dealroom.errors import ConfigError
from dealroom.runs import RunFolder

PLAN_VERSION = 1
RULE = ("group i = step * groups + group gets budget B'[i mod |B|] and room "
        "R'[(i + i div lcm(|R|, |B|)) mod |R|], B' and R' the budgets and rooms shuffled by the "
        "seed")
_TOLD = re.compile(r"\bTurn (\d+) of (\w+)")


@dataclass(frozen=True)
class BudgetMixEntry:
    """One group of one step: its room and its turn budget."""

    step: int
    group: int
    room: str
    """The room folder, absolute."""
    max_turns: int
    """The group's turn budget T: ``settings.max_turns`` of its runs, told as "Turn k of T"."""


@dataclass
class BudgetMixPlan:
    """The schedule ``dealroom budgetmix plan`` writes (PLAN.json)."""

    budgets: list[int]
    groups: int
    steps: int
    seed: int
    rooms: list[str]
    entries: list[BudgetMixEntry] = field(default_factory=list)

    @property
    def id(self) -> str:
        """A digest of the entries: what a run's ``budgetmix.plan`` names."""
        body = json.dumps([asdict(e) for e in self.entries], sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:12]

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

    def to_dict(self) -> dict[str, Any]:
        return {"version": PLAN_VERSION, "id": self.id, "budgets": self.budgets,
                "groups": self.groups, "steps": self.steps, "seed": self.seed,
                "rooms": self.rooms, "rule": RULE, "entries": [asdict(e) for e in self.entries]}

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
        try:
            plan = cls(list(data["budgets"]), int(data["groups"]), int(data["steps"]),
                       int(data["seed"]), list(data["rooms"]),
                       [BudgetMixEntry(**e) for e in data["entries"]])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{path} is not a BudgetMix plan ({exc!r} is wrong)") from None
        if len(plan.entries) != plan.steps * plan.groups or data.get("id") != plan.id:
            raise ConfigError(f"{path} does not match its id: its entries were changed; "
                              "make a new plan with `dealroom budgetmix plan`")
        return plan


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
    if not budgets or any(not isinstance(b, int) or b < 1 for b in budgets):
        raise ConfigError("--budgets takes positive whole turn budgets, e.g. 8,16,32,64")
    if len(set(budgets)) != len(budgets):
        raise ConfigError(f"--budgets lists a budget twice: {budgets}")
    if groups < 1 or steps < 1:
        raise ConfigError("--groups and --steps must be at least 1")
    folders = expand_rooms(rooms)
    rng = random.Random(seed)
    order_b, order_r = list(budgets), list(folders)
    rng.shuffle(order_b)
    rng.shuffle(order_r)
    nb, nr = len(order_b), len(order_r)
    span = math.lcm(nb, nr)
    entries = [BudgetMixEntry(i // groups, i % groups, order_r[(i + i // span) % nr],
                              order_b[i % nb]) for i in range(steps * groups)]
    return BudgetMixPlan(list(budgets), groups, steps, seed, folders, entries)


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
    entries = [{**asdict(e), "runs": named[(e.step, e.group)]} for e in plan.entries]
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
