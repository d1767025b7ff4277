"""The RLM harness: a sandboxed REPL over the room, parallel sub-agents, depth and budgets."""

from typing import TYPE_CHECKING

from dealroom._util.lazy import lazy_exports

_EXPORTS = {
    "Episode": "dealroom.harness.rlm._engine",
    "EpisodeResult": "dealroom.harness.rlm._engine",
    "RunContext": "dealroom.harness.rlm._engine",
    "Memo": "dealroom.harness.rlm._memo",
    "resume_rlm": "dealroom.harness.rlm._run",
    "run_rlm": "dealroom.harness.rlm._run",
    "scripted_policy": "dealroom.harness.rlm._scripted",
    "scripted_root": "dealroom.harness.rlm._scripted",
    "CellOutput": "dealroom.harness.rlm._session",
    "ReplSession": "dealroom.harness.rlm._session",
    "open_repl": "dealroom.harness.rlm._session",
    "RLMSettings": "dealroom.harness.rlm._settings",
}
"""Public name → the module that defines it (``module:name`` where renamed)."""

if TYPE_CHECKING:  # what type checkers and editors see (a test keeps it to _EXPORTS)
    from dealroom.harness.rlm._engine import Episode, EpisodeResult, RunContext
    from dealroom.harness.rlm._memo import Memo
    from dealroom.harness.rlm._run import resume_rlm, run_rlm
    from dealroom.harness.rlm._scripted import scripted_policy, scripted_root
    from dealroom.harness.rlm._session import CellOutput, ReplSession, open_repl
    from dealroom.harness.rlm._settings import RLMSettings

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
