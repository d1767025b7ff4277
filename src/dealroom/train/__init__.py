"""Post-training the root: token-exact training rows and LoRA fine-tuning with TRL.

:func:`conversation_rows` turns a conversation (and, for ``hf:`` roots, the token ids it
sampled) into rows whose ``assistant_masks`` is 1 exactly on the root's own tokens: the one
mask SFT and RL share. :func:`train_sft` fine-tunes an ``hf:`` model on such rows with LoRA
(settings: :class:`SFTSettings`). Needs the ``train`` extra: ``pip install "dealroom[train]"``.
``dealroom.train.testing`` builds a tiny chat model in code for tests.
"""

from dealroom.train._mask import (
    TokenizedEpisode,
    TrainingRow,
    conversation_rows,
    tokenize_conversation,
)
from dealroom.train._settings import SFTSettings, field_help
from dealroom.train._sft import SFTResult, read_rows, train_sft

__all__ = [
    "SFTResult",
    "SFTSettings",
    "TokenizedEpisode",
    "TrainingRow",
    "conversation_rows",
    "field_help",
    "read_rows",
    "tokenize_conversation",
    "train_sft",
]
