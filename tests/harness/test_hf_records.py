"""Runs with ``hf:`` models record the exact tokens of every call, and the events point at them."""

import json

import pytest

from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.models._chat import decode
from dealroom.runs import RunFolder, read_tokens

ROOT = ["```python\nr = llm_batch([{'prompt': 'Say hi', 'docs': ['D00001']}, 'Say bye'])\n"
        "print(r)\n```", "```python\nsubmit()\n```"]


def calls(run_dir, role):
    return [e for e in RunFolder.open(run_dir).events()
            if e["type"] == "model_call" and e["role"] == role]


def replies_decode_from_their_records(run_dir, events, tokenizer):
    for event in events:
        record = read_tokens(run_dir, event["tokens"])
        kept = record.completion_ids[:-1] if record.eos else record.completion_ids
        assert decode(tokenizer, kept) == event["output"]
        assert len(record.logprobs) == len(record.completion_ids)
    return [read_tokens(run_dir, e["tokens"]) for e in events]


def test_an_hf_root_run_records_token_ids_that_re_decode_to_its_replies(
        small_room, tiny_model_dir, tiny_tokenizer, tmp_path):
    spec = f"hf:{tiny_model_dir},max_tokens=6,seed=3,threads=2"
    run = run_agent(small_room, tmp_path / "run", root=spec, sub=ScriptedModel(["x"]),
                    max_turns=3)
    assert run.status == "max_turns"
    roots = calls(run.run_dir, "root")
    assert len(roots) == 3 and all(e["tokens"]["file"] == "tokens.jsonl" for e in roots)
    records = replies_decode_from_their_records(run.run_dir, roots, tiny_tokenizer)
    first, second = records[0], records[1]
    assert first.prompt_reused == 0 and second.prompt_reused == len(
        first.prompt_ids + first.completion_ids), "turn 2 continues turn 1's token sequence"
    assert second.prompt_ids[:second.prompt_reused] == first.prompt_ids + first.completion_ids
    assert sorted(RunFolder.open(run.run_dir).tokens()) == ["root/t1", "root/t2", "root/t3"]


def test_hf_sub_agents_are_recorded_and_a_scripted_root_records_no_tokens(
        small_room, tiny_model_dir, tiny_tokenizer, tmp_path):
    sub = f"hf:{tiny_model_dir},max_tokens=5,threads=2"
    run = run_agent(small_room, tmp_path / "run", root=ScriptedModel(ROOT), sub=sub)
    assert run.status == "submitted"
    subs = calls(run.run_dir, "sub")
    assert len(subs) == 2 and {e["call_id"] for e in subs} == {"root/t1/s0", "root/t1/s1"}
    replies_decode_from_their_records(run.run_dir, subs, tiny_tokenizer)
    assert all(e["tokens"] is None for e in calls(run.run_dir, "root"))


def test_runs_export_train_and_the_trained_root_runs_through_the_cli(
        small_room, tiny_model_dir, tmp_path):
    """run → judge → export sft → train sft → run --root hf:CKPT (and hf:BASE,adapter=CKPT)."""
    pytest.importorskip("peft")
    from typer.testing import CliRunner

    from dealroom.cli import app

    def cli(*args):
        result = CliRunner().invoke(app, [str(a) for a in args])
        assert result.exit_code == 0, result.output
        return result

    run = run_agent(small_room, tmp_path / "runs" / "r1", root=ScriptedModel(ROOT),
                    sub=ScriptedModel(["x"], cycle=True)).run_dir
    (run / "scores.json").write_text(json.dumps({"pass_rate": 0.8, "n_errors": 0}))
    cli("export", "sft", tmp_path / "runs", "--out", tmp_path / "DS", "--tokenizer",
        f"hf:{tiny_model_dir}", "--min-pass-rate", "0.5")
    ckpt = tmp_path / "ckpt"
    cli("train", "sft", tmp_path / "DS", "--model", f"hf:{tiny_model_dir}", "--out", ckpt,
        "--max-steps", "1", "--grad-accum", "1", "--lora-rank", "2", "--lora-alpha", "4")
    sub = f"hf:{tiny_model_dir},max_tokens=4"
    for n, spec in enumerate((f"hf:{ckpt},max_tokens=6",
                              f"hf:{tiny_model_dir},adapter={ckpt},max_tokens=6")):
        out = tmp_path / f"run{n}"
        cli("run", small_room, "--out", out, "--root", spec, "--sub", sub, "--max-turns", "2")
        config = json.loads((out / "config.json").read_text())
        assert config["root"] == spec and (out / "metrics.json").is_file()
        roots = calls(out, "root")
        assert len(roots) == 2 and all(read_tokens(out, e["tokens"]).completion_ids
                                       for e in roots)
