"""``rlm_batch([...])``: an agent's children, side by side.

    REPL: rlm_batch([{"task", "docs", "budget", "sub"}, ...])  ── one "rlm_batch" request ──▶
    host: call ids taken in order  ─▶  budgets carved  ─▶  children run, at most
          ``child_concurrency`` at a time (each as ``rlm()``'s child: its own agent id, REPL
          and sandbox)  ─▶  {"results": [answer or {"ok": False, "error"}, ...]} in order

Once a child's own REPL is up, the REPL of the one ``child_concurrency`` places behind it
starts (a fresh interpreter that opens the room takes longer than a model call), so a slot
that frees finds its next child's REPL ready, and the first children's REPLs do not share the
CPU with those started ahead; one started for a child that never ran is closed.

The call ids (hence the children's agent ids, ``PARENT/c{turn}-{n}``) are taken before any
child starts, so a resumed run gives each child the id it had: a child that ended is answered
from its ``child_end`` record, one that was cut off plays again from its own records. A child
that fails (its model failed, or it raised, or its ``sub`` names no sub-agent model of the
run) is its item's :class:`SubcallError`, never the batch's. Its sub-calls pass the fair gate
of their named sub model (:mod:`~dealroom.harness.rlm._fair`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import TYPE_CHECKING, Any

from dealroom.errors import DealroomError
from dealroom.harness._common._calls import error_text
from dealroom.models import gather_bounded

if TYPE_CHECKING:
    from dealroom.harness._common._budget import BudgetTracker
    from dealroom.harness.rlm._engine import Episode
    from dealroom.harness.rlm._replay import SubAnswer

MAX_CHILDREN = 1024
"""Most children in one ``rlm_batch``; a larger batch is refused before any starts."""
SHARED = ("max_tokens", "max_cost_usd")
"""Budget keys split evenly among the children that do not name them (turns are each child's
own, and the wall clock is shared as they run side by side)."""


async def run_children(parent: Episode, children: list[dict[str, Any]],
                       turn: int) -> dict[str, Any]:
    """Run ``children`` (``rlm()`` payloads) of ``parent`` in ``turn``; answers in order."""
    depth, most = parent.depth, parent.ctx.settings.depth
    if depth + 1 >= most:
        raise DealroomError(f"rlm_batch() is not available at depth {depth} with max depth "
                            f"{most}: use llm_batch(), or run with a larger --depth")
    if len(children) > MAX_CHILDREN:
        raise DealroomError(f"rlm_batch got {len(children):,} children; one batch takes at "
                            f"most {MAX_CHILDREN:,}: split the list")
    ids = [parent._call_id(turn) for _ in children]  # in order, before any child starts
    payloads = carve(parent.tracker, children)
    ahead = parent.ctx.settings.child_concurrency
    agents = [child_agent(parent.agent, turn, call_id) for call_id in ids]
    later = [(call_id, agent, payload.get("sub") or parent.sub)
             for call_id, agent, payload in zip(ids, agents, payloads, strict=True)]
    batch = {"open": True}  # no REPL is started ahead once the batch has ended
    jobs = [functools.partial(_one, parent, payload, turn, later[k],
                              later[k + ahead:k + ahead + 1], batch)
            for k, payload in enumerate(payloads)]
    try:
        done = await gather_bounded(jobs, limit=ahead)
    finally:
        batch["open"] = False
        await _close_unused(parent, agents)
    return {"results": [r if isinstance(r, dict) else {"ok": False, "error": error_text(r)}
                        for r in done]}


def child_agent(parent: str, turn: int, call_id: str) -> str:
    """The agent id of the child that ``call_id`` (of ``parent``, in ``turn``) starts."""
    return f"{parent}/c{turn}-{call_id.rsplit('/s', 1)[1]}"


async def _one(parent: Episode, payload: dict[str, Any], turn: int,
               this: tuple[str, str, str | None], later: list[tuple[str, str, str | None]],
               batch: dict[str, bool]) -> SubAnswer:
    call_id, agent, sub = this
    cached = parent.ctx.replay.child_result(call_id)
    if cached is not None:
        return cached
    unknown = parent.ctx.pool.get(sub)  # its named sub model
    if isinstance(unknown, str):
        return {"ok": False, "error": unknown}

    def start_later(_: object = None) -> None:  # once this child's own REPL is up
        for later_id, later_agent, later_sub in later:
            if batch["open"] and parent.ctx.replay.child_result(later_id) is None:
                _warm_up(parent, later_agent, later_sub)

    _warm_up(parent, agent, sub).add_done_callback(start_later)
    return await parent._child(payload, turn, call_id)


def _warm_up(parent: Episode, agent: str, sub: str | None) -> asyncio.Future[None]:
    """Start the REPL of the child ``agent`` (on the named sub model ``sub``: its
    ``llm.context_tokens`` and ``llm.models``) unless it is started; its episode takes it
    when it starts. Its start."""
    ctx = parent.ctx
    if agent not in ctx.warm:
        stand_in = type(parent)(ctx, agent=agent, depth=parent.depth + 1,
                                tracker=parent.tracker, sub=sub)
        sandbox = ctx.sandbox_factory(stand_in)
        ctx.warm[agent] = (sandbox, asyncio.ensure_future(sandbox.start()))
    return ctx.warm[agent][1]


async def _close_unused(parent: Episode, agents: list[str]) -> None:
    """Close the REPLs started ahead for children that never took them."""
    for agent in agents:
        warm = parent.ctx.warm.pop(agent, None)
        if warm is None:
            continue
        sandbox, start = warm
        with contextlib.suppress(Exception):
            await start
        with contextlib.suppress(Exception):
            await sandbox.close()


def carve(tracker: BudgetTracker, children: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The children's payloads, each budget given a share of :data:`SHARED` it does not name:
    what the parent has left, less what the others named, split evenly."""
    payloads = [{**c, "budget": dict(c.get("budget") or {})} for c in children]
    budgets = [p["budget"] for p in payloads]
    for key, left in (("max_tokens", tracker.tokens_left()),
                      ("max_cost_usd", tracker.cost_left())):
        free = [b for b in budgets if b.get(key) is None]
        if left == float("inf") or not free:
            continue
        named = sum(float(b[key]) for b in budgets if b.get(key) is not None)
        share = max(left - named, 0.0) / len(free)
        for b in free:
            b[key] = int(share) if key == "max_tokens" else round(share, 6)
    return payloads


def child_answer(status: str, reason: str, text: str, failure: str | None) -> SubAnswer:
    """A child's answer as its REPL gets it: a failure when its own model failed (or it
    raised), with why."""
    if status == "error":
        why = f"{reason}: {failure}" if failure and failure not in reason else reason
        return {"ok": False, "error": f"the child failed: {why}"}
    return {"ok": True, "text": text}
