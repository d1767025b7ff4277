"""GRPO's reward is the scores' headline by default (docs/judging.md, "The headline"): a
rollout whose memo passes only negative criteria earns 0, not the share of negatives; ``[grpo]
reward = "total"`` keeps the pass rate over all criteria. The reward spec (docs/training.md,
"The reward"): ``pass+evidence`` adds the evidence F1 with a weight, a function of the user's
by import path, each term logged; a bad spec is a ConfigError before any work."""

import json
import math
import re
from pathlib import Path

import pytest

from dealroom.errors import ConfigError
from dealroom.train import GRPOSettings


class NegativesOnlyJudge:
    """Passes the first two criteria, declared negative, and fails the rest: what an empty
    or "nothing to report" memo scores."""

    name = "negatives-only"
    args: dict = {}

    async def __call__(self, task, deliverables):
        from dealroom.judge import CriterionResult, Scores

        ids = [c["id"] for c in task["criteria"]]
        return Scores([CriterionResult(i, "", "pass" if i in ids[:2] else "fail", "")
                       for i in ids], judge={"name": self.name}, negatives=frozenset(ids[:2]))


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    from dealroom.room import generate_room

    path = tmp_path_factory.mktemp("reward") / "g6"
    generate_room(path, docs=6, seed=1, secret="tests")
    return path


def _rollout(room, out, reply="```python\nprint(1)\n```", **reward):
    import json

    from dealroom.models import open_model
    from dealroom.testing import MockOpenAIServer
    from dealroom.train._rollout import Rollout, run_closing

    n = len(json.loads((room / "task.json").read_text())["criteria"])
    with MockOpenAIServer(reply) as server:
        rollout = Rollout(str(out), 0, 0, 0, 0, str(room), 1, 0)
        done = run_closing(rollout, open_model(server.spec), sub="oracle",
                           judge=NegativesOnlyJudge(), harness="rlm", temperature=0.0,
                           settings={}, budgetmix=None, **reward)
    return done, n


def test_the_reward_is_the_headline_an_empty_review_cannot_raise(room, tmp_path):
    done, n = _rollout(room, tmp_path / "r0")
    assert done.status != "judge_error" and done.reward == 0.0


def test_reward_total_keeps_the_pass_rate_over_all_criteria(room, tmp_path):
    done, n = _rollout(room, tmp_path / "r1", reward="total")
    assert done.reward == pytest.approx(2 / n)


def test_the_setting():
    assert GRPOSettings().reward == "pass"
    assert GRPOSettings(reward="headline").reward == "pass"  # its old name
    assert GRPOSettings(reward="total").reward == "total"
    with pytest.raises((ConfigError, ValueError)):
        GRPOSettings(reward="positive")


def _writes(memo):
    """The root's reply: write ``memo`` and submit."""
    return f"```python\nmemo.write({memo!r})\nsubmit()\n```"


def _moved(memo):
    """``memo`` with every cited page moved by 7: the same documents, the wrong pages."""
    return re.sub(r"p\.(\d+)", lambda m: f"p.{int(m.group(1)) + 7}", memo)


def test_pass_plus_evidence_adds_the_weighted_evidence_f1(room, tmp_path):
    """The evidence term is the F1 the judge measures on the memo the rollout wrote."""
    gold = (room / "answer_key" / "gold_memo.md").read_text()
    spec = {"kind": "pass+evidence", "evidence_weight": 2.0}
    grounded, _ = _rollout(room, tmp_path / "r2", reply=_writes(gold), reward=spec)
    assert grounded.terms == {"pass": 0.0, "evidence": 1.0} and grounded.reward == 2.0
    assert json.loads((tmp_path / "r2" / "scores.json").read_text())["evidence"]["f1"] == 1.0
    moved, _ = _rollout(room, tmp_path / "r2b", reply=_writes(_moved(gold)), reward=spec)
    f1 = json.loads((tmp_path / "r2b" / "scores.json").read_text())["evidence"]["f1"]
    assert moved.terms == {"pass": 0.0, "evidence": f1} and f1 < 0.5
    assert moved.reward == pytest.approx(2 * f1)


