"""A run says which endpoint and model played each role, from its folder alone, without a
secret; resuming or forking it on another model is refused unless asked."""

import json
import shutil

import pytest
from support.cli import dealroom

from dealroom.errors import ConfigError
from dealroom.harness import fork_run, resume_run
from dealroom.runs import RunFolder
from dealroom.testing import MockOpenAIServer, ServedModelServer

SECRET = "tok-81c4e2"
CELLS = ["```python\nprint(llm('Summarise the room.'))\n```", "```python\nsubmit()\n```"]


def models_file(folder, base_url, model="mock"):
    path = folder / "models.toml"
    path.write_text(f'[models.plain]\nbase_url = "{base_url}"\nmodel = "{model}"\n'
                    'api_key_env = "PLAIN_KEY"\nheaders = { X-Org = "Bearer ${ORG_TOKEN}" }\n'
                    "max_retries = 0\n")
    return path


@pytest.fixture
def secrets(monkeypatch):
    monkeypatch.setenv("ORG_TOKEN", SECRET)
    monkeypatch.setenv("PLAIN_KEY", "sk-" + SECRET)


def served_reply(request: dict) -> str:
    """As a served model answers: JSON where the request constrains it (vLLM does)."""
    return '{"findings": []}' if request.get("response_format") else "a finding"


def scripted_root(tmp_path):
    path = tmp_path / "root.json"
    path.write_text(json.dumps(CELLS))
    return path


def test_a_run_from_a_models_file_name_is_traced_to_its_endpoint(small_room, tmp_path,
                                                                  secrets):
    run = tmp_path / "run"
    with ServedModelServer(served_reply, model="qwen3-35b", context_window=12_288) as srv:
        path = models_file(tmp_path, srv.base_url, model="qwen3-35b")
        done = dealroom("run", small_room, "--sub", "plain", "--models", path, "--out", run,
                        "--max-turns", "8")
    assert done.returncode == 0, done.stderr
    config = RunFolder.open(run).config  # the folder alone
    sub = config["models"]["sub"]
    assert (sub["name"], sub["base_url"], sub["model"]) == ("plain", srv.base_url, "qwen3-35b")
    assert sub["server"] == {"id": "qwen3-35b", "max_model_len": 12_288, "from": "/v1/models"}
    assert (sub["context_window"], sub["context_window_from"]) == (12_288, "server")
    assert sub["route"] == "direct" and sub["headers"] == ["X-Org"]
    assert sub["api_key_env"] == "PLAIN_KEY" and sub["source"] == str(path)
    assert config["models"]["root"]["kind"] == "scripted"
    calls = [e for e in RunFolder.open(run).events()
             if e["type"] == "model_call" and e["role"] == "sub"]
    assert calls and all(c["provider"]["model"] == "qwen3-35b" for c in calls)
    for file in (p for p in run.rglob("*") if p.is_file()):
        assert SECRET.encode() not in file.read_bytes(), file
    summary = dealroom("summary", run)
    assert f"sub: plain = qwen3-35b @ {srv.base_url}" in summary.stdout.replace("\n", "")
    from dealroom.report import write_trace

    meta = (write_trace(run, tmp_path / "view").parent / "data" / "meta.js").read_text()
    assert json.dumps({"model": "qwen3-35b", "base_url": srv.base_url},
                      separators=(",", ":")) in meta  # what the header shows


def test_a_reply_keeps_its_system_fingerprint(small_room, tmp_path):
    from dealroom.harness import run_agent
    from dealroom.models import ScriptedModel

    with MockOpenAIServer(lambda request: "a finding") as srv:
        run_agent(small_room, tmp_path / "run", root=ScriptedModel(CELLS),
                  sub=f"mock@{srv.base_url}", max_turns=4)
    calls = [e for e in RunFolder.open(tmp_path / "run").events() if e["type"] == "model_call"
             and e["role"] == "sub"]
    assert calls and {c["provider"]["system_fingerprint"] for c in calls} == {"fp_dealroom_mock"}


def cut_run(small_room, tmp_path, srv, path):
    """A run of ``plain`` at ``srv``, cut before its end (as a killed run leaves it)."""
    from dealroom.harness import run_agent
    from dealroom.models import ScriptedModel

    run = tmp_path / "run"
    run_agent(small_room, run, root=ScriptedModel(CELLS), sub="plain", models_file=path,
              max_turns=4)
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    ends = [n for n, line in enumerate(lines) if '"run_end"' in line]
    (run / "trajectory.jsonl").write_text("\n".join(lines[:ends[0]]) + "\n")
    (run / "metrics.json").unlink()
    return run


def test_resuming_on_another_model_is_refused_unless_asked(small_room, tmp_path, secrets):
    from dealroom.models import ScriptedModel

    with MockOpenAIServer(lambda request: "a finding") as first, \
            MockOpenAIServer(lambda request: "other", model="other") as second:
        path = models_file(tmp_path, first.base_url)
        run = cut_run(small_room, tmp_path, first, path)
        fork_source = shutil.copytree(run, tmp_path / "source")
        models_file(tmp_path, second.base_url, model="other")  # the file changed since
        with pytest.raises(ConfigError) as refused:
            resume_run(run, root=ScriptedModel(CELLS[1:]), models_file=path)
        said = dealroom("resume", run, "--models", path)
        with pytest.raises(ConfigError, match="another sub model"):
            fork_run(fork_source, 1, tmp_path / "fork", models_file=path)
        done = resume_run(run, root=ScriptedModel(CELLS[1:]), models_file=path,
                          allow_model_change=True)
    message = str(refused.value)
    assert "another sub model than 'plain'" in message and "--allow-model-change" in message
    assert f"base_url '{first.base_url}' → '{second.base_url}'" in message
    assert "model 'mock' → 'other'" in message
    assert said.returncode != 0 and "--allow-model-change" in said.stderr
    assert done.status == "submitted"
