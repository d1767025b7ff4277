"""The one bounded fan-out helper: many awaitables in, results in order out, failures isolated."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar, cast

T = TypeVar("T")

Job = Awaitable[T] | Callable[[], Awaitable[T]]


async def gather_bounded(
    jobs: Iterable[Job[T]],
    *,
    limit: int = 256,
    timeout: float | None = None,
    on_done: Callable[[int, T | Exception], object] | None = None,
) -> list[T | Exception]:
    """Run ``jobs`` with at most ``limit`` in flight; return their results in input order.

    Each job is an awaitable (a coroutine) or a zero-argument callable returning one; callables
    are only called when a slot frees, so nothing starts early. A job that raises, or runs past
    ``timeout`` seconds (:class:`TimeoutError`), yields its exception object in its slot: one
    failure never sinks the batch. ``on_done(index, result)`` is called as each job finishes
    (for progress and incremental logs). Cancelling the caller cancels the jobs in flight and
    closes the ones not yet started. Model clients bound their own endpoints too; ``limit``
    bounds this batch. Workers start one event-loop turn apart, so a job's first step (and what
    it schedules, such as an HTTP client's body write) runs before the next job starts.

    >>> async def double(x):
    ...     return 2 * x
    >>> asyncio.run(gather_bounded([double(1), lambda: double(2)]))
    [2, 4]
    """
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    items = list(jobs)
    results: list[T | Exception | None] = [None] * len(items)
    next_index = 0
    stopped = False

    async def run_one(job: Job[T]) -> T:
        awaitable = job() if callable(job) and not inspect.isawaitable(job) else job
        if timeout is None:
            return await awaitable
        return await asyncio.wait_for(awaitable, timeout)

    async def worker() -> None:
        nonlocal next_index
        while not stopped and next_index < len(items):
            index = next_index
            next_index += 1
            try:
                result: T | Exception = await run_one(items[index])
            except Exception as exc:  # noqa: BLE001 - a failure is that item's result
                result = exc
            results[index] = result
            items[index] = None  # type: ignore[call-overload]  # drop the finished coroutine
            if on_done is not None:
                on_done(index, result)

    workers: list[asyncio.Future[None]] = []
    try:
        for _ in range(min(limit, len(items))):
            workers.append(asyncio.ensure_future(worker()))
            await asyncio.sleep(0)  # it runs to its first wait before the next one starts
        await asyncio.gather(*workers)
    except BaseException:
        stopped = True  # a worker whose job swallowed the cancel starts nothing more
        for task in workers:
            task.cancel()
        for job in items[next_index:]:
            if inspect.iscoroutine(job):
                job.close()
        raise
    return cast("list[T | Exception]", results)  # every slot is filled by now
