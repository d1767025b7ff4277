"""The reply cap every call carries (issue 36, item 2)."""

from __future__ import annotations

import asyncio

from dealroom.models import open_model, reply_cap
from dealroom.testing import ServedModelServer


def _chat(spec, messages, **options):
    async def go():
        client = open_model(spec)
        try:
            return await client.chat(messages, **options), client
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_a_call_that_gives_no_cap_sends_the_default_one() -> None:
    with ServedModelServer(lambda req: "ok", record=True) as server:
        result, _ = _chat(server.spec.replace(context_window=6000),
                          [{"role": "user", "content": "hi"}])
        assert server.requests[0]["max_tokens"] == reply_cap(6000) == 1500
    assert result.record()["max_tokens"] == 1500
