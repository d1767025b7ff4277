"""HostileServer: a raw socket server on loopback that answers chat calls the way a broken or
hostile endpoint can, below HTTP's rules (aiohttp's own server would refuse to send most).

Each connection reads one request (head and ``Content-Length`` body), then plays the
server's scenario, one of :data:`SCENARIOS`, on the raw socket::

    async with HostileServer("negative_length") as srv:
        client = open_model(f"m@{srv.base_url}#timeout=2")   # every call fails, clearly

``python -m dealroom.models._hostile huge_json --size 62914560`` serves one scenario in its
own process (``benchmarks/bench_reply_memory.py``); it prints its base URL first.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any, Self

Scenario = Callable[[asyncio.StreamWriter, int], Awaitable[None]]
"""What a connection gets after its request: (writer, size option) → the bytes it sends."""

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
SSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
DRIP_S = 0.05
"""Seconds between two pieces of a slow (slowloris) reply: far under any read time-out."""


def body(text: str = "fine", finish: str | None = "stop") -> bytes:
    """A whole chat-completion body."""
    return json.dumps({"id": "x", "object": "chat.completion", "model": "hostile",
                       "choices": [{"index": 0, "finish_reason": finish,
                                    "message": {"role": "assistant", "content": text}}]}).encode()


def chunk(text: str, finish: str | None = None) -> bytes:
    """One ``data:`` event of a chat-completion stream."""
    event = {"id": "x", "object": "chat.completion.chunk", "model": "hostile",
             "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


async def _send(writer: asyncio.StreamWriter, data: bytes | memoryview) -> None:
    writer.write(data)
    await writer.drain()


async def _forever(writer: asyncio.StreamWriter, piece: bytes, pause: float = 0.0) -> None:
    while True:
        await _send(writer, piece)
        await asyncio.sleep(pause)


def _with_length(length: bytes, payload: bytes = b"") -> Scenario:
    async def play(writer: asyncio.StreamWriter, size: int) -> None:
        await _send(writer, HEAD + length + b"\r\n" + (payload or body()))
        await writer.wait_closed()
    return play


async def _endless_headers(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, HEAD)
    n = 0
    while True:
        n += 1
        await _send(writer, b"X-Pad-%d: %s\r\n" % (n, b"a" * 64))


async def _endless_header_line(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, HEAD + b"X-Pad: ")
    await _forever(writer, b"a" * 4096)


async def _endless_trailers(writer: asyncio.StreamWriter, size: int) -> None:
    data = body()
    await _send(writer, HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
                + b"%x\r\n%s\r\n0\r\n" % (len(data), data))
    n = 0
    while True:
        n += 1
        await _send(writer, b"X-Trailer-%d: %s\r\n" % (n, b"t" * 64))


async def _informational_flood(writer: asyncio.StreamWriter, size: int) -> None:
    await _forever(writer, b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
                   b"HTTP/1.1 100 Continue\r\n\r\n")


async def _slow_body(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, HEAD + b"Content-Length: 100000\r\n\r\n")
    await _forever(writer, b" ", DRIP_S)


async def _slow_stream(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, SSE)
    while True:
        await _send(writer, b": keep-alive\n\n")
        await _send(writer, chunk("."))
        await asyncio.sleep(DRIP_S)


async def _http09(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, body())
    writer.close()


async def _http2(writer: asyncio.StreamWriter, size: int) -> None:
    settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an empty SETTINGS frame
    await _send(writer, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + settings)
    await writer.wait_closed()


async def _upgrade(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\n\r\n")
    await _forever(writer, b"\x81\x05hello", DRIP_S)


async def _smuggle(writer: asyncio.StreamWriter, size: int) -> None:
    real, smuggled = body("fine"), body("smuggled")
    await _send(writer, HEAD + b"Content-Length: %d\r\n\r\n%s" % (len(real), real)
                + HEAD + b"Content-Length: %d\r\n\r\n%s" % (len(smuggled), smuggled))
    await writer.wait_closed()


async def _unfinished_stream(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, SSE + chunk("We reviewed all 30 documents") + chunk(" and"))
    writer.close()


async def _endless_stream(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, SSE)
    await _forever(writer, chunk("We reviewed all 30 documents. " * 20))


async def _huge_declared(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, HEAD + b"Content-Length: %d\r\n\r\n" % (10 * 2**30))
    await _forever(writer, b" " * 65536)


@functools.lru_cache(maxsize=2)
def _huge_body(size: int) -> bytes:
    return body("x" * max(0, size - len(body(""))))


async def _huge_json(writer: asyncio.StreamWriter, size: int) -> None:
    """A valid chat completion of ``size`` bytes (made once), written in 1 MiB pieces."""
    data = _huge_body(size)
    await _send(writer, HEAD + b"Content-Length: %d\r\n\r\n" % len(data))
    view = memoryview(data)
    for start in range(0, len(view), 2**20):
        await _send(writer, view[start:start + 2**20])
    await writer.wait_closed()


async def _huge_stalled(writer: asyncio.StreamWriter, size: int) -> None:
    """A chat completion that declares ``size`` bytes, sends its first 2 MiB and no more."""
    data = _huge_body(size)
    await _send(writer, HEAD + b"Content-Length: %d\r\n\r\n" % len(data) + data[:2 * 2**20])
    await writer.wait_closed()


async def _huge_undeclared(writer: asyncio.StreamWriter, size: int) -> None:
    await _send(writer, HEAD + b"Connection: close\r\n\r\n" + b'{"choices": [')
    await _forever(writer, b" " * 65536)


SCENARIOS: dict[str, Scenario] = {
    "negative_length": _with_length(b"Content-Length: -1\r\n"),
    "overflowing_length": _with_length(b"Content-Length: 99999999999999999999999999\r\n"),
    "duplicate_length": _with_length(b"Content-Length: 10\r\nContent-Length: %d\r\n"
                                     % len(body())),
    "length_and_chunked": _with_length(b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"),
    "endless_headers": _endless_headers,
    "endless_header_line": _endless_header_line,
    "endless_trailers": _endless_trailers,
    "informational_flood": _informational_flood,
    "slow_body": _slow_body,
    "slow_stream": _slow_stream,
    "http09": _http09,
    "http2_preface": _http2,
    "upgrade": _upgrade,
    "bytes_after_reply": _smuggle,
    "unfinished_stream": _unfinished_stream,
    "endless_stream": _endless_stream,
    "huge_declared": _huge_declared,
    "huge_json": _huge_json,
    "huge_stalled": _huge_stalled,
    "huge_undeclared": _huge_undeclared,
}
"""Every way the server can answer, by name."""


async def _read_request(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            await reader.readexactly(int(value))


class HostileServer:
    """Serve one scenario on ``127.0.0.1`` (a free port) on the running loop; ``requests``
    counts the requests read."""

    def __init__(self, scenario: str, *, size: int = 0, port: int = 0) -> None:
        self.play = SCENARIOS[scenario]
        self.size = size
        self.port = port
        self.requests = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self._tasks.add(asyncio.current_task())  # type: ignore[arg-type]
        with contextlib.suppress(OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                                 ValueError):
            while True:  # a kept-alive connection may carry several requests
                await _read_request(reader)
                self.requests += 1
                await self.play(writer, self.size)
        writer.close()
        self._writers.discard(writer)
        self._tasks.discard(asyncio.current_task())

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port,
                                                  backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            if self._tasks:  # each ends as its connection is aborted
                await asyncio.wait(set(self._tasks), timeout=5)
            self._server = None


def main(argv: list[str] | None = None) -> None:
    """Serve one scenario until killed; print the base URL first."""
    parser = argparse.ArgumentParser(prog="python -m dealroom.models._hostile")
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--size", type=int, default=60 * 2**20, help="bytes of a huge reply")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)

    async def serve() -> None:
        async with HostileServer(args.scenario, size=args.size, port=args.port) as srv:
            print(srv.base_url, flush=True)
            await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()
