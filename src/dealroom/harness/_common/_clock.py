"""The run's clock: ``--max-seconds`` ends a run even while the host is busy for it.

The budget is checked between steps (a turn starts only with time left; a cell's wall clock is
what is left of the run's); what may not return in time (a root call in flight, a wave of
sub-calls, host work on what the root wrote) is cut by :func:`run_within`, which cancels the
episode :data:`STOP_GRACE_S` after the budget ran out, so the run still writes its ``run_end``
and ``metrics.json``. Host work on what the root wrote (the memo's history delta, its
deliverables) runs in a thread of its own (:func:`off_loop`), never on the event loop, so that
clock can fire while it works.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from dealroom.harness._common._budget import BudgetTracker

T = TypeVar("T")

STOP_GRACE_S = 5.0
"""Seconds past ``max_seconds`` after which a run still busy is stopped (its records are
written after it)."""
STOPPED = (f"seconds budget used up: the run was stopped {STOP_GRACE_S:g} s past it, "
           "still busy")
"""The reason of a run :func:`run_within` stopped (its status: ``budget_exhausted``)."""


async def run_within(tracker: BudgetTracker, work: Coroutine[Any, Any, T]) -> T | None:
    """``work``'s result, or None when the run's clock stopped it: it was still running
    :data:`STOP_GRACE_S` after ``tracker``'s seconds ran out (it was cancelled)."""
    left = tracker.seconds_left()
    if left == float("inf"):
        return await work
    try:
        async with asyncio.timeout(max(left, 0.0) + STOP_GRACE_S) as clock:
            return await work
    except TimeoutError:
        if clock.expired():
            return None
        raise


async def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a daemon thread of its own, awaited: the event loop (and the run's
    clock) stays free while it works, and the process does not wait for it to exit. Once
    cancelled, ``fn`` runs on and its outcome is dropped."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name="dealroom-host-work", daemon=True).start()
    return await future
