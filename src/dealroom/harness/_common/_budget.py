"""Budgets that children cannot leak past.

Every agent (root or child) has a :class:`BudgetTracker`. Spending is charged to the tracker and
all its ancestors. Before a sub-call or a child starts, its worst case is *reserved*: the
reservation counts as spent until the real usage is charged and the reservation released, so
parallel calls and children together can never push an ancestor past its limit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from dealroom.types import Budget, Usage


@dataclass
class Reservation:
    tokens: int
    cost_usd: float


class BudgetTracker:
    """Live accounting of one agent's budget; children hold a tracker whose parent is this one."""

    def __init__(self, budget: Budget, parent: BudgetTracker | None = None) -> None:
        self.budget = budget
        self.parent = parent
        self.spent = Usage()
        self.turns = 0
        self.started = time.monotonic()
        self._reserved_tokens = 0
        self._reserved_cost = 0.0

    # -- queries -----------------------------------------------------------------------------
    def tokens_left(self) -> float:
        own = _left(self.budget.max_tokens, self.spent.total_tokens + self._reserved_tokens)
        return min(own, self.parent.tokens_left()) if self.parent else own

    def cost_left(self) -> float:
        own = _left(self.budget.max_cost_usd, self.spent.cost_usd + self._reserved_cost)
        return min(own, self.parent.cost_left()) if self.parent else own

    def seconds_left(self) -> float:
        own = _left(self.budget.max_seconds, time.monotonic() - self.started)
        return min(own, self.parent.seconds_left()) if self.parent else own

    def turns_left(self) -> float:
        return _left(self.budget.max_turns, self.turns)

    def exhausted(self) -> str | None:
        """The name of the first exhausted resource, or None."""
        for name, left in (
            ("turns", self.turns_left()),
            ("tokens", self.tokens_left()),
            ("cost", self.cost_left()),
            ("seconds", self.seconds_left()),
        ):
            if left <= 0:
                return name
        return None

    def snapshot(self) -> dict[str, float | int | None]:
        """Used and left, as shown to the agent by ``budget``."""
        def num(x: float) -> float | None:
            return None if x == float("inf") else round(x, 6)

        return {
            "turns_used": self.turns,
            "turns_left": num(self.turns_left()),
            "max_turns": self.budget.max_turns,
            "tokens_used": self.spent.total_tokens,
            "tokens_left": num(self.tokens_left()),
            "cost_used_usd": round(self.spent.cost_usd, 6),
            "cost_left_usd": num(self.cost_left()),
            "seconds_used": round(time.monotonic() - self.started, 3),
            "seconds_left": num(self.seconds_left()),
        }

    # -- spending ----------------------------------------------------------------------------
    def carry(self, usage: Usage, seconds: float) -> None:
        """Count what an earlier attempt of the episode spent (a resume, a fork's prefix)."""
        self._charge(usage)
        self.started -= seconds

    def fits(self, tokens: int, cost_usd: float) -> bool:
        """Whether a call of ``tokens``/``cost_usd`` could be reserved now."""
        return (tokens <= self.tokens_left() and cost_usd <= self.cost_left()
                and self.seconds_left() > 0)

    def reserve(self, tokens: int, cost_usd: float) -> Reservation | None:
        """Hold ``tokens``/``cost_usd`` for a call about to start; None if they do not fit."""
        if not self.fits(tokens, cost_usd):
            return None
        self._walk(lambda t: t._adjust(tokens, cost_usd))
        return Reservation(tokens, cost_usd)

    def settle(self, reservation: Reservation | None, usage: Usage) -> None:
        """Release ``reservation`` and charge the call's real ``usage`` here and above."""
        if reservation is not None:
            self._walk(lambda t: t._adjust(-reservation.tokens, -reservation.cost_usd))
        self._walk(lambda t: t._charge(usage))

    def child(self, requested: Budget) -> BudgetTracker:
        """A tracker for a child agent, limited to what is left here (and what it asked for)."""
        def cap(asked: float | None, left: float) -> float | None:
            if left == float("inf"):
                return asked
            return left if asked is None else min(asked, left)

        budget = Budget(
            max_turns=requested.max_turns or self.budget.max_turns,
            max_tokens=_as_int(cap(requested.max_tokens, self.tokens_left())),
            max_cost_usd=cap(requested.max_cost_usd, self.cost_left()),
            max_seconds=cap(requested.max_seconds, self.seconds_left()),
        )
        return BudgetTracker(budget, parent=self)

    def _adjust(self, tokens: int, cost: float) -> None:
        self._reserved_tokens += tokens
        self._reserved_cost += cost

    def _charge(self, usage: Usage) -> None:
        self.spent = self.spent + usage

    def _walk(self, fn) -> None:  # type: ignore[no-untyped-def]
        node: BudgetTracker | None = self
        while node is not None:
            fn(node)
            node = node.parent


def _left(limit: float | None, used: float) -> float:
    return float("inf") if limit is None else limit - used


def _as_int(x: float | None) -> int | None:
    return None if x is None else int(x)
