"""MockOpenAIServer: a loopback OpenAI-compatible server for tests and benchmarks.

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1 (a random port).
Replies come from ``reply(request_json)``, which returns the assistant text, a whole response
body (a dict; see :func:`chat_completion_body`) or a :class:`Fault`. Faults can also be queued
with :meth:`MockOpenAIServer.fail_next`, or drawn per call by ``faults`` (see
:func:`random_faults`). A request with ``"stream": true`` gets a server-sent-event stream
(``usage`` in its last chunk when ``stream_options.include_usage`` is set) unless the server
was made with ``streams=False``; ``refuse=("response_format",)`` makes it turn that field
down the way llama-cpp-python does. Sync tests use ``with MockOpenAIServer(...) as srv`` (the
server runs in a background thread); async tests use ``async with`` (same loop)::

    with MockOpenAIServer(lambda req: "hello", latency=0.2) as srv:
        srv.fail_next(Fault.rate_limit(retry_after=0.1), Fault.server_error())
        client = open_model(srv.spec)          # or f"mock@{srv.base_url}"

The suite's ``HostileServer`` (tests/support/hostile.py) answers below HTTP's rules instead
(negative ``Content-Length``, endless headers, HTTP/0.9, slowloris streams, ...), from a raw
socket.

Run it as a separate process with ``python -m dealroom.testing --latency 0.2``
(``--fault-rate 0.2`` for random faults, a quarter of them hangs); it prints its base URL on
the first line of stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import inspect
import json
import random
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from dealroom.models._loopback import LoopbackServer
from dealroom.models._spec import ModelSpec
from dealroom.types import Usage

Reply = Callable[[dict[str, Any]], Any]
"""A function of the request JSON (sync or async) giving the text, a body or a Fault."""


@dataclass(frozen=True)
class Fault:
    """A failure the mock server injects into one chat call."""

    kind: str
    """``status`` (an HTTP error), ``hang`` (hold the request ``seconds``, then answer),
    ``stall`` (start a stream, then go silent for ``seconds``), ``disconnect`` (drop the
    connection), ``no_usage`` (a normal reply without ``usage``), ``usage`` (a normal reply
    with ``usage`` as given), or a 200 that is no chat completion: ``malformed`` (cut-off
    JSON), ``not_json``, ``html``, ``empty_choices``, ``no_message``, ``null_content``,
    ``deep_json`` (arrays nested 100,000 deep), ``huge`` (``size`` bytes of content)."""
    status: int = 500
    message: str = "injected failure"
    retry_after: float | None = None
    seconds: float = 0.0
    size: int = 0
    usage: dict[str, Any] | None = None

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1.0) -> Fault:
        """HTTP 429 with a ``Retry-After`` header (seconds; ``None`` sends none)."""
        return cls("status", 429, "rate limited", retry_after)

    @classmethod
    def server_error(cls, status: int = 500, message: str = "internal error") -> Fault:
        return cls("status", status, message)

    @classmethod
    def http(cls, status: int, message: str = "error") -> Fault:
        return cls("status", status, message)

    @classmethod
    def timeout(cls, seconds: float = 30.0) -> Fault:
        """Hold the request ``seconds`` before answering (longer than the client's timeout)."""
        return cls("hang", seconds=seconds)

    @classmethod
    def stall(cls, seconds: float = 30.0) -> Fault:
        """Send a stream's first chunk, then nothing for ``seconds`` (then finish it)."""
        return cls("stall", seconds=seconds)

    @classmethod
    def malformed(cls, kind: str = "malformed") -> Fault:
        """A 200 that is no chat completion; ``kind`` is one of :data:`MALFORMED`."""
        if kind not in MALFORMED:
            raise ValueError(f"unknown malformed kind {kind!r}: one of {', '.join(MALFORMED)}")
        return cls(kind)

    @classmethod
    def huge(cls, size: int = 10 * 2**20) -> Fault:
        """A normal reply whose content is ``size`` bytes long."""
        return cls("huge", size=size)

    @classmethod
    def bad_usage(cls, **usage: Any) -> Fault:
        """A normal reply carrying this ``usage`` object (e.g. ``prompt_tokens=-9989296``)."""
        return cls("usage", usage=usage)

    @classmethod
    def no_usage(cls) -> Fault:
        return cls("no_usage")

    @classmethod
    def disconnect(cls) -> Fault:
        return cls("disconnect")


MALFORMED = ("malformed", "not_json", "html", "empty_choices", "no_message", "null_content",
             "deep_json")
"""The 200-but-unusable fault kinds."""
DEEP = 100_000
_ANSWERED = ("hang", "stall", "no_usage", "usage", "huge")
"""Fault kinds after which the request is still answered with the reply's text."""


def random_faults(rate: float, *, hang_share: float = 0.25, hang_seconds: float = 600.0,
                  seed: int = 0) -> Callable[[], Fault | None]:
    """Draws a fault for ``rate`` of the calls: ``hang_share`` of them hangs of
    ``hang_seconds``, the rest spread evenly over 429, 500, dropped connections and the
    malformed 200s (``not_json``, ``html``, ``empty_choices``, ``null_content``)."""
    rng = random.Random(seed)
    others = [Fault.rate_limit(None), Fault.server_error(), Fault.disconnect(),
              *(Fault(k) for k in ("not_json", "html", "empty_choices", "null_content"))]

    def draw() -> Fault | None:
        if rng.random() >= rate:
            return None
        if rng.random() < hang_share:
            return Fault.timeout(hang_seconds)
        return rng.choice(others)

    return draw


FINGERPRINT = "fp_dealroom_mock"
"""The ``system_fingerprint`` the mock's replies carry, as OpenAI's do."""


def chat_completion_body(
    text: str,
    *,
    model: str = "mock",
    usage: dict[str, Any] | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    """An OpenAI chat-completion response body; ``usage=None`` omits the usage object."""
    body: dict[str, Any] = {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": FINGERPRINT,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {"role": "assistant", "content": text},
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def _json(body: Any) -> tuple[str, str]:
    return json.dumps(body), "application/json"


_BODIES: dict[str, Callable[[], tuple[str, str]]] = {
    "malformed": lambda: ('{"choices": [', "application/json"),
    "not_json": lambda: ("upstream connect error or disconnect/reset before headers",
                         "text/plain"),
    "html": lambda: ("<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad "
                     "Gateway</h1></body></html>", "text/html"),
    "empty_choices": lambda: _json({"id": "chatcmpl-mock", "object": "chat.completion",
                                    "choices": []}),
    "no_message": lambda: _json({"id": "chatcmpl-mock", "object": "chat.completion",
                                 "choices": [{"index": 0, "finish_reason": "stop"}]}),
    "null_content": lambda: _json(chat_completion_body(None)),  # type: ignore[arg-type]
    "deep_json": lambda: ("[" * DEEP + "]" * DEEP, "application/json"),
}
"""Bodies of the 200-but-unusable faults: (text, content type)."""


def echo(request: dict[str, Any]) -> str:
    """Default reply: ``echo: `` plus the last message's content."""
    messages = request.get("messages") or [{}]
    return f"echo: {messages[-1].get('content', '')}"


def _usage_for(request: dict[str, Any], text: str) -> dict[str, Any]:
    from dealroom.room import count_tokens

    prompt = sum(count_tokens(str(m.get("content", ""))) for m in request.get("messages", []))
    completion = count_tokens(text)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


class MockOpenAIServer(LoopbackServer):
    """An aiohttp server speaking the OpenAI chat API on 127.0.0.1 (see the module docstring).

    ``reply``: a function of the request JSON, or a fixed string. ``latency``: seconds to wait
    before every answer. ``api_key``: when set, requests without ``Bearer <api_key>`` get 401.
    ``record``: keep every chat request body in :attr:`requests`. ``streams``: answer
    ``"stream": true`` with a stream (else with one body, as some servers do). ``refuse``:
    request fields answered with ``refuse_status`` naming the field (``response_format``,
    ``json_schema`` for that shape only, ``stream``). ``faults``: a function drawing a fault
    (or None) per call, e.g. :func:`random_faults`. ``ssl_context``: serve HTTPS with it.
    """

    thread_name = "mock-openai-server"

    def __init__(
        self,
        reply: Reply | str = echo,
        *,
        latency: float = 0.0,
        model: str = "mock",
        api_key: str | None = None,
        record: bool = True,
        port: int = 0,
        streams: bool = True,
        refuse: tuple[str, ...] = (),
        refuse_status: int = 400,
        faults: Callable[[], Fault | None] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(port, ssl_context)
        self.reply: Reply = (lambda _req: reply) if isinstance(reply, str) else reply
        self.latency = latency
        self.model = model
        self.api_key = api_key
        self.record = record
        self.streams = streams
        self.refuse = refuse
        self.refuse_status = refuse_status
        self.faults = faults
        self.requests: list[dict[str, Any]] = []
        """Chat request bodies received, in arrival order (when ``record``)."""
        self.headers: list[dict[str, str]] = []
        """The headers of every request received, in arrival order (when ``record``)."""
        self.calls = 0
        """Chat requests received."""
        self.in_flight = 0
        self.max_in_flight = 0
        """Most chat requests open at once."""
        self.cancelled = 0
        """Chat requests whose client went away before the answer."""
        self._faults: collections.deque[Fault] = collections.deque()
        self._lock = threading.Lock()

    # -- addresses -----------------------------------------------------------------------------

    @property
    def spec(self) -> ModelSpec:
        """A spec for this server (no key, fast retries) to pass to ``open_model``."""
        return ModelSpec(
            name=f"{self.model}@{self.base_url}",
            kind="openai",
            model=self.model,
            base_url=self.base_url,
            timeout=10.0,
            backoff_s=0.01,
        )

    def fail_next(self, *faults: Fault) -> None:
        """Apply ``faults`` to the next chat calls, one each, in order."""
        with self._lock:
            self._faults.extend(faults)

    # -- handlers ------------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        if denied := self._deny(request):
            return denied
        return web.json_response(
            {
                "object": "list",
                "data": [{"id": self.model, "object": "model", "owned_by": "dealroom"}],
            }
        )

    def _deny(self, request: web.Request) -> web.Response | None:
        if self.record:
            self.headers.append(dict(request.headers))
        if self.api_key and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return web.json_response({"error": {"message": "invalid api key"}}, status=401)
        return None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1

    def _next_fault(self) -> Fault | None:
        with self._lock:
            if self._faults:
                return self._faults.popleft()
        return self.faults() if self.faults is not None else None

    def _refusal(self, body: dict[str, Any]) -> web.Response | None:
        form = (body.get("response_format") or {}).get("type")
        for field_name in self.refuse:
            named = field_name == form or (field_name in body and field_name != "json_schema")
            if named:
                return web.json_response(
                    {"error": {"message": f"{field_name} is not supported by this server"}},
                    status=self.refuse_status)
        return None

    async def _reply(self, body: dict[str, Any]) -> str | dict[str, Any] | Fault:
        result = self.reply(body)
        done: str | dict[str, Any] | Fault = await result if inspect.isawaitable(result) else result
        return done

    async def _admit(self, request: web.Request
                     ) -> tuple[dict[str, Any], web.StreamResponse | None]:
        """The request's body (recorded when asked), and the answer that ends it here: a
        denial (credentials, headers) or a refusal (:meth:`_refusal`), else None."""
        if denied := self._deny(request):
            return {}, denied
        body = json.loads(await request.read())
        if self.record:
            self.requests.append(body)
        return body, self._refusal(body)

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        body, ended = await self._admit(request)
        if ended is not None:
            return ended
        fault = self._next_fault()
        if self.latency:
            await asyncio.sleep(self.latency)
        result: str | dict[str, Any] | Fault | None = None
        if fault is None:
            result = await self._reply(body)
            if isinstance(result, Fault):
                fault, result = result, None
        if fault is not None and fault.kind not in _ANSWERED:
            return await self._fault(request, fault)
        if fault is not None and fault.kind == "hang":
            await asyncio.sleep(fault.seconds)
        if result is None:
            result = await self._reply(body)
        if isinstance(result, Fault):
            result = echo(body)
        if isinstance(result, dict):
            return web.json_response(result)
        text = "x" * fault.size if fault is not None and fault.kind == "huge" else str(result)
        usage = None if fault is not None and fault.kind == "no_usage" else _usage_for(body, text)
        if fault is not None and fault.kind == "usage":
            usage = fault.usage
        if body.get("stream") and self.streams:
            stall = fault.seconds if fault is not None and fault.kind == "stall" else 0.0
            include = (body.get("stream_options") or {}).get("include_usage")
            return await self._stream(request, text, usage if include else None, stall)
        return web.json_response(chat_completion_body(text, model=self.model, usage=usage))

    async def _stream(self, request: web.Request, text: str, usage: dict[str, Any] | None,
                      stall: float) -> web.StreamResponse:
        """The reply as server-sent events: a role chunk, the text in pieces, the finish, the
        usage when asked for, ``[DONE]``; sent as one body unless the fault stalls it."""

        def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
            chunk = {"id": "chatcmpl-mock", "object": "chat.completion.chunk",
                     "model": self.model, "system_fingerprint": FINGERPRINT,
                     "choices": choices, **extra}
            return f"data: {json.dumps(chunk)}\n\n".encode()

        def delta(content: dict[str, Any], finish: str | None = None) -> bytes:
            return event([{"index": 0, "delta": content, "finish_reason": finish}])

        step = max(1, len(text) // 8) if len(text) < 65536 else 65536
        parts = [delta({"content": text[i : i + step]}) for i in range(0, len(text), step)]
        parts.append(delta({}, "stop"))
        if usage is not None:
            parts.append(event([], usage=usage))
        parts.append(b"data: [DONE]\n\n")
        first = delta({"role": "assistant"})
        if not stall:
            return web.Response(body=first + b"".join(parts), content_type="text/event-stream")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(first)
        await asyncio.sleep(stall)
        await resp.write(b"".join(parts))
        await resp.write_eof()
        return resp

    async def _fault(self, request: web.Request, fault: Fault) -> web.StreamResponse:
        if fault.kind == "status":
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            return web.json_response(
                {"error": {"message": fault.message}}, status=fault.status, headers=headers
            )
        if fault.kind == "disconnect":
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError
        if fault.kind in _BODIES:
            text, content_type = _BODIES[fault.kind]()
            return web.Response(text=text, content_type=content_type)
        raise ValueError(f"unknown fault kind {fault.kind!r}")

    # -- lifecycle -----------------------------------------------------------------------------

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)

    def usage_of(self, request: dict[str, Any], text: str) -> Usage:
        """The usage this server reports for ``text`` answering ``request`` (for assertions)."""
        raw = _usage_for(request, text)
        return Usage(raw["prompt_tokens"], 0, raw["completion_tokens"], 0.0, 1)


def main(argv: list[str] | None = None) -> None:
    """Serve until killed; print the base URL first (used by ``benchmarks/bench_fanout.py``)."""
    parser = argparse.ArgumentParser(prog="python -m dealroom.testing")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default="mock")
    parser.add_argument("--reply", default=None, help="fixed reply text (default: echo)")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of calls faulted")
    parser.add_argument("--hang-share", type=float, default=0.25, help="share of faults hung")
    parser.add_argument("--hang-seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    faults = None
    if args.fault_rate:
        faults = random_faults(args.fault_rate, hang_share=args.hang_share,
                               hang_seconds=args.hang_seconds, seed=args.seed)

    async def serve() -> None:
        server = MockOpenAIServer(
            args.reply or echo, latency=args.latency, model=args.model, record=False,
            port=args.port, faults=faults,
        )
        await server.astart()
        print(server.base_url, flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.astop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


__all__ = ["Fault", "MALFORMED", "MockOpenAIServer", "chat_completion_body", "echo", "main",
           "random_faults"]
