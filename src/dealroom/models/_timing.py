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

from dealroom.models._spec import DEFAULT_TIMEOUT_S, ModelSpec

MARGIN = 3.0
"""How many times the learned prefill time a first byte is awaited for."""
SLACK_S = 5.0
"""Seconds added to the learned prefill time (queueing, the first token's decode)."""
KEEP = 8
"""Prefill speeds remembered per endpoint client; the slowest is used."""
MIN_PROMPT = 256
"""Prompt tokens a reply needs before its first-byte latency teaches a prefill speed."""
MIN_REPLY = 32
"""Reply tokens a reply needs before it teaches a decode speed."""
PREFILL = 50.0
"""Prompt tokens a second assumed for a deadline while no prefill speed is known."""
MAX_DEADLINE_S = 1800.0
"""The most a learned deadline is raised to."""


@dataclass(frozen=True)
class Waits:
    """What one call waits for: the first byte of a streamed reply and the whole call."""

    first_byte: float
    deadline: float
    source: str
    """``spec`` (the settings as given) or ``learned`` (from the prefill speed)."""
    prompt_tokens: int
    total: float = 0.0
    """One attempt's time-out (``timeout``, or the learned deadline; see :meth:`Pace.waits`)."""

    def record(self) -> dict[str, Any]:
        """``provider.timeouts`` of the call's ``model_call`` event."""
        return {"first_byte": round(self.first_byte, 1), "deadline": self.deadline,
                "from": self.source}


class Pace:
    """An endpoint's prefill and decode speeds, learned from its replies."""

    def __init__(self) -> None:
        self.speeds: deque[float] = deque(maxlen=KEEP)
        self.decodes: deque[float] = deque(maxlen=KEEP)

    @property
    def decode(self) -> float | None:
        """Reply tokens a second, prompt time included when it could not be told apart (the
        slowest remembered); None before any."""
        return min(self.decodes) if self.decodes else None

    def learn_decode(self, completion_tokens: int | None, seconds: float) -> None:
        """Note one reply: its tokens and the seconds they took."""
        if completion_tokens and completion_tokens >= MIN_REPLY and seconds > 0:
            self.decodes.append(completion_tokens / seconds)

    @property
    def prefill(self) -> float | None:
        """Prompt tokens a second (the slowest remembered); None before any."""
        return min(self.speeds) if self.speeds else None

    def learn(self, prompt_tokens: int, first_byte_s: float | None) -> None:
        """Note one streamed reply: its prompt's tokens and when its first chunk came."""
        if first_byte_s is not None and first_byte_s > 0 and prompt_tokens >= MIN_PROMPT:
            self.speeds.append(prompt_tokens / first_byte_s)

    def waits(self, spec: ModelSpec, prompt_tokens: int, cap: int = 0) -> Waits:
        """The first-byte wait, deadline and attempt time-out of a call whose prompt has
        ``prompt_tokens`` and whose reply is capped at ``cap``."""
        deadline, total, source = spec.call_deadline, spec.timeout, "spec"
        if self.decode is not None and spec.deadline is None and deadline:
            need = MARGIN * (prompt_tokens / (self.prefill or PREFILL) + cap / self.decode)
            if need > deadline:  # only a default deadline is raised, and at most to MAX
                deadline, source = min(need, MAX_DEADLINE_S), "learned"
                if spec.timeout == DEFAULT_TIMEOUT_S:
                    total = deadline
        first = spec.read_timeout
        if self.prefill is not None:
            derived = MARGIN * prompt_tokens / self.prefill + SLACK_S
            if derived > first:
                first, source = max(first, min(derived, total, deadline or total)), "learned"
        return Waits(first, deadline, source, prompt_tokens, total)


def prompt_tokens(usage: Any, key: str = "prompt_tokens") -> int | None:
    """The prompt tokens a reply's raw ``usage`` reports, if any."""
    count = usage.get(key) if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def completion_tokens(usage: Any) -> int | None:
    """The reply tokens a reply's raw ``usage`` reports, if any."""
    return prompt_tokens(usage, "completion_tokens")


def timeouts(spec: ModelSpec, waits: Waits, streaming: bool) -> aiohttp.ClientTimeout:
    """aiohttp's time-outs for one attempt."""
    return aiohttp.ClientTimeout(total=waits.total or spec.timeout,
                                 sock_connect=spec.connect_timeout,
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
    return (f"timed out after {waits.total or spec.timeout:g}s (timeout; "
            f"{raise_hint(spec, 'timeout')})")


def deadline_message(spec: ModelSpec, seconds: float, attempts: int, last: str) -> str:
    """Why a call ended at its deadline, and how to raise it."""
    return (f"no usable answer within the call's deadline of {seconds:g}s ({attempts} "
            f"attempts; the last: {last or 'still waiting'}) (deadline; "
            f"{raise_hint(spec, 'deadline')})")
