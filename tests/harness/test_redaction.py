"""The secrets a run uses never reach its folder: an endpoint that echoes the request's headers
(in an error body and in a reply) leaves ``[redacted]`` in the records, not the key."""

import json

from aiohttp import web

from dealroom.harness import run_agent
from dealroom.judge import judge_run
from dealroom.models import ScriptedModel
from dealroom.testing import LoopbackServer, chat_completion_body

KEY = "sk-echo-4f9a1c2b7d8e6a5f"
ORG_TOKEN = "org-token-93c1d7e5a2b4"
USAGE = {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42}


class EchoingEndpoint(LoopbackServer):
    """An OpenAI-compatible endpoint that answers with the request's own headers: in a 400
    error body when the prompt asks to FAIL, as the reply's content otherwise."""

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "echo"}]})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        headers = "\n".join(f"{name}: {value}" for name, value in request.headers.items())
        if "FAIL" in json.dumps(body["messages"][-1]):
            return web.json_response({"error": {"message": f"bad request from {headers}"}},
                                     status=400)
        return web.json_response(chat_completion_body(f"you sent:\n{headers}", model="echo",
                                                      usage=USAGE))


ROOT = [
    "```python\ntry:\n    print(llm('FAIL, please', docs=['D00001']))\n"
    "except Exception as exc:\n    print(exc)\n```",
    "```python\nreply = llm('Say hello', docs=['D00001'])\nmemo.write(reply)\nprint(reply)\n"
    "```",
    "```python\nsubmit()\n```",
]


def test_an_endpoint_echoing_the_request_headers_leaves_no_secret_in_the_run(
        small_room, tmp_path, monkeypatch):
    monkeypatch.setenv("ECHO_API_KEY", KEY)
    monkeypatch.setenv("ORG_TOKEN", ORG_TOKEN)
    run = tmp_path / "run"
    with EchoingEndpoint() as srv:
        models = tmp_path / "models.toml"
        models.write_text(
            f'[models.echo]\nbase_url = "{srv.base_url}"\nmodel = "echo"\n'
            'context_window = 8192\nmax_retries = 0\napi_key_env = "ECHO_API_KEY"\n'
            'headers = {X-Org-Token = "${ORG_TOKEN}"}\n')
        run_agent(small_room, run, root=ScriptedModel(ROOT), sub="echo", models_file=models,
                  max_turns=5)
        judge_run(run, judge="echo", models_file=models)

    trajectory = (run / "trajectory.jsonl").read_text()
    memo = (run / "output" / "memo.md").read_text()
    assert "Bearer [redacted]" in trajectory and "bad request from" in trajectory
    assert "Bearer [redacted]" in memo and "X-Org-Token: [redacted]" in memo
    files = [path for path in run.rglob("*") if path.is_file()]
    assert {"trajectory.jsonl", "memo.md", "scores.json"} <= {path.name for path in files}
    for path in files:
        data = path.read_bytes()
        assert KEY.encode() not in data and ORG_TOKEN.encode() not in data, path


class FailingEndpoint(EchoingEndpoint):
    """Every call is a 400 whose body echoes the request's headers."""

    async def _chat(self, request: web.Request) -> web.Response:
        headers = "\n".join(f"{name}: {value}" for name, value in request.headers.items())
        return web.json_response({"error": {"message": f"bad request from {headers}"}},
                                 status=400)


def test_a_sweep_whose_model_calls_echo_the_key_leaves_it_out_of_the_sweep_folder(
        generated_room, tmp_path, monkeypatch):
    from dealroom.eval import run_sweep

    monkeypatch.setenv("ECHO_API_KEY", KEY)
    monkeypatch.setenv("ORG_TOKEN", ORG_TOKEN)
    with FailingEndpoint() as srv:
        (tmp_path / "models.toml").write_text(
            f'[models.echo]\nbase_url = "{srv.base_url}"\nmodel = "echo"\n'
            'context_window = 8192\nmax_retries = 0\napi_key_env = "ECHO_API_KEY"\n'
            'headers = {X-Org-Token = "${ORG_TOKEN}"}\n')
        (tmp_path / "sweep.toml").write_text(
            f'rooms = ["{generated_room}"]\nroots = ["scripted"]\nsubs = ["echo"]\n'
            'judge = "echo"\nmax_turns = [10]\nmodels = "models.toml"\n')
        run_sweep(tmp_path / "sweep.toml", tmp_path / "out", workers=1)
    files = [path for path in (tmp_path / "out").rglob("*") if path.is_file()]
    text = "".join(path.read_text(errors="replace") for path in files)
    assert "[redacted]" in text
    for path in files:
        data = path.read_bytes()
        assert KEY.encode() not in data and ORG_TOKEN.encode() not in data, path
