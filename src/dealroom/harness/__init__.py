"""Harnesses: the RLM harness and the tool-loop baseline, behind one ``run_agent`` API.

Every harness is a :class:`Harness` registered in the ``dealroom.harnesses`` entry-point group;
it starts its run with :func:`open_run` (a resumed one with :func:`reopen_run`), which writes
the run folder through :mod:`dealroom.runs`, and writes the task's deliverables (Markdown, text
or Word, by file name) through the run's :class:`Deliverables`.
"""

from dealroom.harness._api import (
    get_harness,
    harness_names,
    resume_run,
    resume_run_async,
    run_agent,
    run_agent_async,
)
from dealroom.harness._common import OpenRun, RunEvents, RunResult, open_run, reopen_run
from dealroom.harness._deliver import (
    DELIVERABLE_FORMATS,
    Deliverables,
    check_deliverables,
)
from dealroom.harness._protocol import Harness, Listener

__all__ = [
    "DELIVERABLE_FORMATS",
    "Deliverables",
    "Harness",
    "Listener",
    "OpenRun",
    "RunEvents",
    "RunResult",
    "check_deliverables",
    "get_harness",
    "harness_names",
    "open_run",
    "reopen_run",
    "resume_run",
    "resume_run_async",
    "run_agent",
    "run_agent_async",
]
