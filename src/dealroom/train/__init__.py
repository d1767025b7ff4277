"""Post-training the root: judged runs as datasets, token-exact rows, LoRA fine-tuning with TRL.

:func:`export_sft` selects judged runs (:func:`select_runs`: per room the best above the bars)
and writes their root conversations as chat JSONL and masked, pre-tokenized rows.
:func:`conversation_rows` turns a conversation (and, for ``hf:`` roots, the token ids it
sampled) into rows whose ``assistant_masks`` is 1 exactly on the root's own tokens: the one
mask SFT and RL share. :func:`train_sft` fine-tunes an ``hf:`` model on such rows with LoRA
(settings: :class:`SFTSettings`). :func:`self_distill` loops sample → judge → select → SFT
round after round from a spec (:class:`DistillSpec`, :func:`load_distill_spec`). Needs
the ``train`` extra: ``pip install "dealroom[train]"``.
``dealroom.train.testing`` builds a tiny chat model in code for tests.
"""

from dealroom.train._distill import DistillResult, self_distill
from dealroom.train._distill_spec import DistillSpec, load_distill_spec
from dealroom.train._export import ExportResult, export_sft
from dealroom.train._mask import (
    TokenizedEpisode,
    TrainingRow,
    conversation_rows,
    tokenize_conversation,
)
from dealroom.train._select import Selection, select_runs
from dealroom.train._settings import SFTSettings, field_help
from dealroom.train._sft import SFTResult, read_rows, train_sft

__all__ = [
    "DistillResult",
    "DistillSpec",
    "ExportResult",
    "SFTResult",
    "SFTSettings",
    "Selection",
    "TokenizedEpisode",
    "TrainingRow",
    "conversation_rows",
    "export_sft",
    "field_help",
    "load_distill_spec",
    "read_rows",
    "select_runs",
    "self_distill",
    "tokenize_conversation",
    "train_sft",
]
