"""Bad input gets one clear line and exit status 2 (an InputError), never a traceback, and what
is malformed is refused instead of silently accepted: flags, model URLs, output folders, LAB
tasks, damaged or edited run folders."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from dealroom.harness import run_agent

DEEP = "[" * 100_000 + "]" * 100_000


def cli(monkeypatch, capsys, *args) -> tuple[int, str]:
    """Run ``dealroom ARGS`` through the CLI's own entry point: (exit status, stdout+stderr)."""
    from dealroom.cli import main

    monkeypatch.setattr(sys, "argv", ["dealroom", *map(str, args)])
    with pytest.raises(SystemExit) as exit_:
        main()
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text, text
    return exit_.value.code, " ".join(text.split())


@pytest.fixture(scope="module")
def two_turn_run(generated_room, tmp_path_factory) -> Path:
    """A scripted run on the generated room that ran out of its 2 turns."""
    out = tmp_path_factory.mktemp("runs") / "two"
    run_agent(generated_room, out, root="scripted", sub="oracle", max_turns=2)
    return out


@pytest.fixture
def run_copy(two_turn_run, tmp_path) -> Path:
    return Path(shutil.copytree(two_turn_run, tmp_path / "run"))


def edit_events(run: Path, change) -> None:
    path = run / "trajectory.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    change(events)
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


# -- flags and specs ------------------------------------------------------------------------------

@pytest.mark.parametrize("root,message", [
    ("m@http://[::1", "is not a URL (Invalid IPv6 URL)"),
    ("m@http://127.0.0.1:99999/v1", "is not a URL (Port out of range"),
])
def test_a_model_url_that_does_not_parse_is_refused(monkeypatch, capsys, generated_room,
                                                    tmp_path, root, message):
    code, text = cli(monkeypatch, capsys, "run", generated_room, "--out", tmp_path / "r",
                     "--root", root, "--sub", "oracle")
    assert code == 2 and message in text
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("content,message", [
    (None, "models file"),  # the file does not exist
    ("[models.x\n", "is not valid TOML"),
    ("[models.corp]\nbase_url = 3\n", "[models.corp]"),
    ("[other]\n", "unknown top-level key"),
])
def test_a_models_file_no_model_uses_is_still_read_and_checked(monkeypatch, capsys,
                                                               generated_room, tmp_path,
                                                               content, message):
    models = tmp_path / "models.toml"
    if content is not None:
        models.write_text(content)
    code, text = cli(monkeypatch, capsys, "run", generated_room, "--out", tmp_path / "r",
                     "--root", "scripted", "--sub", "oracle", "--models", models)
    assert code == 2 and f"models file {models}" in text and message in text
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("flags,message", [
    (["--max-seconds", "nan"], "max_seconds must be a positive finite number, got nan"),
    (["--max-seconds", "inf"], "max_seconds must be a positive finite number, got inf"),
    (["--max-cost", "nan"], "max_cost_usd must be a positive finite number"),
    (["--temperature", "-1"], "temperature must be a number in [0, 2], got -1.0"),
    (["--temperature", "nan"], "temperature must be a number in [0, 2], got nan"),
    (["--harness", "toolloop", "--max-seconds", "inf"], "max_seconds must be a positive"),
])
def test_budgets_and_temperature_that_are_no_numbers_are_refused(monkeypatch, capsys,
                                                                 generated_room, tmp_path,
                                                                 flags, message):
    code, text = cli(monkeypatch, capsys, "run", generated_room, "--out", tmp_path / "r",
                     "--root", "scripted", "--sub", "oracle", *flags)
    assert code == 2 and message in text
    assert not (tmp_path / "r").exists()


def test_scripted_waves_zero_is_refused(monkeypatch, capsys, generated_room, tmp_path):
    code, text = cli(monkeypatch, capsys, "run", generated_room, "--out", tmp_path / "r",
                     "--root", "scripted:waves=0", "--sub", "oracle")
    assert code == 1 and "scripted waves must be a positive number of calls per wave" in text


@pytest.mark.parametrize("batch", ["0", "-1"])
def test_judge_batch_below_one_is_refused(monkeypatch, capsys, run_copy, batch):
    before = (run_copy / "scores.json").exists()
    code, text = cli(monkeypatch, capsys, "judge", run_copy, "--batch", batch)
    assert code == 2 and f"--batch must be an integer of at least 1, got {batch}" in text
    assert (run_copy / "scores.json").exists() == before


