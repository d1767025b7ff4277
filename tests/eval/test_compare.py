"""Paired comparisons: pairing by room (and T, depth, seed), the interval, the sign test, per
criterion type and per (K,T) cell; and the refusal when there is nothing to pair."""

import json
import warnings

import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import ConfigError, DealroomWarning
from dealroom.eval import compare
from dealroom.eval._results import parse_source


def two_policies(sweep_builder, rooms=("r1", "r2", "r3", "r4"), seeds=(0, 1)):
    sweep = sweep_builder(max_turns=[8], samples=len(seeds))
    for n, room in enumerate(rooms):
        for seed in seeds:
            sweep.episode(room, "scripted", seed=seed, pass_rate=0.5 + 0.1 * n,
                          by_type={"fact": 1.0, "citation": 0.5})
            sweep.episode(room, "scripted:coverage=0.3", seed=seed, pass_rate=0.3 + 0.1 * n -
                          0.1 * seed, by_type={"fact": 0.5, "citation": 0.5})
    return sweep.write()


def test_policies_of_one_sweep_pair_room_by_room_and_seed_by_seed(sweep_builder):
    path = two_policies(sweep_builder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # four rooms: a real interval, no warning
        result = compare(f"{path}:root=scripted", f"{path}:root=scripted:coverage=0.3")
    assert result["paired_on"] == ["room", "max_turns", "depth", "seed"]
    assert result["pairs"] == 8 and result["rooms"] == 4
    assert result["mean_diff"] == pytest.approx((0.2 * 4 + 0.3 * 4) / 8)
    assert result["ci_low"] <= result["mean_diff"] <= result["ci_high"]
    assert result["p_value"] == pytest.approx(2 / 2**8) and result["a_better"] == 8
    assert result["by_type"]["fact"]["mean_diff"] == pytest.approx(0.5)
    assert result["by_type"]["citation"]["p_value"] == 1.0
    k2 = next(c for c in result["cells"] if c["k"] == 2)
    assert k2["max_turns"] == 8 and k2["a"] == 1.0 and k2["b"] == pytest.approx(0.5)
    swapped = compare(f"{path}:root=scripted:coverage=0.3", f"{path}:root=scripted")
    assert swapped["mean_diff"] == pytest.approx(-result["mean_diff"])


def test_budgets_that_differ_pair_on_room_and_seed(sweep_builder):
    sweep = sweep_builder(max_turns=[4, 8])
    for room, short, long in (("r1", 0.1, 0.6), ("r2", 0.2, 0.5)):
        sweep.episode(room, "scripted", max_turns=4, pass_rate=short)
        sweep.episode(room, "scripted", max_turns=8, pass_rate=long)
    path = sweep.write()
    with pytest.warns(DealroomWarning, match=r"degenerate intervals .*over 2 rooms"):
        result = compare(f"{path}:max_turns=8", f"{path}:max_turns=4")
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((0.3, 0.5))  # the two rooms
    assert result["paired_on"] == ["room", "depth", "seed"]
    assert result["pairs"] == 2 and result["mean_diff"] == pytest.approx(0.4)
    assert result["cells"] == []  # no turn budget in common


def test_two_sweeps_with_no_shared_room_are_refused(sweep_builder):
    a, b = sweep_builder("a"), sweep_builder("b")
    a.episode("r1", "scripted", pass_rate=0.5)
    b.episode("r2", "scripted", pass_rate=0.5)
    with pytest.raises(ConfigError, match="share no room"):
        compare(a.write(), b.write())
    out = CliRunner().invoke(app, ["eval", "compare", str(a.path), str(b.path), "--json"])
    assert isinstance(out.exception, ConfigError)


def test_a_selector_matching_nothing_is_named(sweep_builder):
    path = two_policies(sweep_builder, rooms=("r1",))
    with pytest.raises(ConfigError, match="no episodes matching root=nope"):
        compare(f"{path}:root=nope", path)
    assert parse_source(f"{path}:root=a:x=1,seed=2;sub=b")[1] == {"root": "a:x=1", "seed": "2",
                                                                  "sub": "b"}


def test_the_command_prints_the_interface_keys(sweep_builder):
    path = two_policies(sweep_builder)
    out = CliRunner().invoke(app, ["eval", "compare", f"{path}:root=scripted",
                                   f"{path}:root=scripted:coverage=0.3", "--json"])
    assert out.exit_code == 0, out.output
    assert {"pairs", "mean_diff", "ci_low", "ci_high", "p_value"} <= set(json.loads(out.output))
    shown = CliRunner().invoke(app, ["eval", "compare", f"{path}:root=scripted",
                                     f"{path}:root=scripted:coverage=0.3"])
    assert "A - B: +25.0 pts" in shown.output and "sign test" in shown.output
