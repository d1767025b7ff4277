"""GRPO with a served policy (``serve``): the adapter is pushed to a vLLM-style server with
runtime LoRA loading before each step's rollouts, which it samples with token ids and
logprobs; the update stays in the training process. The server here is the loopback
``LoraServer`` over the tiny model (transformers, not vLLM; the pushes are real)."""

import json
import math

import pytest

from dealroom.errors import ConfigError
from dealroom.train import GRPOSettings, train_grpo
from dealroom.train._grpo_settings import spec_from_dict

FAST = dict(group_size=2, batch_size=2, steps=2, max_new_tokens=12, max_turns=2,
            save_every=1, lora_rank=4, lora_alpha=8, learning_rate=1e-2, extra_groups=2)


class AlternatingJudge:
    """Passes every criterion of every other rollout judged, so each group has variance."""

    name = "alternating"
    args: dict = {}

    def __init__(self):
        self.calls = 0

    async def __call__(self, task, deliverables):
        from dealroom.judge import CriterionResult, Scores

        verdict = "pass" if self.calls % 2 else "fail"
        self.calls += 1
        return Scores([CriterionResult(c["id"], c.get("title", ""), verdict, "alternating")
                       for c in task["criteria"]], judge={"name": self.name})


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    from dealroom.room import generate_room

    path = tmp_path_factory.mktemp("served") / "g6"
    generate_room(path, docs=6, seed=1, secret="tests")
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory, tiny_model_dir, room):
    from dealroom.testing import LoraServer

    out = tmp_path_factory.mktemp("served-ckpt") / "CKPT"
    with LoraServer(tiny_model_dir) as server:
        spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                               "sub": "oracle", "grpo": {**FAST, "serve": server.base_url}})
        result = train_grpo(spec, out, judge=AlternatingJudge())
    return result, server


def test_each_step_pushes_its_adapter_and_unloads_the_one_before(served):
    result, server = served
    assert [name for name, _ in server.loads] == ["dealroom-step-0001", "dealroom-step-0002"]
    assert server.unloads == ["dealroom-step-0001"]
    for name, path in server.loads:
        assert path == str(result.out / "served" / f"step-{name[-4:]}")
    asked = {body["model"] for body in server.requests}
    assert asked == {"dealroom-step-0001", "dealroom-step-0002"}
    assert all(body["logprobs"] and body["return_token_ids"] and not body.get("stream")
               for body in server.requests)
    assert len({body["seed"] for body in server.requests}) > 1, "rollouts are seeded apart"


def test_served_rollouts_train_on_the_servers_tokens(served):
    from safetensors.torch import load_file

    result, _ = served
    assert [r["step"] for r in result.log] == [1, 2]
    for row in result.log:
        assert math.isfinite(row["loss"]) and row["trained_tokens"] > 0
        assert row["groups"] == 1 and row["staleness"] == 0
    rollouts = [json.loads(x) for x in (result.out / "rollouts.jsonl").read_text().splitlines()]
    assert rollouts and all(r["status"] == "ok" for r in rollouts)
    config = json.loads((result.out / rollouts[0]["run"] / "config.json").read_text())
    assert config["root"].startswith("dealroom-step-0001@http://127.0.0.1:")
    first = load_file(result.out / "served" / "step-0001" / "adapter_model.safetensors")
    second = load_file(result.out / "served" / "step-0002" / "adapter_model.safetensors")
    assert any(not (first[k] == second[k]).all() for k in first), "step 1's update was pushed"


def test_the_behaviour_logprobs_are_the_served_adapters(served, tiny_tokenizer):
    """At step 1 the served adapter is the policy itself: the server's recorded logprobs
    equal the trainer's own at the sampled tokens (the importance ratio is 1)."""
    import torch

    from dealroom.models import load_hf_model
    from dealroom.train._grpo_loss import token_logprobs
    from dealroom.train._rollout import episode_tokens

    result, server = served
    rollout = json.loads((result.out / "rollouts.jsonl").read_text().splitlines()[0])
    episode = episode_tokens(result.out / rollout["run"], tiny_tokenizer)
    policy = load_hf_model(f"hf:{server.base},adapter={result.out / 'served' / 'step-0001'}")
    ids = torch.tensor([episode.input_ids])
    where = torch.tensor([i - 1 for i, bit in enumerate(episode.mask) if bit])
    with torch.no_grad():
        mine = token_logprobs(policy.model, ids, 1.0)[0][where]
    assert torch.allclose(mine, torch.tensor(episode.behaviour), atol=1e-3)


def test_a_server_without_runtime_lora_is_a_clear_error(tiny_model_dir, room, tmp_path):
    from dealroom.testing import MockOpenAIServer

    with MockOpenAIServer("ok") as srv:
        spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                               "sub": "oracle", "grpo": {**FAST, "serve": srv.base_url}})
        with pytest.raises(ConfigError, match="load_lora_adapter.*enable-lora"):
            train_grpo(spec, tmp_path / "CKPT", judge=AlternatingJudge())