USER_REWARDS = """
def grounded(scores, run_dir):
    assert (run_dir / "scores.json").is_file()
    return {"memo_written": float((run_dir / "output").is_dir()), "criteria": scores.n_criteria}

def broken(scores, run_dir):
    return float("nan")

def scaled(scores, run_dir):
    return {"scaled": 0.5 + 0.25 * scores.headline}
"""


@pytest.fixture
def user_rewards(tmp_path, monkeypatch):
    (tmp_path / "my_rewards.py").write_text(USER_REWARDS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_rewards"


def test_a_user_reward_function_by_import_path(room, tmp_path, user_rewards):
    done, n = _rollout(room, tmp_path / "r3", reward=f"{user_rewards}:grounded")
    assert done.status == "ok" and done.terms["criteria"] == n
    assert done.reward == pytest.approx(done.terms["memo_written"] + n)
    assert done.terms["pass"] == 0.0  # the pass figure is logged beside the function's terms
    bad, _ = _rollout(room, tmp_path / "r4", reward=f"{user_rewards}:broken")
    assert bad.status == "judge_error" and bad.reward is None
    assert "my_rewards:broken gave user = nan" in bad.error


@pytest.mark.parametrize(("reward", "said"), [
    ("pass+evidences", 'reward must be "pass"'),
    ("no_such_module_xyz:fn", "cannot import no_such_module_xyz"),
    ("os.path:no_such_function", "os.path has no no_such_function"),
    ({"kind": "pass", "evidence_weight": 1.0}, "evidence_weight weighs the evidence term"),
    ({"kind": "pass+evidence", "evidence_weight": -1.0}, "evidence_weight must be a number"),
    ({"kind": "pass+evidence", "weights": 1.0}, "unknown key 'weights'"),
    (3, "or a table such as"),
])
def test_a_bad_reward_spec_is_a_config_error(reward, said):
    from dealroom.train._grpo_settings import spec_from_dict

    with pytest.raises(ConfigError, match=re.escape(said)):
        spec_from_dict({"model": "hf:local", "rooms": ["r"], "grpo": {"reward": reward}})


@pytest.mark.parametrize(("reward", "terms", "rewards"), [
    ({"kind": "pass+evidence", "evidence_weight": 0.5},
     [{"pass": 1.0, "evidence": 1.0}, {"pass": 0.0, "evidence": 0.5}], [1.5, 0.25]),
    ("my_rewards:scaled", [{"pass": 1.0, "scaled": 0.75}, {"pass": 0.0, "scaled": 0.5}],
     [0.75, 0.5]),
], ids=["pass+evidence", "function"])
def test_a_grpo_step_with_budgetmix_logs_each_term(reward, terms, rewards, tiny_model_dir,
                                                   room, tmp_path, monkeypatch, user_rewards):
    """One GRPO step on the tiny model under a BudgetMix plan, with each kind of reward
    beyond the pass rate: its audit passes, the log row has each term's mean and the
    rollouts each term. The evidence F1s are set (1.0 for the first rollout judged, 0.5 for
    the second: the tiny model writes no memo to measure; tests/judge/test_evidence.py
    measures real ones)."""
    import torch

    import dealroom.judge._run as front
    from dealroom.judge._evidence import Evidence
    from dealroom.train import train_grpo
    from dealroom.train._grpo_settings import spec_from_dict

    torch.set_num_threads(2)
    f1s = iter([Evidence(1, 1, 2, 2, 2, 2), Evidence(1, 0, 2, 1, 2, 1)] * 8)  # F1 1.0, 0.5
    monkeypatch.setattr(front, "room_evidence", lambda *a: next(f1s))
    spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                           "sub": "oracle", "grpo": {
                               "group_size": 2, "batch_size": 2, "steps": 1, "max_new_tokens": 8,
                               "max_turns": 1, "lora_rank": 4, "lora_alpha": 8,
                               "extra_groups": 0, "reward": reward}})
    result = train_grpo(spec, tmp_path / "ckpt", judge=PassFirstJudge(), budgetmix=[1])
    row = result.log[0]  # BudgetMix's audit passed (a violation stops training)
    assert row["budgets"] == [1] and row["groups"] == 1 and math.isfinite(row["loss"])
    rollouts = [json.loads(x) for x in (tmp_path / "ckpt" / "rollouts.jsonl").read_text()
                .splitlines()]
    assert [r["terms"] for r in rollouts] == terms
    assert [r["reward"] for r in rollouts] == rewards
    for name in terms[0]:
        assert row[f"reward_{name}"] == pytest.approx((terms[0][name] + terms[1][name]) / 2)
    assert row["reward_mean"] == pytest.approx(sum(rewards) / 2) and row["pass_rate"] == 0.5


