"""Reading what an endpoint sent back: bodies, streams, usage, and the faults they can hold.

Every answer is distrusted until it parses. A 200 whose body is not JSON, is an HTML page,
nests deeper than Python can decode, has no ``choices`` or no ``message``, or carries
``null`` content is a :class:`BadReply`; so is ``usage`` no endpoint could have produced
(negative counts, more cached than prompt tokens, more prompt tokens than the request has
bytes, more completion tokens than were asked for). Text is cut to a byte cap as it is read,
so a runaway reply costs bounded memory; the cut is recorded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard, cast

import orjson

from dealroom.errors import ModelError
from dealroom.models._budget import Lease
from dealroom.models._spec import Prices
from dealroom.runs import TokenRecord
from dealroom.types import Usage

MAX_BODY_BYTES = 64 * 2**20
"""A body longer than this is refused unread (a stream is cut at its text cap instead)."""
BYTES_PER_TOKEN = 16
"""Bytes of reply text accepted per completion token asked for (typical text: about 4)."""
TEMPLATE_TOKENS = 4096
"""Prompt tokens a chat template may add on top of one token per request byte."""


class ProviderError(ModelError):
    """A call the endpoint never answered usably, after any retries.

    ``kind``: ``http`` (a status that is not retried, or retries spent on 429/5xx),
    ``timeout``, ``connection``, ``protocol`` (a reply that is not HTTP/1.1: broken framing,
    HTTP/0.9, HTTP/2, a protocol switch), ``malformed`` (a 200 that is not a chat completion),
    ``no_content`` (``null`` content), ``too_large`` (a body over the limit, declared or
    read), ``stream`` (an error inside a stream), ``truncated_stream`` (a stream that ended
    or was cut before its ``[DONE]`` and without a ``finish_reason``),
    ``usage`` (impossible token counts) or ``context_length`` (the endpoint refused a prompt
    too long for its window; ``prompt_tokens`` is the count it gave, when it gave one).
    ``served``: the endpoint did the work and may bill it, so the call's worst-case budget
    reservation is charged.
    """

    def __init__(self, message: str, *, model: str = "", status: int | None = None,
                 kind: str = "http", attempts: int = 1, served: bool = False,
                 prompt_tokens: int | None = None) -> None:
        super().__init__(message, model=model, status=status)
        self.kind = kind
        self.attempts = attempts
        self.served = served
        self.prompt_tokens = prompt_tokens

    def record(self) -> dict[str, Any]:
        """What a ``model_call`` event keeps of the failure."""
        record = {"kind": self.kind, "status": self.status, "attempts": self.attempts,
                  "served": self.served}
        if self.kind == "context_length":
            record["prompt_tokens"] = self.prompt_tokens
        return record


_LENGTH_REFUSALS = re.compile(
    r"maximum context length|context_length_exceeded|exceeds? the available context size"
    r"|longer than the model'?s context length|exceed context window|context window of"
    r"|too many tokens|prompt is too long", re.I)
_REQUESTED = re.compile(r"(\d+) in the messages|\((\d+) tokens?\) is longer|Requested tokens "
                        r"\((\d+)\)|n_prompt_tokens\W+(\d+)|prompt is too long: (\d+)", re.I)


def length_refusal(status: int | None, message: str) -> tuple[bool, int | None]:
    """Whether an HTTP error is the endpoint refusing a prompt too long for its context
    window, and the prompt tokens it counted when it says (vLLM: "... (X in the messages, Y in
    the completion)"; OpenAI: ``context_length_exceeded``; llama.cpp: "exceeds the available
    context size"; SGLang: "The input (X tokens) is longer than the model's context length").

    >>> length_refusal(400, "This model's maximum context length is 16000 tokens. However, you "
    ...                "requested 16512 tokens (15000 in the messages, 1512 in the completion).")
    (True, 15000)
    """
    if status not in (400, 413, 422, 500) or not _LENGTH_REFUSALS.search(message):
        return False, None
    found = _REQUESTED.search(message)
    count = next((int(g) for g in found.groups() if g), None) if found else None
    return True, count


class BadReply(Exception):
    """A 200 answer that cannot be used; ``retry`` says whether asking again can help."""

    def __init__(self, kind: str, message: str, *, retry: bool = True,
                 served: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry = retry
        self.served = served


@dataclass
class Reply:
    """One parsed 200 answer, before its usage is checked."""

    text: str
    finish_reason: str
    model: str | None
    usage: Any
    streamed: bool
    cut_bytes: int = 0
    """Bytes of reply text received past the cap and dropped (a stream stops being read)."""
    body: dict[str, Any] = field(default_factory=dict)
    reasoning: str | None = None
    """The reasoning sent apart from the content (``reasoning_content`` or ``reasoning``)."""
    fingerprint: str | None = None
    """The reply's ``system_fingerprint``, when it has one."""