def test_output_folders_that_cannot_be_made_are_refused(monkeypatch, capsys, run_copy):
    code, text = cli(monkeypatch, capsys, "generate", "/proc/dealroom-x", "--docs", "5")
    assert code == 2 and "cannot write the room /proc/dealroom-x" in text
    code, text = cli(monkeypatch, capsys, "view", run_copy, "--out", "/proc/dealroom-x")
    assert code == 2 and "cannot make the viewer's folder /proc/dealroom-x" in text


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_view_refuses_a_port_out_of_range_before_writing(monkeypatch, capsys, run_copy,
                                                         tmp_path, port):
    code, text = cli(monkeypatch, capsys, "view", run_copy, "--serve", "--port", port,
                     "--out", tmp_path / "v")
    assert code == 2 and "Invalid value for '--port'" in text
    assert not (tmp_path / "v").exists()


# -- run folders ----------------------------------------------------------------------------------

def test_view_and_report_of_a_non_integer_turn_say_which_field(monkeypatch, capsys, run_copy,
                                                               tmp_path):
    def stringify(events):
        for e in events:
            if "turn" in e:
                e["turn"] = str(e["turn"])

    edit_events(run_copy, stringify)
    for command in (["view", run_copy, "--out", tmp_path / "v"],
                    ["report", run_copy, "--out", tmp_path / "rep"]):
        code, text = cli(monkeypatch, capsys, *command)
        assert code == 2 and "turn is '1', not an integer" in text, command


def test_resume_refuses_a_string_turn_and_deep_json(monkeypatch, capsys, run_copy, tmp_path):
    def stringify(events):
        events[1]["turn"] = "one"

    edit_events(run_copy, stringify)
    code, text = cli(monkeypatch, capsys, "resume", run_copy, "--from-turn", "1",
                     "--out", tmp_path / "fork")
    assert code == 2 and "turn is 'one', not an integer" in text
    (run_copy / "config.json").write_text(DEEP)
    for args in (["--from-turn", "1", "--out", tmp_path / "fork"], []):
        code, text = cli(monkeypatch, capsys, "resume", run_copy, *args)
        assert code == 2 and "config.json is nested too deep to read" in text
    assert not (tmp_path / "fork").exists()


def test_resume_refuses_a_trajectory_with_a_garbage_line(monkeypatch, capsys, run_copy,
                                                         tmp_path):
    lines = (run_copy / "trajectory.jsonl").read_text().splitlines(keepends=True)
    lines.insert(3, "garbage {\n")
    (run_copy / "trajectory.jsonl").write_text("".join(lines))
    for args in (["--from-turn", "1", "--out", tmp_path / "fork"], []):
        code, text = cli(monkeypatch, capsys, "resume", run_copy, *args)
        assert code == 2 and "line 4 is not JSON" in text and "records follow it" in text
    assert not (tmp_path / "fork").exists()
    assert "garbage {" in (run_copy / "trajectory.jsonl").read_text()  # nothing lost


def test_resume_refuses_a_run_whose_config_names_another_room(monkeypatch, capsys, run_copy,
                                                              tmp_path):
    from dealroom.room import generate_room

    other = tmp_path / "other"
    generate_room(other, docs=6, seed=2, secret="other")
    config = json.loads((run_copy / "config.json").read_text())
    (run_copy / "config.json").write_text(json.dumps({**config, "room": str(other)}))
    code, text = cli(monkeypatch, capsys, "resume", run_copy, "--from-turn", "1",
                     "--out", tmp_path / "fork")
    assert code == 2 and "but the run was recorded on" in text and "(20 documents)" in text
    assert not (tmp_path / "fork").exists()


def test_from_turn_past_the_end_says_how_many_turns_the_run_has(monkeypatch, capsys, run_copy,
                                                                tmp_path):
    code, text = cli(monkeypatch, capsys, "resume", run_copy, "--from-turn", "99",
                     "--out", tmp_path / "fork")
    assert code == 2 and "the run has 2 root turn(s): --from-turn takes 1 to 2" in text


@pytest.mark.parametrize("filename,message", [
    ("memo\0.md", "a control character"),
    ("m" * 300 + ".md", "longer than 255 bytes"),
])
def test_run_refuses_a_deliverable_name_with_nul_or_too_long(monkeypatch, capsys,
                                                             generated_room, tmp_path, filename,
                                                             message):
    room = Path(shutil.copytree(generated_room, tmp_path / "room"))
    task = json.loads((room / "task.json").read_text())
    (room / "task.json").write_text(json.dumps({**task, "deliverables": {"memo": filename}}))
    code, text = cli(monkeypatch, capsys, "run", room, "--out", tmp_path / "r",
                     "--root", "scripted", "--sub", "oracle")
    assert code == 2 and message in text


# -- LAB tasks ------------------------------------------------------------------------------------

LAB = {"title": "Diligence", "instructions": "Review the room and write the memo.",
       "deliverables": {"memo": "memo.md"},
       "criteria": [{"id": "C-001", "title": "Fee", "source": "expert",
                     "match_criteria": "PASS if the memo states the fee."}]}


