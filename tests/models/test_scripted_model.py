import asyncio

import pytest

from dealroom.errors import ModelError
from dealroom.models import ModelClient, Prices, ScriptedModel
from dealroom.room import count_tokens


def chat(model, content="hello", **kwargs):
    return asyncio.run(model.chat([{"role": "user", "content": content}], **kwargs))


def test_replays_turns_in_order_and_records_messages():
    async def later(messages):
        return "async " + messages[-1]["content"]

    model = ScriptedModel(["first", lambda msgs: msgs[-1]["content"][::-1], later, "```python\n"])
    assert isinstance(model, ModelClient)
    assert chat(model, "one").text == "first"
    assert chat(model, "abc").text == "cba"
    assert chat(model, "x", max_tokens=5, stop=["\n"]).text == "async x"
    assert chat(model).text == "```python\n"  # malformed output is returned as scripted
    assert [m[-1]["content"] for m in model.messages] == ["one", "abc", "x", "hello"]
    assert model.calls[2].max_tokens == 5 and model.calls[2].stop == ["\n"]
    assert model.remaining == 0


def test_raises_scripted_exceptions():
    model = ScriptedModel([ModelError("down", model="s"), TimeoutError, "ok"])
    with pytest.raises(ModelError, match="down"):
        chat(model)
    with pytest.raises(TimeoutError):
        chat(model)
    assert chat(model).text == "ok"


def test_exhausted_script_raises_unless_cycling():
    model = ScriptedModel(["only"])
    chat(model)
    with pytest.raises(ModelError, match="exhausted after 1 turn"):
        chat(model)
    cycling = ScriptedModel(["a", "b"], cycle=True)
    assert [chat(cycling).text for _ in range(3)] == ["a", "b", "a"]


def test_usage_is_deterministic():
    model = ScriptedModel(["four words right here"], prices=Prices(input=1e6, output=2e6))
    result = chat(model, "Consent is required (Section 4.2).")
    n_in = count_tokens("Consent is required (Section 4.2).")
    n_out = count_tokens("four words right here")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (n_in, n_out)
    assert result.usage.calls == 1 and result.usage.cost_usd == pytest.approx(n_in + 2 * n_out)
    assert chat(
        ScriptedModel(["four words right here"]), "Consent is required (Section 4.2)."
    ).usage == result.usage.__class__(n_in, 0, n_out, 0.0, 1)


def test_records_a_snapshot_of_the_messages():
    model = ScriptedModel(["a"])
    messages = [{"role": "user", "content": "before"}]
    asyncio.run(model.chat(messages))
    messages[0]["content"] = "after"
    assert model.messages[0][0]["content"] == "before"
