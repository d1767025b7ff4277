"""Reasoning in a block the chat template opened (issue 36, item 1): every shape (field,
inline, closing, leading whitespace, nested) finished and cut, through the real client, against
llama-cpp-python's real server where a grammar can make the shape, else a loopback stand-in;
and when the template opens ``<think>``: known from the spec, from llama.cpp's ``/props``,
or learned from an earlier reply."""

from __future__ import annotations

import asyncio

import pytest
from support.llama import DRAFT, draft_grammar

from dealroom.models import ChatResult, check, open_model, split_reasoning, template_opens
from dealroom.models._llamacpp import THINK_TEMPLATE
from dealroom.testing import Completion, ServedModelServer, gbnf_literal

HI = [{"role": "user", "content": "hi"}]


def _chat(spec, *, max_tokens: int | None = None, checked: bool = False,
          times: int = 1) -> list[ChatResult]:
    async def go() -> list[ChatResult]:
        client = open_model(spec)
        try:
            if checked:
                await check(client)
            return [await client.chat(HI, max_tokens=max_tokens, temperature=0.0)
                    for _ in range(times)]
        finally:
            await client.aclose()

    return asyncio.run(go())


# -- the split itself -----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "opened", "reasoning", "answer", "shape"), [
    ("<think>R</think>A", False, "R", "A", "inline"),
    ("<think>R cut", False, "R cut", "", "open"),
    ("R</think>A", False, "R", "A", "closing"),
    ("R</think>A", True, "R", "A", "closing"),
    ("R cut", False, None, "R cut", None),
    ("R cut", True, "R cut", "", "unclosed"),
    (" \n<think>R</think>A", False, "R", "A", "inline"),
    ("\n<think>R cut", True, "R cut", "", "open"),
    ("<think>a<think>b</think>c</think>A", False, "a<think>b</think>c", "A", "inline"),
    ("<think>a<think>b</think>c", False, "a<think>b</think>c", "", "open"),
    ("a<think>b</think>c</think>A", True, "a<think>b</think>c", "A", "closing"),
    ("a<think>b</think>c", True, "a<think>b</think>c", "", "unclosed"),
])
def test_every_inline_shape_splits_finished_and_cut(text, opened, reasoning, answer,
                                                    shape) -> None:
    split = split_reasoning(text, opened)
    assert (split.reasoning, split.answer, split.shape) == (reasoning, answer, shape)


def test_a_template_that_opens_think_is_recognised() -> None:
    assert template_opens(THINK_TEMPLATE)
    assert not template_opens(THINK_TEMPLATE.replace("<think>\\n", ""))
    qwen3_hybrid = ("{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- if "
                    "enable_thinking is defined and enable_thinking is false %}{{- "
                    "'<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}")
    assert not template_opens(qwen3_hybrid)


# -- stand-ins: shapes the real 135M model cannot be made to send -----------------------------

CUT = Completion("", reasoning='```python\nprint("DRAFT_IN_THINK_RAN")\n```\nthen',
                 finish_reason="length")


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("shape", ["field", "reasoning"])
@pytest.mark.parametrize("cut", [False, True])
def test_reasoning_in_a_field_finished_or_cut(shape, cut, stream) -> None:
    said = CUT if cut else Completion("```python\nprint(1)\n```", reasoning=CUT.reasoning)
    with ServedModelServer(lambda req: said, reasoning=shape, streams=stream) as server:
        [result] = _chat(server.spec)
    assert "DRAFT" in result.reasoning and "DRAFT" not in result.text
    assert result.text == ("" if cut else said.answer)
    assert result.reasoning_shape == "field"


@pytest.mark.parametrize("option", [True, False])
def test_a_cut_reply_of_a_model_known_to_open_the_block_is_reasoning(option) -> None:
    with ServedModelServer(lambda req: CUT, reasoning="closing") as server:
        [result] = _chat(server.spec.replace(reasoning="open") if option else server.spec)
    if option:
        assert result.text == "" and "DRAFT" in result.reasoning
        assert result.reasoning_shape == "unclosed" and result.record()["reasoning"] == "unclosed"
    else:  # nothing says the template opened it: the reply is taken as written
        assert "DRAFT" in result.text and result.reasoning is None


