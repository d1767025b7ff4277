"""The OCR pool: pages read in worker processes, each bounded in memory, all of them in time.

::

    pages ──► pool of `workers` processes (spawn; OMP_THREAD_LIMIT=1; RLIMIT_AS; own group)
                │ results as they come, until the budget's deadline
                ├─ a worker died: its lost pages again, one worker, in order; the page that
                │  kills it is ``ocr_failed`` and the rest go on
                └─ deadline: workers and their Tesseract killed; pages left are ``ocr_budget``

One task is one page, so a 23-page scan spreads over every worker; each worker runs Tesseract
single-threaded, since the pool already uses the cores. Pages always run in worker processes,
even with one worker: that is what bounds their memory and lets the deadline stop them.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from dealroom._util.threads import ONE_THREAD
from dealroom.errors import RoomError
from dealroom.room._ocr import OcrLimits, OcrResult, OcrTask, ocr_page

WORKERS_DEAD = (
    "OCR worker processes die as soon as they start. If you call ingest() from a script, put "
    "the call under `if __name__ == '__main__':` (workers start with 'spawn' and re-import the "
    "main module)")
_Done = Callable[[int, OcrResult], None]


def _init_worker(memory_mb: int) -> None:
    """One Tesseract thread; the worker's address space bounded (Tesseract inherits it); a
    process group of its own, so that stopping the pool also ends a running Tesseract."""
    os.environ["OMP_THREAD_LIMIT"] = "1"
    os.environ.update(ONE_THREAD)  # numpy (pytesseract imports it) would reserve memory a core
    os.setpgrp()
    if memory_mb:
        import resource

        limit = memory_mb * 2**20
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _pool(workers: int, limits: OcrLimits) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("spawn")  # the caller may run threads
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                               initargs=(limits.worker_memory_mb,))


def _stop(pool: ProcessPoolExecutor) -> None:
    """Kill the workers (and their Tesseract, by process group); drop the queued pages."""
    processes = getattr(pool, "_processes", None) or {}  # no public handle before Python 3.14
    for pid in list(processes):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:  # already gone, or not yet its own group
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    pool.shutdown(wait=True, cancel_futures=True)


def _left(deadline: float) -> float | None:
    return None if math.isinf(deadline) else max(0.0, deadline - time.monotonic())


def _run(tasks: list[OcrTask], indices: list[int], workers: int, limits: OcrLimits,
         deadline: float, done: _Done) -> list[int]:
    """Read the pages ``indices`` in one pool until they are done or the deadline passes;
    return the pages lost to a worker that died, in order."""
    lost: list[int] = []
    pool = _pool(min(workers, len(indices)), limits)
    finished = False
    try:
        futures: dict[Future[OcrResult], int] = {
            pool.submit(ocr_page, tasks[i], limits): i for i in indices}
        for future in as_completed(futures, timeout=_left(deadline)):
            try:
                done(futures[future], future.result())
            except BrokenProcessPool:
                lost.append(futures[future])
        finished = True
    except TimeoutError:
        pass  # the budget ran out: the pages left are marked by the caller
    finally:
        if finished:
            pool.shutdown()
        else:
            _stop(pool)  # the deadline, Ctrl-C or a failing callback
    return sorted(lost)


def _check_workers(limits: OcrLimits) -> None:
    """Raise :class:`RoomError` when a worker cannot even start (the pages are not to blame)."""
    with _pool(1, limits) as pool:
        try:
            pool.submit(os.getpid).result()
        except BrokenProcessPool:
            raise RoomError(WORKERS_DEAD) from None


def ocr_pages(tasks: list[OcrTask], workers: int, limits: OcrLimits | None = None,
              progress: Callable[[int, int], None] | None = None) -> list[OcrResult]:
    """Read every page within ``limits``, in a pool of ``workers`` processes; results in task
    order. ``progress(done, total)`` is called as pages finish."""
    limits = limits or OcrLimits()
    deadline = time.monotonic() + limits.budget if limits.budget else math.inf
    results: dict[int, OcrResult] = {}

    def done(i: int, result: OcrResult) -> None:
        results[i] = result
        if progress is not None:
            progress(len(results), len(tasks))

    pending = _run(tasks, list(range(len(tasks))), workers, limits, deadline, done)
    if pending:
        _check_workers(limits)
    while pending and time.monotonic() < deadline:  # one worker: the first lost is the culprit
        pending = _run(tasks, pending, 1, limits, deadline, done)
        if pending:
            culprit, pending = pending[0], pending[1:]
            done(culprit, OcrResult("", 0.0, "the OCR worker died on this page (out of memory?)",
                                    "ocr_failed"))
    left = OcrResult("", 0.0, f"the OCR time budget ({limits.budget:g} s) ran out", "ocr_budget")
    for i in range(len(tasks)):
        if i not in results:
            done(i, left)
    return [results[i] for i in range(len(tasks))]
