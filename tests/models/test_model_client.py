import asyncio
import socket
import time

import pytest

from dealroom.errors import ConfigError, ModelError
from dealroom.models import ModelSpec, OpenAICompatibleClient, Prices, check, open_model
from dealroom.models._client import parse_usage
from dealroom.models._endpoint import endpoint_limit
from dealroom.room import count_tokens
from dealroom.testing import Fault, MockOpenAIServer, chat_completion_body

HELLO = [{"role": "user", "content": "Is consent required?"}]


def spec_for(srv: MockOpenAIServer, **changes) -> ModelSpec:
    return srv.spec.replace(**changes)


async def one_call(srv, reply_spec=None, messages=HELLO, **kwargs):
    async with open_model(reply_spec or srv.spec) as client:
        return await client.chat(messages, **kwargs)


def test_usage_and_cost_with_cached_tokens():
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 200,
        "prompt_tokens_details": {"cached_tokens": 600},
    }

    async def go():
        async with MockOpenAIServer(lambda req: chat_completion_body("yes", usage=usage)) as srv:
            prices = Prices(input=2.0, cached_input=0.5, output=8.0)
            return await one_call(srv, spec_for(srv, prices=prices))

    result = asyncio.run(go())
    assert result.text == "yes" and result.finish_reason == "stop" and result.model == "mock"
    assert (result.usage.input_tokens, result.usage.cached_input_tokens) == (1000, 600)
    assert result.usage.output_tokens == 200 and result.usage.calls == 1
    assert result.usage.cost_usd == pytest.approx((400 * 2 + 600 * 0.5 + 200 * 8) / 1e6)
    assert not result.usage_estimated and result.latency_s > 0


def test_provider_reported_cost_wins_over_prices():
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "cost": 0.0123}

    async def go():
        async with MockOpenAIServer(lambda req: chat_completion_body("x", usage=usage)) as srv:
            return await one_call(srv, spec_for(srv, prices=Prices(100, 100, 100)))

    assert asyncio.run(go()).usage.cost_usd == 0.0123


def test_parse_usage_variants():
    prices = Prices(input=1.0, output=1.0)
    deepseek = parse_usage(
        {"prompt_tokens": 50, "completion_tokens": 1, "prompt_cache_hit_tokens": 30}, prices
    )
    assert deepseek.cached_input_tokens == 30
    byok = parse_usage(
        {
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "cost": 0,
            "cost_details": {"upstream_inference_cost": 0.5},
        },
        prices,
    )
    assert byok.cost_usd == 0.5
    assert parse_usage(None, prices) is None and parse_usage({"total": 3}, prices) is None


def test_missing_usage_is_counted_and_marked_estimated():
    async def go():
        async with MockOpenAIServer(lambda req: "three small words") as srv:
            srv.fail_next(Fault.no_usage())
            prices = Prices(input=1.0, output=2.0)
            return await one_call(srv, spec_for(srv, prices=prices))

    result = asyncio.run(go())
    assert result.usage_estimated
    assert result.usage.input_tokens == count_tokens(HELLO[0]["content"])
    n_out = count_tokens("three small words")
    assert result.usage.output_tokens == n_out
    assert result.usage.cost_usd == pytest.approx((result.usage.input_tokens + 2 * n_out) / 1e6)


def test_request_carries_the_options():
    async def go():
        async with MockOpenAIServer() as srv:
            spec = spec_for(srv, max_output_tokens=77, options={"extra_body": {"top_k": 5}})
            await one_call(srv, spec)
            await one_call(srv, spec, max_tokens=9, temperature=0.0, stop=["\n"])
            spec = spec_for(srv, options={"max_tokens_field": "max_completion_tokens"})
            await one_call(srv, spec, max_tokens=3)
            return srv.requests

    first, second, third = asyncio.run(go())
    assert first["max_tokens"] == 77 and first["top_k"] == 5 and "temperature" not in first
    assert (second["max_tokens"], second["temperature"], second["stop"]) == (9, 0.0, ["\n"])
    assert third["max_completion_tokens"] == 3 and "max_tokens" not in third
    assert first["model"] == "mock" and first["messages"] == HELLO


def test_429_honours_retry_after():
    async def go():
        async with MockOpenAIServer() as srv:
            srv.fail_next(Fault.rate_limit(retry_after=0.4))
            start = time.perf_counter()
            result = await one_call(srv)
            return result, time.perf_counter() - start, srv.calls

    result, elapsed, calls = asyncio.run(go())
    assert result.attempts == 2 and calls == 2
    assert elapsed >= 0.4


@pytest.mark.parametrize(
    "fault",
    [
        Fault.server_error(500),
        Fault.server_error(503),
        Fault.rate_limit(None),
        Fault.malformed(),
        Fault.disconnect(),
        Fault.timeout(3600.0),  # past the test's time-out: only the client's 0.5 s ends it
    ],
    ids=["500", "503", "429-no-header", "malformed", "disconnect", "timeout"],
)
def test_transient_failures_are_retried(fault):
    async def go():
        async with MockOpenAIServer() as srv:
            srv.fail_next(fault)
            return await one_call(srv, spec_for(srv, timeout=0.5))

    result = asyncio.run(go())
    assert result.attempts == 2 and result.text.startswith("echo: ")


