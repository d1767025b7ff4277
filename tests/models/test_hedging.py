"""Hedged requests: a straggler in a wave is re-sent after a multiple of the wave's median
latency; the first answer wins and both attempts are recorded."""

import asyncio
import time

import pytest

from dealroom.models import HedgeWave, hedging, open_model
from dealroom.testing import Fault, MockOpenAIServer

HELLO = [{"role": "user", "content": "Read page 3."}]


async def wave_of(srv, n, *faults, spec_changes=None):
    srv.fail_next(*faults)
    spec = srv.spec.replace(**(spec_changes or {}))
    async with open_model(spec) as client:
        start = time.monotonic()
        with hedging() as wave:
            results = await asyncio.gather(*(client.chat(HELLO) for _ in range(n)))
        return results, wave, time.monotonic() - start


# a dead connection that outlives the test's time-out: only the hedge can end the wave
@pytest.mark.parametrize("fault", [Fault.timeout(3600), Fault.stall(3600)])
@pytest.mark.parametrize("streams", [True, False])
def test_one_dead_connection_costs_seconds_not_the_timeout(fault, streams):
    async def go():
        async with MockOpenAIServer("read", latency=0.05, streams=streams) as srv:
            return await wave_of(srv, 12, fault), srv.calls

    (results, wave, _), calls = asyncio.run(go())
    hedged = [r for r in results if r.hedge]
    if fault.kind == "stall" and not streams:
        assert not hedged and calls == 12  # a server that does not stream never stalls
        return
    assert len(hedged) == 1 and wave.hedged == 1 and calls == 13
    record = hedged[0].hedge
    assert record["winner"] == "hedge" and record["loser"] == "cancelled"
    assert record["after_s"] >= 1.0 and hedged[0].attempts == 2
    assert hedged[0].record()["hedge"] == record


def test_calls_outside_a_wave_are_not_hedged():
    async def go():
        async with MockOpenAIServer("read") as srv:
            srv.fail_next(Fault.timeout(2.5))
            spec = srv.spec.replace(stream=False)
            async with open_model(spec) as client:
                start = time.monotonic()
                results = await asyncio.gather(*(client.chat(HELLO) for _ in range(8)))
                return results, time.monotonic() - start

    results, elapsed = asyncio.run(go())
    assert elapsed >= 2.5 and not any(r.hedge for r in results)


def test_hedging_can_be_turned_off_per_model():
    async def go():
        async with MockOpenAIServer("read") as srv:
            return await wave_of(srv, 8, Fault.timeout(2.5),
                                 spec_changes={"hedge": 0, "stream": False})

    results, wave, elapsed = asyncio.run(go())
    assert elapsed >= 2.5 and wave.hedged == 0 and wave.calls == 0


def test_a_wave_has_re_sends_in_flight_for_at_most_half_its_calls():
    seen = []

    async def reply(req):  # six of eight calls hang past the test's time-out; a re-send 0.5 s
        seen.append(req)
        if len(seen) <= 6:
            return Fault.timeout(3600)
        if len(seen) > 8:
            await asyncio.sleep(0.5)
        return "read"

    async def go():
        async with MockOpenAIServer(reply) as srv:
            return await wave_of(srv, 8, spec_changes={"stream": False})

    results, wave, elapsed = asyncio.run(go())
    assert wave.hedged == 6 and wave.peak == 4, "four re-sends first, the other two after"
    assert sum(bool(r.hedge) for r in results) == 6 and all(r.text == "read" for r in results)


def test_a_failed_re_send_gives_up_the_stalled_attempt_and_retries():
    seen = []

    def reply(req):  # the first request hangs past the test's time-out, its re-send fails
        seen.append(req)
        return {1: Fault.timeout(3600), 9: Fault.server_error()}.get(len(seen), "read")

    async def go():
        async with MockOpenAIServer(reply, latency=0.05) as srv:
            return await wave_of(srv, 8, spec_changes={"stream": False})

    results, wave, elapsed = asyncio.run(go())
    assert all(r.text == "read" for r in results) and len(seen) == 10
    assert wave.hedged == 1 and max(r.attempts for r in results) == 3


def test_the_delay_needs_a_quorum_and_has_a_floor():
    wave = HedgeWave()
    for _ in range(8):
        wave.joined()
    wave.answered(0.1)
    assert wave.delay(3.0) is None, "one answer of eight is no median"
    wave.answered(0.1)
    assert wave.delay(3.0) == 1.0
    wave.answered(2.0)
    wave.answered(2.0)
    assert wave.delay(3.0) == pytest.approx(3.0 * 1.05)


def test_a_re_send_that_stalls_too_gives_both_up_and_retries():
    seen = []

    def reply(req):  # the first request and its re-send (the ninth) both hang past the
        seen.append(req)  # test's time-out: only giving both up ends the call
        return Fault.timeout(3600) if len(seen) in (1, 9) else "read"

    async def go():
        async with MockOpenAIServer(reply, latency=0.05) as srv:
            return await wave_of(srv, 8, spec_changes={"stream": False})

    results, wave, elapsed = asyncio.run(go())
    assert all(r.text == "read" for r in results)
    assert len(seen) == 10 and max(r.attempts for r in results) == 3


def test_a_call_cancelled_once_its_re_send_is_counted_gives_the_slot_back():
    from dealroom.models._hedge import race

    async def hang(progress):
        progress.start()
        await asyncio.sleep(30)

    async def go():
        wave = HedgeWave()
        for _ in range(4):
            wave.joined()
        wave.answered(0.01)
        wave.answered(0.01)  # a quorum: the delay is its floor, 1 s
        check = wave._check

        def check_then_cancel():  # the caller is cancelled before it wakes to re-send
            check()
            if wave.hedged:
                task.cancel()

        wave._check = check_then_cancel
        task = asyncio.ensure_future(race(wave, 3.0, hang))
        with pytest.raises(asyncio.CancelledError):
            await task
        return wave

    wave = asyncio.run(go())
    assert wave.hedged == 1 and wave.in_flight == 0
