"""Evaluation: run records, resume, summaries and sweeps."""

from dealroom.eval._runlog import RunLog, RunRecorder

__all__ = ["RunLog", "RunRecorder"]