def test_persistent_failure_becomes_a_model_error():
    async def go():
        async with MockOpenAIServer() as srv:
            srv.fail_next(*[Fault.server_error(502, "bad gateway")] * 3)
            with pytest.raises(ModelError) as err:
                await one_call(srv, spec_for(srv, max_retries=2))
            return err.value, srv.calls

    error, calls = asyncio.run(go())
    assert calls == 3 and error.status == 502 and error.model.startswith("mock@")
    assert "gave up after 3 attempts" in str(error) and "bad gateway" in str(error)


def test_timeouts_exhausted():
    async def go():
        async with MockOpenAIServer() as srv:
            srv.fail_next(*[Fault.timeout(5.0)] * 2)
            with pytest.raises(ModelError, match="timed out after 0.2s"):
                await one_call(srv, spec_for(srv, timeout=0.2, max_retries=1))

    asyncio.run(go())


def test_client_errors_are_not_retried():
    async def go():
        async with MockOpenAIServer() as srv:
            srv.fail_next(Fault.http(400, "context length exceeded"))
            with pytest.raises(ModelError, match="context length exceeded") as err:
                await one_call(srv)
            return err.value, srv.calls

    error, calls = asyncio.run(go())
    assert calls == 1 and error.status == 400


def test_one_limit_per_endpoint_shared_by_clients():
    async def go():
        async with MockOpenAIServer(latency=0.05) as srv:
            a = open_model(spec_for(srv, concurrency=3))
            b = open_model(spec_for(srv, name="other", concurrency=2))
            calls = [c.chat(HELLO) for c in (a, b) for _ in range(12)]
            await asyncio.gather(*calls)
            limit = endpoint_limit(srv.base_url)
            await a.aclose()
            endpoint = b._endpoint
            assert not endpoint.closed  # b still holds it
            await b.aclose()
            return srv.max_in_flight, limit, endpoint.closed

    max_in_flight, limit, closed = asyncio.run(go())
    assert limit == 3 and max_in_flight == 3 and closed


def test_api_key_is_sent_as_bearer(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-right")

    async def go():
        async with MockOpenAIServer(api_key="sk-right") as srv:
            return await one_call(srv, f"mock@{srv.base_url}")

    assert asyncio.run(go()).text.startswith("echo: ")


def test_endpoint_spec_without_a_key_sends_none(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    async def go():
        async with MockOpenAIServer() as srv:
            client = open_model(f"mock@{srv.base_url}")
            assert "Authorization" not in client._headers
            await client.aclose()

    asyncio.run(go())


def dead_base_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_preflight_fails_fast_on_a_dead_endpoint():
    url = dead_base_url()
    client = OpenAICompatibleClient(
        ModelSpec(name=f"m@{url}", kind="openai", model="m", base_url=url)
    )
    with pytest.raises(ConfigError, match="cannot reach") as err:
        asyncio.run(check(client))
    assert url in str(err.value) and "start the server" in str(err.value)


def test_preflight_reports_a_rejected_key(monkeypatch):
    monkeypatch.setenv("DEALROOM_TEST_KEY", "sk-wrong")

    async def go():
        async with MockOpenAIServer(api_key="sk-right") as srv:
            spec = spec_for(srv, api_key_env="DEALROOM_TEST_KEY")
            await check(open_model(spec))

    with pytest.raises(ConfigError, match="rejected the API key .*set DEALROOM_TEST_KEY"):
        asyncio.run(go())


def test_preflight_accepts_an_unlisted_model_that_answers():
    async def go():
        async with MockOpenAIServer(model="served-as-alias") as srv:
            await check(open_model(spec_for(srv, model="anything")))
            return srv.calls

    assert asyncio.run(go()) == 1  # the 1-token chat


def test_preflight_reports_a_model_the_endpoint_does_not_serve():
    def reply(req):
        return "ok" if req["model"] == "mock" else Fault.http(404, "model not found")

    async def go():
        async with MockOpenAIServer(reply) as srv:
            await check(open_model(spec_for(srv, model="wrong")))

    with pytest.raises(ConfigError, match="serves: mock"):
        asyncio.run(go())


def test_a_probe_goes_through_the_models_session_with_its_headers(tmp_path, monkeypatch):
    monkeypatch.setenv("ORG_TOKEN", "t-1")

    async def go():
        async with MockOpenAIServer() as srv:
            spec = spec_for(srv, headers={"X-Org": "${ORG_TOKEN}"})
            async with open_model(spec) as client:
                listed = await client.request("GET", "models")
                root = await client.request("GET", "/v1/models")
                missing = await client.request("POST", "/tokenize", {"prompt": "x"})
            return listed, root, missing, srv.headers

    listed, root, missing, headers = asyncio.run(go())
    assert listed.status == root.status == 200 and b'"mock"' in listed.body
    assert missing.status == 404  # this server has no /tokenize (vLLM's is at the root)
    assert [h.get("X-Org") for h in headers] == ["t-1"] * 2  # (the 404 reached no handler)
