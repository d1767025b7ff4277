"""Executable documentation: every ```bash block of the README and docs/commands.md runs as
written, in order, in a fresh folder, each ``dealroom`` command in this process
(tests/support/cli.py) and expected to exit 0.

What is changed is listed here and nowhere else:

- SKIPPED: commands not run, with the reason.
- ENDPOINT: the docs' model server (``http://127.0.0.1:8000/v1``) and the embedded model
  (``--sub local``, slow on 2 cores) become a loopback MockOpenAIServer that plays a root
  (one wave of sub-calls, a memo section, ``submit()``) and a sub-agent.
- SIZES: the full-size rooms the docs name become small ones; ``dealroom demo`` gets
  ``--docs 4``.

A shell command that is not ``dealroom`` and no rule covers fails the test: a new kind of
command needs a rule here, said out loud.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from support.cli import dealroom

from dealroom.testing import MockOpenAIServer

REPO = Path(__file__).parents[1]
DOCS = ("README.md", "docs/commands.md")

SKIPPED = {
    ("pip",): "installs the package; the suite runs on the installed one",
    ("python", "-m", "pytest"): "the test suite itself",
}
"""Leading words of a command (after ``VAR=value`` assignments) → why it is not run."""

DOCS_ENDPOINT = "http://127.0.0.1:8000/v1"
SIZES = {("--docs", "2270"): ("--docs", "12"), ("--tokens", "31000000"): ("--tokens", "60000")}
"""The README's 2,270-document, 31M-token room → 12 documents, 60k tokens."""
DEMO_EXTRA = ("--docs", "4")

ROOT_WAVE = """```python
answers = llm_batch([{"prompt": "List the diligence issues.", "docs": [d.id]}
                     for d in room.docs[:3]])
memo.section("Findings", "\\n".join(str(a) for a in answers))
print(len(answers), budget)
```"""
ROOT_SUBMIT = "```python\nsubmit()\n```"


def reply(request: dict) -> str:
    """A root (a wave of sub-calls, then submit) or a sub-agent (nothing found)."""
    messages = request["messages"]
    if messages[0]["content"].startswith("You are the lead associate"):
        return ROOT_SUBMIT if "Output:" in messages[-1]["content"] else ROOT_WAVE
    return "NONE: nothing relevant in this excerpt."


def blocks(doc: str) -> list[tuple[int, str]]:
    """Each ```bash block of ``doc``: its first line's number and its text."""
    text = (REPO / doc).read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 2, m.group(1))
            for m in re.finditer(r"^```bash\n(.*?)^```", text, re.M | re.S)]


def commands(block: str) -> list[list[str]]:
    """The block's commands as words: continuations joined, comments dropped, ``&&`` split."""
    out: list[list[str]] = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(words[:cut])
            words = words[cut + 1:]
    return out


def skipped(words: list[str]) -> str | None:
    """Why the command is not run, or None."""
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        words = words[1:]
    return next((why for lead, why in SKIPPED.items() if tuple(words[: len(lead)]) == lead),
                None)


def substituted(words: list[str], base_url: str) -> list[str]:
    """The command with ENDPOINT and SIZES applied."""
    words = [w.replace(DOCS_ENDPOINT, base_url) for w in words]
    model = f"mock@{base_url}"
    out: list[str] = []
    for word in words:
        if out and out[-1] == "--sub" and word == "local":
            word = model
        if out and (out[-1], word) in SIZES:
            out[-1], word = SIZES[(out[-1], word)]
        out.append(word)
    if out[:2] == ["dealroom", "demo"]:
        out += [*DEMO_EXTRA, "--sub", model]
    return out


def test_the_rules_read_the_docs_as_meant():
    assert commands('a --x 1 \\\n    --y 2   # note\n# only a comment\nb && c "d e"\n') == \
        [["a", "--x", "1", "--y", "2"], ["b"], ["c", "d e"]]
    assert skipped(["CMAKE_ARGS=-DX=OFF", "pip", "install", "-e", "."])
    assert skipped(["python", "-m", "pytest"]) and not skipped(["dealroom", "demo"])
    assert substituted(["dealroom", "run", "r", "--sub", "local", "--docs", "2270"], "U") == \
        ["dealroom", "run", "r", "--sub", "mock@U", "--docs", "12"]
    assert substituted([f"--root=qwen3-35b@{DOCS_ENDPOINT}#price_input=1"], "U") == \
        ["--root=qwen3-35b@U#price_input=1"]
    assert substituted(["dealroom", "demo"], "U") == ["dealroom", "demo", "--docs", "4",
                                                      "--sub", "mock@U"]


@pytest.mark.parametrize("doc", DOCS)
def test_every_documented_command_runs(doc, tmp_path, monkeypatch):
    found = blocks(doc)
    assert found, f"{doc} has no ```bash block"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(REPO / "examples")  # the docs run from a clone
    monkeypatch.setenv("COLUMNS", "100")
    ran = 0
    with MockOpenAIServer(reply) as server:
        for line, block in found:
            for words in commands(block):
                if skipped(words):
                    continue
                assert words[0] == "dealroom", \
                    f"{doc}:{line}: no rule to run {shlex.join(words)!r}: add one to this test"
                words = substituted(words, server.base_url)
                done = dealroom(*words[1:])
                assert done.returncode == 0, (
                    f"{doc}:{line}: {shlex.join(words)} exited {done.returncode}\n"
                    f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
                assert "Traceback" not in done.stderr, done.stderr
                ran += 1
    assert ran >= 5
