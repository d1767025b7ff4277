"""Building a sub-agent's input from document references, within its context window.

The host, not the REPL, turns ``llm(prompt, text=..., docs=[...])`` into the text that is sent,
so the record of what reached a model is exact: document slices are logged by reference
(``{id, pages: [first, last], chars: [start, end]}`` into the document's text layer) and free
text in full. When the slice does not fit, it is cut and the cut is reported: the record's
``unsent`` lists what was not sent, ``[id, from page, to page]`` (the page it was cut in
included), so the root can send it in a later call.

A call is built in two steps. :func:`plan_sub_input` sizes it from what the index already knows
(tokens per page, and a checkpoint every 64 tokens to find where a page is cut), reading no
text but the page it cuts; free ``text=`` is counted once. :meth:`SubPlan.messages` then reads
the slices' text, only when the call is sent.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate, chain, repeat
from operator import add
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError, DealroomError
from dealroom.room import count_tokens

if TYPE_CHECKING:
    from dealroom.room import Room

_TOKEN = re.compile(r"\w+|[^\w\s]")
_CACHED_CHARS = 4096
"""Prompts shorter than this have their token count cached (a batch repeats its prompt)."""


@dataclass
class SubInput:
    """The messages for one sub-call and the record of what they contain."""

    messages: list[dict[str, str]]
    record: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    tokens: int = 0


@dataclass(frozen=True)
class _Piece:
    """Pages ``first..last`` of a document (their char ``spans``), the last one kept up to
    char ``keep``."""

    doc_id: str
    header: str
    first: int
    spans: list[tuple[int, int]]
    keep: int

    @property
    def last(self) -> int:
        return self.first + len(self.spans) - 1


@dataclass
class SubPlan:
    """A sub-call sized but not yet read: its record, notes and exact token count."""

    prompt: str
    pieces: list[_Piece]
    free: str | None
    """The free text as it will be sent (cut to fit), or None."""
    system: str
    record: dict[str, Any]
    notes: list[str]
    tokens: int

    @property
    def unsent(self) -> list[list[Any]]:
        """``[id, from page, to page]`` of every slice asked for but not sent (in part)."""
        return list(self.record.get("unsent") or [])

    def messages(self, room: Room) -> list[dict[str, str]]:
        """Read the slices and assemble the call's messages (the text is joined once)."""
        parts = [self.prompt]
        for piece in self.pieces:
            parts += ("\n\n", *_piece_parts(room, piece))
        if self.free is not None:
            parts += ("\n\n", self.free)
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": "".join(parts)}]


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


def prompt_tokens(prompt: str) -> int:
    """Tokens of a prompt; short prompts are counted once per process."""
    return _cached_tokens(prompt) if len(prompt) < _CACHED_CHARS else count_tokens(prompt)


def plan_sub_input(
    room: Room, call: dict[str, Any], *, system: str, context_tokens: int
) -> SubPlan:
    """Size a sub-call's input from ``call`` = {prompt, text, docs}, cut to fit."""
    prompt = str(call.get("prompt") or "")
    system_tokens = _cached_tokens(system)
    budget = context_tokens - system_tokens - prompt_tokens(prompt) - 16
    used = system_tokens + prompt_tokens(prompt)
    notes: list[str] = []
    pieces: list[_Piece] = []
    refs: list[dict[str, Any]] = []
    unsent: list[list[Any]] = []
    for raw in call.get("docs") or []:
        if budget <= 0:
            unsent.append(_whole(room, raw))
            notes.append(f"{unsent[-1][0]} left out: the sub-agent's context is full")
            continue
        piece, ref, tokens, rest = _plan_slice(room, raw, budget)
        budget -= tokens
        used += tokens
        pieces.append(piece)
        refs.append(ref)
        if rest is not None:
            unsent.append(rest)
            notes.append(f"{ref['id']} cut at page {piece.last} to fit the sub-agent's context;"
                         f" pages {rest[1]}-{rest[2]} not sent (result.unsent)")
    free = call.get("text")
    if free:
        free, tokens, cut = _cut_counted(str(free), max(budget, 0))
        used += tokens
        if cut:
            notes.append(f"text cut to {max(budget, 0):,} tokens to fit the sub-agent's context")
    record = {"prompt": prompt, "text": free or None, "docs": refs, "truncated": bool(notes)}
    if unsent:
        record["unsent"] = unsent
    return SubPlan(prompt, pieces, free if call.get("text") else None, system, record, notes,
                   used)


def build_sub_input(
    room: Room, call: dict[str, Any], *, system: str, context_tokens: int
) -> SubInput:
    """Assemble a sub-call's messages from ``call`` = {prompt, text, docs}, cut to fit."""
    plan = plan_sub_input(room, call, system=system, context_tokens=context_tokens)
    return SubInput(plan.messages(room), plan.record, plan.notes, plan.tokens)


MAX_SAMPLES = 48
"""Most counts one calibration asks of the sub model's endpoint."""


