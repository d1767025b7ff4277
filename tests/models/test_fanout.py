import asyncio
import inspect

import pytest

from dealroom.errors import ModelError
from dealroom.models import gather_bounded, open_model
from dealroom.testing import Fault, MockOpenAIServer


async def value_after(value, delay):
    await asyncio.sleep(delay)
    return value


async def fail(message):
    await asyncio.sleep(0)
    raise ValueError(message)


def test_results_come_back_in_input_order():
    jobs = [value_after(i, 0.001 * (10 - i)) for i in range(10)]
    assert asyncio.run(gather_bounded(jobs, limit=4)) == list(range(10))


def test_one_failure_never_sinks_the_batch():
    results = asyncio.run(gather_bounded([value_after(1, 0), fail("boom"), value_after(3, 0)]))
    assert results[0] == 1 and results[2] == 3
    assert isinstance(results[1], ValueError) and str(results[1]) == "boom"


def test_concurrency_is_bounded_and_factories_start_lazily():
    state = {"now": 0, "max": 0, "started": 0}

    async def tracked(i):
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.005)
        state["now"] -= 1
        return i

    def factory(i):
        def make():
            state["started"] += 1
            assert state["started"] - (i + 1) == 0  # started in order, one at a time
            return tracked(i)

        return make

    results = asyncio.run(gather_bounded([factory(i) for i in range(30)], limit=3))
    assert results == list(range(30)) and state["max"] == 3


def test_a_job_gets_to_send_before_the_next_one_is_built():
    """Each job's follow-up task (an HTTP client writes the body in one) runs before jobs
    further down the batch start building, so the first request leaves at once."""
    log = []

    async def job(i):
        log.append(("built", i))
        written = asyncio.ensure_future(asyncio.sleep(0, result=i))
        written.add_done_callback(lambda _: log.append(("written", i)))
        await asyncio.sleep(0.01)
        return await written

    assert asyncio.run(gather_bounded([job(i) for i in range(20)], limit=20)) == list(range(20))
    assert log.index(("written", 0)) < log.index(("built", 5)), log[:12]


def test_per_job_timeout_yields_a_timeout_error():
    results = asyncio.run(gather_bounded([value_after("a", 0), value_after("b", 5)], timeout=0.05))
    assert results[0] == "a" and isinstance(results[1], TimeoutError)


def test_on_done_reports_each_result():
    seen = {}
    asyncio.run(
        gather_bounded(
            [value_after(i, 0) for i in range(5)], on_done=lambda i, r: seen.__setitem__(i, r)
        )
    )
    assert seen == {i: i for i in range(5)}


def test_empty_and_bad_limit():
    assert asyncio.run(gather_bounded([])) == []
    with pytest.raises(ValueError, match="positive integer"):
        asyncio.run(gather_bounded([], limit=0))


def test_cancelling_the_batch_closes_unstarted_jobs():
    jobs = [value_after(i, 10) for i in range(6)]

    async def go():
        task = asyncio.ensure_future(gather_bounded(jobs, limit=2))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert all(inspect.getcoroutinestate(j) == inspect.CORO_CLOSED for j in jobs)


def test_model_calls_fan_out_with_failures_in_place():
    def reply(req):
        text = req["messages"][-1]["content"]
        return Fault.http(400, "bad request") if text == "q3" else f"a:{text}"

    async def go():
        async with MockOpenAIServer(reply) as srv, open_model(srv.spec) as client:
            jobs = [client.chat([{"role": "user", "content": f"q{i}"}]) for i in range(8)]
            return await gather_bounded(jobs, limit=4)

    results = asyncio.run(go())
    assert [r.text for i, r in enumerate(results) if i != 3] == [
        f"a:q{i}" for i in range(8) if i != 3
    ]
    assert isinstance(results[3], ModelError) and results[3].status == 400
