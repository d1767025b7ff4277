"""A run's sequences besides the root's: what ``train_subs`` trains on (GRPO and ``export sft``).

    model_call events ──role child_root (agent root/cT-N, ...)──▶ each child's conversation,
           │                                 one sequence as the root's (agent_segments)
           └──role sub, with a token record──▶ each sub-call: its prompt ids (mask 0), then its
                                             sampled ids (mask 1), as the model saw and made them

Only calls with an exact record count: one whose sampled ids decode (with the training
tokenizer) to the reply the run recorded. ``models`` keeps the calls of the model being
trained: in GRPO, the policy (the root's client; ``sub = "policy"`` answers under its name).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.runs import read_tokens, whole_reply
from dealroom.train._mask import TrainingRow

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from dealroom.runs import TokenRecord

ROOT, CHILD, SUB = "root", "child", "sub"
"""The kinds of sequence of a run: the root's conversation, a child's, a sub-call."""


@dataclass
class SubCall:
    """A sub-call with its exact token record."""

    call: dict[str, Any]
    """Its ``model_call`` event."""
    record: TokenRecord


def _calls(events: Iterable[dict[str, Any]], role: str,
           models: Collection[str] | None) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == "model_call" and e.get("role") == role
            and (models is None or e.get("model") in models)]


def root_models(events: Iterable[dict[str, Any]]) -> set[str]:
    """The names the root's calls were made under (the policy's, in a GRPO rollout)."""
    return {str(e.get("model")) for e in _calls(events, "root", None)}


def child_agents(events: Iterable[dict[str, Any]],
                 models: Collection[str] | None = None) -> list[str]:
    """The agents (``root/c3-1``, ...) of the run's children, in the order they first
    called their model; only children of ``models`` when given."""
    seen: dict[str, None] = {}
    for event in _calls(events, "child_root", models):
        seen.setdefault(str(event.get("agent")), None)
    return list(seen)


def sub_calls(run_dir: Path, events: Iterable[dict[str, Any]],
              tokenizer: PreTrainedTokenizerBase,
              models: Collection[str] | None = None) -> tuple[list[SubCall], int]:
    """The run's answered sub-calls (of ``models`` when given) with an exact token record,
    in order, and how many answered ones had none (no record, or one that does not decode
    to the reply)."""
    from dealroom.models import reply_text

    exact: list[SubCall] = []
    missed = 0
    for call in _calls(events, "sub", models):
        if call.get("error") is not None or call.get("output") is None:
            continue
        record = read_tokens(Path(run_dir), call["tokens"]) if call.get("tokens") else None
        if record is None or not record.completion_ids or not record.prompt_ids \
                or reply_text(tokenizer, record) != whole_reply(call):
            missed += 1
        else:
            exact.append(SubCall(call, record))
    return exact, missed


def call_row(record: TokenRecord) -> TrainingRow:
    """One call as a training row: its prompt (mask 0), then every token it sampled (mask 1).

    >>> from dealroom.runs import TokenRecord
    >>> row = call_row(TokenRecord([1, 5, 6], [7, 2], [-0.5, -0.1], eos=True))
    >>> row.input_ids, row.assistant_masks
    ([1, 5, 6, 7, 2], [0, 0, 0, 1, 1])
    """
    return TrainingRow(record.prompt_ids + record.completion_ids,
                       [0] * len(record.prompt_ids) + [1] * len(record.completion_ids), [0])
