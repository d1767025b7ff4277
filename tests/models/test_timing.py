"""Time-outs that fit a served model (issue 36 item 3): the first-byte wait learned from the
prompt's size and the endpoint's prefill speed, recorded on the call; a retry after a
time-out reaches a server that the abandoned attempt no longer holds."""

import asyncio
import json

import pytest

from dealroom.models import open_model, resolve_model_spec
from dealroom.models._spec import local_spec
from dealroom.models._timing import MARGIN, SLACK_S, Pace
from dealroom.testing import Fault, MockOpenAIServer, chat_completion_body


def test_the_first_byte_wait_grows_with_the_prompt_at_the_learned_prefill_speed():
    spec = local_spec().replace(read_timeout=60.0, timeout=600.0, deadline=900.0)
    pace = Pace()
    assert pace.waits(spec, 1000).first_byte == 60.0  # nothing learned: the setting
    pace.learn(1500, 100.0)  # 15 prompt tokens a second, as on a busy CPU
    waits = pace.waits(spec, 1000)
    assert waits.first_byte == pytest.approx(MARGIN * 1000 / 15 + SLACK_S)
    assert waits.record() == {"first_byte": round(waits.first_byte, 1), "deadline": 900.0,
                              "from": "learned"}
    assert pace.waits(spec, 100_000).first_byte == 600.0  # bounded by timeout
    assert pace.waits(spec, 10).first_byte == 60.0  # never below the setting
    pace.learn(10, 100.0)  # too small a prompt to teach a speed
    assert pace.prefill == 15.0


def test_a_long_prompt_waits_for_its_first_byte_at_the_learned_speed():
    async def go():
        async with MockOpenAIServer("fine") as srv:
            srv.fail_next(Fault.timeout(1.0))  # the first byte comes after a second
            spec = srv.spec.replace(read_timeout=0.3, max_retries=0)
            async with open_model(spec) as client:
                client.pace.learn(1000, 10.0)  # 100 prompt tokens a second
                prompt = [{"role": "user", "content": "word " * 2000}]
                return await client.chat(prompt)

    result = asyncio.run(go())
    assert result.text == "fine" and result.attempts == 1
    assert result.record()["timeouts"]["from"] == "learned"
    assert result.record()["timeouts"]["first_byte"] > 1.0


def test_every_call_records_what_it_waited_for():
    async def go():
        async with MockOpenAIServer("fine") as srv:
            client = open_model(srv.spec.replace(read_timeout=45.0, deadline=500.0))
            async with client:
                return await client.chat([{"role": "user", "content": "hi"}])

    assert asyncio.run(go()).record()["timeouts"] == {"first_byte": 45.0, "deadline": 500.0,
                                                      "from": "spec"}


class CountingServer:
    """A loopback HTTP server that never answers its first request and answers the next;
    it notes how many connections were open when the second request came."""

    def __init__(self) -> None:
        self.open = 0
        self.requests = 0
        self.open_at_retry: int | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            await reader.readexactly(length)
            self.requests += 1
            if self.requests == 1:
                await reader.read()  # hold it, answering nothing, until the client hangs up
                return
            self.open_at_retry = self.open
            body = json.dumps(chat_completion_body("fine")).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open -= 1
            writer.close()


@pytest.mark.parametrize("stream", ["on", "off"])
def test_a_retry_after_a_timeout_finds_the_abandoned_request_closed(stream):
    # a single-slot server is free for the retry only when the client hung up the attempt
    # it gave up on
    async def go():
        counting = CountingServer()
        server = await asyncio.start_server(counting.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        limit = "read_timeout=0.3" if stream == "on" else "timeout=0.3"
        spec = resolve_model_spec(f"m@http://127.0.0.1:{port}/v1#{limit},stream={stream},"
                                  "max_retries=1,backoff_s=0.05").replace(proxy="")
        async with server, open_model(spec) as client:
            result = await client.chat([{"role": "user", "content": "hi"}])
        return result, counting

    result, counting = asyncio.run(go())
    assert result.text == "fine" and result.attempts == 2
    assert counting.open_at_retry == 1  # the retry's own connection only


def test_a_default_deadline_grows_with_the_reply_cap_at_the_learned_decode_speed():
    spec = local_spec()  # deadline unset (300 s), timeout 300 s
    pace = Pace()
    assert pace.waits(spec, 1000, 1024).deadline == 300.0
    pace.learn_decode(512, 200.0)  # 2.56 reply tokens a second, a busy CPU
    waits = pace.waits(spec, 1000, 1024)
    assert waits.deadline > 1024 / 2.56 and waits.total == waits.deadline
    assert waits.record()["from"] == "learned"
    assert pace.waits(spec, 1000, 16).deadline == 300.0  # a short reply needs no more
    assert pace.waits(spec.replace(deadline=300.0), 1000, 1024).deadline == 300.0  # as set
    pace.learn_decode(1, 100.0)  # too short a reply to teach a speed
    assert pace.decode == 2.56
