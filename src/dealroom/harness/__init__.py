"""Harnesses: the RLM harness and the tool-loop baseline, behind one ``run_agent`` API.

Every harness is a :class:`Harness` registered in the ``dealroom.harnesses`` entry-point group;
it starts its run with :func:`open_run` (a resumed one with :func:`reopen_run`), which writes
the run folder through :mod:`dealroom.runs`, and writes the task's deliverables (Markdown, text
or Word, by file name) through the run's :class:`Deliverables`. :func:`fork_run` continues a
run after one of its root turns with another policy, through the harness's resume.
"""

from typing import TYPE_CHECKING

from dealroom._util.lazy import lazy_exports

_EXPORTS = {
    "AskResult": "dealroom.harness._ask",
    "ask_run": "dealroom.harness._ask",
    "ask_run_async": "dealroom.harness._ask",
    "read_answers": "dealroom.harness._ask",
    "fork_run": "dealroom.harness._api",
    "fork_run_async": "dealroom.harness._api",
    "get_harness": "dealroom.harness._api",
    "harness_names": "dealroom.harness._api",
    "resume_run": "dealroom.harness._api",
    "resume_run_async": "dealroom.harness._api",
    "run_agent": "dealroom.harness._api",
    "run_agent_async": "dealroom.harness._api",
    "OpenRun": "dealroom.harness._common",
    "RunEvents": "dealroom.harness._common",
    "RunResult": "dealroom.harness._common",
    "open_run": "dealroom.harness._common",
    "reopen_run": "dealroom.harness._common",
    "DELIVERABLE_FORMATS": "dealroom.harness._deliver",
    "Deliverables": "dealroom.harness._deliver",
    "check_deliverables": "dealroom.harness._deliver",
    "Harness": "dealroom.harness._protocol",
    "Listener": "dealroom.harness._protocol",
    "SubModels": "dealroom.harness._subs",
    "cost_caps": "dealroom.harness._subs",
    "label_specs": "dealroom.harness._subs",
    "sub_specs": "dealroom.harness._subs",
    "subs_label": "dealroom.harness._subs",
}
"""Public name → the module that defines it (``module:name`` where renamed)."""

if TYPE_CHECKING:  # what type checkers and editors see (a test keeps it to _EXPORTS)
    from dealroom.harness._api import (
        fork_run,
        fork_run_async,
        get_harness,
        harness_names,
        resume_run,
        resume_run_async,
        run_agent,
        run_agent_async,
    )
    from dealroom.harness._ask import AskResult, ask_run, ask_run_async, read_answers
    from dealroom.harness._common import OpenRun, RunEvents, RunResult, open_run, reopen_run
    from dealroom.harness._deliver import DELIVERABLE_FORMATS, Deliverables, check_deliverables
    from dealroom.harness._protocol import Harness, Listener
    from dealroom.harness._subs import (
        SubModels,
        cost_caps,
        label_specs,
        sub_specs,
        subs_label,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
