"""Hedged requests: in a wave of parallel calls, a straggler is sent again and the first
answer wins, so one dead connection costs seconds instead of a whole time-out.

    wave of N calls ──▶ answers come back; once a quarter of them (at least 2) have
                         answered, the wave's median latency m is known
    a call whose HTTP attempt has shown no progress for max(1 s, hedge · m)
        ──▶ the same request is sent again (re-sends in flight: at most half the wave's calls)
        ──▶ the first good answer is taken, the other attempt is cancelled; both are recorded
        ──▶ if the re-send fails, or stalls as long too, both are given up and the call retries

The wave is a context variable: whoever fans a wave out opens one with :func:`hedging`, and
clients that support hedging (the OpenAI-compatible client) read it; others ignore it. Nothing
polls per call: one timer per wave (its watchdog) looks at the attempts in flight when the
first of them could have stalled, and again when the next could.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import contextvars
import math
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypedDict, TypeVar

T = TypeVar("T")

HEDGE_FLOOR_S = 1.0
"""No call is re-sent sooner than this."""
QUORUM = 0.25
"""Share of a wave's calls that must have answered before its median is trusted."""
MAX_HEDGED = 0.5
"""Share of a wave's calls that may have a re-send in flight at once."""

_WAVE: contextvars.ContextVar[HedgeWave | None] = contextvars.ContextVar("dealroom_wave",
                                                                          default=None)


class HedgeRecord(TypedDict):
    """How a re-sent straggler ended (``provider.hedge`` of its ``model_call``)."""

    after_s: float
    """Seconds of silence after which it was re-sent."""
    winner: str
    """``primary`` or ``hedge``: which attempt's answer was taken."""
    loser: str
    """What became of the other attempt (``cancelled``, ``failed: ...``)."""
    won_after_s: float
    """Seconds from the re-send to the winning answer."""


class BothStalled(TimeoutError):
    """An attempt and its re-send both went silent past the hedge delay."""


