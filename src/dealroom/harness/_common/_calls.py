"""What a model call leaves in the records when it fails or is cut, and the order a wave's
records are written in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dealroom.errors import DealroomError
from dealroom.models import ChatResult, ProviderError
from dealroom.types import Usage

if TYPE_CHECKING:
    from dealroom.harness._common._budget import Reservation
    from dealroom.models import Prices

# -- failed and cut model calls ----------------------------------------------------------------


def error_text(exc: BaseException) -> str:
    """One line for a failed call: the error's message, its type when it is not ours."""
    if isinstance(exc, asyncio.CancelledError):
        attempts = getattr(exc, "attempts", None)
        sent = "" if attempts is None else f" ({attempts} requests sent)"
        return f"cancelled in flight: the cell's or the run's time ran out{sent}"
    if isinstance(exc, DealroomError | TimeoutError | OSError):
        return str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {exc}"


def provider_record(outcome: ChatResult | BaseException | None) -> dict[str, Any]:
    """How the provider answered (a ChatResult) or failed (any exception), for the event."""
    if isinstance(outcome, ProviderError):
        return outcome.record()
    if isinstance(outcome, asyncio.CancelledError):
        return {"kind": "cancelled", "status": None,
                "attempts": getattr(outcome, "attempts", None), "served": False}
    if isinstance(outcome, BaseException):
        return {"kind": type(outcome).__name__, "status": getattr(outcome, "status", None),
                "attempts": None, "served": False}
    record = getattr(outcome, "record", None)
    return record() if callable(record) else {}


def failed_call_usage(exc: BaseException, reservation: Reservation | None,
                      prompt: int) -> Usage:
    """What a failed call is charged: nothing, unless the endpoint served it (e.g. with
    impossible usage), when its worst-case reservation stands."""
    if not isinstance(exc, ProviderError) or not exc.served or reservation is None:
        return Usage()
    prompt = min(prompt, reservation.tokens)
    return Usage(input_tokens=prompt, output_tokens=reservation.tokens - prompt,
                 cost_usd=reservation.cost_usd, calls=1)


def sent_usage(attempts: int | None, prompt: int, prices: Prices) -> Usage:
    """What a failed or cancelled call may be billed: its prompt once per request sent (one
    when the count is unknown), no output; an estimate, never charged to the budget."""
    tokens = prompt * (1 if attempts is None else attempts)
    return Usage(input_tokens=tokens, cost_usd=prices.cost(tokens, 0, 0),
                 calls=1 if tokens else 0)


def cut_note(result: ChatResult) -> list[str]:
    """The note the REPL prints when a reply was cut to its byte cap."""
    cut = getattr(result, "cut_bytes", 0)
    if not cut:
        return []
    kept = len(result.text.encode("utf-8", "replace"))
    return [f"the reply was cut to {kept:,} bytes ({cut:,} more bytes dropped)"]


class InOrder:
    """Writes each call's records once every earlier call of its wave has written its own,
    so a wave's records keep the order of its calls whatever reply comes back first."""

    def __init__(self) -> None:
        self._next = 0
        self._ready: dict[int, Callable[[], None]] = {}

    def done(self, k: int, write: Callable[[], None]) -> None:
        """Call ``k`` is answered: write its records now, or when ``k - 1``'s are written."""
        self._ready[k] = write
        while self._next in self._ready:
            self._ready.pop(self._next)()
            self._next += 1

    def flush(self) -> None:
        """Write what is waiting, in order (a wave cut short leaves gaps)."""
        for k in sorted(self._ready):
            self._ready.pop(k)()
