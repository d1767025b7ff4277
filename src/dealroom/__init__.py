"""dealroom: run, judge, evaluate and post-train recursive language model agents on data rooms."""

__version__ = "0.1.0"
