"""The trace viewer draws a batch of children (rlm_batch) as a tree: each child a box in the
parent's turn that started it, in the batch's order, with its task, how it ended and its own
turns, its subtree's totals (metrics.json's ``by_child``), and its own children nested inside
it: one tree, not a second one in the usage tab."""

from __future__ import annotations

import json
import re

import pytest
from support.browser import Browser, find_chromium

from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.report import write_trace

pytestmark = pytest.mark.skipif(find_chromium() is None,
                                reason="no Chromium found (install Debian's `chromium`)")


def agents_model(messages):
    """Children by their task: 'lead' sends two children of its own, 'fails' fails."""
    first = messages[1]["content"]
    task = re.search(r"Your task:\n(.*)\n", first).group(1)
    turn = sum(m["role"] == "assistant" for m in messages) + 1
    if task == "fails":
        raise ValueError("the endpoint fell over")
    if task == "lead" and turn == 1:
        return "```python\nprint(rlm_batch(['grand a', 'grand b']))\n```"
    return f"```python\nsubmit('{task} done')\n```"


def test_the_viewer_shows_a_batch_of_children_as_a_tree(small_room, tmp_path):
    root = ScriptedModel(["```python\nr = rlm_batch(['lead', 'plain', 'fails'])\n```",
                          "```python\nsubmit()\n```"])
    run_agent(small_room, tmp_path / "run", root=root, depth=3,
              sub=ScriptedModel([agents_model], cycle=True))
    by_child = json.loads((tmp_path / "run" / "metrics.json").read_text())["usage"]["by_child"]
    assert set(by_child) == {"root/c1-0", "root/c1-1", "root/c1-2", "root/c1-0/c1-0",
                             "root/c1-0/c1-1"}

    def totals(agent):  # the subtree's, as metrics.json has it: the lead's holds its children's
        u = by_child[agent]
        return (f" · {u['calls']:,} calls · {u['input_tokens'] + u['output_tokens']:,} tokens"
                f" · ${u['cost_usd']:.4f} (with its children)")

    assert by_child["root/c1-0"]["calls"] == sum(
        by_child[a]["calls"] for a in ("root/c1-0/c1-0", "root/c1-0/c1-1")) + 2
    index = write_trace(tmp_path / "run", tmp_path / "view")
    with Browser(timeout=30) as browser:
        browser.open(index.as_uri())
        browser.wait_for("document.querySelectorAll('details.child').length === 5")
        top = browser.evaluate(
            "Array.from(document.querySelectorAll('#turn-1 > details.child'))"
            ".map(d => d.firstElementChild.textContent)")
        assert top == ["child root/c1-0 · lead · submitted, 2 turns" + totals("root/c1-0"),
                       "child root/c1-1 · plain · submitted, 1 turns" + totals("root/c1-1"),
                       "child root/c1-2 · fails · error, 1 turns: the child failed: the root "
                       "model failed (see the model_call event): ValueError: the endpoint "
                       "fell over" + totals("root/c1-2")]
        assert browser.evaluate(
            "document.querySelector('details.child[data-agent=\"root/c1-2\"] .state')"
            ".classList.contains('err')")
        nested = browser.evaluate(
            "Array.from(document.querySelectorAll('details.child[data-agent=\"root/c1-0\"] "
            "section.turn > details.child')).map(d => d.dataset.agent)")
        assert nested == ["root/c1-0/c1-0", "root/c1-0/c1-1"]
        turns = browser.evaluate(
            "Array.from(document.querySelectorAll('details.child[data-agent=\"root/c1-0\"] > "
            "div > section.turn > h3')).map(h => h.textContent)")
        assert turns == ["root/c1-0 · turn 1", "root/c1-0 · turn 2"]
        assert browser.errors == []
