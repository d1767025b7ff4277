"""How long a call waits for a served model, and what a time-out tells the user to raise.

A server such as llama.cpp's sends nothing until it has evaluated the whole prompt, so the
first byte of a streamed reply is awaited for::

    first_byte = max(read_timeout, MARGIN × prompt_tokens / prefill + SLACK_S)
                 bounded by timeout (one attempt) and the call's deadline

``prefill`` is the endpoint's prompt speed in tokens a second, learned from earlier streamed
replies (their prompt tokens ÷ their first-byte latency; the slowest of the last
:data:`KEEP`, prompts of :data:`MIN_PROMPT` tokens or more); until one is seen, and when the
formula gives less, ``read_timeout`` is used as set. ``read_timeout`` is also the longest
silence allowed between two chunks once the reply has started. A reply that is not streamed
has no first-byte wait: one attempt may take ``timeout``. The call's ``deadline`` ends every
attempt, back-off and hedge of one call, counted from its first request (a request waiting
for a free slot of the endpoint does not count). What was used goes on the ``model_call``
event as ``provider.timeouts``: ``{first_byte, deadline, from}`` (``from``: ``spec`` or
``learned``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import aiohttp

from dealroom.models._spec import ModelSpec

MARGIN = 3.0
"""How many times the learned prefill time a first byte is awaited for."""
SLACK_S = 5.0
"""Seconds added to the learned prefill time (queueing, the first token's decode)."""
KEEP = 8
"""Prefill speeds remembered per endpoint client; the slowest is used."""
MIN_PROMPT = 256
"""Prompt tokens a reply needs before its first-byte latency teaches a prefill speed."""


@dataclass(frozen=True)
class Waits:
    """What one call waits for: the first byte of a streamed reply and the whole call."""

    first_byte: float
    deadline: float
    source: str
    """``spec`` (the settings as given) or ``learned`` (from the prefill speed)."""
    prompt_tokens: int

    def record(self) -> dict[str, Any]:
        """``provider.timeouts`` of the call's ``model_call`` event."""
        return {"first_byte": round(self.first_byte, 1), "deadline": self.deadline,
                "from": self.source}


class Pace:
    """An endpoint's prefill speed, learned from its replies' first-byte latency."""

    def __init__(self) -> None:
        self.speeds: deque[float] = deque(maxlen=KEEP)

    @property
    def prefill(self) -> float | None:
        """Prompt tokens a second (the slowest remembered); None before any."""
        return min(self.speeds) if self.speeds else None

    def learn(self, prompt_tokens: int, first_byte_s: float | None) -> None:
        """Note one streamed reply: its prompt's tokens and when its first chunk came."""
        if first_byte_s is not None and first_byte_s > 0 and prompt_tokens >= MIN_PROMPT:
            self.speeds.append(prompt_tokens / first_byte_s)

    def waits(self, spec: ModelSpec, prompt_tokens: int) -> Waits:
        """The first-byte wait and deadline of a call whose prompt has ``prompt_tokens``."""
        deadline = spec.call_deadline
        first, source = spec.read_timeout, "spec"
        if self.prefill is not None:
            derived = MARGIN * prompt_tokens / self.prefill + SLACK_S
            ceiling = min(spec.timeout, deadline or spec.timeout)
            if derived > first:
                first, source = max(first, min(derived, ceiling)), "learned"
        return Waits(first, deadline, source, prompt_tokens)


def prompt_tokens(usage: Any) -> int | None:
    """The prompt tokens a reply's raw ``usage`` reports, if any."""
    count = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def timeouts(spec: ModelSpec, waits: Waits, streaming: bool) -> aiohttp.ClientTimeout:
    """aiohttp's time-outs for one attempt."""
    return aiohttp.ClientTimeout(total=spec.timeout, sock_connect=spec.connect_timeout,
                                 sock_read=waits.first_byte if streaming else None)


def raise_hint(spec: ModelSpec, key: str) -> str:
    """Where to raise the setting ``key`` of the model ``spec`` names.

    >>> from dealroom.models._spec import local_spec
    >>> raise_hint(local_spec(), "deadline")
    'raise it: --root/--sub local#deadline=SECONDS'
    """
    name = spec.name.partition("#")[0]
    if spec.source:
        return f"raise {key} = SECONDS under [models.{spec.name}] in {spec.source}"
    if spec.kind == "local":
        return f"raise it: --root/--sub {name}#{key}=SECONDS"
    return (f"raise it: {name}#{key}=SECONDS, or {key} = SECONDS under [models.NAME] in a "
            "models file")


def timeout_message(exc: BaseException, spec: ModelSpec, streaming: bool, waits: Waits,
                    answered: bool) -> str:
    """Why an attempt timed out: which setting decided it, and how to raise it."""
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return (f"could not connect within {spec.connect_timeout:g}s (connect_timeout; "
                f"{raise_hint(spec, 'connect_timeout')})")
    if isinstance(exc, aiohttp.SocketTimeoutError) and streaming:
        if answered:
            return (f"no bytes for {waits.first_byte:g}s after the reply started "
                    f"(read_timeout; {raise_hint(spec, 'read_timeout')})")
        how = ("read_timeout" if waits.source == "spec"
               else "learned from the prefill speed, bounded by timeout and deadline")
        return (f"no first byte within {waits.first_byte:g}s for a prompt of about "
                f"{waits.prompt_tokens:,} tokens ({how}; {raise_hint(spec, 'read_timeout')})")
    return f"timed out after {spec.timeout:g}s (timeout; {raise_hint(spec, 'timeout')})"


def deadline_message(spec: ModelSpec, seconds: float, attempts: int, last: str) -> str:
    """Why a call ended at its deadline, and how to raise it."""
    return (f"no usable answer within the call's deadline of {seconds:g}s ({attempts} "
            f"attempts; the last: {last or 'still waiting'}) (deadline; "
            f"{raise_hint(spec, 'deadline')})")