def test_serve_must_be_a_url_and_needs_dealroom_s_engine():
    with pytest.raises(ConfigError, match="base URL"):
        GRPOSettings(serve="127.0.0.1:8000")
    with pytest.raises(ConfigError, match="engine dealroom"):
        GRPOSettings(serve="http://127.0.0.1:8000/v1", engine="trl")


def _rollouts(out):
    """Each rollout's status, reward and sampled token ids, by run folder name."""
    from dealroom.runs import RunFolder, agent_conversation, read_tokens

    found = {}
    for line in (out / "rollouts.jsonl").read_text().splitlines():
        row = json.loads(line)
        run = out / row["run"]
        calls = agent_conversation(RunFolder(run).events()).calls
        found[run.relative_to(out).as_posix()] = (
            row["status"], row["reward"], row["policy_step"],
            [read_tokens(run, c["tokens"]).completion_ids for c in calls])
    return found


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory, tiny_model_dir, room):
    """One step of G=2 with two groups, in this process and then in two worker processes."""
    from dealroom.testing import LoraServer

    outs = {}
    with LoraServer(tiny_model_dir) as server:
        for workers in (1, 2):
            out = tmp_path_factory.mktemp(f"workers-{workers}") / "CKPT"
            grpo = {**FAST, "steps": 1, "batch_size": 4, "extra_groups": 0,
                    "serve": server.base_url, "rollout_workers": workers}
            spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                                   "sub": "oracle", "judge": "reference", "grpo": grpo})
            train_grpo(spec, out)
            outs[workers] = out
    return outs


def _workers(out):
    lines = (out / "rollouts.jsonl").read_text().splitlines()
    return {json.loads(line)["worker"] for line in lines}


def test_rollouts_in_worker_processes_equal_those_run_here(side_by_side):
    import os
    import socket

    here, workers = _rollouts(side_by_side[1]), _rollouts(side_by_side[2])
    assert len(here) == 4 and here.keys() == workers.keys()
    this = f"{socket.gethostname()}:{os.getpid()}"
    assert _workers(side_by_side[1]) == {this}
    assert this not in _workers(side_by_side[2]) and len(_workers(side_by_side[2])) >= 1
    assert here == workers, "the same seeds, the same served adapter: the same rollouts"
    assert all(status == "ok" and tokens for status, _, _, tokens in workers.values())


def test_ray_tasks_run_the_same_rollouts(side_by_side, tiny_model_dir, room, tmp_path):
    pytest.importorskip("ray")
    from dealroom.testing import LoraServer

    with LoraServer(tiny_model_dir) as server:
        grpo = {**FAST, "steps": 1, "batch_size": 4, "extra_groups": 0,
                "serve": server.base_url, "rollout_workers": 2, "rollout_backend": "ray"}
        spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                               "sub": "oracle", "judge": "reference", "grpo": grpo})
        train_grpo(spec, tmp_path / "CKPT")
    assert _rollouts(tmp_path / "CKPT") == _rollouts(side_by_side[1])
    assert not _workers(tmp_path / "CKPT") & _workers(side_by_side[1]), "Ray workers ran them"


def test_side_by_side_rollouts_need_a_server_and_a_judge_by_name(tiny_model_dir, room, tmp_path):
    with pytest.raises(ConfigError, match="needs serve"):
        GRPOSettings(rollout_workers=2)
    with pytest.raises(ConfigError, match="needs serve"):
        GRPOSettings(rollout_backend="ray")
    with pytest.raises(ConfigError, match="process or ray"):
        GRPOSettings(rollout_backend="slurm")
    with pytest.raises(ConfigError, match="with rollout_backend"):
        GRPOSettings(ray_address="10.0.0.1:6379")
    with pytest.raises(ConfigError, match="at least 1"):
        GRPOSettings(rollout_workers=0)
    spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                           "grpo": {**FAST, "serve": "http://127.0.0.1:9/v1",
                                    "rollout_workers": 2}})
    with pytest.raises(ConfigError, match="judge by name"):
        train_grpo(spec, tmp_path / "CKPT", judge=AlternatingJudge())
    assert not (tmp_path / "CKPT").exists(), "refused before any work"


def test_async_rollouts_sample_the_next_step_during_the_update(tiny_model_dir, room, tmp_path):
    """Step 2's first group is sampled by step 1's adapter while step 1's update runs: its
    rollouts are one step stale, and the update says so."""
    from dealroom.testing import LoraServer

    with LoraServer(tiny_model_dir) as server:
        grpo = {**FAST, "serve": server.base_url, "async_rollouts": True}
        spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                               "sub": "oracle", "grpo": grpo})
        result = train_grpo(spec, tmp_path / "CKPT", judge=AlternatingJudge())
    rows = [json.loads(x) for x in (result.out / "rollouts.jsonl").read_text().splitlines()]
    first = [r for r in rows if r["step"] == 1 and r["slot"] == 0]
    assert first and all(r["policy_step"] == 0 for r in first), "sampled ahead, by adapter 1"
    assert [r["staleness"] for r in result.log] == [0, 1]
    assert all(math.isfinite(r["loss"]) for r in result.log)
    from dealroom.runs import RunFolder, agent_conversation

    def calls(rollouts):
        return sum(len(agent_conversation(RunFolder(result.out / r["run"]).events()).calls)
                   for r in rollouts)

    asked = [b["model"] for b in server.requests]
    step1 = [r for r in rows if r["step"] == 0]
    assert asked.count("dealroom-step-0001") == calls(step1) + calls(first) > calls(step1)


