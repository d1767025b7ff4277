"""A model's window and prompt counted as the endpoint does: /tokenize, max_model_len, the
learned correction, and length refusals recognised as their own kind of failure."""

from __future__ import annotations

import asyncio

import pytest

from dealroom.models import PromptCounter, ProviderError, check, open_model
from dealroom.testing import Fault, MockOpenAIServer, ServedModelServer

MESSAGES = [{"role": "system", "content": "You review."},
            {"role": "user", "content": "Clause 7: USD 1,234,567.89 due 2031-06-30. " * 40}]


def _with_client(server, work, spec=None):
    async def go():
        async with server:
            client = open_model(spec(server) if spec else server.spec)
            try:
                return await work(client)
            finally:
                await client.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 16000 tokens. However, you requested 17012 tokens "
    "(16500 in the messages, 512 in the completion). Please reduce the length of the messages.",
    "the request exceeds the available context size, try increasing it",
    "The input (20000 tokens) is longer than the model's context length (16384 tokens).",
    "context_length_exceeded: Your input exceeds the context window of this model.",
])
def test_a_length_refusal_is_its_own_kind_and_is_not_retried(message) -> None:
    server = MockOpenAIServer()

    async def work(client):
        server.fail_next(Fault.http(400, message))
        with pytest.raises(ProviderError) as caught:
            await client.chat(MESSAGES)
        return caught.value

    error = _with_client(server, work)
    assert error.kind == "context_length" and error.attempts == 1
    assert server.calls == 1
    if "in the messages" in message:
        assert error.prompt_tokens == 16500 and error.record()["prompt_tokens"] == 16500


def test_tokenize_counts_the_prompt_as_the_server_does_and_is_asked_once_if_absent() -> None:
    served = ServedModelServer("ok", model="mock", context_window=16000)
    counted = _with_client(served, lambda client: PromptCounter(client).count(MESSAGES))
    assert counted == served.prompt_tokens(MESSAGES) and served.tokenize_calls == 1

    bare = ServedModelServer("ok", model="mock", tokenize=False)

    async def twice(client):
        counter = PromptCounter(client)
        first = await counter.count(MESSAGES)
        second = await counter.count(MESSAGES)
        return first, second, counter.source, client._tokenize

    first, second, source, probed = _with_client(bare, twice)
    assert first == second and source == "words" and probed is False


def test_the_correction_is_learned_from_the_reported_prompt_tokens() -> None:
    counter = PromptCounter(object())
    estimate = asyncio.run(counter.count(MESSAGES))
    counter.learn(MESSAGES, int(estimate * 1.4))
    assert asyncio.run(counter.count(MESSAGES)) == pytest.approx(estimate * 1.4, rel=0.01)


def test_the_window_comes_from_the_servers_max_model_len() -> None:
    async def window(client):
        await check(client)
        return client.context_window

    assert _with_client(ServedModelServer("ok", context_window=12_288), window) == 12_288
    named = _with_client(ServedModelServer("ok", context_window=12_288), window,
                         spec=lambda srv: f"mock@{srv.base_url}#context_window=8000")
    assert named == 8000  # a smaller window named in the spec stands


def test_an_hf_model_is_counted_with_its_own_tokenizer(tiny_model_dir, tiny_tokenizer) -> None:
    async def go():
        async with open_model(f"hf:{tiny_model_dir},device=cpu,max_tokens=4") as model:
            await model.chat(MESSAGES[:1] + [{"role": "user", "content": "hi"}])
            counter = PromptCounter(model)
            return await counter.count(MESSAGES), counter.source

    counted, source = asyncio.run(go())
    expected = tiny_tokenizer.apply_chat_template(MESSAGES, tokenize=True,
                                                  add_generation_prompt=True)
    expected = expected["input_ids"] if isinstance(expected, dict) else expected
    assert (counted, source) == (len(expected), "tokenizer")


def test_an_hf_models_overflow_is_a_length_refusal_the_harness_knows(tiny_model_dir) -> None:
    from dealroom.errors import ModelError
    from dealroom.harness.rlm._context import refused_count, refused_for_length

    async def go():
        async with open_model(f"hf:{tiny_model_dir},device=cpu") as model:
            with pytest.raises(ModelError) as caught:
                await model.chat([{"role": "user", "content": "x" * 9000}], max_tokens=5)
            return caught.value

    error = asyncio.run(go())
    assert refused_for_length(error) and refused_count(error) > 1000


class LlamaCppServer(MockOpenAIServer):
    """llama.cpp's server as far as the window goes: ``/v1/models`` without
    ``max_model_len``, the context size at ``GET /props``."""

    def routes(self, app) -> None:
        from aiohttp import web

        async def props(request):
            return web.json_response({"default_generation_settings": {"n_ctx": 6144},
                                      "total_slots": 1})

        super().routes(app)
        app.router.add_get("/props", props)


def _file_window(tmp_path, server, capsys):
    from dealroom.models import model_record

    path = tmp_path / "models.toml"

    async def go():
        async with server:
            path.write_text(f'[models.plain]\nbase_url = "{server.base_url}"\nmodel = "mock"\n')
            async with open_model("plain", models_file=path) as client:
                await check(client)
                return model_record(client)

    capsys.readouterr()
    record = asyncio.run(go())
    return record["context_window"], record["context_window_from"], capsys.readouterr().err


def test_a_models_file_entry_may_leave_the_window_to_the_server(tmp_path, capsys) -> None:
    window, source, err = _file_window(tmp_path, ServedModelServer("ok", context_window=12_288),
                                       capsys)
    assert (window, source, err) == (12_288, "server", "")
    window, source, err = _file_window(tmp_path, LlamaCppServer(), capsys)
    assert (window, source, err) == (6144, "server", "")


def test_a_window_nobody_gives_is_the_default_with_a_warning(tmp_path, capsys,
                                                            monkeypatch) -> None:
    monkeypatch.setattr("dealroom.models._identity._warned", set())  # once per process
    window, source, err = _file_window(tmp_path, MockOpenAIServer(), capsys)
    assert (window, source) == (32_768, "default")
    assert "neither the spec nor the server gives the context window" in err
    assert "set context_window in [models.plain]" in err
