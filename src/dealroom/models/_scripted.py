"""ScriptedModel: a deterministic fake ModelClient that replays scripted turns."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from dealroom._util.text import strip_controls
from dealroom.errors import ModelError
from dealroom.models._result import ChatResult
from dealroom.models._spec import Prices
from dealroom.models._wire import estimate_usage

ReplyFunction = Callable[[list[dict[str, Any]]], str | Awaitable[str]]
"""A function of the messages returning the reply (sync or async)."""
Turn = str | ReplyFunction | BaseException | type[BaseException]
"""A reply (any text, malformed output included), a function of the messages returning one
(sync or async), or an exception (instance or class) to raise for that call."""


@dataclass
class ScriptedCall:
    """One call a ScriptedModel received."""

    messages: list[dict[str, Any]]
    max_tokens: int | None = None
    temperature: float | None = None
    stop: list[str] | None = None
    response_format: dict[str, Any] | None = None


@dataclass
class ScriptedModel:
    """Replays ``turns`` in order, one per ``chat`` call, and records what it was sent.

    Usage is deterministic: tokens are counted with ``dealroom.room.count_tokens`` and priced
    with ``prices``. Control sequences are stripped from replies, as real clients do. When the
    script runs out, ``chat`` raises ModelError unless ``cycle`` is set. ``delay`` seconds are
    awaited per call (to exercise concurrency).

    >>> import asyncio
    >>> m = ScriptedModel(["print('hi')", lambda msgs: msgs[-1]["content"].upper()])
    >>> asyncio.run(m.chat([{"role": "user", "content": "a"}])).text
    "print('hi')"
    >>> asyncio.run(m.chat([{"role": "user", "content": "shout"}])).text
    'SHOUT'
    """

    turns: Sequence[Turn]
    name: str = "scripted"
    model: str = "scripted"
    context_window: int = 1_000_000
    prices: Prices = field(default_factory=Prices)
    cycle: bool = False
    delay: float = 0.0
    calls: list[ScriptedCall] = field(default_factory=list, init=False)
    """Every call received, in order."""

    @property
    def messages(self) -> list[list[dict[str, Any]]]:
        """The message lists received, in order."""
        return [call.messages for call in self.calls]

    @property
    def remaining(self) -> int:
        """Turns not yet replayed."""
        return max(len(self.turns) - len(self.calls), 0)

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResult:
        index = len(self.calls)
        snapshot = [dict(m) for m in messages]
        self.calls.append(ScriptedCall(snapshot, max_tokens, temperature, stop, response_format))
        if index >= len(self.turns) and not (self.cycle and self.turns):
            raise ModelError(f"script exhausted after {len(self.turns)} turn(s)", model=self.name)
        turn = self.turns[index % len(self.turns)]
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(turn, BaseException) or (
            isinstance(turn, type) and issubclass(turn, BaseException)
        ):
            raise turn
        made = cast(ReplyFunction, turn)(snapshot) if callable(turn) else turn
        reply = await made if inspect.isawaitable(made) else made
        text, stripped = strip_controls(str(reply))
        usage = estimate_usage(snapshot, text, self.prices)
        return ChatResult(
            text=text, usage=usage, model=self.model, finish_reason="stop", latency_s=self.delay,
            stripped=stripped, max_tokens=max_tokens,
        )

    async def aclose(self) -> None:
        """Nothing to release."""

    async def __aenter__(self) -> ScriptedModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
