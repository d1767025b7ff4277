"""Evaluation: run records, resume, summaries and sweeps."""

from dealroom.eval._runlog import RunLog, RunRecorder
from dealroom.eval._summary import run_row, summarize_runs

__all__ = ["RunLog", "RunRecorder", "run_row", "summarize_runs"]
