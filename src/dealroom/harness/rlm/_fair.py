"""Fair admission of sub-calls across the agents of one run.

Every sub-call of a run (the root's and its children's) takes a slot of its named sub model's
:class:`FairGate` (one gate per ``--sub NAME=MODEL``, as many slots as its endpoint takes)
before it is sent. While slots are free a call goes straight through; once they are all taken,
waiting calls queue per agent and a freed slot goes to the next agent in turn (round robin), so
a child that sends 5,000 calls cannot hold back the one beside it that sends 5.

    agent A: a1 a2 a3 a4 ...        slot freed ─▶ A's next, then B's, then C's, then A's ...
    agent B: b1 b2
    agent C: c1
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from dealroom.harness.rlm._subs import SubModel

T = TypeVar("T")


class FairGate:
    """At most ``limit`` calls in flight; waiting calls admitted round robin by key."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self.busy = 0
        self._queues: dict[str, deque[asyncio.Future[None]]] = {}
        """Key → its waiters; the dict's order is the round robin (a served key goes last)."""

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    async def run(self, key: str, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable`` holding a slot taken for ``key``."""
        try:
            await self._acquire(key)
        except BaseException:
            close = getattr(awaitable, "close", None)
            if close is not None:  # a coroutine never started: closed, not left unawaited
                close()
            raise
        try:
            return await awaitable
        finally:
            self._release()

    async def _acquire(self, key: str) -> None:
        if self.busy < self.limit and not self._queues:
            self.busy += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(key, deque()).append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # the slot was handed over as the wait was cancelled
            else:
                self._forget(key, waiter)
            raise

    def _forget(self, key: str, waiter: asyncio.Future[None]) -> None:
        queue = self._queues.get(key)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            if not queue:
                del self._queues[key]

    def _release(self) -> None:
        """Hand the freed slot to the first waiter of the next key, or free it."""
        while self._queues:
            key = next(iter(self._queues))
            queue = self._queues.pop(key)
            waiter = queue.popleft()
            if queue:
                self._queues[key] = queue  # to the back of the round
            if not waiter.done():
                waiter.set_result(None)  # the slot passes on: ``busy`` stays
                return
        self.busy -= 1


def gate_for(gates: dict[str, FairGate], model: SubModel) -> FairGate:
    """The run's gate of the named sub model ``model`` (made on first use): as many slots as
    its endpoint's concurrency."""
    gate = gates.get(model.name)
    if gate is None:
        gate = gates[model.name] = FairGate(model.concurrency)
    return gate
