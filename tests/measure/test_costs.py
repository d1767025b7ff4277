"""Where the tokens went: per named sub-agent model, per child subtree, and the split."""

from dealroom.measure._costs import cost_split


def call(agent, role, model, cost, depth=0):
    return {"type": "model_call", "agent": agent, "role": role, "model": model,
            "depth": depth, "usage": {"input_tokens": 10, "output_tokens": 1,
                                      "cost_usd": cost}}


def test_a_child_counts_its_subtree_and_the_split_partitions_the_total():
    config = {"sub": "A", "subs": {"fast": "A", "strong": "B"}}
    events = [
        call("root", "root", "R", 1.0),
        call("root", "sub", "A", 0.5, 1),
        call("root", "sub", "B", 2.0, 1),
        {"type": "child_start", "agent": "root/c1-0"},
        call("root/c1-0", "child_root", "B", 3.0, 1),
        call("root/c1-0", "sub", "A", 0.25, 2),
        {"type": "child_start", "agent": "root/c1-0/c2-0"},
        call("root/c1-0/c2-0", "child_root", "A", 0.125, 2),
        {"type": "child_start", "agent": "root/c1-1"},
    ]
    out = cost_split(events, config)
    assert out["by_sub"]["fast"]["cost_usd"] == 0.875 and out["by_sub"]["strong"]["calls"] == 2
    assert out["by_child"]["root/c1-0"]["cost_usd"] == 3.375  # its own child included
    assert out["by_child"]["root/c1-0/c2-0"]["cost_usd"] == 0.125
    assert out["by_child"]["root/c1-1"]["calls"] == 0
    assert {k: v["cost_usd"] for k, v in out["split"].items()} == {
        "root": 1.0, "sub.fast": 0.5, "sub.strong": 2.0, "children": 3.375}
    assert out["root_cost_share"] == 1.0 / 6.875


def test_one_sub_is_named_default_and_no_cost_is_null():
    out = cost_split([call("root", "sub", "A", 0.0, 1)], {"sub": "A"})
    assert set(out["by_sub"]) == {"default"} and set(out["split"]) == {"sub.default"}
    assert out["root_cost_share"] is None
