"""Schema-constrained replies: asked for where the endpoint offers them, and each shape the
endpoint refuses is remembered per client, down to none at all."""

import asyncio

import pytest

from dealroom.models import ScriptedModel, open_model
from dealroom.testing import MockOpenAIServer

HELLO = [{"role": "user", "content": "Grade it."}]
SCHEMA = {"type": "object", "properties": {"C-001": {"type": "string"}}, "required": ["C-001"]}
FORMAT = {"type": "json_schema", "json_schema": {"name": "verdicts", "schema": SCHEMA}}


def asked(refuse=(), status=400, calls=2):
    async def go():
        server = MockOpenAIServer('{"C-001": "pass"}', refuse=refuse, refuse_status=status)
        async with server as srv, open_model(srv.spec) as client:
            results = [await client.chat(HELLO, response_format=FORMAT) for _ in range(calls)]
            return results, srv.requests, client.refused

    return asyncio.run(go())


def test_the_json_schema_is_sent_as_given():
    results, requests, refused = asked()
    assert [r.structured for r in results] == ["json_schema", "json_schema"]
    assert requests[0]["response_format"] == FORMAT and not refused
    assert results[0].record()["structured"] == "json_schema"


@pytest.mark.parametrize("status", [400, 422, 500])
def test_a_refused_json_schema_falls_back_to_json_object_with_the_schema(status):
    results, requests, refused = asked(refuse=("json_schema",), status=status)
    assert [r.structured for r in results] == ["json_object", "json_object"]
    sent = [r["response_format"] for r in requests]
    assert sent[0] == FORMAT and sent[1] == sent[2] == {"type": "json_object", "schema": SCHEMA}
    assert refused == {"json_schema"} and len(requests) == 3, "the refusal is remembered"


def test_an_endpoint_refusing_every_shape_is_answered_without_one():
    results, requests, refused = asked(refuse=("response_format",))
    assert [r.structured for r in results] == [None, None]
    assert results[0].text == '{"C-001": "pass"}'
    assert "response_format" not in requests[-1] and len(requests) == 4
    assert refused == {"json_schema", "json_object"}


def test_a_refused_stream_is_dropped_and_remembered():
    async def go():
        async with MockOpenAIServer("fine", refuse=("stream",)) as srv:
            async with open_model(srv.spec) as client:
                results = [await client.chat(HELLO) for _ in range(2)]
            return results, srv.requests

    results, requests = asyncio.run(go())
    assert [r.text for r in results] == ["fine", "fine"] and not results[0].streamed
    assert [("stream" in r) for r in requests] == [True, False, False]


def test_an_unrelated_400_is_not_taken_for_a_refusal():
    async def go():
        from dealroom.errors import ModelError
        from dealroom.testing import Fault

        async with MockOpenAIServer("fine") as srv:
            srv.fail_next(Fault.http(400, "context length exceeded"))
            async with open_model(srv.spec) as client:
                with pytest.raises(ModelError, match="context length"):
                    await client.chat(HELLO, response_format=FORMAT)
                return client.refused

    assert asyncio.run(go()) == set()


def test_the_scripted_model_records_the_format_it_was_asked_for():
    model = ScriptedModel(['{"C-001": "pass"}'])
    asyncio.run(model.chat(HELLO, response_format=FORMAT))
    assert model.calls[0].response_format == FORMAT


def test_llama_cpp_python_is_probed_as_honouring_a_schema_and_constrains_its_reply(
        llama_server):
    """The `local` model's server (llama-cpp-python) turns the schema into a grammar: a 135M
    model's reply is JSON that matches (issue 40, item 3)."""
    from dealroom.models import check_schema, read_structured, schema_format, schema_via

    schema = {"type": "object", "properties": {
        "answer": {"type": "string", "enum": ["yes", "no"]}, "count": {"type": "integer"}},
        "required": ["answer", "count"]}

    async def go():
        async with open_model(llama_server.spec()) as client:
            before = schema_via(client)
            await client.server_facts()
            result = await client.chat([{"role": "user", "content": "Is the sky blue?"}],
                                       max_tokens=48, response_format=schema_format(schema))
            return before, schema_via(client), result, client.refused

    before, after, result, refused = asyncio.run(go())
    assert (before, after) == ("prompt", "response_format")  # probed, once, by the run
    assert result.structured in ("json_schema", "json_object")
    value, error = read_structured(result.text, check_schema(schema))
    assert error is None and value["answer"] in ("yes", "no"), (result.text, refused)
