"""Sweep specs that would exhaust memory, write outside the sweep, fail every episode or crash
the reader are refused before anything is built or written, with what to change."""

from __future__ import annotations

import re

import pytest

from dealroom.errors import ConfigError, InputError
from dealroom.eval import _spec as spec_module
from dealroom.eval import run_sweep


def spec(tmp_path, text: str):
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


def test_a_sweep_too_large_to_build_is_refused_with_its_count(tmp_path, generated_room):
    huge = spec(tmp_path, f'rooms = ["{generated_room}"]\nsubs = ["oracle"]\n'
                          "samples = 100000000\n")
    with pytest.raises(InputError, match=re.escape("samples = 100,000,000 is more than a "
                                                   "sweep may run (100,000 episodes)")):
        run_sweep(huge, tmp_path / "out")
    product = spec(tmp_path, f'rooms = ["{generated_room}"]\nsubs = ["oracle"]\n'
                             "samples = 50000\nmax_turns = [1, 2, 3]\n")
    with pytest.raises(InputError, match="the sweep has 150,000 episodes, more than 100,000"):
        run_sweep(product, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["..", ".", "../x", "a/b", ".hidden", "/tmp/x", "x" * 101])
def test_a_generated_room_name_that_is_no_folder_name_is_refused(tmp_path, name):
    sweep = tmp_path / "in" / "sweep"
    text = f'subs = ["oracle"]\n[[generate]]\ndocs = 5\nsecret = "s"\nname = "{name}"\n'
    with pytest.raises(InputError, match="is no plain folder name"):
        run_sweep(spec(tmp_path, text), sweep)
    assert not (tmp_path / "in").exists()


@pytest.mark.parametrize("value", [0, -4])
def test_concurrency_below_one_is_refused(tmp_path, generated_room, value):
    text = f'rooms = ["{generated_room}"]\nsubs = ["oracle"]\nconcurrency = {value}\n'
    with pytest.raises(InputError, match=f"concurrency must be .*at least 1, got {value}"):
        run_sweep(spec(tmp_path, text), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_toml_nested_too_deep_is_a_clear_error(tmp_path):
    deep = spec(tmp_path, "a = " + "[" * 20_000 + "]" * 20_000 + "\n")
    with pytest.raises(InputError, match="spec.toml is nested too deep to read"):
        run_sweep(deep, tmp_path / "out")


def test_a_glob_over_the_whole_machine_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(spec_module, "MAX_GLOB_MATCHES", 50, raising=False)
    with pytest.raises(InputError, match=re.escape("rooms: '/*/*' matches more than 50 paths")):
        run_sweep(spec(tmp_path, 'rooms = ["/*/*"]\nsubs = ["oracle"]\n'), tmp_path / "out")
    for n in range(3):
        (tmp_path / "many" / f"d{n}").mkdir(parents=True)
    with pytest.raises(ConfigError, match="matches no room folder"):  # under the bound
        run_sweep(spec(tmp_path, f'rooms = ["{tmp_path}/many/*"]\n'), tmp_path / "out")
