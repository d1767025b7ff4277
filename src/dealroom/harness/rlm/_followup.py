"""A follow-up question on a finished run, as the root's episode meets it (``dealroom ask``).

    RUN's records, turns 1..J  ──replayed──▶  the REPL as it stood (no model call repeated)
    after turn J               ──▶  the submitted flag cleared, ``answers`` set, and the
                                    question as the root's next message
    turns J+1 ...              ──▶  the root works (search, sub-calls, children) until it
                                    calls ``submit(answer)``

While turns 1..J are replayed, a cell that raises now but did not then (or the other way
round) means the REPL is not the one the run left: the ask stops and says at which turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dealroom.errors import DealroomError

QUESTION = """\
Follow-up question {number} on your finished review, from the deal lead:

{question}

Answer it from the data room: your REPL variables are as you left them, `answers` lists the
earlier questions and answers, and search, sub-calls and children work as before. When you
have the answer, call submit(answer) with it as text, citing documents as [D00042 p.3].
{turn_line}."""

class ReplayDiverged(DealroomError):
    """Replaying the run's cells did not give the REPL the run left."""


@dataclass
class FollowUp:
    """The question of one ask and what the root's REPL needs for it."""

    question: str
    after_turn: int
    """The run's last root turn: the question comes after it."""
    number: int
    answers: list[dict[str, Any]] = field(default_factory=list)
    """Earlier asks of the run: ``{"question", "answer"}`` in order."""

    def message(self, turn_line: str) -> str:
        return QUESTION.format(number=self.number, question=self.question, turn_line=turn_line)

    def prime_code(self) -> str:
        """A cell (unrecorded) that clears the run's ``submit()`` and sets ``answers``."""
        text = json.dumps(self.answers, ensure_ascii=False)
        return f"__reopen__()\nanswers = __import__('json').loads({text!r})\n"

    def check_replay(self, turn: int, recorded_error: str | None, error: str | None) -> None:
        """Raise :class:`ReplayDiverged` when turn ``turn``'s cell failed now and not then, or
        the other way round."""
        if (recorded_error is None) == (error is None):
            return
        now = f"raised {error.strip().splitlines()[-1]!r}" if error else "ran without error"
        then = "raised" if recorded_error else "ran without error"
        raise ReplayDiverged(f"the replay diverges at turn {turn}: its cell {now}, but it "
                             f"{then} when the run was made, so the REPL is not the one the "
                             "run left (a tool or the sandbox changed?)")
