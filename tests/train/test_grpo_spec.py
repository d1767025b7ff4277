"""The GRPO spec is one schema: each key's type, list-or-scalar, and checks across keys are said
by GRPOSpec itself, with messages that name the key, what is allowed and what came."""

import re

import pytest

from dealroom.errors import ConfigError, InputError
from dealroom.train import GRPOSpec, load_grpo_spec
from dealroom.train._grpo_settings import spec_from_dict

BASE = {"model": "hf:local", "rooms": ["rooms/a"]}


@pytest.mark.parametrize(("change", "message"), [
    ({"model": None}, "missing required key 'model': the root policy GRPO trains, e.g. "
                      'model = "hf:local"'),
    ({"model": 3}, "model must be a string, got 3"),
    ({"rooms": ["a", 3]}, "rooms[1] must be a string, got 3"),
    ({"heldout": [True]}, "heldout[0] must be a string, got True"),
    ({"budgetmix": [8, "x"]}, "budgetmix[1] must be an integer, got 'x'"),
    ({"budgetmix": [8, True]}, "budgetmix[1] must be an integer, got True"),
    ({"budgetmix": [8, 16, 8]}, "budgetmix lists a budget twice: [8, 16, 8]"),
    ({"sub": 3}, "sub must be a string, got 3"),
    ({"judge": ["a"]}, "judge must be a string, got ['a']"),
    ({"settings": 3}, "settings must be a table, got 3"),
    ({"settings": {"temperature": 1.0}}, "set temperature in [grpo] (or budgetmix), not in "
                                         "[settings]"),
    ({"grpo": 3}, "grpo must be a table, got 3"),
    ({"grpo": {"group_size": 1}}, "[grpo] group_size must be an integer of at least 2, got 1"),
    ({"grpo": {"groupsize": 2}}, "[grpo] unknown key 'groupsize'; the keys are lora_rank"),
    ({"generate": {"docs": 0, "secret": "s"}}, "[[generate]] docs must be an integer of at "
                                               "least 1, got 0"),
    ({"rooms": []}, "the spec names no training rooms: give rooms = [...] or [[generate]]"),
])
def test_each_bad_key_is_one_clear_error(change, message):
    data = {k: v for k, v in {**BASE, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=re.escape(message)):
        spec_from_dict(data)


def test_scalars_stand_for_lists_and_generated_rooms_are_typed():
    spec = spec_from_dict({**BASE, "rooms": "rooms/*", "heldout": "held/*", "budgetmix": 8,
                           "generate": {"docs": 4, "secret": "s"}})
    assert (spec.rooms, spec.heldout, spec.budgetmix) == (("rooms/*",), ("held/*",), (8,))
    assert spec.generate[0].folder_name() == "g4-s0"
    assert GRPOSpec(**spec.model_dump()) == spec


def test_a_spec_file_error_names_the_file(tmp_path):
    path = tmp_path / "SPEC.toml"
    path.write_text('model = "hf:local"\nrooms = ["a"]\nbudgetmix = [8, 8]\n')
    with pytest.raises(ConfigError, match=f"GRPO spec {re.escape(str(path))}: budgetmix"):
        load_grpo_spec(path)
    path.write_text('model = "hf:local"\nrooms = ["a"]\n[grpo]\nsteps = "3"\n')
    with pytest.raises(InputError, match=r"\[grpo\] steps must be an integer, got '3'"):
        load_grpo_spec(path)
    path.write_text('model = "hf:local"\nrooms = ["a"]\nbudgetmix = [8, 8]\n')
    spec, base = load_grpo_spec(path, budgetmix=[4, 8])  # the flag replaces the spec's
    assert spec.budgetmix == (4, 8) and base == tmp_path.resolve()


def test_the_frozen_sub_agents_may_be_named_models():
    spec = spec_from_dict({**BASE, "sub": {"fast": "oracle:recall=0.5", "strong": "oracle"}})
    assert spec.sub == "fast=oracle:recall=0.5 strong=oracle"
    from dealroom.harness import label_specs, sub_specs

    assert sub_specs(spec.sub.split()) == {"fast": "oracle:recall=0.5", "strong": "oracle"}
    assert label_specs(spec.sub) == ["oracle:recall=0.5", "oracle"]
    with pytest.raises(ConfigError, match="sub-agent strong = 3"):
        spec_from_dict({**BASE, "sub": {"fast": "oracle", "strong": 3}})
