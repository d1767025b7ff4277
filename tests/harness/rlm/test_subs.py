"""Several sub-agent models by name, against two loopback endpoints with different windows and
prices: calls route by name, slices are sized per model, an unknown name or a model past its
cost cap fails that call alone, a child runs on the model it was given, and a run with one
sub-agent model shows its root nothing new."""

from __future__ import annotations

import json

import pytest

from dealroom.errors import ConfigError
from dealroom.harness import run_agent, sub_specs
from dealroom.models import ScriptedModel
from dealroom.runs import RunFolder
from dealroom.testing import MockOpenAIServer

FAST = "#context_window=2048,price_input=0.1,price_output=0.4"
STRONG = "#context_window=32768,price_input=2,price_output=8,concurrency=1"

ROUTED = """```python
import json
big = next(d.id for d in sorted(room.docs, key=lambda d: d.tokens) if d.tokens > 4000)
print("MODELS", json.dumps(llm.models, sort_keys=True))
a = llm("read", docs=[big], model="fast")
b = llm("check", docs=[big], model="strong")
c = llm_batch([{"prompt": "x", "model": "strong"}, "y", {"prompt": "z", "model": "nope"}])
print("C2", repr(c[2]))
try:
    llm("w", model="nope")
except Exception as exc:
    print("ERR", exc)
print("ANSWERS", a, b, c[0], c[1])
```"""
SUBMIT = "```python\nsubmit()\n```"


def _reply(text):
    def reply(request):
        system = request["messages"][0]["content"]
        if system.startswith("You are the lead associate"):  # a child's root turn
            return f"```python\nsubmit('child on ' + {text!r})\n```"
        return text
    return reply


@pytest.fixture
def servers():
    with MockOpenAIServer(_reply("fast answer"), model="fast-m") as fast, \
            MockOpenAIServer(_reply("strong answer"), model="strong-m", latency=0.02) as strong:
        yield fast, strong


def _subs(fast, strong):
    return {"fast": f"fast-m@{fast.base_url}{FAST}",
            "strong": f"strong-m@{strong.base_url}{STRONG}"}


def _run(tmp_path, room, sub, script, **options):
    root = ScriptedModel(script)
    result = run_agent(room, tmp_path / "run", root=root, sub=sub, **options)
    folder = RunFolder.open(tmp_path / "run")
    return result, root, folder.events(), folder.config


def _output(root, turn=1):
    return root.messages[turn][-1]["content"]


def test_calls_route_by_name_with_slices_sized_per_model(generated_room, tmp_path, servers):
    fast, strong = servers
    result, root, events, config = _run(tmp_path, generated_room, _subs(fast, strong),
                                        [ROUTED, SUBMIT])
    assert result.status == "submitted"
    assert (fast.calls, strong.calls) == (2, 2)  # a and the bare "y"; b and x
    out = _output(root)
    assert "ANSWERS fast answer strong answer strong answer fast answer" in out
    models = json.loads(out.split("MODELS ", 1)[1].splitlines()[0])
    assert [models["fast"]["default"], models["strong"]["default"]] == [True, False]
    assert models["fast"]["price_input"] == 0.1 and models["strong"]["price_output"] == 8
    assert models["fast"]["context_window"] == 2048
    assert models["fast"]["slice_tokens"] < 2048 < models["strong"]["slice_tokens"]
    # an unknown name fails that call alone, naming the run's models
    assert "C2 SubcallError(\"unknown model 'nope': this run's sub-agent models are fast, " \
           "strong" in out
    assert "ERR unknown model 'nope'" in out
    subs = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    by_model = {}
    for e in subs:
        by_model.setdefault(e["model"], []).append(e)
    fast_calls, strong_calls = by_model[config["subs"]["fast"]], by_model[config["subs"]["strong"]]
    big_fast = next(e for e in fast_calls if e["input"]["prompt"] == "read")
    big_strong = next(e for e in strong_calls if e["input"]["prompt"] == "check")
    assert big_fast["input"]["truncated"] and not big_strong["input"]["truncated"]
    assert big_fast["usage"]["cost_usd"] < big_strong["usage"]["cost_usd"]
    assert set(config["models"]) >= {"root", "sub", "sub.fast", "sub.strong"}
    assert config["sub"] == config["subs"]["fast"]  # the first named is the default
    system = root.messages[0][0]["content"]
    assert "Sub-agent models" in system and "strong" in system and "$2 in / $8 out" in system