class PassFirstJudge:
    """Passes every criterion of the first rollout judged, fails every one after."""

    name = "pass-first"
    args: dict = {}
    calls = 0

    async def __call__(self, task, deliverables):
        from dealroom.judge import CriterionResult, Scores

        verdict = "pass" if self.calls == 0 else "fail"
        self.calls += 1
        return Scores([CriterionResult(c["id"], "", verdict, "") for c in task["criteria"]],
                      judge={"name": self.name})


def test_self_distillation_selection_ranks_by_the_reward_spec(room, tmp_path):
    """Two runs of one room pass the same criteria (the rubric asks for documents, not pages);
    one cites the evidence's pages, the other wrong ones: by pass rate they tie (the folder
    path breaks it), by pass+evidence the grounded run is first."""
    from dealroom.harness import run_agent
    from dealroom.judge import judge_run
    from dealroom.models import ScriptedModel
    from dealroom.train import select_runs
    from dealroom.train._distill_spec import SelectBars

    gold = (room / "answer_key" / "gold_memo.md").read_text()
    wrong = _moved(gold)
    runs = []
    for name, memo in (("a-wrong-pages", wrong), ("b-grounded", gold)):
        out = tmp_path / name
        run_agent(room, out, root=ScriptedModel(["```python\nsubmit()\n```"]), sub="oracle")
        (out / "output" / "memo.md").write_text(memo)
        judge_run(out)
        runs.append(out)
    by_pass = select_runs(runs, top_k=1, room_median=False)
    assert [Path(r["run"]).name for r in by_pass.kept] == ["a-wrong-pages"]
    spec = SelectBars(reward={"kind": "pass+evidence", "evidence_weight": 0.5}, top_k=1,
                      room_median=False)
    by_reward = select_runs(runs, top_k=spec.top_k, room_median=False, reward=spec.reward)
    kept = by_reward.kept[0]
    assert Path(kept["run"]).name == "b-grounded" and kept["terms"]["evidence"] == 1.0
    assert kept["reward"] == pytest.approx(kept["terms"]["pass"] + 0.5)
    assert by_reward.reward == {"kind": "pass+evidence", "evidence_weight": 0.5}


def test_train_grpo_prints_each_terms_first_and_last_step(tmp_path, capsys):
    from dealroom.cli.display_train import render_grpo_result
    from dealroom.train import GRPOResult

    def row(step, pass_, evidence):
        return {"step": step, "reward_mean": pass_ + 0.5 * evidence, "reward_std": 0.1,
                "reward_pass": pass_, "reward_evidence": evidence, "reward_gap": None,
                "loss": 0.25, "step_s": 2.0, "rollout_s": 1.5, "train_s": 0.5}

    render_grpo_result(GRPOResult(tmp_path, 3, [row(1, 0.25, 0.5), row(3, 0.5, 0.75)], 6.0))
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert "reward 0.500 (step 1) -> 0.875 (step 3)" in lines
    assert "pass 0.250 -> 0.500" in lines and "evidence 0.500 -> 0.750" in lines
    assert not any(line.startswith(("std", "gap", "mean")) for line in lines)
