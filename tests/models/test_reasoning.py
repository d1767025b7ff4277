"""Reasoning apart from the answer: every shape a served reasoning model sends, streamed and
not, through the real client against a vLLM-like loopback endpoint."""

from __future__ import annotations

import asyncio

import pytest

from dealroom.models import ChatResult, ScriptedModel, join_reasoning, open_model, split_reasoning
from dealroom.testing import Completion, ServedModelServer
from dealroom.types import Usage

SHAPES = ("field", "reasoning", "inline", "closing")


def _ask(server: ServedModelServer, **options) -> ChatResult:
    async def go() -> ChatResult:
        async with server:
            client = open_model(server.spec)
            try:
                return await client.chat([{"role": "user", "content": "hi"}], **options)
            finally:
                await client.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_gives_the_answer_alone_and_keeps_the_reasoning(shape, stream) -> None:
    said = Completion("```python\nprint('real')\n```",
                      reasoning="Let me draft:\n```python\nprint('draft')\n```\nno, better")
    result = _ask(ServedModelServer(lambda req: said, reasoning=shape, streams=stream))
    assert result.text.strip() == said.answer
    assert "draft" not in result.text
    assert result.reasoning.strip() == said.reasoning
    assert result.reasoning_shape == ("field" if shape in ("field", "reasoning") else shape)
    assert result.record()["reasoning"] == result.reasoning_shape
    assert result.streamed is stream


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("shape", ["field", "reasoning", "inline"])  # closing: no tag to see
def test_a_reply_cut_inside_its_reasoning_is_a_reply_without_answer(shape, stream) -> None:
    cut = Completion("", reasoning="I should read the contracts first and then",
                     finish_reason="length")
    result = _ask(ServedModelServer(lambda req: cut, reasoning=shape, streams=stream))
    assert result.text == "" and result.finish_reason == "length"
    assert "read the contracts" in result.reasoning


def test_reasoning_tokens_are_counted_when_the_endpoint_reports_no_usage() -> None:
    model = ScriptedModel(["<think>" + "weigh it " * 50 + "</think>ok"])
    result = asyncio.run(model.chat([{"role": "user", "content": "q"}]))
    assert result.text == "ok" and result.usage.output_tokens > 50
    assert isinstance(result.usage, Usage)


@pytest.mark.parametrize("text", [
    "<think>\nplan\n</think>\n\n```python\nx = 1\n```", "plan</think>answer",
    "<think>cut off", "no reasoning at all", "a</think>b</think>c",
])
def test_split_and_join_give_the_reply_back_exactly(text) -> None:
    split = split_reasoning(text)
    assert join_reasoning(split.reasoning, split.answer, split.shape) == text
