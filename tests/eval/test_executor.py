"""The job executor: a set ``stop`` event kills the workers of jobs still running and drops
those not started."""

import multiprocessing
import os
import threading
import time

import pytest

from dealroom.eval._executor import Stopped, execute


def nap(seconds: float) -> dict:
    """A job: sleep."""
    time.sleep(seconds)
    return {}


def mark(path: str) -> dict:
    """A job: leave a file."""
    open(path, "w").close()
    return {}


def dispatch(kind, *args) -> dict:
    """A job: one of the jobs above (execute takes one function for all)."""
    return kind(*args)


def after(path: str) -> dict:
    """A job: wait until another job has left its file (however slowly workers start)."""
    while not os.path.exists(path):
        time.sleep(0.01)
    return {}


def test_without_a_stop_every_job_finishes_in_order_of_completion(tmp_path):
    done, flag = [], str(tmp_path / "fast-finished")
    jobs = [("slow", after, (flag,)), ("fast", mark, (flag,))]
    execute(dispatch, [(i, (f, *a)) for i, f, a in jobs], lambda i, r: done.append(i), workers=2)
    assert done == ["fast", "slow"]


def test_a_stop_kills_running_jobs_and_starts_none_more():
    stop, done = threading.Event(), []

    def finished(job_id, result):
        done.append(job_id)
        stop.set()  # the first job to finish stops the rest

    # the long job outlives the test's time-out: only the stop can end it
    jobs = [("quick", (0.0,)), ("long", (3600.0,)), ("later", (0.0,)), ("last", (0.0,))]
    with pytest.raises(Stopped, match="unfinished"):
        execute(nap, jobs, finished, workers=2, stop=stop)
    assert "long" not in done and len(done) <= 3
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.1)  # active_children() reaps the killed ones
    assert not multiprocessing.active_children(), "no worker process is left running"
