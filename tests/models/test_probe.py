"""Counts and usage from the server that is there (issue 36, item 4): each serving stack's
window and token count are probed once, the best used, and where a count is an estimate the
records say so."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

from dealroom.models import open_model
from dealroom.testing import MockOpenAIServer, ServedModelServer

MESSAGES = [{"role": "system", "content": "You review contracts."},
            {"role": "user", "content": "Find the change of control clause in section 4.2."}]


def served_reply(request: dict[str, Any]) -> str:
    """As a served model answers: JSON where the request constrains it (the scripted root asks
    llama.cpp and llama-cpp-python, which honour ``response_format``, for its findings so)."""
    return '{"findings": []}' if request.get("response_format") else "ISSUE: none"


class Plain(ServedModelServer):
    """A served model whose ``/v1/models`` says no window and which streams no usage."""

    def __init__(self, **options: Any) -> None:
        super().__init__(served_reply, tokenize=False, report_usage=False, **options)
        self.probes: list[str] = []

    async def _models(self, request: web.Request) -> web.Response:
        self.probes.append("/v1/models")
        return await MockOpenAIServer._models(self, request)


class LlamaCpp(Plain):
    """llama.cpp's ``llama-server``: ``/props`` ``n_ctx``, ``/tokenize`` ``{content}``,
    ``/apply-template``; ``total_slots`` (its ``--parallel``) when ``slots`` is given."""

    def __init__(self, slots: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.slots = slots

    async def _props(self, request: web.Request) -> web.Response:
        self.probes.append("/props")
        props = {"default_generation_settings": {"n_ctx": self.context_window},
                 "chat_template": "{{ messages }}"}
        return web.json_response(props | ({"total_slots": self.slots} if self.slots else {}))

    @staticmethod
    def templated(messages: list[dict[str, Any]]) -> str:
        return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        return self.count(self.templated(messages))

    async def _template(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        return web.json_response({"prompt": self.templated(body["messages"])})

    async def _tokenize_content(self, request: web.Request) -> web.Response:
        self.probes.append("/tokenize")
        text = json.loads(await request.read())["content"]
        return web.json_response({"tokens": list(range(self.count(text)))})

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_get("/props", self._props)
        app.router.add_post("/apply-template", self._template)
        app.router.add_post("/tokenize", self._tokenize_content)


class LlamaCppPython(Plain):
    """llama-cpp-python's server: ``POST /tokenize`` is 404, ``/extras/tokenize/count``."""

    async def _count(self, request: web.Request) -> web.Response:
        self.probes.append("/extras/tokenize/count")
        text = json.loads(await request.read())["input"]
        return web.json_response({"count": self.count(text)})

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_post("/extras/tokenize/count", self._count)


class Ollama(Plain):
    """Ollama: ``POST /api/show`` gives ``num_ctx`` and the trained length; no count."""

    async def _show(self, request: web.Request) -> web.Response:
        self.probes.append("/api/show")
        return web.json_response({"parameters": f"num_ctx {self.context_window}\nstop x",
                                  "model_info": {"llama.context_length": 131072}})

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_post("/api/show", self._show)


FAMILIES = {
    "vllm": (lambda: ServedModelServer("ISSUE: none", context_window=6000, report_usage=False),
             "vllm", 6000, "tokenize"),
    "llama.cpp": (lambda: LlamaCpp(context_window=8192), "llama.cpp", 8192, "llama.cpp"),
    "llama-cpp-python": (lambda: LlamaCppPython(context_window=4096), "llama-cpp-python",
                         32768, "extras"),
    "ollama": (lambda: Ollama(context_window=4096), "ollama", 4096, "estimate"),
    "plain": (lambda: Plain(context_window=4096), "unknown", 32768, "estimate"),
}


async def chat_once(server) -> tuple[Any, Any]:
    client = open_model(f"{server.model}@{server.base_url}")
    try:
        facts = await client.server_facts()
        result = await client.chat(MESSAGES, max_tokens=64)
        return client, facts, result
    finally:
        await client.aclose()


