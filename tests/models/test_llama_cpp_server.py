"""What llama-cpp-python's real server does with a prompt near or past its window (issue 36,
item 5): an over-long prompt, streamed, is a length refusal after one unstreamed ask (never
the same request five times); a reply the server cut short of its cap shows its window."""

from __future__ import annotations

import asyncio

from dealroom.models import ProviderError, open_model

LONG = [{"role": "user", "content": "word " * 3000}]  # ~3,000 tokens, past n_ctx 2,048


def _chat(spec, messages, **options):
    async def go():
        client = open_model(spec)
        try:
            try:
                return await client.chat(messages, temperature=0.0, **options), client
            except ProviderError as exc:
                return exc, client
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_an_over_long_streamed_prompt_is_a_length_refusal_not_resent(llama_server) -> None:
    spec = llama_server.spec(backoff_s=0.05)
    assert spec.stream and spec.max_retries == 4
    error, _ = _chat(spec, LONG)
    assert isinstance(error, ProviderError)
    assert error.kind == "context_length" and error.prompt_tokens > 2048
    assert error.attempts <= 3  # the empty stream, at most a dropped connection, the 400


def test_a_reply_the_server_cut_short_of_its_cap_shows_the_window() -> None:
    from support.llama import draft_grammar, need_llama

    from dealroom.testing import LlamaCppServer

    need_llama()
    with LlamaCppServer(n_ctx=256) as small:  # a small window: a near-full prompt is cheap
        spec = small.spec(draft_grammar(), stream=False)  # the spec's window: 32,768
        near = [{"role": "user", "content": "word " * 200}]
        result, client = _chat(spec, near, max_tokens=200)
    assert result.finish_reason == "length" and result.usage.output_tokens < 200
    assert client.context_window == 256  # the server's n_ctx, learned from the reply