def lab_task(root: Path, task: dict | str) -> Path:
    folder = root / "task"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "a.md").write_text("The fee is $5.")
    (folder / "task.json").write_text(task if isinstance(task, str) else json.dumps(task))
    return folder


@pytest.mark.parametrize("task,message", [
    ({**LAB, "criteria": [{**LAB["criteria"][0], "id": ["C-001"]}]},
     "task.json: criteria[0].id must be a string, got ['C-001']"),
    ('{"title": ' + DEEP + "}", "task.json is nested too deep to read"),
    ({**LAB, "deliverables": {"memo": "../memo.md"}}, "'../memo.md', a path"),
    ({**LAB, "deliverables": {"memo": "/etc/memo.md"}}, "'/etc/memo.md', a path"),
    ({**LAB, "deliverables": {"memo": "memo\0.md"}}, "a control character"),
    ({**LAB, "deliverables": {"memo": "m" * 300 + ".md"}}, "longer than 255 bytes"),
], ids=["list-id", "deep", "dotdot", "absolute", "nul", "long"])
def test_lab_import_refuses_malformed_tasks(monkeypatch, capsys, tmp_path, task, message):
    code, text = cli(monkeypatch, capsys, "lab", "import", lab_task(tmp_path, task),
                     tmp_path / "room")
    assert code == 2 and message in text
    assert not (tmp_path / "room").exists()


def test_lab_import_refuses_documents_that_are_a_symlink(monkeypatch, capsys, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shadow").write_text("root:secret")
    folder = lab_task(tmp_path, LAB)
    shutil.rmtree(folder / "documents")
    os.symlink(outside, folder / "documents")
    code, text = cli(monkeypatch, capsys, "lab", "import", folder, tmp_path / "room")
    assert code == 2 and "documents is a symbolic link" in text
    assert not (tmp_path / "room").exists()


@pytest.mark.parametrize("command", ["ingest", "lab import", "cuad import"])
@pytest.mark.parametrize("mb", ["nan", "inf", "-1", "0"])
def test_max_mb_that_is_no_positive_number_is_refused(monkeypatch, capsys, tmp_path, command,
                                                      mb):
    code, text = cli(monkeypatch, capsys, *command.split(), tmp_path, tmp_path / "room",
                     "--max-mb", mb)
    assert code == 2 and "--max-mb must be a positive number of MB" in text
    assert not (tmp_path / "room").exists()


# -- records nested deep, forks inside their source, viewers of no run ----------------------------

def test_a_config_nested_900_deep_is_refused_by_every_command(monkeypatch, capsys, run_copy,
                                                              tmp_path):
    """900 levels parse (under Python's recursion limit) but crashed view and report in
    ``__instancecheck__``; every reader now refuses past one depth limit, the same way."""
    config = json.loads((run_copy / "config.json").read_text())
    config["settings"]["x"] = json.loads("[" * 900 + "]" * 900)
    (run_copy / "config.json").write_text(json.dumps(config))
    for command in (["view", run_copy, "--out", tmp_path / "v"],
                    ["report", run_copy, "--out", tmp_path / "rep"],
                    ["summary", run_copy], ["judge", run_copy]):
        code, text = cli(monkeypatch, capsys, *command)
        assert code == 2 and "config.json is nested too deep to read" in text, command
    assert not (tmp_path / "v").exists()


def test_a_fork_inside_the_run_it_forks_is_refused(monkeypatch, capsys, run_copy):
    for out in (run_copy / "fork", run_copy / "output" / "fork"):
        code, text = cli(monkeypatch, capsys, "resume", run_copy, "--from-turn", "1",
                         "--out", out)
        assert code == 2 and "is inside the run it forks" in text, out
        assert not out.exists()


def test_view_of_a_folder_that_is_no_run_leaves_no_temporary_folder(monkeypatch, capsys,
                                                                   tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("not a run")
    code, text = cli(monkeypatch, capsys, "view", tmp_path / "notes")
    assert code == 1 and "is not a run folder" in text
    assert list(temp.iterdir()) == []
    assert not (tmp_path / "notes" / "view").exists()


def test_dense_without_the_search_extra_is_refused_before_anything_is_written(
        monkeypatch, capsys, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "nda.txt").write_text("The Recipient shall keep it confidential.")
    # tests/conftest.py has the CLI see no [search] extra
    code, text = cli(monkeypatch, capsys, "ingest", tmp_path / "src", tmp_path / "room",
                     "--dense")
    assert code == 1 and 'pip install "dealroom[search]"' in text and "--dense" in text
    assert not (tmp_path / "room").exists()
    code, text = cli(monkeypatch, capsys, "ingest", tmp_path / "src", tmp_path / "room")
    assert code == 0 and "room.search will rank by words only" in text
