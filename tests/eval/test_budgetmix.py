"""BudgetMix: the plan's balancing rule, its file, and the audit of runs against it."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from support.cli import dealroom

from dealroom.errors import ConfigError, InputError
from dealroom.eval import BudgetMixPlan, audit_budgetmix, make_budgetmix_plan
from dealroom.harness import run_agent
from dealroom.models import ScriptedModel


def rooms(tmp_path: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        room = tmp_path / f"room{i}"
        room.mkdir()
        (room / "room.json").write_text("{}")
        out.append(room)
    return out


def spread(counts: Counter, universe) -> int:
    values = [counts.get(k, 0) for k in universe]
    return max(values) - min(values)


@pytest.mark.parametrize(("budgets", "groups", "n_rooms", "steps"), [
    ([8, 16, 32, 64], 4, 3, 10), ([8, 16, 32, 64], 6, 6, 7), ([4, 30], 3, 4, 5),
    ([8, 16, 32], 2, 6, 9), ([5], 5, 2, 3), ([1, 2, 3, 4, 5], 8, 10, 13)])
def test_budgets_rooms_and_pairs_are_balanced(tmp_path, budgets, groups, n_rooms, steps):
    folders = [str(r.resolve()) for r in rooms(tmp_path, n_rooms)]
    plan = make_budgetmix_plan(budgets, groups, folders, steps, seed=7)
    assert len(plan.entries) == steps * groups
    assert all(plan.entry(e.step, e.group) == e for e in plan.entries)
    for step in range(steps):
        in_step = Counter(e.max_turns for e in plan.entries if e.step == step)
        if groups >= len(budgets):
            assert spread(in_step, budgets) <= 1, f"step {step}: {in_step}"
        else:
            assert max(in_step.values()) == 1, "fewer groups than budgets: all different"
    assert spread(Counter(e.max_turns for e in plan.entries), budgets) <= 1
    assert spread(Counter(e.room for e in plan.entries), folders) <= 1
    pairs = Counter((e.room, e.max_turns) for e in plan.entries)
    assert spread(pairs, [(r, b) for r in folders for b in budgets]) <= 1


def test_the_plan_is_fixed_by_its_seed_and_its_file_by_its_id(tmp_path):
    folders = rooms(tmp_path, 3)
    a = make_budgetmix_plan([8, 16, 32, 64], 4, folders, 6, seed=1)
    assert a.to_dict() == make_budgetmix_plan([8, 16, 32, 64], 4, folders, 6, seed=1).to_dict()
    assert a.id != make_budgetmix_plan([8, 16, 32, 64], 4, folders, 6, seed=2).id
    a.save(tmp_path / "plan.json")
    assert BudgetMixPlan.load(tmp_path / "plan.json").to_dict() == a.to_dict()
    with pytest.raises(ConfigError, match="already exists"):
        a.save(tmp_path / "plan.json")
    data = json.loads((tmp_path / "plan.json").read_text())
    data["entries"][0]["max_turns"] = 99
    (tmp_path / "edited.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="entries were changed"):
        BudgetMixPlan.load(tmp_path / "edited.json")


@pytest.mark.parametrize(("change", "message"), [
    ({"groups": "4"}, "groups must be an integer, got '4'"),
    ({"budgets": [8, 8, 16, 32]}, "budgets lists a budget twice: [8, 8, 16, 32]"),
    ({"colour": "red"}, "unknown key 'colour'; the keys are version, id, budgets"),
    ({"version": 2}, "version must be 1, got 2"),
    ({"entries": [{"step": 0, "group": 0, "room": "r", "max_turns": 0}]},
     "max_turns must be an integer of at least 1, got 0"),
])
def test_a_plan_file_is_checked_by_its_schema(tmp_path, change, message):
    plan = make_budgetmix_plan([8, 16, 32, 64], 4, rooms(tmp_path, 2), 2, seed=1)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({**plan.to_dict(), **change}))
    with pytest.raises(InputError) as err:
        BudgetMixPlan.load(path)
    assert str(err.value).startswith(f"{path} is not a BudgetMix plan: {message}"), err.value
    path.write_text(json.dumps({**plan.to_dict(), "id": ""}))
    with pytest.raises(ConfigError, match="does not match its id: it has none"):
        BudgetMixPlan.load(path)
    with pytest.raises(ConfigError, match="has 1 entries, not steps . groups = 8"):
        BudgetMixPlan(**{**plan.to_dict(), "id": "", "entries": plan.to_dict()["entries"][:1]})


@pytest.mark.parametrize(("budgets", "groups", "given", "match"), [
    ([], 2, None, "positive whole"), ([8, 0], 2, None, "positive whole"),
    ([8, 8], 2, None, "twice"), ([8], 0, None, "at least 1"),
    ([8], 2, "nowhere", "not a room"), ([8], 2, "nowhere*", "no room matches")])
def test_bad_plans_are_refused(tmp_path, budgets, groups, given, match):
    folders = [tmp_path / given] if given else rooms(tmp_path, 2)
    with pytest.raises(ConfigError, match=match):
        make_budgetmix_plan(budgets, groups, folders, 3)


@pytest.fixture(scope="module")
def followed(small_room, tmp_path_factory):
    """A plan over the small room and one run per group of its first step, on both harnesses."""
    tmp = tmp_path_factory.mktemp("budgetmix")
    plan = make_budgetmix_plan([3, 5], 2, [small_room], 2, seed=0)
    runs = []
    for group in range(2):
        entry = plan.entry(0, group)
        out = tmp / f"g{group}"
        if group == 0:
            run_agent(entry.room, out, harness="toolloop", root="scripted",
                      **plan.run_options(0, group))
        else:
            sub = ScriptedModel(["NONE"], cycle=True, name="sub", context_window=8192)
            run_agent(entry.room, out, root="scripted", sub=sub, **plan.run_options(0, group))
        runs.append(out)
    plan.save(tmp / "plan.json")
    return plan, runs, tmp


def test_runs_that_follow_the_plan_pass(followed):
    plan, runs, _ = followed
    audit = audit_budgetmix(plan, runs)
    assert audit.ok, audit.to_dict()
    assert [r.max_turns for r in audit.runs] == [plan.entry(0, 0).max_turns,
                                                 plan.entry(0, 1).max_turns]
    # the plan has 4 entries; only step 0's have runs, one each
    assert [(e["step"], e["group"], e["runs"]) for e in audit.to_dict()["entries"]] == \
        [(0, 0, 1), (0, 1, 1), (1, 0, 0), (1, 1, 0)]
    assert [(e["step"], e["group"]) for e in audit.missing] == [(1, 0), (1, 1)]
    twice = audit_budgetmix(plan, [runs[0], runs[0], runs[1]])  # a group of two rollouts
    assert [e["runs"] for e in twice.entries] == [2, 1, 0, 0]


def test_a_root_told_a_different_budget_is_caught(followed, tmp_path):
    plan, runs, _ = followed
    bent = Path(shutil.copytree(runs[1], tmp_path / "bent"))
    budget = plan.entry(0, 1).max_turns
    text = (bent / "trajectory.jsonl").read_text()
    lines = text.splitlines()
    n = next(i for i, x in enumerate(lines) if '"role": "root"' in x and '"turn": 2,' in x)
    lines[n] = lines[n].replace(f"Turn 2 of {budget}.", "Turn 2 of 64.")
    (bent / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    audit = audit_budgetmix(plan, [runs[0], bent])
    assert not audit.ok
    assert audit.runs[0].violations == []
    assert audit.runs[1].violations == [
        f"turn 2 was told 'Turn 2 of 64', the entry's budget is {budget}"]


def test_a_run_with_another_budget_or_no_label_is_caught(followed, small_room, tmp_path):
    plan, _, _ = followed
    entry = plan.entry(1, 0)
    wrong = tmp_path / "wrong"
    run_agent(small_room, wrong, harness="toolloop", root="scripted",
              budgetmix={"plan": plan.id, "step": 1, "group": 0}, max_turns=entry.max_turns + 4)
    unlabelled = tmp_path / "plain"
    run_agent(small_room, unlabelled, harness="toolloop", root="scripted", max_turns=3)
    audit = audit_budgetmix(plan, [wrong, unlabelled])
    got = audit.runs[0].violations
    assert got[0] == f"max_turns is {entry.max_turns + 4}, the entry's budget is {entry.max_turns}"
    assert got[1] == (f"turn 1 was told 'Turn 1 of {entry.max_turns + 4}', the entry's budget "
                      f"is {entry.max_turns}")
    assert audit.runs[1].violations == ["names no plan entry (config.json has no budgetmix)"]
    with pytest.raises(ConfigError, match="budgetmix must be"):
        run_agent(small_room, tmp_path / "x", harness="toolloop", root="scripted",
                  budgetmix={"plan": plan.id, "step": -1, "group": 0})


def test_cli_plan_and_audit(followed, small_room, tmp_path):
    _, runs, tmp = followed
    cli = ["budgetmix"]
    made = dealroom(*cli, "plan", "--budgets", "8,16,32,64", "--groups", "4", "--rooms",
                    str(small_room), "--steps", "3", "--seed", "5", "--out",
                    str(tmp_path / "p.json"))
    assert made.returncode == 0, made.stderr
    assert len(json.loads((tmp_path / "p.json").read_text())["entries"]) == 12
    ok = dealroom(*cli, "audit", str(tmp / "plan.json"), *map(str, runs))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "2 of 4 plan entries have runs (runs per entry: 0 x2, 1 x2)" in ok.stdout
    assert "2 entries have no runs: step 1 group 0" in ok.stdout
    bad = dealroom(*cli, "audit", str(tmp_path / "p.json"), str(runs[0]), "--json")
    assert bad.returncode == 1
    assert "follows plan" in json.loads(bad.stdout)["runs"][0]["violations"][0]
    refused = dealroom(*cli, "plan", "--budgets", "8,x", "--groups", "1", "--rooms",
                       str(small_room), "--steps", "1", "--out", str(tmp_path / "q.json"))
    assert refused.returncode == 1 and "--budgets" in refused.stderr


def test_cli_run_follows_a_plan_entry(followed, tmp_path, generated_room):
    plan, runs, tmp = followed
    entry = plan.entry(1, 1)
    label = f"{tmp / 'plan.json'}:1:1"
    cli = ["run", entry.room, "--harness", "toolloop", "--root", "scripted"]
    done = dealroom(*cli, "--out", str(tmp_path / "r"), "--budgetmix", label)
    assert done.returncode == 0, done.stderr
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["budgetmix"] == {"plan": plan.id, "step": 1, "group": 1}
    assert config["settings"]["max_turns"] == entry.max_turns
    audit = audit_budgetmix(plan, [*runs, tmp_path / "r"])
    assert audit.ok and [e["runs"] for e in audit.entries] == [1, 1, 0, 1]
    for extra, message in (
            (["--budgetmix", f"{tmp / 'plan.json'}:1"], "takes PLAN:STEP:GROUP"),
            (["--budgetmix", f"{tmp / 'plan.json'}:2:0"], "no step 2 group 0"),
            (["--budgetmix", label, "--max-turns", str(entry.max_turns + 1)],
             f"has the turn budget {entry.max_turns}"),
            (["--budgetmix", label, "--budget-hidden"], "leave out --budget-hidden")):
        bad = dealroom(*cli, "--out", str(tmp_path / "bad"), *extra)
        assert bad.returncode == 1 and message in bad.stderr, bad.stderr
    other = dealroom("run", str(generated_room), "--out", str(tmp_path / "bad"), "--budgetmix",
                     label)
    assert other.returncode == 1 and "give that room" in other.stderr
    assert not (tmp_path / "bad").exists()
