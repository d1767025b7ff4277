"""Measurement: coverage probes, token and cost accounting, behaviour statistics.

Pure functions over a room and a run's records (read through :mod:`dealroom.runs`); nothing
here calls a model. Every metric name is defined in docs/measurement.md.
"""

from dealroom.measure._accounting import account, price_usage, root_share
from dealroom.measure._behaviour import behaviour, correlation, memo_incremental, ratio
from dealroom.measure._coverage import CoverageProbe, build_index, coverage_from_run
from dealroom.measure._coverindex import CoverageIndex
from dealroom.measure._metrics import metrics_from_run, run_metrics
from dealroom.measure._roomtext import DocText

__all__ = [
    "CoverageIndex",
    "CoverageProbe",
    "DocText",
    "account",
    "behaviour",
    "build_index",
    "correlation",
    "coverage_from_run",
    "memo_incremental",
    "metrics_from_run",
    "price_usage",
    "ratio",
    "root_share",
    "run_metrics",
]
