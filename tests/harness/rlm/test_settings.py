"""The harness settings are schema dataclasses: each bad value names its key, what is allowed
and what was given; ``dataclasses`` still serves them (fields, asdict, a validated replace)."""

import dataclasses
import typing

import pytest

from dealroom.errors import InputError
from dealroom.harness.rlm import RLMSettings
from dealroom.harness.toolloop import ToolLoopSettings
from dealroom.models import HISTORY_POLICIES


@pytest.mark.parametrize(("given", "expected"), [
    ({"depth": 0}, "depth must be an integer of at least 1, got 0: with 1, sub-agents are "
                   "plain completions"),
    ({"max_turns": 2.5}, "max_turns must be an integer, got 2.5"),
    ({"max_turns": "30"}, "max_turns must be an integer, got '30'"),
    ({"cell_timeout": 0}, r"cell_timeout must be a number in \(0, 3600\], got 0"),
    ({"output_limit": 50}, "output_limit must be an integer of at least 200, got 50"),
    ({"slice_tokens": 10}, "slice_tokens must be an integer of at least 64, got 10"),
    ({"sub_max_output": 8}, "sub_max_output must be an integer of at least 16, got 8"),
    ({"max_errors": -1}, "max_errors must be an integer of at least 0, got -1: 0: never"),
    ({"compact_at": 1.0}, r"compact_at must be a number in \[0, 1\), got 1.0"),
    ({"reasoning_history": "all"}, "reasoning_history must be drop or keep, got 'all'"),
    ({"budget_visible": "yes"}, "budget_visible must be true or false, got 'yes'"),
    ({"max_tokens": 0}, "max_tokens must be an integer above 0, got 0: omit it for no limit"),
    ({"max_cost_usd": float("inf")}, "max_cost_usd must be a positive finite number, got inf"),
    ({"temperature": 2.5}, r"temperature must be a number in \[0, 2\], got 2.5"),
    ({"colour": "red"}, "unknown key 'colour'; the keys are depth, max_turns, max_tokens"),
])
def test_a_bad_rlm_setting_names_key_allowed_and_given(given, expected):
    with pytest.raises(InputError, match=f"^{expected}"):
        RLMSettings(**given)


def test_dataclasses_serve_the_settings_and_replace_validates():
    settings = RLMSettings(depth=2, max_seconds=30)
    assert dataclasses.asdict(settings)["depth"] == 2 and settings.max_seconds == 30.0
    assert [f.name for f in dataclasses.fields(RLMSettings)][:2] == ["depth", "max_turns"]
    assert dataclasses.replace(settings, max_turns=5).max_turns == 5
    with pytest.raises(InputError, match="max_turns must be an integer of at least 1, got 0"):
        dataclasses.replace(settings, max_turns=0)
    assert typing.get_args(RLMSettings.__pydantic_fields__["reasoning_history"].annotation) \
        == HISTORY_POLICIES


def test_tool_loop_settings_share_the_limits():
    with pytest.raises(InputError, match="max_turns must be an integer of at least 1, got 0"):
        ToolLoopSettings(max_turns=0)
    with pytest.raises(InputError, match="max_seconds must be a positive finite number, got nan"):
        ToolLoopSettings(max_seconds=float("nan"))
    with pytest.raises(InputError, match="unknown key 'depth'; the keys are max_turns"):
        ToolLoopSettings(depth=2)
