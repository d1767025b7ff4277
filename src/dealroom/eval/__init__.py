"""Evaluation: summaries over run folders (sweeps build on the same records)."""

from dealroom.eval._summary import run_row, summarize_runs

__all__ = ["run_row", "summarize_runs"]