def test_async_rollouts_need_a_server_and_room_for_staleness():
    with pytest.raises(ConfigError, match="async_rollouts needs serve"):
        GRPOSettings(async_rollouts=True)
    with pytest.raises(ConfigError, match="max_staleness"):
        GRPOSettings(async_rollouts=True, serve="http://127.0.0.1:8000/v1", max_staleness=0)


def test_a_failing_update_stops_the_rollouts_sampled_ahead(tiny_model_dir, room, tmp_path,
                                                           monkeypatch):
    """The update raises while the look-ahead's first rollout waits on the policy server: that
    rollout is cancelled where it stands (not awaited), the error reaches the caller at once,
    nothing of the look-ahead is recorded and no thread is left."""
    import asyncio
    import threading

    from dealroom.testing import LoraServer
    from dealroom.train import _grpo, _grpo_step

    ahead_started, client = threading.Event(), _grpo_step._client

    def noted_client(ctx, rollout):
        if threading.current_thread().name.startswith("grpo-ahead"):
            ahead_started.set()
        return client(ctx, rollout)

    def failing_update(*args, **kwargs):
        assert ahead_started.wait(120), "the look-ahead started"
        raise RuntimeError("the update failed")

    monkeypatch.setattr(_grpo_step, "_client", noted_client)
    monkeypatch.setattr(_grpo, "update", failing_update)
    server = LoraServer(tiny_model_dir)
    answer = server._chat

    async def held_once_ahead(request):
        if ahead_started.is_set():
            await asyncio.sleep(3600)  # hangs past the test's time-out: returning at all
            # shows the held rollout was not waited for
        return await answer(request)

    server._chat = held_once_ahead
    with server:
        grpo = {**FAST, "serve": server.base_url, "async_rollouts": True, "extra_groups": 0}
        spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                               "sub": "oracle", "grpo": grpo})
        with pytest.raises(RuntimeError, match="the update failed"):
            train_grpo(spec, tmp_path / "CKPT", judge=AlternatingJudge())
    assert not [t for t in threading.enumerate() if t.name.startswith("grpo-ahead")]
    rows = [json.loads(x) for x in (tmp_path / "CKPT" / "rollouts.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 0], "step 1's rollouts only; the ahead one cancelled"


def test_a_stop_cancels_an_in_process_rollout_midway(room, tmp_path):
    """run_closing with a stop event: the episode's pending root call is abandoned once the
    event is set, Stopped is raised within a poll, and the root's connection is closed."""
    import threading
    import time

    from dealroom.eval._executor import Stopped
    from dealroom.models import open_model
    from dealroom.testing import MockOpenAIServer
    from dealroom.train._rollout import Rollout, run_closing

    stop = threading.Event()
    with MockOpenAIServer("```python\nprint(1)\n```", latency=60) as server:
        rollout = Rollout(str(tmp_path / "r0"), 0, 0, 0, 0, str(room), 3, 0)
        threading.Timer(0.5, stop.set).start()  # the reply takes 60 s: Stopped comes first
        with pytest.raises(Stopped, match="stopped during"):
            run_closing(rollout, open_model(server.spec), stop=stop, sub="oracle",
                        judge="reference", harness="rlm", temperature=0.0, settings={},
                        budgetmix=None)
        deadline = time.monotonic() + 5
        while server.cancelled < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (server.calls, server.cancelled) == (1, 1)
    assert rollout.reward is None


def test_async_rollouts_on_ray_tasks(tiny_model_dir, room, tmp_path):
    """The look-ahead's rollouts run as Ray tasks from its own thread, the step's
    replacements after it, one Ray session each."""
    pytest.importorskip("ray")
    import os
    import socket

    from dealroom.testing import LoraServer

    with LoraServer(tiny_model_dir) as server:
        grpo = {**FAST, "serve": server.base_url, "async_rollouts": True,
                "rollout_workers": 2, "rollout_backend": "ray"}
        spec = spec_from_dict({"model": f"hf:{tiny_model_dir}", "rooms": [str(room)],
                               "sub": "oracle", "judge": "reference", "grpo": grpo})
        result = train_grpo(spec, tmp_path / "CKPT")
    rows = [json.loads(x) for x in (result.out / "rollouts.jsonl").read_text().splitlines()]
    assert [r["step"] for r in result.log] == [1, 2]
    assert [r for r in rows if r["step"] == 1 and r["policy_step"] == 0], "sampled ahead"
    assert all(r["status"] != "crashed" for r in rows)
    assert f"{socket.gethostname()}:{os.getpid()}" not in _workers(result.out), "Ray ran them"