def test_a_run_with_one_sub_shows_its_root_nothing_new(generated_room, tmp_path, servers):
    fast, _ = servers
    script = ["```python\nprint(sorted(llm.models), llm('x'))\n```", SUBMIT]
    _, root, _, config = _run(tmp_path, generated_room, f"fast-m@{fast.base_url}{FAST}",
                              script)
    system = root.messages[0][0]["content"]
    assert "Sub-agent models" not in system and "model=" not in system
    assert "subs" not in config and set(config["models"]) == {"root", "sub"}
    assert "['default'] fast answer" in _output(root)


def test_each_model_keeps_its_own_concurrency(generated_room, tmp_path, servers):
    fast, strong = servers
    script = ["```python\nr = llm_batch([{'prompt': f'p{i}', 'model': m} for i in range(8) "
              "for m in ('fast', 'strong')])\nprint(sum(bool(x) for x in r))\n```", SUBMIT]
    _, root, _, _ = _run(tmp_path, generated_room, _subs(fast, strong), script)
    assert "16" in _output(root)
    assert strong.max_in_flight == 1 and strong.calls == 8  # its spec's concurrency=1
    assert fast.calls == 8


def test_a_model_past_its_cost_cap_is_refused_in_the_repl(generated_room, tmp_path, servers):
    fast, strong = servers
    # a call's worst case is about $0.005 (its prompt, and 512 tokens out at $8 per 1M): a
    # batch reserves each before any is sent, so the cap lets the first of three go
    script = ["```python\nr = llm_batch([{'prompt': f'check {i}', 'model': 'strong'} "
              "for i in range(3)])\nprint(r)\nprint('FAST', llm('read', model='fast'))\n```",
              SUBMIT]
    _, root, _, _ = _run(tmp_path, generated_room, _subs(fast, strong), script,
                         max_cost_per_model={"strong": 0.007})
    out = _output(root)
    assert strong.calls == 1  # the first fits the cap; the rest are refused before sending
    assert out.count("SubcallError(\"model 'strong' is at its cost cap") == 2
    assert "FAST fast answer" in out  # the other model still answers


def test_a_cap_on_an_unknown_name_is_refused(generated_room, tmp_path, servers):
    fast, strong = servers
    with pytest.raises(ConfigError, match="not a sub-agent model of this run.*fast, strong"):
        _run(tmp_path, generated_room, _subs(fast, strong), [SUBMIT],
             max_cost_per_model={"medium": 1})


def test_a_child_runs_on_the_sub_it_was_given(generated_room, tmp_path, servers):
    fast, strong = servers
    script = ["```python\nprint('CHILD', rlm('look', sub='strong'))\n"
              "try:\n    rlm('look', sub='nope')\nexcept Exception as exc:\n"
              "    print('ERR', exc)\n```", SUBMIT]
    _, root, events, _ = _run(tmp_path, generated_room, _subs(fast, strong), script, depth=2)
    out = _output(root)
    assert "CHILD child on strong answer" in out
    assert "ERR unknown model 'nope'" in out
    child = [e for e in events if e["type"] == "model_call" and e["role"] == "child_root"]
    assert child and {e["model"] for e in child} == {f"strong-m@{strong.base_url}{STRONG}"}
    assert fast.calls == 0


def test_sub_flags_parse_named_and_bare_models():
    assert sub_specs(["local"]) == "local"
    assert sub_specs(["oracle:recall=0.5"]) == "oracle:recall=0.5"
    assert sub_specs(["m@http://h/v1#price_input=1"]) == "m@http://h/v1#price_input=1"
    assert sub_specs(["fast=oracle:recall=0.5", "strong=m@http://h/v1#price_input=1"]) == {
        "fast": "oracle:recall=0.5", "strong": "m@http://h/v1#price_input=1"}
    for bad in (["a", "b"], ["fast=a", "b"], ["fast=a", "fast=b"], ["fast="]):
        with pytest.raises(ConfigError):
            sub_specs(bad)


