"""GRPO's reward is the scores' headline by default (docs/judging.md, "The headline"): a
rollout whose memo passes only negative criteria earns 0, not the share of negatives; ``[grpo]
reward = "total"`` keeps the pass rate over all criteria."""

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


def _rollout(room, out, **reward):
    import json

    from dealroom.models import open_model
    from dealroom.testing import MockOpenAIServer
    from dealroom.train._rollout import Rollout, run_closing

    n = len(json.loads((room / "task.json").read_text())["criteria"])
    with MockOpenAIServer("```python\nprint(1)\n```") as server:
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
    assert GRPOSettings().reward == "headline"
    assert GRPOSettings(reward="total").reward == "total"
    with pytest.raises((ConfigError, ValueError)):
        GRPOSettings(reward="positive")
