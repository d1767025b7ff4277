"""HTTP transport benchmark: dealroom's session (aiohttp as the client sets it up) against plain
aiohttp and httpx2, host CPU per call.

A loopback server in another process answers at once. The client process measures its own CPU
(user + sys) for:

* a wave: ``--calls`` concurrent POSTs of ``--body-kb`` KB (150 x 290 KB: one wave of the
  5,000-document episode), started one event-loop turn apart, on kept-alive connections;
* a streamed reply: one POST answered with ``--events`` server-sent events, each in its own
  HTTP chunk, ``--spacing-ms`` apart (0.5 ms: each its own packet, as a model's tokens come).

    python benchmarks/bench_http.py
    python benchmarks/bench_http.py --calls 256 --body-kb 120 --events 2000 --spacing-ms 0
    python benchmarks/bench_http.py --clients dealroom,aiohttp,httpx2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

PATH = "/v1/chat/completions"
JSON = {"Content-Type": "application/json"}
OK = b'{"ok": true}'
EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"tok "}}]}\n\n'
REPEATS = 10
STREAMS = 20


# -- the server (its own process) ------------------------------------------------------------
def serve(events: int, spacing: float) -> None:
    """``/plain``: a small JSON body; ``/stream``: ``events`` SSE events, one chunk each,
    ``spacing`` seconds apart."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                size = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                             if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(size)
                if b" /stream/" in head.split(b"\r\n")[0]:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")
                    for _ in range(events):
                        writer.write(b"%x\r\n%s\r\n" % (len(EVENT), EVENT))
                        await writer.drain()
                        await asyncio.sleep(spacing)
                    writer.write(b"0\r\n\r\n")
                else:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: 12\r\n\r\n" + OK)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


# -- the clients -----------------------------------------------------------------------------
def dealroom_post(base: str):
    """The session dealroom's client sends through (``_endpoint.open_session``: aiohttp with
    the connection limit, keep-alive expiry, no cookies), as its ``_attempt`` uses it."""
    from dealroom.models import ModelSpec
    from dealroom.models._endpoint import Body, open_session

    spec = ModelSpec(name="bench", kind="openai", model="m", base_url=base + "/v1")
    session, _ = open_session(spec, spec.base_url, 1024)  # plain http: no TLS context

    async def post(path: str, body: bytes) -> int:
        async with session.post(base + path, data=Body(body), headers=JSON,
                                allow_redirects=False) as resp:
            return sum([len(c) async for c in resp.content.iter_any()])

    return post, session.close


def aiohttp_post(base: str):
    import aiohttp

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def post(path: str, body: bytes) -> int:
        async with session.post(base + path, data=body, headers=JSON) as resp:
            return sum([len(c) async for c in resp.content.iter_any()])

    return post, session.close


def httpx2_post(base: str):
    import httpx2

    client = httpx2.AsyncClient(limits=httpx2.Limits(max_connections=None,
                                                     max_keepalive_connections=None),
                                timeout=None, trust_env=False)

    async def post(path: str, body: bytes) -> int:
        async with client.stream("POST", base + path, content=body, headers=JSON) as resp:
            return sum([len(c) async for c in resp.aiter_raw()])

    return post, client.aclose


CLIENTS = {"dealroom": "dealroom_post", "aiohttp": "aiohttp_post", "httpx2": "httpx2_post"}


async def measure(kind: str, base: str, calls: int, body: bytes) -> dict[str, float]:
    post, close = globals()[CLIENTS[kind]](base)
    await asyncio.gather(*[post("/plain" + PATH, body) for _ in range(calls)])  # connect
    waves, cpu = [], []
    for _ in range(REPEATS):
        c0, t0 = time.process_time(), time.perf_counter()
        tasks = []
        for _ in range(calls):
            tasks.append(asyncio.ensure_future(post("/plain" + PATH, body)))
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        waves.append(time.perf_counter() - t0)
        cpu.append((time.process_time() - c0) / calls)
    await post("/stream" + PATH, b"{}")
    stream = []
    for _ in range(STREAMS):
        c0 = time.process_time()
        await post("/stream" + PATH, b"{}")
        stream.append(time.process_time() - c0)
    await close()
    return {"wave_s": sorted(waves)[REPEATS // 2], "cpu_ms": 1000 * sorted(cpu)[REPEATS // 2],
            "stream_ms": 1000 * sorted(stream)[STREAMS // 2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=150)
    parser.add_argument("--body-kb", type=int, default=290)
    parser.add_argument("--events", type=int, default=600)
    parser.add_argument("--spacing-ms", type=float, default=0.5,
                        help="between two events of a streamed reply (0: as fast as it can)")
    parser.add_argument("--clients", default="dealroom,aiohttp",
                        help="comma-separated, of: " + ", ".join(CLIENTS))
    parser.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--client", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        return serve(args.serve, args.spacing_ms / 1000)
    if args.client is not None:
        body = b'{"x": "' + b"a" * (args.body_kb * 1024) + b'"}'
        kind, base = args.client
        print(json.dumps(asyncio.run(measure(kind, base, args.calls, body))))
        return None
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(args.events),
                               "--spacing-ms", str(args.spacing_ms)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        print(f"{args.calls} concurrent POSTs of {args.body_kb} KB, a reply of {args.events} "
              f"SSE events {args.spacing_ms:g} ms apart; loopback server in another process; "
              f"medians of {REPEATS} waves and {STREAMS} streamed replies")
        figures = {}
        for kind in args.clients.split(","):
            done = subprocess.run([sys.executable, __file__, "--client", kind, base,
                                   "--calls", str(args.calls), "--body-kb", str(args.body_kb)],
                                  capture_output=True, text=True, check=True)
            figures[kind] = f = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"  {kind:8s}  wave {1000 * f['wave_s']:5.0f} ms   host CPU "
                  f"{f['cpu_ms']:.3f} ms per POST   streamed reply {f['stream_ms']:.2f} ms")
        first, *others = list(figures)
        for kind in others:
            ours, peer = figures[first], figures[kind]
            print(f"  {first} / {kind}: CPU per POST {ours['cpu_ms'] / peer['cpu_ms']:.2f}x, "
                  f"streamed reply {ours['stream_ms'] / peer['stream_ms']:.2f}x")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