def text_cap(max_tokens: int) -> int:
    """Bytes of reply text accepted for a call that asked for ``max_tokens`` tokens."""
    return max(4096, max_tokens * BYTES_PER_TOKEN)


def _cap(text: str, cap: int) -> tuple[str, int]:
    if len(text) * 4 <= cap or len(data := text.encode("utf-8", "replace")) <= cap:
        return text, 0
    return data[:cap].decode("utf-8", "ignore"), len(data) - cap


def _excerpt(raw: bytes | str, n: int = 160) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return repr(" ".join(text[:n].split()))


def content_text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list; None when there is none."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return None


def reasoning_field(message: dict[str, Any]) -> str | None:
    """The reasoning a message or delta carries beside its content: ``reasoning_content``
    (vLLM's reasoning parser, DeepSeek) or ``reasoning`` (OpenRouter and other gateways)."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def request_body(payload: dict[str, Any]) -> bytes:
    """A request's JSON body. orjson encodes a 170 KB body in about 15 us where ``json.dumps``
    takes about 0.9 ms, on the event loop, once per sub-call; what orjson refuses (an integer
    past 64 bits in a spec's extra fields) falls back to ``json``."""
    try:
        return orjson.dumps(payload)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(payload).encode()


def load_json(raw: bytes) -> Any:
    """``json.loads`` with every way it can fail turned into a :class:`BadReply`."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise BadReply("malformed", "the body nests deeper than can be decoded") from None
    except (ValueError, UnicodeDecodeError):
        raise BadReply("malformed", f"the body is not JSON: {_excerpt(raw)}") from None


def parse_body(raw: bytes, content_type: str, cap: int) -> Reply:
    """The reply in a non-streamed chat-completion body."""
    if "html" in content_type or raw.lstrip()[:1] == b"<":
        raise BadReply("malformed", f"an HTML page instead of a chat completion: {_excerpt(raw)}")
    body = load_json(raw)
    choice = _first_choice(body)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise BadReply("malformed", "the first choice has no message")
    text = content_text(message.get("content"))
    reasoning = reasoning_field(message)
    if text is None and reasoning is not None:  # cut inside the reasoning: no answer yet
        text = ""
    if text is None:
        refusal = message.get("refusal")
        why = f" (refusal: {_excerpt(str(refusal))})" if refusal else ""
        raise BadReply("no_content", f"the reply's content is {message.get('content')!r}{why}")
    text, cut = _cap(text, cap)
    if reasoning is not None:
        reasoning, more = _cap(reasoning, cap)
        cut += more
    return Reply(text, str(choice.get("finish_reason") or "unknown"), _model_of(body),
                 body.get("usage"), streamed=False, cut_bytes=cut, body={} if cut else body,
                 reasoning=reasoning, fingerprint=_fingerprint_of(body))


def token_record(reply: Reply) -> TokenRecord:
    """The exact tokens of a non-streamed reply from an endpoint asked for them (vLLM's
    ``return_token_ids``: ``prompt_token_ids`` on the body or the choice, ``token_ids`` on the
    choice; ``logprobs.content[*].logprob``). The last id is an end of sequence when the reply
    stopped without a stop string (``finish_reason`` stop, ``stop_reason`` null)."""
    if reply.streamed or not reply.body:
        raise BadReply("no_tokens", "the reply came streamed or cut, without its token ids",
                       retry=False)
    choice = _first_choice(reply.body)
    prompt = reply.body.get("prompt_token_ids") or choice.get("prompt_token_ids")
    completion = choice.get("token_ids")
    content = (choice.get("logprobs") or {}).get("content")
    if not _ids(prompt) or not _ids(completion) or not isinstance(content, list):
        raise BadReply("no_tokens", "the reply has no prompt_token_ids, token_ids or "
                       "logprobs.content", retry=False)
    logprobs = [_number(c.get("logprob")) if isinstance(c, dict) else None for c in content]
    if len(logprobs) != len(completion) or any(p is None for p in logprobs):
        raise BadReply("no_tokens", f"{len(completion)} token ids but {len(logprobs)} "
                       "logprobs", retry=False)
    eos = choice.get("finish_reason") == "stop" and choice.get("stop_reason") is None
    return TokenRecord(list(prompt), list(completion), cast(list[float], logprobs), eos=eos)


def _ids(value: Any) -> TypeGuard[list[int]]:
    return isinstance(value, list) and bool(value) and all(
        isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value)


def _first_choice(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadReply("malformed", f"the body is JSON but not an object: {_excerpt(str(body))}")
    if isinstance(body.get("error"), dict | str):
        raise BadReply("malformed", f"the body is an error: {_excerpt(str(body['error']))}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadReply("malformed", f"the body has no choices: {_excerpt(json.dumps(body))}")
    return choices[0]


def _model_of(body: dict[str, Any]) -> str | None:
    model = body.get("model")
    return model if isinstance(model, str) and model else None


def _fingerprint_of(body: dict[str, Any]) -> str | None:
    value = body.get("system_fingerprint")
    return value if isinstance(value, str) and value else None


async def read_body(chunks: AsyncIterator[bytes], limit: int | None = None,
                    lease: Lease | None = None, declared: int | None = None) -> bytes:
    """The whole body, or a too_large BadReply as soon as it passes ``limit`` bytes (default
    :data:`MAX_BODY_BYTES`), or at once when its ``declared`` length (``Content-Length``) does.
    Past its first bytes it is buffered only under ``lease`` (see ``_budget``)."""
    limit = MAX_BODY_BYTES if limit is None else limit
    if declared is not None and declared > limit:
        raise BadReply("too_large", f"the reply declares {declared:,} bytes (Content-Length), "
                       f"over the limit of {limit:,}; not read", retry=False)
    parts, size = [], 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise BadReply("too_large", f"the body passed {limit:,} bytes; not read further",
                           retry=False)
        if lease is not None:
            await lease.cover(size, declared or limit)
        parts.append(chunk)
    return b"".join(parts)


STREAM_OVERHEAD = 8
"""Raw stream bytes read per byte of text cap (chunk framing and JSON escaping included)."""


def stream_limit(cap: int) -> int:
    """Raw bytes of a stream read for a text cap of ``cap`` bytes (at most MAX_BODY_BYTES)."""
    return min(STREAM_OVERHEAD * cap + 65536, MAX_BODY_BYTES)


async def read_stream(chunks: AsyncIterator[bytes], cap: int,
                      progress: Callable[[], None], lease: Lease | None = None) -> Reply:
    """The reply in a server-sent-event stream of chat-completion chunks.

    ``progress()`` is called for every piece received (a live stream is never hedged). The
    stream is read until ``[DONE]`` (or its end) and decoded in one go, which costs a fraction
    of decoding chunk by chunk; past :func:`stream_limit` raw bytes it stops being read, and
    text past ``cap`` bytes is dropped and counted. A stream that ends, or is cut, before its
    ``[DONE]`` and without a ``finish_reason`` is a ``truncated_stream``: it never finished.
    """
    parts: list[bytes] = []
    size, tail, done = 0, b"", False
    limit = stream_limit(cap)
    async for chunk in chunks:
        progress()
        parts.append(chunk)
        size += len(chunk)
        done = b"[DONE]" in tail + chunk[:16] or b"[DONE]" in chunk
        tail = chunk[-16:]
        if done or size > limit:
            break
        if lease is not None:
            await lease.cover(size, limit)
    stream = _Stream()
    stream.decode(b"".join(parts))
    del parts
    if not stream.done and stream.finish == "unknown":
        over = size > limit
        how = (f"was cut at {limit:,} bytes" if over else "ended")
        last = "any chunk" if not stream.chunks else "its last chunk"
        raise BadReply("truncated_stream", f"the stream {how} before {last} (no "
                       "[DONE], no finish_reason): the reply never finished", retry=not over,
                       served=over)
    text, cut = _cap("".join(stream.parts), cap)
    reasoning, more = _cap("".join(stream.thinking), cap)
    if not stream.seen_content and not reasoning:
        raise BadReply("no_content", "the stream carried no content")
    return Reply(text, stream.finish, stream.model, stream.usage, streamed=True,
                 cut_bytes=cut + more + max(0, size - limit), reasoning=reasoning or None,
                 fingerprint=stream.fingerprint)


class _Stream:
    """What the ``data:`` lines of a chat-completion stream add up to."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.thinking: list[str] = []
        """Pieces of reasoning streamed beside the content."""
        self.finish = "unknown"
        self.model: str | None = None
        self.fingerprint: str | None = None
        self.usage: Any = None
        self.seen_content = False
        self.done = False
        self.chunks = 0
        """Chunks received (0: the stream broke off before its first; see ``_shape``)."""

    def decode(self, raw: bytes) -> None:
        datas = [line[5:].strip() for line in raw.split(b"\n") if line.startswith(b"data:")]
        self.chunks = len(datas)
        if b"[DONE]" in datas:
            self.done = True
            datas = datas[: datas.index(b"[DONE]")]
        elif datas and not raw.endswith(b"\n"):
            datas.pop()  # cut off: the last line may be partial
        for event in load_json(b"[" + b",".join(datas) + b"]"):
            try:  # the common chunk: one choice whose delta is a piece of content
                choice = event["choices"][0]
                delta = choice["delta"]
                piece = delta["content"]
                if (not isinstance(piece, str) or choice["finish_reason"] or event.get("usage")
                        or delta.get("reasoning_content") or delta.get("reasoning")):
                    raise LookupError
            except (LookupError, TypeError):
                self.event(event)
                continue
            self.seen_content = True
            self.parts.append(piece)
            if self.model is None:
                self.model, self.fingerprint = _model_of(event), _fingerprint_of(event)

    def event(self, event: Any) -> None:
        if not isinstance(event, dict):
            raise BadReply("malformed", f"a stream chunk is not an object: {_excerpt(str(event))}")
        if event.get("error"):
            raise BadReply("stream", f"the stream carried an error: {_excerpt(str(event))}")
        if event.get("usage"):
            self.usage = event["usage"]
        if self.model is None:
            self.model = _model_of(event)
        self.fingerprint = self.fingerprint or _fingerprint_of(event)
        choices = event.get("choices")
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        delta = choice.get("delta")
        piece = content_text(delta.get("content")) if isinstance(delta, dict) else None
        thought = reasoning_field(delta) if isinstance(delta, dict) else None
        if thought is not None:
            self.thinking.append(thought)
        if piece is not None:
            self.seen_content = True
            self.parts.append(piece)
        if choice.get("finish_reason"):
            self.finish = str(choice["finish_reason"])


# -- usage ---------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def usage_problem(raw: Any, *, request_bytes: int, max_tokens: int | None) -> str | None:
    """Why a provider's ``usage`` object is impossible for this request, or None if it is not.

    >>> usage_problem({"prompt_tokens": -9989296}, request_bytes=900, max_tokens=None)
    'prompt_tokens is -9989296'
    """
    if not isinstance(raw, dict):
        return None
    counts = {k: raw.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    counts["cached_tokens"] = raw.get("prompt_cache_hit_tokens") if cached is None else cached
    counts["cost"] = raw.get("cost")
    for key, value in counts.items():
        if value is None:
            continue
        number = _number(value)
        if number is None or number < 0:
            return f"{key} is {value!r}"
    prompt = _number(raw.get("prompt_tokens")) or 0
    if (_number(counts["cached_tokens"]) or 0) > prompt:
        return f"cached_tokens {counts['cached_tokens']} exceed prompt_tokens {prompt:g}"
    if prompt > request_bytes + TEMPLATE_TOKENS:
        return f"prompt_tokens {prompt:g} for a request of {request_bytes:,} bytes"
    completion = _number(raw.get("completion_tokens")) or 0
    if max_tokens is not None and completion > max_tokens + 16:
        return f"completion_tokens {completion:g} for max_tokens {max_tokens}"
    return None


def parse_usage(raw: Any, prices: Prices) -> Usage | None:
    """Read an OpenAI-style ``usage`` object; ``None`` when absent or unusable.

    Cached tokens come from ``prompt_tokens_details.cached_tokens`` (or DeepSeek's
    ``prompt_cache_hit_tokens``). Cost is the provider's ``cost`` when reported (OpenRouter's
    ``cost_details.upstream_inference_cost`` when ``cost`` is 0), else the cache-aware prices.
    Check it with :func:`usage_problem` first.
    """
    if not isinstance(raw, dict) or _number(raw.get("prompt_tokens")) is None:
        return None
    inp = int(raw["prompt_tokens"])
    out = int(_number(raw.get("completion_tokens")) or 0)
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if _number(cached) is None:
        cached = raw.get("prompt_cache_hit_tokens")
    cached = min(int(_number(cached) or 0), inp)
    cost = _number(raw.get("cost"))
    upstream = raw.get("cost_details")
    if not cost and isinstance(upstream, dict):
        cost = _number(upstream.get("upstream_inference_cost")) or cost
    if cost is None:
        cost = prices.cost(inp, cached, out)
    return Usage(
        input_tokens=inp, cached_input_tokens=cached, output_tokens=out, cost_usd=cost, calls=1
    )


def estimate_usage(messages: list[dict[str, Any]], text: str, prices: Prices,
                   reasoning: str | None = None) -> Usage:
    """Count tokens with ``dealroom.room.count_tokens`` when a provider reports none (the
    reply's reasoning is output too)."""
    from dealroom.room import count_tokens

    inp = sum(count_tokens(content_text(m.get("content")) or "") for m in messages)
    out = count_tokens(text) + (count_tokens(reasoning) if reasoning else 0)
    return Usage(input_tokens=inp, output_tokens=out, cost_usd=prices.cost(inp, 0, out), calls=1)
