"""A reply's reasoning apart from its answer, whatever shape the endpoint sent it in.

Reasoning models answer in one of four shapes; the answer is what follows the reasoning::

    field    message.reasoning_content (vLLM's reasoning parser, DeepSeek) or .reasoning
             (OpenRouter and others); streamed as delta.reasoning_content / delta.reasoning
    inline   "<think>R</think>A"   (Qwen3, GLM, DeepSeek-R1 served without a parser)
    closing  "R</think>A"          (the chat template opened <think> in the prompt)
    open     "<think>R"            (cut by finish_reason length inside the reasoning: no answer)

:func:`split_reasoning` takes the inline shapes apart so that :func:`join_reasoning` gives
the reply back exactly: what the model sampled (and ``hf:`` token records decode to) stays
recoverable from the answer, the reasoning and the shape. Code is read from the answer only;
a sub-agent's answer and a judge's verdict never hold the reasoning.
"""

from __future__ import annotations

from dataclasses import dataclass

OPEN, CLOSE = "<think>", "</think>"
SHAPES = ("field", "inline", "closing", "open")
HISTORY_POLICIES = ("drop", "keep")
"""What the root's history keeps of its earlier turns' reasoning (``--reasoning-history``)."""


@dataclass(frozen=True)
class Split:
    """A reply taken apart: ``reasoning`` (None when there was none), the ``answer``, and the
    ``shape`` it came in (one of :data:`SHAPES`; None without reasoning)."""

    reasoning: str | None
    answer: str
    shape: str | None


def split_reasoning(text: str) -> Split:
    """The reasoning and answer of a reply whose reasoning is inline.

    >>> split_reasoning("<think>draft</think>\\n\\nanswer")
    Split(reasoning='draft', answer='\\n\\nanswer', shape='inline')
    >>> split_reasoning("draft</think>answer").shape, split_reasoning("<think>cut").answer
    ('closing', '')
    >>> split_reasoning("plain")
    Split(reasoning=None, answer='plain', shape=None)
    """
    end = text.find(CLOSE)
    if end < 0:
        if text.startswith(OPEN):
            return Split(text[len(OPEN):], "", "open")
        return Split(None, text, None)
    head, answer = text[:end], text[end + len(CLOSE):]
    if head.startswith(OPEN):
        return Split(head[len(OPEN):], answer, "inline")
    return Split(head, answer, "closing")


def join_reasoning(reasoning: str | None, answer: str, shape: str | None) -> str:
    """The whole reply: the inverse of :func:`split_reasoning` for its shapes; reasoning that
    came in a field is written inline the way Qwen3 and DeepSeek-R1 write it.

    >>> join_reasoning("draft", "answer", "closing")
    'draft</think>answer'
    >>> join_reasoning("draft", "answer", "field")
    '<think>\\ndraft\\n</think>\\n\\nanswer'
    """
    if reasoning is None or shape is None:
        return answer
    if shape == "inline":
        return f"{OPEN}{reasoning}{CLOSE}{answer}"
    if shape == "closing":
        return f"{reasoning}{CLOSE}{answer}"
    if shape == "open":
        return f"{OPEN}{reasoning}{answer}"
    return f"{OPEN}\n{reasoning.strip()}\n{CLOSE}\n\n{answer.lstrip()}"


def answer_text(answer: str, reasoning: str | None) -> str:
    """The answer handed on (to the REPL, a judge): without the blank lines that follow a
    closing ``</think>``.

    >>> answer_text("\n\nA", "R"), answer_text("\n\nA", None)
    ('A', '\n\nA')
    """
    return answer.lstrip() if reasoning is not None else answer


def history_content(answer: str, reasoning: str | None, shape: str | None,
                    policy: str = "drop") -> str:
    """What an earlier reply is in the root's history: its answer alone (``drop``, what Qwen3's
    and GLM's chat templates do) or the whole reply, reasoning included (``keep``).

    >>> history_content("\\n\\nA", "R", "inline"), history_content("A", "R", "inline", "keep")
    ('A', '<think>R</think>A')
    """
    if reasoning is None:
        return answer
    if policy == "keep":
        return join_reasoning(reasoning, answer, shape)
    return answer_text(answer, reasoning)
