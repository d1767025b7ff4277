"""A hostile endpoint, below HTTP's rules: every reply it can send ends in a clear failed
call (a ProviderError whose kind and message say what was wrong), never a hang of the loop
and never a success."""

import asyncio
import faulthandler

import pytest
from support.hostile import HostileServer

from dealroom.models import ModelSpec, ProviderError, open_model

HELLO = [{"role": "user", "content": "Is consent required?"}]
GUARD_S = 30.0
"""Added to the call's own deadline: a bound on a hang of the client, never reached."""
UNHURRIED = {"timeout": 3600.0, "read_timeout": 3600.0}
"""For a scenario whose failure is bounded by bytes (a cap on headers or on the stream), not
by time: no clock may race the outcome on a busy machine (pytest's time-out and the
watchdog below still end a hang)."""
BOUNDED_BY_BYTES = {"endless_headers", "endless_header_line", "endless_trailers",
                    "endless_stream", "huge_undeclared"}

EXPECTED = {
    "negative_length": ("protocol", "Content-Length"),
    "overflowing_length": ("protocol", "Content-Length"),
    "duplicate_length": ("protocol", "Duplicate Content-Length"),
    "length_and_chunked": ("protocol", "Transfer-Encoding"),
    "endless_headers": ("protocol", "Too many headers"),
    "endless_header_line": ("protocol", "8190 bytes"),
    "endless_trailers": ("protocol", "Too many headers"),
    "informational_flood": ("timeout", "timed out after 2s"),
    "slow_body": ("timeout", "timed out after 2s"),
    "slow_stream": ("timeout", "timed out after 2s"),
    "http09": ("protocol", "Bad status line"),
    "http2_preface": ("protocol", "PRI * HTTP/2.0"),
    "upgrade": ("protocol", "switched protocols"),
    "unfinished_stream": ("truncated_stream", "ended before its last chunk"),
    "endless_stream": ("truncated_stream", "cut at"),
    "huge_declared": ("too_large", "declares 10,737,418,240 bytes"),
    "huge_undeclared": ("too_large", "passed"),
}


@pytest.fixture(autouse=True)
def _no_hang():
    """A hang of the event loop (a busy loop in a parser) cannot fire asyncio's time-outs:
    faulthandler's C watchdog ends the process with the stack instead."""
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def spec(srv: HostileServer, **changes) -> ModelSpec:
    settings = {"timeout": 2.0, "read_timeout": 1.0, "max_retries": 0, "hedge": 0} | changes
    return ModelSpec(name="hostile", kind="openai", model="m", base_url=srv.base_url,
                     **settings)


async def fail(scenario: str, calls: int = 1, **changes) -> tuple[list, HostileServer, int]:
    """Make ``calls`` calls to a server playing ``scenario``, while a task ticks every 10 ms:
    (each call's error or text, the server, the ticks counted)."""
    ticks = 0

    async def tick():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    outcomes: list = []
    async with HostileServer(scenario) as srv:
        settings = spec(srv, **changes)
        async with open_model(settings) as client:
            ticker = asyncio.create_task(tick())
            for _ in range(calls):
                try:
                    reply = await asyncio.wait_for(client.chat(HELLO), settings.timeout + GUARD_S)
                    outcomes.append(reply.text)
                except ProviderError as exc:
                    outcomes.append(exc)
            ticker.cancel()
    return outcomes, srv, ticks


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_a_hostile_reply_is_a_clear_failed_call(scenario):
    kind, words = EXPECTED[scenario]
    changes = UNHURRIED if scenario in BOUNDED_BY_BYTES else {}
    [error], _, _ = asyncio.run(fail(scenario, **changes))
    assert isinstance(error, ProviderError), f"a success: {error!r}"
    assert error.kind == kind, str(error)
    assert words in str(error) and "hostile" in str(error)


@pytest.mark.parametrize("scenario", ["slow_body", "slow_stream", "informational_flood"])
def test_the_loop_keeps_running_while_a_reply_drips(scenario):
    [error], _, ticks = asyncio.run(fail(scenario))
    assert isinstance(error, ProviderError) and error.kind == "timeout"
    assert ticks > 10, "other tasks ran while the call waited"


def test_bytes_after_a_reply_are_never_taken_for_the_next_reply():
    outcomes, srv, _ = asyncio.run(fail("bytes_after_reply", calls=3))
    assert "smuggled" not in outcomes and outcomes[0] == "fine"
    assert srv.requests == 3, "each call was a request of its own"


def test_a_hostile_reply_fails_within_the_calls_deadline_despite_retries():
    """Retries stop at the call's deadline: a stalled endpoint costs one deadline."""
    [error], srv, _ = asyncio.run(fail("slow_stream", max_retries=4, deadline=3.0))
    assert error.kind == "timeout" and "deadline of 3s" in str(error)
    assert error.attempts == srv.requests == 2, "the deadline cut the second attempt"
