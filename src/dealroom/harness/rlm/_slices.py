"""Building a sub-agent's input from document references, within its context window.

The host, not the REPL, turns ``llm(prompt, text=..., docs=[...])`` into the text that is sent,
so the record of what reached a model is exact: document slices are logged by reference
(``{id, pages: [first, last], chars: [start, end]}`` into the document's text layer) and free
text in full. When the slice does not fit, it is cut and the cut is reported.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from dealroom.errors import ConfigError
from dealroom.room import count_tokens

_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass
class SubInput:
    """The messages for one sub-call and the record of what they contain."""

    messages: list[dict[str, str]]
    record: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    tokens: int = 0


def cut_to_tokens(text: str, limit: int) -> tuple[str, bool]:
    """Cut ``text`` after ``limit`` tokens; return the kept text and whether it was cut.

    >>> cut_to_tokens("one two three four", 2)
    ('one two', True)
    """
    if limit <= 0:
        return "", bool(text)
    for i, match in enumerate(_TOKEN.finditer(text), start=1):
        if i == limit:
            end = match.end()
            return text[:end], end < len(text.rstrip())
    return text, False


def normalize_ref(ref: Any) -> tuple[str, int | None, int | None]:
    """Read a document reference: an id, ``(id, page)``, ``(id, first, last)`` or a dict.

    >>> normalize_ref({"id": "D00001", "pages": [2, 4]})
    ('D00001', 2, 4)
    """
    if isinstance(ref, str):
        return ref, None, None
    if isinstance(ref, dict):
        pages = ref.get("pages") or [None, None]
        return str(ref["id"]), pages[0], pages[-1]
    if isinstance(ref, list | tuple) and ref:
        first = ref[1] if len(ref) > 1 else None
        last = ref[2] if len(ref) > 2 else first
        return str(ref[0]), first, last
    raise ConfigError(f"cannot read document reference {ref!r}: use an id or (id, first, last)")


def build_sub_input(
    room: Any, call: dict[str, Any], *, system: str, context_tokens: int
) -> SubInput:
    """Assemble a sub-call's messages from ``call`` = {prompt, text, docs}, cut to fit."""
    prompt = str(call.get("prompt") or "")
    system_tokens = _tokens_of_constant(system)
    budget = context_tokens - system_tokens - count_tokens(prompt) - 16
    notes: list[str] = []
    parts: list[str] = []
    refs: list[dict[str, Any]] = []
    for raw in call.get("docs") or []:
        if budget <= 0:
            notes.append(f"{normalize_ref(raw)[0]} left out: the sub-agent's context is full")
            continue
        body, ref, cut = _doc_slice(room, raw, budget)
        budget -= count_tokens(body)
        parts.append(body)
        refs.append(ref)
        if cut:
            page = ref["pages"][1]
            notes.append(f"{ref['id']} cut at page {page} to fit the sub-agent's context")
    free = call.get("text")
    if free:
        kept, cut = cut_to_tokens(str(free), max(budget, 0))
        if cut:
            notes.append(f"text cut to {max(budget, 0):,} tokens to fit the sub-agent's context")
        free = kept
        parts.append(kept)
    content = prompt if not parts else f"{prompt}\n\n" + "\n\n".join(parts)
    record = {"prompt": prompt, "text": free or None, "docs": refs, "truncated": bool(notes)}
    messages = [{"role": "system", "content": system}, {"role": "user", "content": content}]
    return SubInput(messages, record, notes, system_tokens + count_tokens(content))


@functools.lru_cache(maxsize=32)
def _tokens_of_constant(text: str) -> int:
    """Token count of a prompt that is the same for every call (counted once)."""
    return count_tokens(text)


def _doc_slice(room: Any, raw: Any, budget: int) -> tuple[str, dict[str, Any], bool]:
    doc_id, first, last = normalize_ref(raw)
    doc = room.doc(doc_id)
    spans = room.page_spans(doc.id)
    first = max(1, first or 1)
    last = min(len(spans), last or len(spans))
    if first > last:
        raise ConfigError(f"{doc.id} has {len(spans)} pages; pages {first}-{last} do not exist")
    full = room.text(doc.id)
    header = f"=== {doc.id} | {doc.title} | {doc.path} ==="
    out = [header]
    left = budget - count_tokens(header)
    start, end, kept_last, cut = spans[first - 1][0], spans[first - 1][0], first, False
    for page in range(first, last + 1):
        lo, hi = spans[page - 1]
        marker = f"--- {doc.id} page {page} ---"
        text, cut = cut_to_tokens(full[lo:hi], left - count_tokens(marker))
        out += [marker, text]
        left -= count_tokens(marker) + count_tokens(text)
        end, kept_last = lo + len(text), page
        if cut or left <= 0:
            cut = cut or page < last
            break
    ref = {"id": doc.id, "pages": [first, kept_last], "chars": [start, end]}
    return "\n".join(out), ref, cut
