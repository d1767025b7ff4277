"""``max_errors``: turns in a row without runnable code or with an exception end the episode
with status ``errors`` instead of spending the rest of the budget; replies shaped like a
served model's (prose around code, a code block cut by the length limit) are turns, not
crashes."""

from __future__ import annotations

import json

from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.runs import RunFolder
from dealroom.testing import Completion, ServedModelServer


def test_turns_that_keep_failing_end_the_episode_with_status_errors(small_room,
                                                                    tmp_path) -> None:
    failing = ["I will look at the room first.", "```python\n1 / 0\n```"]
    root = ScriptedModel(failing, cycle=True)
    result = run_agent(small_room, tmp_path / "run", root=root,
                       sub=ScriptedModel(["x"], cycle=True), max_turns=30, max_errors=4)
    assert result.status == "errors" and result.turns == 4
    assert "4 turns in a row" in result.reason
    end = [e for e in RunFolder.open(tmp_path / "run").events() if e["type"] == "run_end"][-1]
    assert end["status"] == "errors"
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["settings"]["max_errors"] == 4


def test_a_turn_that_runs_resets_the_count(small_room, tmp_path) -> None:
    replies = ["no code", "```python\n1 / 0\n```", "```python\nprint('ok')\n```"] * 4 + \
        ["```python\nsubmit()\n```"]
    result = run_agent(small_room, tmp_path / "run", root=ScriptedModel(replies),
                       sub=ScriptedModel(["x"], cycle=True), max_turns=30, max_errors=3)
    assert result.status == "submitted" and result.turns == 13


def test_served_replies_prose_around_code_and_a_cut_code_block(small_room, tmp_path) -> None:
    script = iter([
        Completion("First the outline.\n```python\nx = 2\n```\nThen its square:\n```python\n"
                   "print(x * x)\n```\nThat is all.", reasoning="Plan two steps."),
        Completion("Now a long loop:\n```python\nfor i in range(3):\n    print(i",
                   finish_reason="length"),
        Completion("```python\nsubmit()\n```"),
    ])
    with ServedModelServer(lambda req: next(script), reasoning="inline") as server:
        result = run_agent(small_room, tmp_path / "run", root=f"mock@{server.base_url}",
                           sub=ScriptedModel(["x"], cycle=True))
    assert result.status == "submitted" and result.turns == 3
    cells = [e for e in RunFolder.open(tmp_path / "run").events() if e["type"] == "cell"]
    assert cells[0]["output"] == "4" and len(cells) == 2  # the cut block ran nothing
