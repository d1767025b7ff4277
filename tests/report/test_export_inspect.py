"""``dealroom export inspect``: runs as inspect_ai evaluation logs, read back with inspect_ai's
own reader (``read_eval_log``) and opened by ``inspect view`` in Chromium."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.browser import Browser, find_chromium
from support.cli import dealroom

from dealroom.errors import ConfigError, MissingDependency
from dealroom.report import export_inspect


@pytest.fixture
def inspect_log():
    """``inspect_ai.log``; the test is skipped where the inspect extra is not installed."""
    return pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed "
                               "(pip install -c constraints.txt -e '.[inspect]')")


@pytest.fixture(scope="module")
def real_sweep(generated_room, tmp_path_factory) -> Path:
    """A sweep as ``dealroom eval sweep`` writes it: two policies x 2 samples at T = 3, judged."""
    from dealroom.eval import run_sweep

    tmp = tmp_path_factory.mktemp("inspect-sweep")
    (tmp / "spec.toml").write_text(
        f'rooms = ["{generated_room}"]\nroots = ["scripted", "scripted:coverage=0.3"]\n'
        'subs = ["oracle"]\nmax_turns = [3]\nsamples = 2\n')
    result = run_sweep(tmp / "spec.toml", tmp / "sweep", workers=1)
    assert (result.episodes, result.done) == (4, 4)
    return tmp / "sweep"


def _events(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "trajectory.jsonl").read_text().splitlines()]


def _episodes(sweep: Path) -> list[dict]:
    return json.loads((sweep / "sweep.json").read_text())["episodes"]


def test_a_judged_run_reads_back_with_inspect(inspect_log, scripted_run, tmp_path):
    [path] = export_inspect([scripted_run], tmp_path / "logs")
    assert path == tmp_path / "logs" / "scripted.eval"
    log = inspect_log.read_eval_log(str(path))
    assert log.status == "success" and log.eval.model == "scripted"
    assert log.eval.model_roles["sub"].model == "oracle-simulator"
    config = json.loads((scripted_run / "config.json").read_text())
    assert log.eval.dataset.name == "g20" and log.eval.dataset.location == config["room"]
    [sample] = log.samples
    events = _events(scripted_run)
    # the task and the room as the input
    task = next(m["content"] for e in events if e["type"] == "model_call"
                for m in e["input"]["messages"] if m["role"] == "user")
    assert [m.text for m in sample.input] == [task]
    # the root's turns: each reply carries its cell's code as a python call, then the output
    cells = [e for e in events if e["type"] == "cell" and e["agent"] == "root"]
    calls = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
    assert [c.arguments["code"] for c in calls] == [c["code"] for c in cells]
    tools = [m for m in sample.messages if m.role == "tool"]
    assert [m.text for m in tools] == [c["output"] for c in cells]
    assert [m.tool_call_id for m in tools] == [c.id for c in calls]
    # sub-calls as model events, cells as tool events
    subs = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    models = [e for e in sample.events if e.event == "model"]
    assert len([e for e in models if e.role == "sub"]) == len(subs) > 0
    assert {e.output.completion for e in models if e.role == "sub"} == {s["output"] for s in subs}
    assert len([e for e in sample.events if e.event == "tool"]) == len(cells)
    # the memo as the output; the verdicts as the score with each criterion in its metadata
    assert sample.output.completion == (scripted_run / "output" / "memo.md").read_text()
    scores = json.loads((scripted_run / "scores.json").read_text())
    rubric = sample.scores["rubric"]
    assert rubric.value == pytest.approx(scores["pass_rate"])
    assert [(c["id"], c["verdict"]) for c in rubric.metadata["criteria"]] == \
        [(c["id"], c["verdict"]) for c in scores["criteria_results"]]
    assert log.results.scores[0].metrics["mean"].value == pytest.approx(scores["pass_rate"])
    # usage and cost, by model and by role
    metrics = json.loads((scripted_run / "metrics.json").read_text())
    for role, usage in metrics["usage"]["by_role"].items():
        assert sample.role_usage[role].input_tokens == usage["input_tokens"]
        assert sample.role_usage[role].total_cost == usage["cost_usd"]
    assert set(sample.model_usage) == set(metrics["usage"]["by_model"])
    assert sample.metadata["status"] == "submitted" and sample.metadata["run"] == "scripted"


def test_a_child_is_a_span_and_a_judge_error_stays_unscored(inspect_log, child_run, tmp_path):
    events = _events(child_run)  # child_start and child_end under the child's path, as the
    for e in events:             # rlm engine writes them
        if e["type"] in ("child_start", "child_end"):
            e["agent"], e["depth"] = "root/c1-0", 1
    (child_run / "trajectory.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    [path] = export_inspect([child_run], tmp_path / "logs")
    sample = inspect_log.read_eval_log(str(path)).samples[0]
    begins = [e for e in sample.events if e.event == "span_begin"]
    ends = [e for e in sample.events if e.event == "span_end"]
    assert len(begins) == len(ends) == 1 and begins[0].type == "agent"
    inside = [e for e in sample.events if e.span_id == begins[0].id
              and e.event in ("model", "tool")]
    assert [e.event for e in inside] == ["model", "tool"]  # the child's turn and its cell
    sub = next(e for e in sample.events if e.event == "model" and e.role == "sub")
    assert "D00002" in sub.input[0].text and sub.span_id is None
    verdicts = {c["id"]: c["verdict"] for c in sample.scores["rubric"].metadata["criteria"]}
    assert verdicts == {"C-001": "pass", "C-002": "error"}


def test_each_episode_of_a_sweep_reads_back_as_a_log(inspect_log, real_sweep, tmp_path):
    written = export_inspect([real_sweep], tmp_path / "logs")
    episodes = _episodes(real_sweep)
    assert len(written) == len(episodes) == 4 and len({p.name for p in written}) == 4
    assert len(inspect_log.list_eval_logs(str(tmp_path / "logs"))) == len(written)
    by_path = {str(real_sweep / "episodes" / e["id"]): e for e in episodes}
    for path in written:
        log = inspect_log.read_eval_log(str(path))
        entry = by_path[log.eval.metadata["run"]]
        [sample] = log.samples
        assert log.status == "success" and log.eval.dataset.name == entry["room"]
        assert log.eval.metadata["root"] == entry["root_spec"]
        assert log.eval.task_args == {  # the specs as dealroom's viewer names them
            "room": "g20", "root": entry["root_spec"].split(",")[0],
            "sub": entry["sub_spec"].split(",")[0], "depth": 1, "max_turns": 3}
        assert sample.scores["rubric"].value == pytest.approx(entry["pass_rate"])
        cells = [e for e in _events(real_sweep / "episodes" / entry["id"])
                 if e["type"] == "cell" and e["agent"] == "root"]
        assert [m.text for m in sample.messages if m.role == "tool"] == \
            [c["output"] for c in cells] and cells
    assert export_inspect([real_sweep], tmp_path / "logs") == written  # replaced in place


def test_named_sub_agents_are_model_roles(inspect_log, generated_room, tmp_path):
    from dealroom.harness import run_agent

    run = tmp_path / "named"
    run_agent(generated_room, run, root="scripted",
              sub={"fast": "oracle:recall=0.5", "strong": "oracle"}, max_turns=3)
    [path] = export_inspect([run], tmp_path / "logs")
    log = inspect_log.read_eval_log(str(path), header_only=True)
    models = json.loads((run / "config.json").read_text())["models"]
    assert {role: m.model for role, m in log.eval.model_roles.items()} == \
        {role: m["model"] for role, m in models.items() if role != "root"}
    assert set(log.eval.model_roles) == {"sub", "sub.fast", "sub.strong"}
    assert log.eval.metadata["subs"] == {"fast": "oracle:recall=0.5", "strong": "oracle"}
    assert log.eval.task_args["sub"] == {"fast": "oracle:recall=0.5", "strong": "oracle"}


def test_the_command_writes_a_run_and_a_sweep(inspect_log, scripted_run, real_sweep, tmp_path):
    out = tmp_path / "logs"
    done = dealroom("export", "inspect", scripted_run, real_sweep, "--out", out)
    assert done.returncode == 0, done.stderr
    assert f"open: inspect view --log-dir {out}" in done.stdout
    logs = sorted(out.glob("*.eval"))
    assert len(logs) == 1 + len(_episodes(real_sweep)) and out / "scripted.eval" in logs
    assert all(inspect_log.read_eval_log(str(p)).samples for p in logs)
    (tmp_path / "file").write_text("x")
    refused = dealroom("export", "inspect", scripted_run, "--out", tmp_path / "file")
    assert refused.returncode == 1 and "is a file: give --out a folder" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_folder_of_other_files_is_refused(scripted_run, tmp_path):
    out = tmp_path / "logs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="holds other files"):
        export_inspect([scripted_run], out)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_without_inspect_ai_the_error_names_the_extra(scripted_run, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # import inspect_ai fails
    with pytest.raises(MissingDependency, match=r'dealroom\[inspect\]'):
        export_inspect([scripted_run], tmp_path / "logs")
    assert not (tmp_path / "logs").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(find_chromium() is None or shutil.which("inspect") is None,
                    reason="no Chromium or no `inspect` command")
def test_inspect_view_shows_an_exported_run_and_sweep_in_chromium(scripted_run, child_run,
                                                                  real_sweep, tmp_path):
    written = export_inspect([scripted_run, child_run, real_sweep], tmp_path / "logs")
    episode = next(p.name for p in written if p.name not in ("scripted.eval", "child-run.eval"))
    port = _free_port()
    server = subprocess.Popen(["inspect", "view", "--log-dir", str(tmp_path / "logs"),
                               "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with Browser(timeout=60) as browser:
            deadline = time.monotonic() + 120
            while True:  # the server takes a while to start
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise
                    time.sleep(0.5)
            browser.open(f"http://127.0.0.1:{port}/")
            rate = json.loads((scripted_run / "scores.json").read_text())["pass_rate"]
            shown = f"{rate:.3f}".rstrip("0")  # the listing shows the judged run's mean
            listing = browser.wait_for(f"document.body.innerText.includes('{shown}') && "
                                       "document.body.innerText", timeout=60)
            assert f"{len(written)} rows" in listing
            assert listing.count("dealroom/rlm") == len(written) == 2 + len(_episodes(real_sweep))
            for name in ("scripted.eval", episode):  # a run, and one episode of the sweep
                browser.evaluate(f"location.hash = '#/tasks/{name}'")
                text = browser.wait_for(f"document.body.innerText.includes('{name}') && "
                                        "document.body.innerText.includes('rubric') && "
                                        "document.body.innerText", timeout=60)
                assert "dealroom/rlm" in text and "INPUT" in text.upper()
            assert not [e for e in browser.errors if "404" not in e]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_follow_up_questions_follow_the_runs_messages(inspect_log, small_room, tmp_path):
    from dealroom.harness import ask_run, run_agent
    from dealroom.testing import ScriptedModel

    run = tmp_path / "run"
    run_agent(small_room, run, root=ScriptedModel(["```python\nx = 41\nsubmit()\n```"]),
              sub=ScriptedModel(["x"]))
    ask_run(run, "What is x + 1?", root=ScriptedModel(["```python\nsubmit(str(x + 1))\n```"]),
            sub=ScriptedModel(["x"]))
    [path] = export_inspect([run], tmp_path / "logs")
    [sample] = inspect_log.read_eval_log(str(path)).samples
    assert [(m.role, m.text) for m in sample.messages[-2:]] == [
        ("user", "Follow-up question 1: What is x + 1?"), ("assistant", "42")]
    [ask] = sample.metadata["asks"]
    assert (ask["number"], ask["question"], ask["answer"], ask["status"]) == (
        1, "What is x + 1?", "42", "submitted")
