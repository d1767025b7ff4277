"""The host's memory does not grow with the calls in flight: a declared oversize body is
refused unread, and every reply past its first megabyte is buffered under one byte budget
shared by all calls of the loop."""

import asyncio

import pytest
from support.hostile import HostileServer

import dealroom.models._budget as budget_module
from dealroom.models import ModelSpec, ProviderError, open_model
from dealroom.models._budget import ByteBudget, reply_budget

HELLO = [{"role": "user", "content": "hi"}]


def spec(srv, **changes):
    settings = {"stream": False, "max_retries": 0, "hedge": 0, "timeout": 60.0} | changes
    return ModelSpec(name="huge", kind="openai", model="m", base_url=srv.base_url, **settings)


def test_a_declared_oversize_body_is_refused_at_once_and_not_retried():
    async def go():
        async with HostileServer("huge_declared") as srv, \
                open_model(spec(srv, max_retries=3)) as client:
            with pytest.raises(ProviderError) as err:
                await client.chat(HELLO)
            return err.value, srv.requests

    error, requests = asyncio.run(go())
    assert error.kind == "too_large" and requests == 1
    assert "declares 10,737,418,240 bytes (Content-Length), over the limit of" in str(error)


def test_the_budget_bounds_the_bytes_buffered_across_calls(monkeypatch):
    monkeypatch.setattr(budget_module, "REPLY_BUDGET_BYTES", 8 * 2**20)
    size = 3 * 2**20

    async def go():
        async with HostileServer("huge_json", size=size) as srv, \
                open_model(spec(srv, concurrency=8)) as client:
            results = await asyncio.gather(*[client.chat(HELLO, max_tokens=512)
                                              for _ in range(8)])
            return results, reply_budget()

    results, budget = asyncio.run(go())
    assert all(r.text == "x" * 512 * 16 for r in results), "every call got its reply"
    assert budget.peak == 2 * size <= budget.total, "two 3 MiB replies at a time, not eight"
    assert budget.waited >= 6 and budget.free == budget.total, "the others waited; all given back"


def test_an_undeclared_body_reserves_its_limit_before_it_passes_the_free_bytes(monkeypatch):
    monkeypatch.setattr(budget_module, "REPLY_BUDGET_BYTES", 128 * 2**20)

    async def go():
        async with HostileServer("huge_undeclared") as srv, \
                open_model(spec(srv, concurrency=4)) as client:
            errors = await asyncio.gather(*[client.chat(HELLO) for _ in range(4)],
                                          return_exceptions=True)
            return errors, reply_budget()

    errors, budget = asyncio.run(go())
    assert {e.kind for e in errors} == {"too_large"}
    assert budget.peak == 128 * 2**20 and budget.waited == 2, "two 64 MiB bodies at a time"


def test_the_budget_hands_out_in_order_and_a_cancelled_wait_takes_nothing():
    async def go():
        budget = ByteBudget(10)
        assert await budget.take(8) == 8
        late = asyncio.ensure_future(budget.take(5))
        later = asyncio.ensure_future(budget.take(2))
        await asyncio.sleep(0)
        assert not late.done() and not later.done(), "first come, first served"
        late.cancel()
        await asyncio.wait_for(later, 5)
        assert late.cancelled() and budget.free == 0
        budget.give(8)
        budget.give(2)
        assert await budget.take(50) == 10, "at most the whole budget"
        return budget

    budget = asyncio.run(go())
    assert budget.free == 0 and budget.peak == 10


def test_waiters_cancelled_before_they_run_again_leave_quietly_and_hold_nothing():
    async def go():
        budget = ByteBudget(10)
        assert await budget.take(10) == 10
        cancelled = [asyncio.ensure_future(budget.take(4)) for _ in range(30)]
        kept = asyncio.ensure_future(budget.take(4))
        big = asyncio.ensure_future(budget.take(9))
        behind = asyncio.ensure_future(budget.take(1))
        await asyncio.sleep(0)
        for task in cancelled:
            task.cancel()  # each waiter's future is cancelled now; its task runs later
        big.cancel()
        budget.give(10)  # the wake-up meets the cancelled waiters before their tasks run
        outcomes = await asyncio.gather(*cancelled, big, kept, behind, return_exceptions=True)
        return outcomes, budget

    outcomes, budget = asyncio.run(go())
    assert all(isinstance(o, asyncio.CancelledError) for o in outcomes[:31]), {
        type(o).__name__ for o in outcomes[:31]}
    assert outcomes[31:] == [4, 1], "a cancelled waiter holds up nobody behind it"
    assert budget.free == 5 and not budget._waiters
