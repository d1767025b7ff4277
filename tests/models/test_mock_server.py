import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from dealroom.room import count_tokens
from dealroom.testing import Fault, MockOpenAIServer, chat_completion_body


def post(url, body, headers=None):
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request, timeout=5) as resp:
        return resp.status, resp.read()


CHAT = {"model": "mock", "messages": [{"role": "user", "content": "ping"}]}


def test_sync_use_from_a_background_thread():
    with MockOpenAIServer(lambda req: "pong") as srv:
        status, raw = post(f"{srv.base_url}/chat/completions", CHAT)
        body = json.loads(raw)
        assert status == 200 and body["choices"][0]["message"]["content"] == "pong"
        n_in, n_out = count_tokens("ping"), count_tokens("pong")
        assert body["usage"] == {
            "prompt_tokens": n_in,
            "completion_tokens": n_out,
            "total_tokens": n_in + n_out,
        }
        with urllib.request.urlopen(f"{srv.base_url}/models", timeout=5) as resp:
            assert json.loads(resp.read())["data"][0]["id"] == "mock"
        assert srv.requests == [CHAT] and srv.calls == 1


def test_queued_faults_then_normal_replies():
    with MockOpenAIServer("fine") as srv:
        srv.fail_next(Fault.rate_limit(retry_after=2), Fault.malformed(), Fault.no_usage())
        with pytest.raises(urllib.error.HTTPError) as err:
            post(f"{srv.base_url}/chat/completions", CHAT)
        assert err.value.code == 429 and err.value.headers["Retry-After"] == "2"
        _, raw = post(f"{srv.base_url}/chat/completions", CHAT)
        with pytest.raises(ValueError):
            json.loads(raw)
        _, raw = post(f"{srv.base_url}/chat/completions", CHAT)
        assert "usage" not in json.loads(raw)
        _, raw = post(f"{srv.base_url}/chat/completions", CHAT)
        assert json.loads(raw)["choices"][0]["message"]["content"] == "fine"


def test_reply_may_return_a_whole_body():
    body = chat_completion_body(
        "x", usage={"prompt_tokens": 5, "completion_tokens": 1, "cost": 0.5}
    )
    with MockOpenAIServer(lambda req: body) as srv:
        _, raw = post(f"{srv.base_url}/chat/completions", CHAT)
        assert json.loads(raw)["usage"]["cost"] == 0.5


def test_api_key_is_enforced_when_set():
    with MockOpenAIServer(api_key="sk-1") as srv:
        with pytest.raises(urllib.error.HTTPError) as err:
            post(f"{srv.base_url}/chat/completions", CHAT)
        assert err.value.code == 401
        status, _ = post(f"{srv.base_url}/chat/completions", CHAT, {"Authorization": "Bearer sk-1"})
        assert status == 200


def test_runs_as_a_separate_process():
    proc = subprocess.Popen(
        [sys.executable, "-m", "dealroom.testing", "--reply", "hi"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = proc.stdout.readline().strip()
        _, raw = post(f"{base_url}/chat/completions", CHAT)
        assert json.loads(raw)["choices"][0]["message"]["content"] == "hi"
    finally:
        proc.terminate()
        proc.wait(10)


def test_mock_server_lives_in_the_testing_module():
    from dealroom.testing import Fault, MockOpenAIServer, chat_completion_body

    assert MockOpenAIServer.__module__ == Fault.__module__ == "dealroom.models._mock"
    import dealroom.models

    assert not hasattr(dealroom.models, "MockOpenAIServer"), "test helpers stay out of models"
    assert Fault.rate_limit(retry_after=2) == Fault("status", 429, "rate limited", 2)
    assert chat_completion_body("x")["choices"][0]["message"]["content"] == "x"
