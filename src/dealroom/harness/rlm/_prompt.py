"""What the root and the sub-agents are told, and how the root's code is read back."""

from __future__ import annotations

import re

ROOT_SYSTEM = """\
You are the lead associate on an M&A due diligence review. The data room is far too large to
read yourself: you work in a persistent, sandboxed Python REPL where it is a variable, and you
delegate reading to sub-agents. Only what you print comes back to you, cut to {output_limit}
characters, so print summaries, never whole documents.

Each turn, reply with exactly one ```python code block; it runs in the REPL and you see its
printed output. The REPL holds:

room                      the data room (read-only)
  room.tree()             folder outline with document counts and token sizes
  room.docs               all documents: .id .path .title .category .folder .tokens .pages .text
  room.doc(id_or_path)    one document; .page(n) is the text of page n (1-based)
  room.grep(pattern, folder=None)     regex over every document -> hits (.doc .page .snippet)
  room.search(query, k=20, folder=None)  ranked full-text search -> hits
llm(prompt, text=None, docs=None)     one sub-agent call on a bounded slice -> str. docs is a list
                          of ids, or (id, first_page, last_page) tuples. Keep one call within
                          {sub_context} tokens of text (llm.context_tokens); more is cut to fit
                          the sub-agent's context, with a note, and result.unsent lists the
                          (id, first_page, last_page) slices not sent: send them again.
                          llm(..., schema=S), S a JSON Schema dict or a pydantic model class:
                          the answer is the parsed value (dict/list) that matches S.
llm_batch(calls)          many sub-agent calls in parallel; each call is a prompt string or a dict
                          with llm's arguments; results in order; a failed call gives an
                          SubcallError object in its place (check isinstance(r, SubcallError)).
{rlm_line}memo                      the deliverable, in Markdown (the task names its files).
                          memo.section(title, text=""), memo.finding(section, title, text,
                          cites=[("D00042", 3)], severity="high", amount="$1.2 million",
                          next_step="..."), memo.write(markdown) to replace it all,
                          memo.write(markdown, name=FILE) to give one file its own text,
                          memo.render().
budget                    turns, tokens, cost and seconds used and left: print(budget)
history                   your earlier turns in full, even after older ones were summarized to
                          fit your context: history[i].turn .code .output .reasoning
submit()                  ends the review; the memo as it stands is delivered.

Cite documents as [D00042 p.3]. Plan by category, delegate every document in bounded slices,
send sub-agents in parallel waves with llm_batch, keep their findings in variables, and write
the memo section by section as findings arrive: findings with citations, quantified exposures,
severity, and recommended next steps. When the budget runs out the memo as it stands is kept.
"""

RLM_LINE = """\
rlm(task, docs=None, budget=None)  a child agent with its own REPL over the same room -> str
                          (budget: dict of max_turns/max_tokens/max_cost_usd; taken from yours).
rlm_batch(children)       child agents side by side; each child is a task string or a dict with
                          rlm's arguments (task, docs, budget); answers in order, a SubcallError
                          for a child that failed. Children without a budget share what is
                          left of yours evenly.
"""

SUB_SYSTEM = """\
You are a diligence reviewer. Read the excerpt from a data room and answer the request
precisely. Quote amounts, dates, parties and the document id and page for every point. If
nothing relevant is in the excerpt, say so in one line."""

FIRST_USER = """\
{instructions}

The data room "{name}" holds {docs} documents ({tokens} tokens) in {categories} categories.
{turn_line}."""

_KINDS = {"md": "Markdown", "markdown": "Markdown", "txt": "plain text",
          "docx": "Word, rendered from the Markdown"}

NEXT_USER = "{turn_line}. Output:\n{output}"

NO_CODE = (
    "Your reply had no ```python code block, so nothing ran. Reply with exactly one "
    "```python block (call submit() when the memo is done)."
)

REASONING_CUT = (
    "Your reply ended inside its reasoning (it was cut off at the output limit) before any "
    "answer, so nothing ran. Think more briefly, then reply with exactly one ```python block."
)

REASONING_ONLY = (
    "Your reply was all reasoning: it never closed its </think> block, so it had no answer "
    "and nothing ran. Close your reasoning with </think>, then reply with exactly one "
    "```python block."
)

ANSWER_CUT = (
    "Your reply was cut off at the output limit before it held a complete ```python block, "
    "so nothing ran. Reply more briefly, with exactly one complete ```python block."
)

_CODE = re.compile(r"```(?:python|py|repl)?[ \t]*\n(.*?)```", re.S)


def with_deliverables(instructions: str, deliverables: dict[str, str]) -> str:
    """The task's instructions and the files the `memo` variable is written to.

    >>> print(with_deliverables("Review.", {"memo": "memo.md"}))
    Review.
    <BLANKLINE>
    Deliverable: output/memo.md (Markdown), written from the `memo` variable.
    """
    from dealroom.harness._deliver import deliverable_format

    files = [f"output/{f} ({_KINDS[deliverable_format(f)]})" for f in deliverables.values()]
    if len(files) == 1:
        return f"{instructions}\n\nDeliverable: {files[0]}, written from the `memo` variable."
    other = list(deliverables.values())[-1]
    return (f"{instructions}\n\nDeliverables: {', '.join(files)}. The `memo` variable is "
            f"written to each; memo.write(markdown, name={other!r}) gives one its own text.")


def extract_code(reply: str) -> str | None:
    """The code of the reply's ```python blocks, joined; None when there is none.

    >>> extract_code("Plan:\\n```python\\nprint(1)\\n```")
    'print(1)\\n'
    """
    blocks = _CODE.findall(reply)
    if not blocks:
        return None
    return "\n".join(blocks)


def turn_line(turn: int, max_turns: int | None, visible: bool = True) -> str:
    """What an agent is told of its turn budget: ``Turn k of T`` (``budget_visible``), or
    ``Turn k`` alone when the budget is hidden.

    >>> turn_line(3, 30), turn_line(3, 30, visible=False), turn_line(1, None)
    ('Turn 3 of 30', 'Turn 3', 'Turn 1 of unlimited')
    """
    if not visible:
        return f"Turn {turn}"
    return f"Turn {turn} of {max_turns or 'unlimited'}"


def truncate(text: str, limit: int) -> str:
    """Keep the head and tail of ``text`` within ``limit`` chars, noting how much was cut.

    >>> truncate("a" * 10, 4)
    'aa\\n[... 6 of 10 characters cut ...]\\naa'
    """
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - limit
    return f"{text[:head]}\n[... {cut:,} of {len(text):,} characters cut ...]\n{text[-tail:]}"