def calibration_samples(room: Room, system: str, size: int
                        ) -> list[tuple[list[dict[str, str]], int]]:
    """Calls of at least ``size`` tokens (the last may be short), each the first pages of a
    few documents, every document sampled, at most :data:`MAX_SAMPLES` calls spread over the
    room: ``(messages, words-v1 tokens)``."""
    samples: list[tuple[list[dict[str, str]], int]] = []
    parts: list[str] = []
    tokens = _cached_tokens(system)
    for doc in room.docs:
        piece, _, used, _ = _plan_slice(room, doc.id, max(64, size // 4))
        parts += ("\n\n", *_piece_parts(room, piece))
        tokens += used
        if tokens >= size:
            samples.append(([{"role": "system", "content": system},
                             {"role": "user", "content": "".join(parts)}], tokens))
            parts, tokens = [], _cached_tokens(system)
    if parts:
        samples.append(([{"role": "system", "content": system},
                         {"role": "user", "content": "".join(parts)}], tokens))
    step = max(1.0, len(samples) / MAX_SAMPLES)
    return [samples[int(k * step)] for k in range(min(len(samples), MAX_SAMPLES))]


@functools.lru_cache(maxsize=1024)
def _cached_tokens(text: str) -> int:
    return count_tokens(text)


def _cut_counted(text: str, limit: int) -> tuple[str, int, bool]:
    """:func:`cut_to_tokens` with the kept tokens, counting ``text`` once."""
    if limit <= 0:
        return "", 0, bool(text)
    n = count_tokens(text)
    if n < limit:
        return text, n, False
    if n == limit:  # cut_to_tokens keeps up to the end of the last token
        return text.rstrip(), n, False
    return cut_to_tokens(text, limit)[0], limit, True


def _whole(room: Room, raw: Any) -> list[Any]:
    """``[id, first, last]`` of a reference left out whole (its pages as asked)."""
    doc_id, first, last = normalize_ref(raw)
    try:
        pages = room.doc(doc_id).pages
    except (KeyError, LookupError, DealroomError):
        return [doc_id, first or 1, last or first or 1]
    return [doc_id, max(1, first or 1), min(pages, last or pages)]


def _plan_slice(room: Room, raw: Any, budget: int
                ) -> tuple[_Piece, dict[str, Any], int, list[Any] | None]:
    """The pages of one reference that fit ``budget`` tokens: piece, record, tokens, and
    ``[id, from, to]`` of the pages not sent when it was cut (the page cut in included)."""
    doc_id, first, last = normalize_ref(raw)
    doc = room.doc(doc_id)
    first = max(1, first or 1)
    last = min(doc.pages, last or doc.pages)
    if first > last:
        raise ConfigError(f"{doc.id} has {doc.pages} pages; pages {first}-{last} do not exist")
    page_tokens = room.page_tokens(doc.id, first, last)  # page_tokens[k]: page first + k
    header = f"=== {doc.id} | {doc.title} | {doc.path} ==="
    marker = _marker_tokens(doc.id)
    left = budget - _header_tokens(header)
    # page k is sent whole while its marker and text, with those before it, stay below `left`
    costs = list(accumulate(map(add, page_tokens, repeat(marker))))
    whole = bisect_left(costs, left)
    kept_last = last if whole == len(costs) else first + whole
    sent = room.page_spans(doc.id, first, kept_last)  # only the pages sent
    lo, hi = sent[-1]
    rest: list[Any] | None = None
    if whole == len(costs):
        keep = hi - lo
        left -= costs[-1]
    else:  # the page where the context fills: cut (or an exact fit), and nothing after it
        left -= costs[whole - 1] if whole else 0
        keep, kept, cut = _fit_page(room, doc.id, kept_last, hi - lo, page_tokens[whole],
                                    left - marker)
        left -= marker + kept
        if cut or kept_last < last:
            rest = [doc.id, kept_last if cut else kept_last + 1, last]
    start, end = sent[0][0], lo + keep
    ref = {"id": doc.id, "pages": [first, kept_last], "chars": [start, end]}
    piece = _Piece(doc.id, header, first, sent, keep)
    return piece, ref, budget - left, rest


def _fit_page(room: Room, doc_id: str, page: int, length: int, tokens: int, limit: int
              ) -> tuple[int, int, bool]:
    """Chars kept, tokens kept and whether cut, as ``cut_to_tokens(page, limit)`` would."""
    if limit <= 0:
        return 0, 0, length > 0
    if tokens < limit:
        return length, tokens, False
    return room.token_offset(doc_id, page, limit), limit, tokens > limit


@functools.lru_cache(maxsize=4096)
def _marker_tokens(doc_id: str) -> int:
    """Tokens of ``--- ID page N ---`` (a page number is always one token)."""
    return count_tokens(f"--- {doc_id} page 1 ---")


@functools.lru_cache(maxsize=8192)
def _header_tokens(header: str) -> int:
    return count_tokens(header)


def _piece_parts(room: Room, piece: _Piece) -> list[str]:
    """The piece's header, then each page's marker and text, in order, to be joined."""
    base = piece.spans[0][0]
    text = room.text(piece.doc_id, (piece.first, piece.last))
    pages = [text[lo - base:hi - base] for lo, hi in piece.spans]
    start = piece.spans[-1][0] - base
    pages[-1] = text[start:start + piece.keep]
    doc = piece.doc_id
    marks = [f"\n--- {doc} page {n} ---\n" for n in range(piece.first, piece.first + len(pages))]
    return [piece.header, *chain.from_iterable(zip(marks, pages, strict=True))]
