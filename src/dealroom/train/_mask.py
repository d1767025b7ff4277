"""Training rows from a conversation: ``input_ids`` and an ``assistant_masks`` that is 1
exactly on the tokens the assistant (the root) produced. Shared by SFT and RL.

What the mask covers (see dealroom.models._chat for how the conversation is cut):

* 1 — each reply's tokens, and the end-of-turn token the model must emit after it
  (``<|im_end|>`` for ChatML; a template's ``{% generation %}`` span decides when it has one);
* 0 — everything the environment wrote: the system prompt, user messages (the instructions,
  "Turn k of T", REPL output, sub-agent results, budget banners) and the template's tokens
  around them (``<|im_start|>assistant\\n`` included: the harness, not the model, writes it).

With ``sampled`` (the ``TokenRecord`` of each reply, from an ``hf:`` root), a reply is its
sampled ids as they are, every one mask 1, and a close the model did not sample is mask 0; the
row is then the same token sequence the model saw and extended, call after call. Without it, a
reply is its text tokenized, and a check proves that decoding those tokens gives the text back.

A row ends with the last assistant token of its last reply: what follows (the template's
close when the model did not sample it, the next user message) is left out.

**Splitting.** An episode longer than ``max_length`` is split turn by turn; no reply is ever
cut. Each row keeps the *head* (every message before the first reply: the system prompt and
the task), then a contiguous run of exchanges (a user message and the reply to it) that ends
with the replies the row trains on. The rule: a row trains on as many consecutive replies as
fit after the head; its context then reaches back over as many earlier exchanges, newest
first, as still fit (those replies are mask 0 there: each reply is trained in one row only);
the exchanges between the head and that context are left out. A reply that cannot fit even
right after the head is left out of training and reported in ``skipped``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # dealroom.models is imported when rows are built: the CLI starts fast
    from transformers import PreTrainedTokenizerBase

    from dealroom.models import TokenRecord


@dataclass
class TrainingRow:
    """One pre-tokenized training example."""

    input_ids: list[int]
    assistant_masks: list[int]
    """1 on the tokens the loss is computed on (the assistant's own), 0 elsewhere."""
    turns: list[int]
    """The replies (0-based, among the conversation's assistant messages) trained here."""
    context_from: int = 0
    """The first reply kept in this row's context; 0 when nothing before it was left out."""
    kind: str = "root"
    """Whose tokens it trains: the root's, a child's or a sub-call's (``train_subs``)."""
    agent: str = "root"
    """The agent whose conversation (or sub-call) it is: ``root``, ``root/c3-1``, ..."""
    call_id: str | None = None
    """A sub-call's row: the call's id."""


@dataclass
class TokenizedEpisode:
    """A conversation as training rows."""

    rows: list[TrainingRow] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    """Replies left out because not even the head and that reply fit in ``max_length``."""


def _replies(messages: Sequence[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if m.get("role") == "assistant"]


def _row(tokenizer: PreTrainedTokenizerBase, messages: Sequence[dict[str, Any]],
         sampled: Sequence[Any],
         first: int, train_from: int, last: int) -> TrainingRow:
    """The row with the head, exchanges ``first..last`` and mask 1 on ``train_from..last``."""
    from dealroom.models import CLOSE, REPLY, chat_pieces, encode_pieces

    replies = _replies(messages)
    head = list(messages[:replies[0]])
    start = replies[first - 1] + 1 if first else replies[0]
    convo = head + list(messages[start:replies[last] + 1])
    records = {k - first: sampled[k] for k in range(first, last + 1) if sampled[k] is not None}
    ids: list[int] = []
    mask: list[int] = []
    for piece in chat_pieces(tokenizer, convo):
        piece_ids, piece_mask = encode_pieces(tokenizer, [piece], records)
        if piece.kind in (REPLY, CLOSE) and piece.turn + first < train_from:
            piece_mask = [0] * len(piece_mask)
        ids += piece_ids
        mask += piece_mask
    end = max(i for i, bit in enumerate(mask) if bit) + 1 if 1 in mask else 0
    return TrainingRow(ids[:end], mask[:end], list(range(train_from, last + 1)), first)


def tokenize_conversation(messages: Sequence[dict[str, Any]],
                          tokenizer: PreTrainedTokenizerBase, *,
                          sampled: Sequence[TokenRecord | None] | None = None) -> TrainingRow:
    """The whole conversation as one row, however long (see the module docstring)."""
    replies = _replies(messages)
    if not replies:
        return TrainingRow([], [], [])
    return _row(tokenizer, messages, _check_sampled(sampled, len(replies)), 0, 0,
                len(replies) - 1)


def conversation_rows(messages: Sequence[dict[str, Any]],
                      tokenizer: PreTrainedTokenizerBase, *,
                      max_length: int | None = None,
                      sampled: Sequence[TokenRecord | None] | None = None,
                      train_from: int = 0) -> TokenizedEpisode:
    """The conversation as rows of at most ``max_length`` tokens, split turn by turn; replies
    before ``train_from`` are context only (mask 0), as in a segment of a run whose history
    dropped reasoning or was compacted (``dealroom.runs.agent_segments``)."""
    n = len(_replies(messages))
    records = _check_sampled(sampled, n)
    if n <= train_from:
        return TokenizedEpisode()
    whole = _row(tokenizer, messages, records, 0, train_from, n - 1)
    if max_length is None or len(whole.input_ids) <= max_length:
        return TokenizedEpisode([whole])
    head, sizes = _sizes(tokenizer, messages, records)

    def guess(first: int, last: int) -> int:
        return head + sum(sizes[first:last + 1])

    episode = TokenizedEpisode()
    s = train_from
    while s < n:
        e = s
        while e + 1 < n and guess(s, e + 1) <= max_length:
            e += 1
        c = s
        while c > 0 and guess(c - 1, e) <= max_length:
            c -= 1
        row = _row(tokenizer, messages, records, c, s, e)
        while len(row.input_ids) > max_length and (c < s or e > s):
            c, e = (c + 1, e) if c < s else (c, e - 1)
            row = _row(tokenizer, messages, records, c, s, e)
        if len(row.input_ids) > max_length:
            episode.skipped.append(s)
        else:
            episode.rows.append(row)
        s = e + 1
    return episode


def _sizes(tokenizer: PreTrainedTokenizerBase, messages: Sequence[dict[str, Any]],
           sampled: Sequence[Any]) -> tuple[int, list[int]]:
    """Tokens of the head, and of each exchange (its user message and reply), in the whole
    conversation: the estimate that splitting starts from."""
    from dealroom.models import ENV, chat_pieces, encode_pieces

    records = {k: r for k, r in enumerate(sampled) if r is not None}
    head = 0
    sizes = [0] * len(sampled)
    turn = 0
    for piece in chat_pieces(tokenizer, messages):
        count = len(encode_pieces(tokenizer, [piece], records, check=False)[0])
        if piece.kind == ENV and turn == 0:
            head += count
        elif piece.kind == ENV:
            if turn < len(sizes):  # what follows the last reply belongs to no row
                sizes[turn] += count
        else:
            sizes[piece.turn] += count
            turn = piece.turn + 1
    return head, sizes


def _check_sampled(sampled: Sequence[Any] | None, replies: int) -> list[Any]:
    from dealroom.errors import ConfigError

    if sampled is None:
        return [None] * replies
    if len(sampled) != replies:
        raise ConfigError(f"{len(sampled)} token records for {replies} assistant messages")
    return list(sampled)
