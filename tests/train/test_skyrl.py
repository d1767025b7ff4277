"""The skyrl-gym adapter: a dealroom episode driven turn by turn by SkyRL's env interface."""

import json
from pathlib import Path

import pytest

pytest.importorskip("skyrl_gym")


def test_the_registered_env_runs_an_episode_to_done_with_a_reward(generated_room, tmp_path):
    import skyrl_gym

    from dealroom.train import register_skyrl_env

    register_skyrl_env()
    env = skyrl_gym.make("dealroom", env_config=None,
                         extras={"room": str(generated_room), "out": str(tmp_path),
                                 "sub": "oracle", "max_turns": 3})
    messages, meta = env.init([{"role": "user", "content": "ignored"}])
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Turn 1 of 3" in messages[-1]["content"]
    actions = ["```python\nprint(len(room.docs))\n```",
               "```python\nr = llm_batch([{'prompt': 'List the findings', 'docs': [d.id]}"
               " for d in room.docs])\nfor x in r:\n    memo.append(str(x))\n```",
               "```python\nsubmit()\n```"]
    outputs = []
    for action in actions:
        out = env.step(action)
        outputs.append(out)
        if out["done"]:
            break
    assert [o["done"] for o in outputs] == [False, False, True]
    first = outputs[0]["observations"]
    assert len(first) == 1 and first[0]["role"] == "user" and "Turn 2 of 3" in first[0]["content"]
    assert "20" in first[0]["content"], "the REPL output of the first action"
    end = outputs[-1]
    assert 0 <= end["reward"] <= 1 and end["metadata"]["judge_errors"] == 0
    run = end["metadata"]["run"]
    scores = json.loads((Path(run) / "scores.json").read_text())
    assert end["reward"] == pytest.approx(scores["headline"])  # the headline by default
    assert end["metadata"]["reward_kind"] == scores["headline_kind"]
    assert end["metadata"]["pass_rate"] == pytest.approx(scores["pass_rate"])
    lines = (Path(run) / "trajectory.jsonl").read_text().splitlines()
    events = [json.loads(x) for x in lines if x]
    calls = [e for e in events if e["type"] == "model_call" and e["role"] == "root"]
    assert [c["output"] for c in calls] == actions
    assert sum(e["type"] == "model_call" and e["role"] == "sub" for e in events) > 0
    env.close()


def test_closing_mid_episode_ends_the_harness_thread(generated_room, tmp_path):
    from dealroom.train._skyrl import DealroomEnv

    env = DealroomEnv(extras={"room": str(generated_room), "out": str(tmp_path)})
    env.init([])
    env.close()
    assert not env.thread.is_alive()
    with pytest.raises(Exception, match="extras\\['room'\\]"):
        DealroomEnv(extras={"out": str(tmp_path)})


def test_the_env_takes_grpos_reward_spec(generated_room, tmp_path):
    """``extras["reward"]`` is GRPO's reward spec: terms in the metadata, bad specs refused."""
    from dealroom.errors import ConfigError
    from dealroom.train._skyrl import DealroomEnv

    env = DealroomEnv(extras={"room": str(generated_room), "out": str(tmp_path), "max_turns": 2,
                              "reward": {"kind": "pass+evidence", "evidence_weight": 1.0}})
    env.init([])
    env.step("```python\nfor d in room.docs[:3]:\n    memo.finding(d.title, cites=[d.id])\n```")
    end = env.step("```python\nsubmit()\n```")
    assert end["done"]
    scores = json.loads((Path(end["metadata"]["run"]) / "scores.json").read_text())
    terms = end["metadata"]["reward_terms"]
    assert terms == {"pass": pytest.approx(scores["headline"]),
                     "evidence": pytest.approx(scores["evidence"]["f1"])}
    assert end["reward"] == pytest.approx(terms["pass"] + terms["evidence"])
    assert end["metadata"]["reward_kind"] == "pass+evidence"
    env.close()
    with pytest.raises(ConfigError, match="extras\\['reward'\\]"):
        DealroomEnv(extras={"room": str(generated_room), "out": str(tmp_path),
                            "reward": "best"})
