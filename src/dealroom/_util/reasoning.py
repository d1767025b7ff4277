"""A reply's reasoning apart from its answer, whatever shape the endpoint sent it in.

Reasoning models answer in one of these shapes; the answer is what follows the reasoning::

    field     message.reasoning_content (vLLM's reasoning parser, DeepSeek) or .reasoning
              (OpenRouter and others); streamed as delta.reasoning_content / delta.reasoning
    inline    "<think>R</think>A"   (Qwen3, GLM, DeepSeek-R1 served without a parser)
    closing   "R</think>A"          (the chat template opened <think> in the prompt)
    open      "<think>R"            (cut by finish_reason length inside the reasoning: no answer)
    unclosed  "R"                   (the template opened <think> and the reply never closed it,
                                     typically cut at the reply cap: reasoning only, no answer)

A block is closed by the ``</think>`` that balances it (a ``<think>`` inside the reasoning
opens a nested one); whitespace before a leading ``<think>`` is dropped. The ``unclosed``
shape needs to know that the template opens the block (``opened=True``; see
:func:`template_opens` and ``reasoning = "open"`` in a models file): without it a reply with
no tag at all is all answer. :func:`split_reasoning` takes the inline shapes apart so that
:func:`join_reasoning` gives the reply back exactly: what the model sampled (and ``hf:``
token records decode to) stays recoverable from the answer, the reasoning and the shape.
Code is read from the answer only; a sub-agent's answer and a judge's verdict never hold the
reasoning.
"""

from __future__ import annotations

from dataclasses import dataclass

OPEN, CLOSE = "<think>", "</think>"
SHAPES = ("field", "inline", "closing", "open", "unclosed")
HISTORY_POLICIES = ("drop", "keep")
"""What the root's history keeps of its earlier turns' reasoning (``--reasoning-history``)."""


@dataclass(frozen=True)
class Split:
    """A reply taken apart: ``reasoning`` (None when there was none), the ``answer``, and the
    ``shape`` it came in (one of :data:`SHAPES`; None without reasoning)."""

    reasoning: str | None
    answer: str
    shape: str | None


def split_reasoning(text: str, opened: bool = False) -> Split:
    """The reasoning and answer of a reply whose reasoning is inline; ``opened``: the chat
    template opened ``<think>`` in the prompt, so a reply that never closes it is reasoning.

    >>> split_reasoning("<think>draft</think>\\n\\nanswer")
    Split(reasoning='draft', answer='\\n\\nanswer', shape='inline')
    >>> split_reasoning("draft</think>answer").shape, split_reasoning("<think>cut").answer
    ('closing', '')
    >>> split_reasoning("plain"), split_reasoning("cut draft", opened=True).shape
    (Split(reasoning=None, answer='plain', shape=None), 'unclosed')
    >>> split_reasoning(" <think>a<think>b</think>c</think>A")
    Split(reasoning='a<think>b</think>c', answer='A', shape='inline')
    """
    body = text.lstrip()
    if body.startswith(OPEN):
        end = _balancing_close(body, len(OPEN))
        if end < 0:
            return Split(body[len(OPEN):], "", "open")
        return Split(body[len(OPEN):end], body[end + len(CLOSE):], "inline")
    end = _balancing_close(text, 0)
    if end >= 0:
        return Split(text[:end], text[end + len(CLOSE):], "closing")
    if opened:
        return Split(text, "", "unclosed")
    return Split(None, text, None)


def _balancing_close(text: str, start: int) -> int:
    """Where the ``</think>`` that closes a block opened just before ``start`` begins; -1
    when none does (a ``<think>`` met on the way opens a nested block)."""
    depth, at = 1, start
    while True:
        close = text.find(CLOSE, at)
        if close < 0:
            return -1
        nested = text.find(OPEN, at, close)
        if nested >= 0:
            depth, at = depth + 1, nested + len(OPEN)
            continue
        depth -= 1
        if depth == 0:
            return close
        at = close + len(CLOSE)


def template_opens(chat_template: str) -> bool:
    """Whether a chat template opens ``<think>`` at the end of the generation prompt (as
    DeepSeek-R1's and the Qwen3 thinking models' do): the part after its last
    ``add_generation_prompt`` writes ``<think>`` and closes no block after it.

    >>> template_opens("{% if add_generation_prompt %}{{'<|Assistant|><think>\\n'}}{% endif %}")
    True
    >>> template_opens("{% if add_generation_prompt %}{{'<|im_start|>assistant\\n'}}{% endif %}")
    False
    """
    at = chat_template.rfind("add_generation_prompt")
    if at < 0:
        return False
    tail = chat_template[at:]
    last = tail.rfind(OPEN)
    return last >= 0 and CLOSE not in tail[last:]


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
    if shape == "unclosed":
        return f"{reasoning}{answer}"
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