@pytest.mark.parametrize("family", FAMILIES)
def test_each_stack_is_probed_for_its_window_and_count(family) -> None:
    make, name, window, source = FAMILIES[family]
    with make() as server:
        client, facts, result = asyncio.run(chat_once(server))
    assert facts.family == name
    assert client.context_window == window  # the server's, not dealroom's default 32,768
    assert client.counts_source == source
    # a streamed reply without usage is counted by the server where it counts
    assert result.usage_source == ("estimate" if source == "estimate" else source)
    assert result.usage_estimated is (source == "estimate")
    if source != "estimate":
        assert result.usage.input_tokens == server.prompt_tokens(MESSAGES)


def test_the_server_is_probed_once() -> None:
    async def two_counts(server) -> None:
        client = open_model(f"{server.model}@{server.base_url}")
        try:
            assert await client.count_prompt(MESSAGES) == server.prompt_tokens(MESSAGES)
            await client.count_prompt(MESSAGES)
        finally:
            await client.aclose()

    with LlamaCppPython(context_window=4096) as server:
        asyncio.run(two_counts(server))
    assert server.probes.count("/v1/models") == 1
    assert server.probes.count("/extras/tokenize/count") == 3  # the probe, then two counts


def test_estimated_usage_is_said_in_metrics_and_at_the_start(generated_room, tmp_path) -> None:
    from dealroom.harness import run_agent
    from dealroom.runs import RunFolder

    with Plain(context_window=32768) as server:
        run_agent(generated_room, tmp_path / "run", root="scripted",
                  sub=f"sub@{server.base_url}", max_turns=6, max_tokens=5_000_000)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    usage = metrics["usage"]
    assert usage["usage_estimated_calls"] > 0
    assert usage["counts_source"]["estimate"] == usage["usage_estimated_calls"]
    start = RunFolder.open(tmp_path / "run").events()[0]
    assert start["counts_source"] == {"sub": "estimate"}
    assert any("token budget is enforced on words-v1 estimates" in w for w in start["warnings"])


def test_counted_usage_is_not_an_estimate(generated_room, tmp_path) -> None:
    from dealroom.harness import run_agent
    from dealroom.runs import RunFolder

    with LlamaCppPython(context_window=32768) as server:
        run_agent(generated_room, tmp_path / "run", root="scripted",
                  sub=f"sub@{server.base_url}", max_turns=6, max_tokens=5_000_000)
    usage = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]
    assert usage["usage_estimated_calls"] == 0
    assert usage["counts_source"].get("extras", 0) > 0
    assert RunFolder.open(tmp_path / "run").events()[0]["warnings"] == []


def test_a_server_that_computes_one_request_at_a_time_gets_one() -> None:
    """llama.cpp's ``/props`` says ``total_slots``: no more requests are kept open than that,
    so none waits inside the server while its deadline runs."""
    async def four_at_once(server) -> int:
        client = open_model(f"{server.model}@{server.base_url}", concurrency=4)
        try:
            facts = await client.server_facts()
            await asyncio.gather(*(client.chat(MESSAGES, max_tokens=8) for _ in range(4)))
            return facts.slots
        finally:
            await client.aclose()

    with LlamaCpp(context_window=4096, slots=1, latency=0.2) as server:
        assert asyncio.run(four_at_once(server)) == 1
    assert server.max_in_flight == 1
    assert len(server.requests) == 4


def test_a_server_with_several_slots_keeps_the_clients_concurrency() -> None:
    async def four_at_once(server) -> None:
        client = open_model(f"{server.model}@{server.base_url}", concurrency=4)
        try:
            await client.server_facts()
            await asyncio.gather(*(client.chat(MESSAGES, max_tokens=8) for _ in range(4)))
        finally:
            await client.aclose()

    with LlamaCpp(context_window=4096, slots=8, latency=0.2) as server:
        asyncio.run(four_at_once(server))
    assert server.max_in_flight == 4
