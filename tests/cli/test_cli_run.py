"""``dealroom run`` and ``resume``: flags, saved settings, and one-line answers to bad input."""

import dataclasses
import json
import os
import subprocess
import sys
import typing

import pytest
import typer
from support.cli import dealroom as in_process
from typer.testing import CliRunner

import dealroom.harness
from dealroom.cli import app
from dealroom.cli._run import SETTING_OF_FLAG
from dealroom.cli._run import run as run_command
from dealroom.harness.rlm import RLMSettings
from dealroom.harness.toolloop import ToolLoopSettings
from dealroom.models import ScriptedModel


def dealroom_cli(*args, cwd=None, env=None):
    if cwd is None and env is None:
        return in_process(*args)  # in this process (support.cli)
    return subprocess.run([sys.executable, "-m", "dealroom", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def settings_flags():
    command = typer.main.get_command(app).commands["run"]
    fields = {f.name for cls in (RLMSettings, ToolLoopSettings)
              for f in dataclasses.fields(cls)}
    return {p: SETTING_OF_FLAG.get(p.name, p.name) for p in command.params
            if SETTING_OF_FLAG.get(p.name, p.name) in fields}, fields


def test_every_setting_of_every_harness_is_a_run_flag_and_reaches_the_harness(monkeypatch):
    flags, fields = settings_flags()
    assert set(flags.values()) == fields
    hints = typing.get_type_hints(run_command)
    given, argv = {}, []
    for n, (param, field) in enumerate(sorted(flags.items(), key=lambda x: x[1])):
        if hints[param.name] is bool:  # a --on/--off pair: the off form, which is not default
            given[field] = False
            argv += [param.secondary_opts[0]]
            continue
        if hints[param.name] == list[str]:  # NAME=USD pairs (--max-cost-per-model)
            given[field] = {"strong": float(n)}
            argv += [param.opts[0], f"strong={n}"]
            continue
        if typing.get_origin(hints[param.name]) is list:  # a repeatable flag: a list of paths
            given[field] = [f"v{n}.py"]
            argv += [param.opts[0], f"v{n}.py"]
            continue
        value = {int: 70 + n, str: f"v{n}"}.get(hints[param.name], 0.25 + n)
        given[field] = value
        argv += [param.opts[0], str(value)]
    seen = {}

    async def fake_run(room, out, **kwargs):
        seen.update(kwargs)
        raise dealroom.errors.ConfigError("stop here")

    monkeypatch.setattr(dealroom.harness, "run_agent_async", fake_run)
    result = CliRunner().invoke(app, ["run", "room", "--out", "out", *argv])
    assert isinstance(result.exception, dealroom.errors.ConfigError), result.output
    assert {k: seen[k] for k in fields} == given


def test_bad_out_folders_are_one_line_errors(small_room, tmp_path):
    file = tmp_path / "file"
    file.write_text("keep")
    for out, message in ((tmp_path / "proc-like" / "x", None), ("/proc/x", "/proc/x"),
                         (file, "is a file: give --out a new folder")):
        if message is None:  # a folder nobody may write into
            out.parent.mkdir()
            (out.parent / "blocker").write_text("")
            out = out.parent / "blocker" / "x"
            message = "cannot create the run folder"
        done = dealroom_cli("run", small_room, "--out", out)
        assert done.returncode == 1, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
    assert file.read_text() == "keep"


def test_an_unknown_model_is_named_in_the_error(small_room, tmp_path):
    env = {**os.environ, "HOME": str(tmp_path)}
    done = dealroom_cli("run", small_room, "--out", tmp_path / "r", "--sub", "nosuch",
                        cwd=tmp_path, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "Define [models.nosuch] in one" in done.stderr, done.stderr


def test_a_missing_extra_is_named_exactly(small_room, tmp_path, monkeypatch, capsys):
    import dealroom.models._local as local
    from dealroom.cli import main

    monkeypatch.setattr(local, "_SERVER_MODULES", ("no_such_module_for_dealroom",))
    monkeypatch.setattr(sys, "argv", ["dealroom", "run", str(small_room), "--out",
                                      str(tmp_path / "r"), "--sub", "local"])
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err
    assert exit_.value.code == 1
    assert 'run `pip install "dealroom[local]"`' in err, err
    assert not (tmp_path / "r").exists()


def test_a_run_killed_before_its_config_is_started_again_in_the_same_folder(small_room, tmp_path):
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)  # what a kill in the first milliseconds leaves
    done = dealroom_cli("resume", run)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "holds no run" in done.stderr and f"dealroom run ROOM --out {run}" in done.stderr
    again = dealroom_cli("run", small_room, "--out", run, "--root", "scripted", "--sub",
                         "m@http://127.0.0.1:9/v1")
    assert "already holds files" not in again.stderr  # the folder is reusable ...
    assert "127.0.0.1:9" in again.stderr  # ... and the run got as far as the dead endpoint


def test_concurrency_is_saved_and_resume_opens_the_models_with_it(small_room, tmp_path,
                                                                  monkeypatch):
    import dealroom.models

    opened = []
    real = dealroom.models.open_model

    def spy(spec, **kwargs):
        opened.append(kwargs.get("concurrency"))
        return real(spec, **kwargs)

    root = ScriptedModel(["```python\nprint(len(room.docs))\n```", "```python\nsubmit()\n```"])
    run = tmp_path / "run"
    from dealroom.testing import MockOpenAIServer

    with MockOpenAIServer(lambda request: "NONE") as server:
        dealroom.harness.run_agent(small_room, run, root=root, sub=f"m@{server.base_url}",
                                   concurrency=7, max_turns=4)
        assert json.loads((run / "config.json").read_text())["concurrency"] == 7
        lines = (run / "trajectory.jsonl").read_text().splitlines()
        (run / "trajectory.jsonl").write_text("\n".join(lines[:2]) + "\n")  # killed early
        monkeypatch.setattr(dealroom.models, "open_model", spy)
        resumed = dealroom.harness.resume_run(
            run, root=ScriptedModel(["```python\nsubmit()\n```"]))
    assert resumed.status == "submitted" and opened == [7]


def test_sub_flags_name_several_models_and_caps_reach_the_harness(monkeypatch):
    seen = {}

    async def fake_run(room, out, **kwargs):
        seen.update(kwargs)
        raise dealroom.errors.ConfigError("stop here")

    monkeypatch.setattr(dealroom.harness, "run_agent_async", fake_run)
    CliRunner().invoke(app, ["run", "room", "--out", "out", "--sub", "fast=oracle:recall=0.5",
                             "--sub", "strong=m@http://h/v1#price_input=1",
                             "--max-cost-per-model", "strong=5"])
    assert seen["sub"] == {"fast": "oracle:recall=0.5", "strong": "m@http://h/v1#price_input=1"}
    assert seen["max_cost_per_model"] == {"strong": 5.0}
    CliRunner().invoke(app, ["run", "room", "--out", "out"])
    assert seen["sub"] == "local" and seen["max_cost_per_model"] is None
    bad = CliRunner().invoke(app, ["run", "room", "--out", "out", "--max-cost-per-model", "x"])
    assert isinstance(bad.exception, dealroom.errors.ConfigError)
    assert "write NAME=USD" in str(bad.exception)
