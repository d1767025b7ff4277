"""A model's prompt counted in its own tokens, to keep a conversation inside its window.

    hf: models         their tokenizer and chat template, exact
    OpenAI-compatible  the server's ``POST /tokenize`` (vLLM, SGLang), asked once and cached
    otherwise          words-v1 (``dealroom.room.count_tokens``) plus a few tokens a message,
                       times a correction learned from the ``usage.prompt_tokens`` the
                       endpoint reports (from its first reply on), never below 1

``tiktoken`` would count OpenAI model names exactly, but it downloads its encodings on first
use, which nothing here can; such models are counted the words-v1 way, corrected.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dealroom.models._client import ModelClient

MESSAGE_OVERHEAD = 4
"""Tokens a chat template adds around each message (role markers, separators)."""


def words_estimate(messages: list[dict[str, Any]]) -> int:
    """Words-v1 tokens of the messages' contents plus :data:`MESSAGE_OVERHEAD` each."""
    from dealroom.room import count_tokens

    return sum(count_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD for m in messages)


class PromptCounter:
    """Counts one model's prompts; :meth:`learn` from each reply's reported usage."""

    def __init__(self, model: ModelClient) -> None:
        self.model = model
        self.ratio = 1.0
        """Reported prompt tokens per estimated token, from the latest reply that reported."""
        self.source = "words"
        """How the last count was made: ``tokenizer``, ``tokenize`` (the server's endpoint),
        ``words`` (the corrected estimate)."""

    async def count(self, messages: list[dict[str, Any]]) -> int:
        """The prompt's tokens, exact where the model's tokenizer can be had."""
        exact = await self.exact(messages)
        if exact is not None:
            return exact
        self.source = "words"
        return math.ceil(words_estimate(messages) * self.ratio)

    def learn(self, messages: list[dict[str, Any]], prompt_tokens: int | None) -> None:
        """Take the endpoint's own count of a prompt (``usage.prompt_tokens``, or the count a
        length refusal names) as the correction for the estimate."""
        estimate = words_estimate(messages)
        if prompt_tokens and estimate:
            self.ratio = max(1.0, prompt_tokens / estimate)

    def can_be_exact(self) -> bool:
        """Whether the model's own count may be had (a tokenizer, or a ``/tokenize`` not
        known to be missing)."""
        if getattr(self.model, "count_prompt", None) is not None:
            return getattr(self.model, "_tokenize", None) is not False
        return getattr(getattr(self.model, "_loaded", None), "tokenizer", None) is not None

    async def exact(self, messages: list[dict[str, Any]]) -> int | None:
        """The prompt's tokens by the model's own tokenizer; None where it cannot be had."""
        probe = getattr(self.model, "count_prompt", None)
        if probe is not None:
            counted = await probe(messages)
            if counted is not None:
                self.source = "tokenize"
                return int(counted)
        tokenizer = getattr(getattr(self.model, "_loaded", None), "tokenizer", None)
        if tokenizer is not None and getattr(tokenizer, "chat_template", None):
            self.source = "tokenizer"
            ids = tokenizer.apply_chat_template(
                [{"role": m["role"], "content": str(m.get("content") or "")} for m in messages],
                tokenize=True, add_generation_prompt=True)
            return len(ids["input_ids"] if isinstance(ids, dict) else ids)
        return None
