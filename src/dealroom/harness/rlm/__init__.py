"""The RLM harness: a sandboxed REPL over the room, parallel sub-agents, depth and budgets."""

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

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
