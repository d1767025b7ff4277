"""Appending a run's events as they happen, so a run killed at any point resumes."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from dealroom._util.redact import dumps_redacted, redact
from dealroom.runs._events import check_written
from dealroom.runs._folder import TRAJECTORY, RunFolder
from dealroom.runs._jsonl import drop_torn_tail
from dealroom.runs._memohistory import MEMO_HISTORY, memo_delta
from dealroom.runs._tokens import TOKENS, TokenRecord, write_tokens


class RunRecorder:
    """Appends events to a run folder's ``trajectory.jsonl``; thread-safe, one per run.

    Each event is flushed to the kernel as it is written: it survives a SIGKILL of this
    process. The secrets the process knows are redacted from events and memos before they
    are kept or written (:mod:`dealroom._util.redact`). ``RunRecorder(folder)`` starts a new
    trajectory; :meth:`reopen` continues one. :attr:`written` holds the events this recorder
    wrote, in ``seq`` order.
    """

    def __init__(self, folder: RunFolder, *, next_seq: int = 0, t_offset: float = 0.0,
                 memo: tuple[int, str] = (0, "")) -> None:
        self.folder = folder
        self._seq = next_seq
        self._t0 = time.monotonic() - t_offset
        self._lock = threading.Lock()
        self.written: list[dict[str, Any]] = []
        self._fh = open(folder.path / TRAJECTORY, "a", encoding="utf-8")  # noqa: SIM115
        self._memo_turn, self._memo = memo
        self._history: Any = None
        self._closed = False

    @classmethod
    def reopen(cls, folder: RunFolder, events: list[dict[str, Any]]) -> RunRecorder:
        """Continue the trajectory whose events (read back) are ``events``."""
        drop_torn_tail(folder.path / TRAJECTORY)
        drop_torn_tail(folder.path / MEMO_HISTORY)
        drop_torn_tail(folder.path / TOKENS)
        next_seq = max((e.get("seq", -1) for e in events), default=-1) + 1
        last_t = events[-1].get("t", 0.0) if events else 0.0
        history = folder.memo_history()
        return cls(folder, next_seq=max(next_seq, len(events)), t_offset=last_t,
                   memo=history[-1] if history else (0, ""))

    @property
    def path(self) -> Path:
        return self.folder.path

    def event(self, type: str, agent: str = "root", depth: int = 0,
              **fields: Any) -> dict[str, Any]:
        """Append one event (its type's fields as keywords) and return it, known secrets
        redacted; a ValueError, and nothing written, for an event its type's record refuses
        (:func:`check_written`)."""
        with self._lock:
            record = {
                "seq": self._seq,
                "t": round(time.monotonic() - self._t0, 4),
                "type": type,
                "agent": agent,
                "depth": depth,
                **fields,
            }
            check_written(record)
            record, line = dumps_redacted(record, ensure_ascii=False)
            self._fh.write(line + "\n")
            self._fh.flush()
            self.written.append(record)
            self._seq += 1
        return record

    def write_tokens(self, call_id: str, record: TokenRecord | None) -> dict[str, Any] | None:
        """Append a call's token record to ``tokens.jsonl``; the reference its ``model_call``
        event carries under ``tokens`` (None when the provider recorded no tokens)."""
        return None if record is None else write_tokens(self.path, call_id, record)

    def memo_turn(self, turn: int, markdown: str) -> None:
        """Record the memo as it stands at the end of root turn ``turn`` in the memo history;
        a turn already recorded (a resumed run replaying it), an unchanged memo, or a closed
        recorder adds nothing. Thread-safe: the delta is computed outside the lock, so
        :meth:`close` never waits for it."""
        markdown = redact(markdown)
        with self._lock:
            if self._closed or turn <= self._memo_turn or markdown == self._memo:
                return
            previous = self._memo
        line = json.dumps({"turn": turn, "ops": memo_delta(previous, markdown),
                           "chars": len(markdown)}, ensure_ascii=False) + "\n"
        with self._lock:
            if self._closed or self._memo is not previous or turn <= self._memo_turn:
                return  # closed (the run's clock stopped it), or another turn came first
            if self._history is None:
                self._history = open(self.path / MEMO_HISTORY, "a", encoding="utf-8")  # noqa: SIM115
            self._history.write(line)
            self._history.flush()
            self._memo_turn, self._memo = turn, markdown

    def close(self) -> None:
        """Close the files; a memo turn still being worked out is dropped."""
        with self._lock:
            self._closed = True
            self._fh.close()
            if self._history is not None:
                self._history.close()
