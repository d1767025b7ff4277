"""Token-exact records of a completion, and the run folder's side file that holds them.

A provider that generates in-process (``hf:``) knows exactly which tokens it was shown and which
it sampled; RL needs them as they were, not re-tokenized. The provider returns a
:class:`TokenRecord` with the reply; the harness writes it through the run's recorder to one
append-only file per run, ``RUN/tokens.jsonl`` (one JSON object per model call), and the
``model_call`` event points at its line (``tokens`` is None for a provider that records none)::

    model_call {..., "tokens": {"file": "tokens.jsonl", "offset": 18342}}
    tokens.jsonl @18342: {"call_id": "root/t3", "prompt_ids": [...], "completion_ids": [...],
                          "logprobs": [...], "eos": false, "prompt_reused": 1532}

A call made again after an interrupted run appends a new line; readers keep the last line per
``call_id``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError

TOKENS = "tokens.jsonl"
LOGPROB_DIGITS = 6
_lock = threading.Lock()


@dataclass
class TokenRecord:
    """The exact tokens of one completion."""

    prompt_ids: list[int]
    """Every token the model was shown, in order (the chat template's tokens included)."""
    completion_ids: list[int]
    """Every token the model sampled, in order, the end-of-turn token included when it
    sampled one (see ``eos``)."""
    logprobs: list[float] = field(default_factory=list)
    """Log-probability of each sampled token under the sampling distribution: log-softmax of
    ``logits / temperature`` (of the raw logits when greedy), before top-k/top-p; the value
    TRL's trainers recompute. One per ``completion_ids`` entry."""
    eos: bool = False
    """The last completion id is an end-of-sequence token; it is not part of the reply's text."""
    prompt_reused: int = 0
    """Leading ``prompt_ids`` carried over unchanged from the previous call of the same
    conversation (its prompt and completion), so a multi-turn episode is one token sequence."""

    def __post_init__(self) -> None:
        if self.logprobs and len(self.logprobs) != len(self.completion_ids):
            raise ConfigError(
                f"token record: {len(self.logprobs)} logprobs for "
                f"{len(self.completion_ids)} completion ids"
            )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["logprobs"] = [round(x, LOGPROB_DIGITS) for x in self.logprobs]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenRecord:
        keys = ("prompt_ids", "completion_ids", "logprobs", "eos", "prompt_reused")
        return cls(**{k: data[k] for k in keys if k in data})


def write_tokens(run_dir: Path, call_id: str, record: TokenRecord) -> dict[str, Any]:
    """Append ``record`` to ``RUN/tokens.jsonl``; return the reference a ``model_call`` event
    carries under ``tokens``."""
    path = Path(run_dir) / TOKENS
    line = json.dumps({"call_id": call_id, **record.to_dict()}) + "\n"
    with _lock, open(path, "ab") as fh:
        offset = fh.tell()
        fh.write(line.encode())
    return {"file": TOKENS, "offset": offset}


def read_tokens(run_dir: Path, ref: dict[str, Any]) -> TokenRecord:
    """The record a ``model_call`` event's ``tokens`` reference points at."""
    path = Path(run_dir) / str(ref.get("file", TOKENS))
    try:
        with open(path, "rb") as fh:
            fh.seek(int(ref["offset"]))
            return TokenRecord.from_dict(json.loads(fh.readline()))
    except (OSError, KeyError, ValueError, TypeError, RecursionError) as exc:
        raise ConfigError(f"{path}: no token record at {ref!r} ({exc})") from None


def read_all_tokens(run_dir: Path) -> dict[str, TokenRecord]:
    """Every token record of a run by ``call_id`` (the last line wins); ``{}`` when none."""
    path = Path(run_dir) / TOKENS
    if not path.is_file():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    found: dict[str, TokenRecord] = {}
    for number, line in enumerate(lines, 1):
        try:
            data = json.loads(line)
            found[data["call_id"]] = TokenRecord.from_dict(data)
        except (ValueError, KeyError, TypeError, RecursionError):
            if number < len(lines):  # a torn last line (a kill mid-write) is skipped
                raise ConfigError(f"{path}:{number} is not a token record") from None
    return found