def test_the_spec_string_and_the_models_file_take_reasoning_open(tmp_path) -> None:
    from dealroom.errors import InputError
    from dealroom.models import load_models_file, resolve_model_spec

    assert resolve_model_spec("m@http://127.0.0.1:9/v1#reasoning=open").reasoning == "open"
    assert resolve_model_spec("m@http://127.0.0.1:9/v1").reasoning == "auto"
    models = tmp_path / "models.toml"
    models.write_text('[models.r1]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "r1"\n'
                      'context_window = 8192\nreasoning = "open"\n')
    assert load_models_file(models)["r1"].reasoning == "open"
    with pytest.raises(InputError, match="reasoning"):
        resolve_model_spec("m@http://127.0.0.1:9/v1#reasoning=maybe")


def test_llama_cpp_props_say_the_template_opens_the_block() -> None:
    with ServedModelServer(lambda req: CUT, reasoning="closing",
                           chat_template=THINK_TEMPLATE) as server:
        [result] = _chat(server.spec, checked=True)
    assert result.text == "" and result.reasoning_shape == "unclosed"


def test_a_reply_in_the_closing_shape_teaches_that_the_template_opens_it() -> None:
    replies = iter([Completion("```python\nprint(1)\n```", reasoning="short"), CUT])
    with ServedModelServer(lambda req: next(replies), reasoning="closing") as server:
        first, second = _chat(server.spec, times=2)
    assert first.reasoning_shape == "closing"
    assert second.text == "" and "DRAFT" in second.reasoning


# -- llama-cpp-python's real server --------------------------------------------------------

def _grammar(text: str, tail: bool) -> str:
    """GBNF for ``text``, then endless words when ``tail`` (so the cap cuts the reply)."""
    return f"root ::= {gbnf_literal(text)}" + (' ( " and" | " so" )+' if tail else "")


ANSWER = "```python\nprint(1)\n```"
SHORT = '```python\nprint("DRAFT_IN_THINK_RAN")\n```'
"""A drafted cell, short: grammar-forced tokens cost the most here."""


@pytest.mark.parametrize(("written", "cut", "shape"), [
    (f"<think>{SHORT}</think>{ANSWER}", False, "inline"),
    (f"<think>{SHORT}", True, "open"),
    (f" \n<think>{SHORT}</think>{ANSWER}", False, "inline"),
    (f"\n\n<think>{SHORT}", True, "open"),
    (f"<think>{SHORT}<think>x</think></think>{ANSWER}", False, "inline"),
    (f"<think>{SHORT}<think>x</think>", True, "open"),
])
def test_inline_shapes_from_the_real_server(llama_server, written, cut, shape) -> None:
    spec = llama_server.spec(_grammar(written, cut))
    [result] = _chat(spec, max_tokens=40 if cut else 64)
    assert result.finish_reason == ("length" if cut else "stop")
    assert "DRAFT_IN_THINK_RAN" in result.reasoning and result.text == ("" if cut else ANSWER)
    assert result.reasoning_shape == shape


def test_the_real_re_templated_server_replies_in_the_closing_shape(llama_think_server) -> None:
    finished = llama_think_server.spec(f"root ::= {gbnf_literal(SHORT + '</think>' + ANSWER)}")
    [result] = _chat(finished, max_tokens=64)
    assert result.finish_reason == "stop" and result.reasoning_shape == "closing"
    assert result.reasoning == SHORT and result.text == ANSWER


def test_a_real_reply_cut_inside_the_template_opened_block_is_reasoning(
        llama_think_server) -> None:
    spec = llama_think_server.spec(draft_grammar(), options="reasoning=open")
    [result] = _chat(spec, max_tokens=60)
    assert result.finish_reason == "length" and result.text == ""
    assert DRAFT in result.reasoning and result.reasoning_shape == "unclosed"