def test_metrics_tell_cost_per_model_depth_and_child(generated_room, tmp_path, servers):
    fast, strong = servers
    script = ["```python\nprint(rlm('look', sub='strong'), llm('a', model='fast'), "
              "llm('b', model='strong'))\n```", SUBMIT]
    _run(tmp_path, generated_room, _subs(fast, strong), script, depth=2)
    usage = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]
    assert usage["by_sub"]["fast"]["calls"] == 1
    assert usage["by_sub"]["strong"]["calls"] == 2  # the child's root turn and b
    (child, tree), = usage["by_child"].items()
    assert child.startswith("root/c1-") and tree["calls"] == 1 and tree["cost_usd"] > 0
    split = usage["split"]
    assert set(split) == {"root", "sub.fast", "sub.strong", "children"}
    assert split["children"] == tree
    assert sum(p["calls"] for p in split.values()) == usage["total"]["calls"]
    assert abs(sum(p["cost_usd"] for p in split.values()) - usage["total"]["cost_usd"]) < 1e-9
    assert usage["root_cost_share"] == 0  # the scripted root is free
    assert set(usage["by_depth"]) == {"0", "1"}
    # dealroom summary tells where the tokens and dollars went
    from rich.console import Console

    from dealroom.cli.display_scores import render_summary
    from dealroom.eval import summarize_runs

    result = summarize_runs([tmp_path / "run"])
    row = result["runs"][0]
    assert list(row["split"]) == ["root", "sub.fast", "sub.strong", "children"]
    assert row["policy"].endswith("fast=" + _subs(fast, strong)["fast"] + ", strong="
                                  + _subs(fast, strong)["strong"])
    console = Console(record=True, width=300)
    render_summary(result, console)
    text = console.export_text()
    line = next(x for x in text.splitlines() if ": root " in x)
    assert "% of tokens, $" in line and "; fast " in line and "; strong " in line
    assert line.split("; children ")[1].startswith(
        f"{row['split']['children']['share']:.1%} of tokens")


def test_the_scripted_root_reads_with_one_model_and_checks_with_another(generated_room,
                                                                        tmp_path):
    fast = "oracle:recall=0.6,noise=0.3,price_input=0.1,price_output=0.4"
    strong = "oracle:price_input=2,price_output=8,context_window=65536"
    result = run_agent(generated_room, tmp_path / "run", root="scripted:read=fast,check=strong",
                       sub={"fast": fast, "strong": strong})
    assert result.status == "submitted"
    events = RunFolder.open(tmp_path / "run").events()
    subs = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    checks = [e for e in subs if e["model"] == strong]
    assert checks and len(checks) < len(subs)
    assert all(len(e["input"]["docs"]) == 1 and len(set(e["input"]["docs"][0]["pages"])) == 1
               for e in checks)  # one cited page each
    last_wave = max(e["wave"] for e in subs if e["model"] == fast)
    assert min(e["wave"] for e in checks) > last_wave  # after the reading waves
    usage = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]
    fast_cost, strong_cost = usage["by_sub"]["fast"], usage["by_sub"]["strong"]
    per_token = strong_cost["cost_usd"] / strong_cost["input_tokens"]
    assert per_token > 10 * fast_cost["cost_usd"] / fast_cost["input_tokens"] > 0


def test_max_cost_holds_across_the_models(generated_room, tmp_path, servers):
    fast, strong = servers
    script = ["```python\nr = llm_batch([{'prompt': f'p{i}', 'model': m} for i in range(20) "
              "for m in ('fast', 'strong')])\nprint(sum(bool(x) for x in r))\n```", SUBMIT]
    _, root, events, _ = _run(tmp_path, generated_room, _subs(fast, strong), script,
                              max_cost_usd=0.02)
    spent = sum(e["usage"]["cost_usd"] for e in events if e["type"] == "model_call")
    assert 0 < spent <= 0.02
    assert fast.calls and strong.calls and fast.calls + strong.calls < 40
    assert _output(root).endswith(f"\n{fast.calls + strong.calls}")  # the rest refused


def test_a_resumed_run_reopens_its_named_models_and_sends_nothing_twice(generated_room,
                                                                        tmp_path, servers):
    from dealroom.harness import resume_run

    fast, strong = servers
    script = ["```python\nr = llm_batch([{'prompt': f'p{i}', 'model': m} for i in range(3) "
              "for m in ('fast', 'strong')])\nprint(r)\n```",
              "```python\nprint(llm('again', model='strong'))\n```", SUBMIT]
    _run(tmp_path, generated_room, _subs(fast, strong), script, max_turns=5)
    sent = (fast.calls, strong.calls)
    trajectory = tmp_path / "run" / "trajectory.jsonl"
    lines = trajectory.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"type": "cell"' in line
               or '"type":"cell"' in line)
    trajectory.write_text("\n".join(lines[:cut + 1]) + "\n")  # killed after turn 1's cell
    result = resume_run(tmp_path / "run", root=ScriptedModel(script))
    assert result.status == "submitted"
    assert (fast.calls, strong.calls) == (sent[0], sent[1] + 1)  # only turn 2's call again
    config = RunFolder.open(tmp_path / "run").config
    assert config["subs"] == _subs(fast, strong)
