"""Exit codes of the commands that run agents (``run``, ``resume``, ``demo``, ``eval sweep``):
what a script can tell from ``$?``. The table is docs/commands.md's "Exit codes"."""

from __future__ import annotations

from collections.abc import Mapping

END_STATUS_CODES = {"submitted": 0, "finished": 0, "max_turns": 0, "budget_exhausted": 0,
                    "error": 1, "degraded": 3, "errors": 4}
"""Exit status by the run's end status (``run_end``'s ``status``): 0 for a run that ended by
itself or ran out of its budget; ``error`` the root model failed; ``degraded`` more than 10% of
the sub-calls failed; ``errors`` ``max_errors`` root turns in a row ran no code or raised."""
UNKNOWN_STATUS_CODE = 1
"""A status not in :data:`END_STATUS_CODES` is never taken for success."""
FAILED_EPISODE_CODE = 1
"""A sweep's episode that raised instead of ending (its error is in ``sweep.json``)."""


def exit_code(status: str) -> int:
    """The exit status of a run that ended with ``status``."""
    return END_STATUS_CODES.get(status, UNKNOWN_STATUS_CODE)


def sweep_exit_code(statuses: Mapping[str, int], failed: int) -> int:
    """The largest exit status of a sweep's episodes: ``statuses`` counts their end statuses,
    ``failed`` the episodes that raised."""
    codes = [exit_code(s) for s, n in statuses.items() if n]
    return max([*codes, FAILED_EPISODE_CODE if failed else 0])


def nonzero_counts(statuses: Mapping[str, int]) -> dict[str, int]:
    """The end statuses in ``statuses`` whose exit status is not 0, with their counts."""
    return {s: n for s, n in sorted(statuses.items()) if n and exit_code(s)}
