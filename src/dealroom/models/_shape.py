"""What a served model's replies look like, learned from the server and the replies.

* Whether the chat template opens ``<think>`` in the prompt (DeepSeek-R1's current template,
  Qwen3 thinking models served without a reasoning parser): then a reply that never closes
  the block is reasoning only, and a reply cut at its cap inside it holds no answer to run.
  Known from the spec (``reasoning = "open"``), from llama.cpp's ``GET /props``
  (``chat_template``), or from a reply in the closing shape ``R</think>A``.
* Whether an empty 200 stream is a length problem: llama-cpp-python's server answers a
  prompt too long for its window, when asked to stream, with HTTP 200 and a stream that
  breaks off before any chunk (unstreamed, the same request gets HTTP 400
  ``context_length_exceeded``). Such a stream is asked again unstreamed, once, so that a
  refusal comes back as what it is (``context_length``: compact or re-cut) instead of the
  same prompt being sent until the retries run out.
* Whether the server's window is smaller than the spec says: a server that lowers
  ``max_tokens`` to what fits (llama-cpp-python does, silently) ends a reply at ``length``
  with fewer tokens than asked for; its prompt and reply tokens then fill its window, which
  becomes the client's ``context_window`` (so the harness compacts before the next call
  rather than sending a prompt that leaves no room for a reply).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dealroom._util.reasoning import template_opens

if TYPE_CHECKING:
    from dealroom.models._result import ChatResult
    from dealroom.models._spec import ModelSpec

SLACK = 16
"""Completion tokens a server may count off by (an end token) before a reply at ``length``
counts as cut short of its cap."""
PROPS_BYTES = 4 * 2**20
"""The most of a ``/props`` answer read (a chat template is a few KB)."""


def learn_opened(spec: ModelSpec, result: ChatResult) -> bool:
    """Whether ``result`` shows the model's template opens ``<think>``: a reply in the
    closing shape ``R</think>A`` (``reasoning = "auto"`` only)."""
    return spec.reasoning == "auto" and result.reasoning_shape == "closing"


def props_opened(raw: bytes) -> bool:
    """Whether llama.cpp's ``GET /props`` body says the chat template opens ``<think>`` in
    the prompt (``chat_template``); False where it does not say.

    >>> props_opened(b'{"chat_template": "{% if add_generation_prompt %}<think>{% endif %}"}')
    True
    >>> props_opened(b'{"n_ctx": 4096}')
    False
    """
    try:
        body = json.loads(raw)
    except ValueError:
        return False
    template = body.get("chat_template") if isinstance(body, dict) else None
    return isinstance(template, str) and template_opens(template)


def empty_stream(kind: str, payload: dict[str, Any], message: str) -> bool:
    """Whether a failed streamed attempt was a stream that ended before its first chunk (see
    the module docstring): the next attempt then goes unstreamed."""
    return (kind == "truncated_stream" and bool(payload.get("stream"))
            and EMPTY_STREAM in message)


EMPTY_STREAM = "before any chunk"
"""What a ``truncated_stream`` failure says when nothing came (``_wire.read_stream``)."""


def served_window(result: ChatResult, limit: int, window: int) -> int:
    """The window a reply shows the server has: ``window``, or less when the reply stopped at
    ``length`` short of ``limit`` by the server's own count (see the module docstring)."""
    usage = result.usage
    if (result.finish_reason != "length" or result.usage_estimated
            or usage.output_tokens >= limit - SLACK or usage.input_tokens <= 0):
        return window
    return min(window, usage.input_tokens + usage.output_tokens)
