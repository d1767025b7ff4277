"""Post-training the root: judged runs as datasets, token-exact rows, LoRA fine-tuning with TRL.

:func:`export_sft` selects judged runs (:func:`select_runs`: per room the best above the bars)
and writes their root conversations as chat JSONL and masked, pre-tokenized rows.
:func:`conversation_rows` turns a conversation (and, for ``hf:`` roots, the token ids it
sampled) into rows whose ``assistant_masks`` is 1 exactly on the root's own tokens: the one
mask SFT and RL share. :func:`train_sft` fine-tunes an ``hf:`` model on such rows with LoRA
(settings: :class:`SFTSettings`). :func:`self_distill` loops sample → judge → select → SFT
round after round from a spec (:class:`DistillSpec`, :func:`load_distill_spec`). Needs
the ``train`` extra: ``pip install "dealroom[train]"``.
``dealroom.testing`` builds a tiny chat model in code for tests.
"""

from dealroom.train._distill import DistillResult, self_distill
from dealroom.train._distill_spec import DistillSpec, load_distill_spec
from dealroom.train._export import ExportResult, export_sft
from dealroom.train._grpo import BudgetMixViolation, GRPOResult, train_grpo
from dealroom.train._grpo_loss import group_advantages
from dealroom.train._grpo_settings import GRPOSettings, GRPOSpec, load_grpo_spec
from dealroom.train._mask import (
    TokenizedEpisode,
    TrainingRow,
    conversation_rows,
    tokenize_conversation,
)
from dealroom.train._select import Selection, select_runs
from dealroom.train._settings import SFTSettings, field_help
from dealroom.train._sft import SFTResult, read_rows, train_sft
from dealroom.train._skyrl_register import register_skyrl_env
from dealroom.train._watch import Sign, TrainingWatchError, hidden_touch

__all__ = [
    "BudgetMixViolation",
    "DistillResult",
    "DistillSpec",
    "ExportResult",
    "GRPOResult",
    "GRPOSettings",
    "GRPOSpec",
    "SFTResult",
    "SFTSettings",
    "Selection",
    "Sign",
    "TokenizedEpisode",
    "TrainingRow",
    "TrainingWatchError",
    "conversation_rows",
    "export_sft",
    "field_help",
    "group_advantages",
    "hidden_touch",
    "load_grpo_spec",
    "load_distill_spec",
    "read_rows",
    "register_skyrl_env",
    "select_runs",
    "self_distill",
    "tokenize_conversation",
    "train_grpo",
    "train_sft",
]