class HedgeWave:
    """The calls of one wave: how many there are, how fast they answered, how many were re-sent."""

    def __init__(self) -> None:
        self.calls = 0
        self.latencies: list[float] = []
        """Answer latencies so far, sorted."""
        self.hedged = 0
        """Re-sends made."""
        self.in_flight = 0
        """Re-sends not yet finished."""
        self.peak = 0
        """Most re-sends in flight at once."""
        self._watched: dict[Progress, tuple[asyncio.Future[float | None], float]] = {}
        """Attempts the watchdog looks at: progress -> (future woken with the delay, multiple)."""
        self._timer: asyncio.Handle | None = None

    def joined(self) -> None:
        self.calls += 1

    def answered(self, latency: float) -> None:
        bisect.insort(self.latencies, latency)

    def _has_quorum(self) -> bool:
        return len(self.latencies) >= max(2, math.ceil(QUORUM * self.calls))

    def delay(self, multiple: float) -> float | None:
        """Seconds without progress after which a call is re-sent; None before the quorum."""
        if not self._has_quorum():
            return None
        n = len(self.latencies)
        median = (self.latencies[(n - 1) // 2] + self.latencies[n // 2]) / 2
        return max(HEDGE_FLOOR_S, multiple * median)

    def may_hedge(self) -> bool:
        return self.in_flight < max(1, math.floor(MAX_HEDGED * self.calls))

    def watch(self, progress: Progress, multiple: float) -> asyncio.Future[float | None]:
        """A future the watchdog sets to the hedge delay once ``progress``'s attempt has
        stalled past it, the re-send already counted in :attr:`in_flight`."""
        woken: asyncio.Future[float | None] = asyncio.get_running_loop().create_future()
        self._watched[progress] = (woken, multiple)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(HEDGE_FLOOR_S, self._check)
        return woken

    def unwatch(self, progress: Progress) -> None:
        self._watched.pop(progress, None)
        if not self._watched and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def re_sent(self) -> None:
        """A re-send finished: a stalled call held back by :meth:`may_hedge` may go now."""
        self.in_flight -= 1
        if self._watched:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = asyncio.get_running_loop().call_soon(self._check)

    def _check(self) -> None:
        """Wake every watched attempt stalled past its delay (while re-sends may be added);
        look again when the next one could stall."""
        self._timer = None
        soonest = HEDGE_FLOOR_S
        for progress, (woken, multiple) in list(self._watched.items()):
            delay = self.delay(multiple)
            if woken.done() or delay is None or progress.started is None:
                continue  # answered, no quorum yet, or still queued for a connection slot
            idle = progress.idle()
            if idle < delay:
                soonest = min(soonest, max(delay - idle, 0.05))
            elif self.may_hedge():
                self.hedged += 1
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
                del self._watched[progress]
                woken.set_result(delay)
        if self._watched:
            self._timer = asyncio.get_running_loop().call_later(soonest, self._check)


@contextlib.contextmanager
def hedging(wave: HedgeWave | None = None) -> Iterator[HedgeWave]:
    """Calls made inside the block (and tasks started there) belong to one wave."""
    wave = wave or HedgeWave()
    token = _WAVE.set(wave)
    try:
        yield wave
    finally:
        _WAVE.reset(token)


def current_wave() -> HedgeWave | None:
    return _WAVE.get()


class Progress:
    """When one HTTP attempt got its connection slot and when it last received anything."""

    def __init__(self) -> None:
        self.started: float | None = None
        self.last: float | None = None
        self.body: float | None = None
        """When the first chunk of a streamed reply's body came (``_timing`` learns from it)."""

    def start(self) -> None:
        self.started = self.last = time.monotonic()

    def tick(self) -> None:
        self.last = time.monotonic()

    def chunk(self) -> None:
        """A chunk of the reply's body came."""
        self.tick()
        if self.body is None:
            self.body = self.last

    def idle(self) -> float:
        return 0.0 if self.last is None else time.monotonic() - self.last


async def race(wave: HedgeWave, multiple: float,
               attempt: Callable[[Progress], Awaitable[T]]) -> tuple[T, HedgeRecord | None]:
    """Run ``attempt``; re-send it once if it stalls past the wave's hedge delay.

    Returns the first good result and, when a hedge was sent, its record. When both fail
    the first failure is raised (the caller's retry loop takes it from there).
    """
    first_progress = Progress()
    first = asyncio.ensure_future(attempt(first_progress))
    woken = wave.watch(first_progress, multiple)
    first.add_done_callback(lambda _: None if woken.done() else woken.set_result(None))
    try:
        try:
            delay = await woken
        except asyncio.CancelledError:
            if woken.done() and not woken.cancelled() and woken.result() is not None:
                wave.re_sent()  # counted by the watchdog, never to be made
            raise
        if delay is None:
            return first.result(), None
        try:
            second_progress = Progress()
            second = asyncio.ensure_future(attempt(second_progress))
            return await _first_good(first, second, second_progress, delay)
        finally:
            wave.re_sent()
    finally:
        wave.unwatch(first_progress)
        abandon(first)


async def _first_good(first: asyncio.Future[T], second: asyncio.Future[T],
                      progress: Progress, delay: float) -> tuple[T, HedgeRecord]:
    """The first good answer of the two. A re-send that fails, or goes silent for ``delay``
    too, gives the stalled attempt up as well (the retry loop takes over); a failed stalled
    attempt leaves the re-send running."""
    started = time.monotonic()
    pending: set[asyncio.Future[T]] = {first, second}
    failed: BaseException | None = None
    try:
        while True:
            wait = max(delay - progress.idle(), 0.05) if progress.started else delay
            done, pending = await asyncio.wait(pending, timeout=wait,
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:
                if progress.started is not None and progress.idle() >= delay:
                    raise BothStalled(f"an attempt and its re-send both stalled for {delay:.1f}s")
                continue
            good = [t for t in (second, first) if t in done and t.exception() is None]
            if good:
                return good[0].result(), {
                    "after_s": round(delay, 3),
                    "winner": "hedge" if good[0] is second else "primary",
                    "loser": f"failed: {failed}" if failed else "cancelled",
                    "won_after_s": round(time.monotonic() - started, 3),
                }
            if second in done:
                raise second.exception()  # type: ignore[misc]
            failed = first.exception()
    finally:
        for task in (first, second):
            abandon(task)


def abandon(task: asyncio.Future[Any]) -> None:
    """Cancel an attempt no one will await, and take its outcome when it ends: an error it
    raises on the way out is never logged as "never retrieved" from the garbage collector
    (on Python 3.11 such a log, formatted inside another ``ast.parse``, broke that one:
    "AST constructor recursion depth mismatch")."""
    if not task.done():
        task.cancel()
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
