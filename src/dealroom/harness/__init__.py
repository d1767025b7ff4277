"""Harnesses: the RLM harness and the tool-loop baseline, behind one ``run_agent`` API."""

from dealroom.harness._api import (
    get_harness,
    harness_names,
    resume_run,
    resume_run_async,
    run_agent,
    run_agent_async,
)
from dealroom.harness._common import RunResult

__all__ = [
    "RunResult",
    "get_harness",
    "harness_names",
    "resume_run",
    "resume_run_async",
    "run_agent",
    "run_agent_async",
]
