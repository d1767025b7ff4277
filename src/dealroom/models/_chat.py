"""A conversation as the chat template renders it, cut into pieces, and those pieces as tokens.

The ``hf:`` provider builds its prompts with this module and ``dealroom.train`` builds its
training rows with it, so a row holds exactly the tokens the model was shown and sampled::

    render(messages) = env │ reply 0 │ close 0 │ env │ reply 1 │ close 1 │ env ...
                       system, first user    <|im_end|>   next user message,
                       message, "<|im_start|>assistant\\n" ...  up to the next reply

* ``reply`` — an assistant message's content, exactly as given;
* ``close`` — what the assistant itself must emit to end its turn: the span the template's
  ``{% generation %}`` markers put after the content, or, in a template without markers, the
  tokenizer's ``eos_token`` when it follows the content (``<|im_end|>`` for ChatML);
* ``env`` — everything else: system prompt, user messages (REPL output, budget banners) and
  the template's own tokens around them.

Each piece is tokenized on its own, so no token straddles a reply's edge. A reply is found by
rendering the conversation up to it with ``add_generation_prompt=True``: a template that does
not render a conversation's start the same way whatever follows is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError
from dealroom.runs import TokenRecord

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

ENV, REPLY, CLOSE = "env", "reply", "close"
_MARKERS = re.compile(r"\{%-?\s*generation\s*-?%\}")


@dataclass(frozen=True)
class ChatPiece:
    """One stretch of the rendered conversation."""

    text: str
    kind: str
    """``env``, ``reply`` or ``close``."""
    turn: int = -1
    """For ``reply`` and ``close``: which assistant message (0-based); -1 for ``env``."""


def _plain(messages: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str) or "role" not in m:
            raise ConfigError(f"message {i} is not a {{role, content}} dict with text content")
        out.append({"role": str(m["role"]), "content": m["content"]})
    return out


def _render(tokenizer: PreTrainedTokenizerBase, messages: list[dict[str, str]],
            prompt: bool) -> str:
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError("the tokenizer has no chat template: give a chat (instruct) model")
    return str(tokenizer.apply_chat_template(messages, tokenize=False,
                                             add_generation_prompt=prompt))


def _marked_spans(tokenizer: PreTrainedTokenizerBase, messages: list[dict[str, str]], prompt: bool,
                  text: str) -> list[tuple[int, int]] | None:
    """The ``{% generation %}`` spans of the rendering, or None when the template has none."""
    if not _MARKERS.search(tokenizer.chat_template):
        return None
    from transformers.utils.chat_template_utils import render_jinja_template

    special: dict[str, Any] = tokenizer.special_tokens_map  # passed on to the template
    made: Any = render_jinja_template(
        conversations=[messages], chat_template=tokenizer.chat_template,
        return_assistant_tokens_mask=True, add_generation_prompt=prompt, **special,
    )
    rendered, spans = made
    if rendered[0] != text:
        raise ConfigError("the chat template renders differently with generation markers")
    return [(int(start), int(end)) for start, end in spans[0]]


def chat_pieces(tokenizer: PreTrainedTokenizerBase, messages: Sequence[dict[str, Any]], *,
                add_generation_prompt: bool = False) -> list[ChatPiece]:
    """Cut the template's rendering of ``messages`` into env, reply and close pieces."""
    msgs = _plain(messages)
    text = _render(tokenizer, msgs, add_generation_prompt)
    replies = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
    spans = _marked_spans(tokenizer, msgs, add_generation_prompt, text)
    if spans is not None and len(spans) != len(replies):
        raise ConfigError(f"the chat template marks {len(spans)} generation spans for "
                          f"{len(replies)} assistant messages")
    eos = tokenizer.eos_token or ""
    pieces: list[ChatPiece] = []
    cursor = 0
    for turn, index in enumerate(replies):
        prefix = _render(tokenizer, msgs[:index], True) if index else ""
        start, content = len(prefix), msgs[index]["content"]
        end = start + len(content)
        if start < cursor or not text.startswith(prefix) or text[start:end] != content:
            raise ConfigError(
                f"the chat template does not render assistant message {turn} where the "
                "conversation before it ends (it rewrites earlier turns or the content): "
                "use a model whose template keeps the conversation's start unchanged")
        if spans is not None:
            stop = max(spans[turn][1], end)
        else:
            stop = end + len(eos) if eos and text.startswith(eos, end) else end
        pieces += [ChatPiece(text[cursor:start], ENV), ChatPiece(content, REPLY, turn),
                   ChatPiece(text[end:stop], CLOSE, turn)]
        cursor = stop
    pieces.append(ChatPiece(text[cursor:], ENV))
    return [p for p in pieces if p.text or p.kind == REPLY]


def encode(tokenizer: PreTrainedTokenizerBase, text: str) -> list[int]:
    """Token ids of ``text`` alone, no special tokens added."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []


def decode(tokenizer: PreTrainedTokenizerBase, ids: Sequence[int]) -> str:
    """Text of ``ids`` exactly (special tokens kept, no clean-up of spaces)."""
    return str(tokenizer.decode(list(ids), skip_special_tokens=False,
                                clean_up_tokenization_spaces=False))


def reply_text(tokenizer: PreTrainedTokenizerBase, record: TokenRecord) -> str:
    """The reply a completion stands for: its ids decoded, a sampled end-of-turn left out."""
    ids = record.completion_ids[:-1] if record.eos else record.completion_ids
    return decode(tokenizer, ids)


def encode_pieces(tokenizer: PreTrainedTokenizerBase, pieces: Sequence[ChatPiece],
                  sampled: dict[int, TokenRecord] | None = None, *,
                  check: bool = True) -> tuple[list[int], list[int]]:
    """Token ids of ``pieces`` and a mask that is 1 on the assistant's own tokens.

    A reply with a record in ``sampled`` (by turn) is its ``completion_ids`` as they are, all
    mask 1; the template's close is then environment (mask 0), less the end-of-turn token when
    the model sampled it. A reply without a record is its content tokenized, and its close is
    the assistant's (mask 1); ``check`` proves that decoding those tokens gives the content back.
    """
    sampled = sampled or {}
    ids: list[int] = []
    mask: list[int] = []

    def add(piece_ids: list[int], bit: int) -> None:
        ids.extend(piece_ids)
        mask.extend([bit] * len(piece_ids))

    for piece in pieces:
        record = sampled.get(piece.turn) if piece.kind != ENV else None
        if piece.kind == ENV:
            add(encode(tokenizer, piece.text), 0)
        elif piece.kind == REPLY and record is not None:
            if check and reply_text(tokenizer, record) != piece.text:
                raise ConfigError(f"assistant message {piece.turn}: its recorded token ids do "
                                  "not decode to its content")
            add(list(record.completion_ids), 1)
        elif piece.kind == REPLY:
            reply = encode(tokenizer, piece.text)
            if check and decode(tokenizer, reply) != piece.text:
                raise ConfigError(f"assistant message {piece.turn}: re-tokenizing it does not "
                                  "give back its text with this tokenizer")
            add(reply, 1)
        elif record is not None:  # the close after a sampled reply
            add(encode(tokenizer, _unsampled_close(tokenizer, piece.text, record)), 0)
        else:
            add(encode(tokenizer, piece.text), 1)
    return ids, mask


def _unsampled_close(tokenizer: PreTrainedTokenizerBase, close: str, record: TokenRecord) -> str:
    """The part of the template's close the model did not sample itself."""
    if record.eos and record.completion_ids:
        sampled_end = decode(tokenizer, record.completion_ids[-1:])
        if close.startswith(sampled_end):
            return close[len(sampled_end):]
    return close
