"""The byte budget: how many bytes of replies the host buffers across all calls in flight.

    a reply's first FREE_BYTES            read at once (small replies never wait)
    past them, a declared Content-Length  its whole length reserved before it is read
    past them, an undeclared body/stream  its whole limit reserved (it may grow to it)
    the budget                            REPLY_BUDGET_BYTES per event loop, shared by every
                                          client; a reservation waits, first come first served,
                                          until earlier ones are given back (the call's own
                                          time-out still runs)

A call never waits while holding part of the budget it still needs, so waits cannot deadlock;
with 256 calls in flight the host buffers at most ``256 * FREE_BYTES + REPLY_BUDGET_BYTES``
of raw reply bytes, whatever the endpoint sends.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import weakref

FREE_BYTES = 2**20
"""Bytes of one reply read without a reservation."""
REPLY_BUDGET_BYTES = 256 * 2**20
"""Bytes of replies past their first FREE_BYTES buffered at once, across all calls."""


class ByteBudget:
    """A pool of ``total`` bytes handed out in FIFO order; :attr:`peak` is the most ever held,
    :attr:`waited` the reservations that had to wait."""

    def __init__(self, total: int = REPLY_BUDGET_BYTES) -> None:
        self.total = total
        self.free = total
        self.peak = 0
        self.waited = 0
        self._waiters: collections.deque[tuple[int, asyncio.Future[None]]] = collections.deque()

    async def take(self, n: int) -> int:
        """Wait until ``n`` bytes (at most the whole budget) are free, take them, return how
        many were taken."""
        n = min(n, self.total)
        if not self._waiters and self.free >= n:
            self._grant(n)
            return n
        self.waited += 1
        future = asyncio.get_running_loop().create_future()
        entry = (n, future)
        self._waiters.append(entry)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.give(n)  # granted as the wait was cancelled
            else:
                with contextlib.suppress(ValueError):  # _wake may have dropped it already
                    self._waiters.remove(entry)
                self._wake()
            raise
        return n

    def give(self, n: int) -> None:
        """Hand ``n`` bytes back."""
        self.free += n
        self._wake()

    def _grant(self, n: int) -> None:
        self.free -= n
        self.peak = max(self.peak, self.total - self.free)

    def _wake(self) -> None:
        """Grant the waiters at the head that now fit, in order; a cancelled one is dropped
        (its task, when it runs, finds itself gone) and never holds up those behind it."""
        while self._waiters:
            n, future = self._waiters[0]
            if future.done():
                self._waiters.popleft()
            elif self.free >= n:
                self._waiters.popleft()
                self._grant(n)
                future.set_result(None)
            else:
                break


class Lease:
    """What one reply holds of a budget; :meth:`cover` grows it, :meth:`release` ends it."""

    def __init__(self, budget: ByteBudget | None = None) -> None:
        self.budget = budget if budget is not None else reply_budget()
        self.held = 0

    async def cover(self, size: int, worst: int) -> None:
        """Make sure a reply now ``size`` bytes long may be buffered: past FREE_BYTES, hold
        ``worst`` (its declared length or its limit) in one reservation."""
        if size <= max(FREE_BYTES, self.held) or self.held:
            return
        self.held = await self.budget.take(worst)

    def release(self) -> None:
        held, self.held = self.held, 0
        if held:
            self.budget.give(held)


_BUDGETS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ByteBudget] = (
    weakref.WeakKeyDictionary())


def reply_budget() -> ByteBudget:
    """The running loop's budget (one per loop, made on first use)."""
    loop = asyncio.get_running_loop()
    budget = _BUDGETS.get(loop)
    if budget is None:
        budget = _BUDGETS[loop] = ByteBudget(REPLY_BUDGET_BYTES)
    return budget
