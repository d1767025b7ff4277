"""Where evaluation's independent jobs run: a process pool on this machine or a Ray cluster.

Sweeps (``dealroom eval sweep``) and error-prefix recovery (``dealroom eval recover``) hand
their episodes here as ``(id, arguments)`` of one module-level function; each job's result
comes back to ``finished`` as it completes, so the caller records it at once. A job's function
must turn its own failures into its result; a worker that dies is reported as a failed job.
Pool workers are spawned fresh (no event loop or lock copied from the parent) and die with the
process that started them. :func:`job_lock` keeps two processes off the same job.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from types import ModuleType
from typing import Any

from dealroom.errors import ConfigError, MissingDependency

BACKENDS = ("process", "ray")
LOCKS = ".locks"
"""The folder (inside a sweep or a recovery) of per-job lock files."""
_PR_SET_PDEATHSIG = 1

Job = tuple[str, tuple[Any, ...]]
"""A job's id and the positional arguments of the function that runs it."""
Finished = Callable[[str, dict[str, Any]], None]
POLL_S = 0.2
"""How often a run that can be stopped looks at its ``stop`` event."""


class Stopped(Exception):
    """The run was stopped (its ``stop`` event set): jobs not finished were cancelled and
    their workers killed."""


def check_backend(backend: str, workers: int | None, address: str | None) -> int:
    """Validate the options before anything is written; return the number of workers."""
    if backend not in BACKENDS:
        raise ConfigError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    workers = workers or os.cpu_count() or 1
    if workers < 1:
        raise ConfigError("--workers must be at least 1")
    if address and backend != "ray":
        raise ConfigError("--address names a Ray cluster: use it with --backend ray")
    if backend == "ray":
        import_ray()
    return workers


def execute(fn: Callable[..., dict[str, Any]], jobs: list[Job], finished: Finished, *,
            workers: int, backend: str = "process", address: str | None = None,
            stop: threading.Event | None = None) -> None:
    """Run ``fn(*arguments)`` for every job, ``workers`` at a time, in the given order; call
    ``finished(id, result)`` as each ends (``{"status": "failed", "error": ...}`` for a job
    whose worker died). Once ``stop`` is set (from another thread), jobs still running are
    killed, those not started are dropped, and :class:`Stopped` is raised."""
    if not jobs:
        return
    run = _ray if backend == "ray" else _pool
    run(fn, jobs, finished, workers, address, stop)


def _pool(fn: Callable[..., dict[str, Any]], jobs: list[Job], finished: Finished,
          workers: int, address: str | None, stop: threading.Event | None) -> None:
    pool = ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent,
                               initargs=(os.getpid(),),
                               mp_context=multiprocessing.get_context("spawn"))
    try:
        pending = {pool.submit(fn, *args): job_id for job_id, args in jobs}
        while pending:
            done, _ = wait(pending, timeout=POLL_S if stop else None,
                           return_when=FIRST_COMPLETED)
            if stop is not None and stop.is_set():
                raise Stopped(f"stopped with {len(pending)} jobs unfinished")
            for future in done:
                job_id = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool as exc:  # a worker died: the pool's jobs with it
                    result = {"status": "failed", "did": "failed",
                              "error": f"the worker process died ({exc})"}
                finished(job_id, result)
    except BaseException:
        _kill(pool)
        raise
    pool.shutdown()


def _kill(pool: ProcessPoolExecutor) -> None:
    """Drop the jobs not started and kill the workers, so no job runs on unseen."""
    workers = list((pool._processes or {}).values())  # noqa: SLF001 - no public handle (3.14 adds one)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        with contextlib.suppress(OSError, AttributeError):
            process.kill()


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise MissingDependency("ray", extra="ray", feature="--backend ray") from None
    module: ModuleType = ray
    return module


def _ray(fn: Callable[..., dict[str, Any]], jobs: list[Job], finished: Finished,
         workers: int, address: str | None, stop: threading.Event | None) -> None:
    ray = import_ray()
    started = not ray.is_initialized()
    if started and address:
        ray.init(address=address, log_to_driver=False)
    elif started:  # a local cluster: its workers import dealroom as this process does
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}})
    remote = ray.remote(num_cpus=1, max_retries=0)(fn)
    try:
        pending = {remote.remote(*args): job_id for job_id, args in jobs}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_S if stop else None)
            if stop is not None and stop.is_set():
                for ref in pending:
                    ray.cancel(ref, force=True)
                raise Stopped(f"stopped with {len(pending)} jobs unfinished")
            for ref in done:
                job_id = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the task's worker died
                    result = {"status": "failed", "did": "failed",
                              "error": f"the Ray task failed ({type(exc).__name__}: {exc})"}
                finished(job_id, result)
    finally:
        if started:
            ray.shutdown()


@contextlib.contextmanager
def job_lock(folder: Path, job_id: str) -> Iterator[None]:
    """Hold ``job_id``'s lock under ``folder`` (waiting for a process that still holds it)."""
    path = folder / LOCKS / (job_id.replace("/", "__") + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def die_with_parent(parent: int) -> None:
    """Pool initializer: the worker is killed when the process ``parent`` dies (SIGKILL too),
    so no job runs on unseen after its sweep or recovery is gone."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)
