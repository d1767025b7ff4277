"""What the root writes into its memo is data: control sequences are taken out (newlines and
tabs stay), and the memo has a size bound, enforced in the REPL with a clear error and again
on the host for a memo tampered with in the worker."""

import pytest

from dealroom.errors import ConfigError
from dealroom.harness import run_agent
from dealroom.harness.rlm._memo import MEMO_LIMIT, Memo, MemoTooLarge, checked_memo
from dealroom.harness.rlm._settings import RLMSettings
from dealroom.models import ScriptedModel

HOSTILE = ("\x1b[2J\x1b[31mRed\x1b[0m \x1b]0;pwned\x07\x1b]52;c;Y3VybA==\x07flag\x07\x08"
           "\r\nnext\tcol")
CLEAN = "Red flag\nnext\tcol"
DELIVERABLES = {"memo": "memo.md", "notes": "notes.md"}


def test_control_sequences_are_taken_out_of_everything_the_root_writes():
    memo = Memo("T\x1b[1mitle", DELIVERABLES)
    memo.section("Sec\x07tion", HOSTILE)
    memo.finding("Sec\x07tion", HOSTILE, HOSTILE, severity="hi\x1bgh", amount="$1\x9b2m",
                 next_step=HOSTILE, cites=[("D00001\x1b[2J", 2)])
    text = memo.render()
    assert CLEAN in text and "# Title" in text and "## Section" in text
    assert not any(c in text for c in "\x1b\x07\x08\x9b\r")
    memo.write(HOSTILE, name="notes.md")
    assert memo.snapshot()["documents"] == {"notes": CLEAN}
    memo.write(HOSTILE)
    assert memo.render() == CLEAN


def test_a_write_past_the_limit_fails_clearly_and_changes_nothing():
    memo = Memo(deliverables=DELIVERABLES, limit=5000)
    memo.write("a" * 3000)
    with pytest.raises(MemoTooLarge) as err:
        memo.write("b" * 6000)
    assert "over the memo's limit of 5,000" in str(err.value) and "--memo-limit" in str(err.value)
    with pytest.raises(MemoTooLarge):
        memo.write("c" * 2500, name="notes.md")  # the memo and its deliverables together
    memo.write("c" * 1500, name="notes.md")
    assert memo.render() == "a" * 3000 and memo.snapshot()["documents"] == {"notes": "c" * 1500}
    sections = Memo(limit=2000)
    for n in range(8):
        sections.finding("Findings", f"finding {n}", "x" * 150)
    with pytest.raises(MemoTooLarge):
        for n in range(8, 30):
            sections.finding("Findings", f"finding {n}", "x" * 150)
    assert len(sections.render()) <= 2000
    with pytest.raises(MemoTooLarge):
        sections.section("Appendix", "y" * 3000)
    assert "Appendix" not in sections.sections


def test_the_default_limit_is_ten_mebibytes_and_settable():
    assert MEMO_LIMIT == RLMSettings().memo_limit == 10 * 2**20
    assert RLMSettings(memo_limit=2000).memo_limit == 2000
    with pytest.raises(ConfigError, match="memo_limit must be an integer of at least 1000"):
        RLMSettings(memo_limit=10)


def test_the_host_refuses_a_tampered_memo_and_cleans_what_it_keeps():
    state = {"markdown": "x" * 3000, "documents": {}}
    note = checked_memo(state, 2000)
    assert state["markdown"] is None and "over the limit of 2,000" in note
    state = {"markdown": HOSTILE, "documents": {"notes": HOSTILE}}
    assert checked_memo(state, 2000) is None
    assert state == {"markdown": CLEAN, "documents": {"notes": CLEAN}}


def test_a_run_keeps_the_root_within_its_memo_limit_in_the_real_sandbox(small_room, tmp_path):
    """The root's REPL gets the error; a memo grown behind the API is refused by the host;
    memo.md keeps the last memo within the limit, without control sequences."""
    run = tmp_path / "run"
    root = ScriptedModel([
        f"```python\nmemo.write({HOSTILE!r})\nprint(len(memo))\n```",
        "```python\ntry:\n    memo.write('z' * 5000)\nexcept MemoTooLarge as exc:\n"
        "    print('refused:', exc)\n```",
        "```python\nmemo._free_text = 'w' * 9000\n```",
        "```python\nsubmit()\n```",
    ])
    result = run_agent(small_room, run, root=root, sub=ScriptedModel(["x"], cycle=True),
                       max_turns=6, memo_limit=4000)
    assert result.status == "submitted"
    memo = (run / "output" / "memo.md").read_text()
    assert memo.strip() == CLEAN
    from dealroom.runs import RunFolder

    cells = [e for e in RunFolder.open(run).events() if e["type"] == "cell"]
    assert "refused: the memo would be 5,000 characters" in cells[1]["output"]
    assert "[the memo was not saved: 9,000 characters, over the limit of 4,000" in \
        cells[2]["output"]
