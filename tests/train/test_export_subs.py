"""``export sft --train-subs``: the runs' children and sub-calls answered by a model that
records tokens become rows of their own, masked on their sampled ids; without the flag the
dataset is what it was."""

import json

import pytest

from dealroom.errors import InputError
from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.runs import RunFolder, read_tokens
from dealroom.train import export_sft

REPLIES = [
    "```python\nr = llm_batch(['List the parties.', 'List the amounts.'])\nprint(r)\n```",
    "```python\nprint(rlm('Name one risk.'))\n```",
    "```python\nmemo.section('Findings', 'None [D00002 p.2].')\nsubmit()\n```",
]


@pytest.fixture(scope="module")
def sub_run(small_room, tiny_model_dir, tmp_path_factory):
    """A judged run of a scripted root whose sub-agent (which also plays its child) is the
    tiny ``hf:`` model: two sub-calls and a child, all with token records."""
    out = tmp_path_factory.mktemp("subs") / "runs" / "r1"
    run = run_agent(small_room, out, root=ScriptedModel(REPLIES),
                    sub=f"hf:{tiny_model_dir},max_tokens=8", depth=2, max_turns=3,
                    sub_max_output=16)
    assert run.status == "submitted"
    (out / "scores.json").write_text(json.dumps({"pass_rate": 0.5, "n_errors": 0,
                                                 "n_criteria": 10}))
    return out


def lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_train_subs_writes_a_row_per_sub_call_and_the_childs_conversation(
        sub_run, tiny_model_dir, tiny_tokenizer, tmp_path):
    result = export_sft([sub_run.parent], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}",
                        train_subs=True)
    rows = lines(tmp_path / "DS" / "tokenized.jsonl")
    roots = [r for r in rows if r["kind"] == "root"]  # first, as without train_subs
    assert [r["kind"] for r in rows[len(roots):]] == ["child", "sub", "sub"]
    assert (result.rows, result.child_rows, result.sub_rows, result.subs_left_out) == \
        (len(roots) + 3, 1, 2, 0)
    events = RunFolder(sub_run).events()
    subs = [e for e in events if e.get("role") == "sub"]
    for row, call in zip(rows[-2:], subs, strict=True):
        record = read_tokens(sub_run, call["tokens"])
        assert row["input_ids"] == record.prompt_ids + record.completion_ids
        assert row["assistant_masks"] == [0] * len(record.prompt_ids) + \
            [1] * len(record.completion_ids)
        assert (row["agent"], row["call_id"]) == ("root", call["call_id"])
    child = rows[-3]
    records = [read_tokens(sub_run, e["tokens"]) for e in events
               if e.get("role") == "child_root"]
    assert child["agent"] == "root/c2-0" and child["call_id"] is None
    assert [i for i, m in zip(child["input_ids"], child["assistant_masks"], strict=True)
            if m] == [i for r in records for i in r.completion_ids]
    assert all(r["agent"] == "root" and r["call_id"] is None for r in roots)
    chats = lines(tmp_path / "DS" / "train.jsonl")
    assert [c["agent"] for c in chats] == ["root", "root/c2-0"]
    assert "You are a child agent" in chats[1]["messages"][1]["content"]
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    assert manifest["train_subs"] is True
    assert (manifest["totals"]["sub_rows"], manifest["totals"]["child_rows"]) == (2, 1)
    assert manifest["totals"]["trained_tokens"] == sum(sum(r["assistant_masks"]) for r in rows)


def test_without_train_subs_the_dataset_is_the_roots_alone(sub_run, tiny_model_dir, tmp_path):
    export_sft([sub_run.parent], tmp_path / "ALL", tokenizer=f"hf:{tiny_model_dir}",
               train_subs=True)
    result = export_sft([sub_run.parent], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}")
    rows = lines(tmp_path / "DS" / "tokenized.jsonl")
    every = lines(tmp_path / "ALL" / "tokenized.jsonl")
    assert rows == [{k: v for k, v in r.items() if k not in ("agent", "kind", "call_id")}
                    for r in every if r["kind"] == "root"]
    assert result.rows == len(rows) < len(every) and result.sub_rows == 0
    assert all("agent" not in c for c in lines(tmp_path / "DS" / "train.jsonl"))
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    assert "train_subs" not in manifest and "sub_rows" not in manifest["totals"]


def test_the_cli_flag_writes_sub_rows_and_needs_a_tokenizer(sub_run, tiny_model_dir, tmp_path):
    from typer.testing import CliRunner

    from dealroom.cli import app

    done = CliRunner().invoke(app, ["export", "sft", str(sub_run.parent), "--out",
                                    str(tmp_path / "DS"), "--tokenizer", f"hf:{tiny_model_dir}",
                                    "--train-subs"])
    assert done.exit_code == 0, done.output
    assert "2 sub-call rows" in done.output
    assert sum(r["kind"] == "sub" for r in lines(tmp_path / "DS" / "tokenized.jsonl")) == 2
    refused = CliRunner().invoke(app, ["export", "sft", str(sub_run.parent), "--out",
                                       str(tmp_path / "DS2"), "--train-subs"])
    assert isinstance(refused.exception, InputError)  # the CLI's handler exits 2
    assert "--train-subs needs --tokenizer" in str(refused.exception)
    assert not (tmp_path / "DS2").exists()


def test_sub_rows_train_through_sft(sub_run, tiny_model_dir, tmp_path):
    from dealroom.train._sft import read_rows

    export_sft([sub_run.parent], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}",
               train_subs=True)
    rows = read_rows(tmp_path / "DS", 100_000)
    assert len(rows) == len(lines(tmp_path / "DS" / "tokenized.jsonl")) >= 4
