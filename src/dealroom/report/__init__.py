"""The HTML report over sweeps and runs (``dealroom report``) and the trace viewer of one run
(``dealroom view``): folders that open from disk, with data beside the page as scripts."""

from dealroom.report._report import REPORT_JSON, build_report
from dealroom.report._serve import make_server
from dealroom.report._view import write_trace

__all__ = ["REPORT_JSON", "build_report", "make_server", "write_trace"]
