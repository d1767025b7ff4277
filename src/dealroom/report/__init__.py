"""The HTML report over sweeps and runs (``dealroom report``), the trace viewer of one run
(``dealroom view RUN``) and the list of a folder's runs (``dealroom view DIR``): folders that
open from disk, with data beside the page as scripts; and runs as inspect_ai evaluation logs
(``dealroom export inspect``)."""

from dealroom.report._inspect import eval_log, export_inspect
from dealroom.report._listing import Listing, watch_listing, write_listing
from dealroom.report._report import REPORT_JSON, build_report
from dealroom.report._serve import make_server
from dealroom.report._view import write_trace

__all__ = ["REPORT_JSON", "Listing", "build_report", "eval_log", "export_inspect",
           "make_server", "watch_listing", "write_listing", "write_trace"]
