"""The RLM harness: a sandboxed REPL over the room, parallel sub-agents, depth and budgets."""

from dealroom.harness.rlm._engine import Episode, EpisodeResult, RunContext
from dealroom.harness.rlm._memo import Memo
from dealroom.harness.rlm._run import resume_rlm, run_rlm
from dealroom.harness.rlm._scripted import scripted_policy, scripted_root
from dealroom.harness.rlm._session import CellOutput, ReplSession, open_repl
from dealroom.harness.rlm._settings import RLMSettings

__all__ = [
    "CellOutput",
    "Episode",
    "EpisodeResult",
    "Memo",
    "RLMSettings",
    "ReplSession",
    "RunContext",
    "open_repl",
    "resume_rlm",
    "run_rlm",
    "scripted_policy",
    "scripted_root",
]
