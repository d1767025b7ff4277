"""The ModelClient protocol and the OpenAI-compatible client every real endpoint goes through.

One call, as the client makes it::

    chat(messages) ──> endpoint semaphore (shared per base_url, per event loop)
                          │  POST {base_url}/chat/completions   (one aiohttp session per endpoint)
                          │  streamed (SSE) unless the spec or the endpoint says otherwise;
                          │  in a wave (see _hedge), a stalled attempt is re-sent once
                          ▼
      200, parsed and checked (_wire) ──> ChatResult(text, usage, model, finish_reason, ...)
      400/422/500 naming response_format or stream ──> that feature is dropped for this
                          client (remembered) and the request is sent again at once
      429 / 5xx / 408 / connection error / time-out / a 200 that is not a chat completion
          ──> release the slot, sleep (Retry-After, else jittered exponential), retry
      other 4xx, impossible usage, a body over the limit, or retries spent
          ──> ProviderError(model=name, kind=..., status=...)

Every request goes through aiohttp (see ``_endpoint``: one session per endpoint, kept-alive
connections, the model's proxy, TLS settings and extra headers from ``_net``); the rules
above are ours. Each HTTP request counts as an attempt: a POST is never re-sent unseen.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from typing import Any, Protocol, runtime_checkable

import aiohttp
from yarl import URL

from dealroom._util.text import strip_controls
from dealroom.errors import ConfigError
from dealroom.models._budget import Lease
from dealroom.models._endpoint import (
    Body,
    Endpoint,
    Fetched,
    acquire,
    failure,
    fetch,
    not_http,
    open_session,
    proxy_hint,
    proxy_reply,
    release,
    tls_for,
)
from dealroom.models._hedge import (
    BothStalled,
    HedgeRecord,
    HedgeWave,
    Progress,
    current_wave,
    race,
)
from dealroom.models._identity import (
    props_window,
    served_chat,
    served_listing,
    warn_default_window,
)
from dealroom.models._net import Route, add_spec_secrets, expand_headers
from dealroom.models._probe import ServerFacts, count_text, count_with, probe_server
from dealroom.models._result import ChatResult
from dealroom.models._rules import (
    Deadline,
    Refused,
    Retryable,
    error_message,
    format_for,
    listed_models,
    refused_feature,
    retry_after,
)
from dealroom.models._shape import (
    PROPS_BYTES,
    empty_stream,
    learn_opened,
    props_opened,
    served_window,
)
from dealroom.models._spec import ModelSpec, Prices, reply_cap
from dealroom.models._timing import (
    Pace,
    completion_tokens,
    deadline_message,
    prompt_tokens,
    timeout_message,
    timeouts,
)
from dealroom.models._wire import (
    BadReply,
    ProviderError,
    Reply,
    estimate_usage,
    length_refusal,
    parse_body,
    parse_usage,
    read_body,
    read_stream,
    request_body,
    text_cap,
    token_record,
    usage_problem,
)
from dealroom.types import Usage

MAX_BACKOFF_S = 30.0
CHECK_TIMEOUT_S = 10.0
MAX_CHECK_BYTES = 16 * 2**20
FORMS = ("json_schema", "json_object")
"""The ``response_format`` shapes tried, in order: OpenAI's ``json_schema`` (OpenAI, vLLM,
SGLang, llama.cpp's server), then ``json_object`` with a ``schema`` (llama-cpp-python)."""


@runtime_checkable
class ModelClient(Protocol):
    """What harnesses and judges talk to; every provider returns one of these."""

    @property
    def name(self) -> str:
        """The spec string the client was opened with; recorded in run logs."""
        ...

    @property
    def model(self) -> str:
        """The model the endpoint serves."""
        ...

    @property
    def context_window(self) -> int:
        """Tokens of prompt and reply the model takes."""
        ...

    @property
    def prices(self) -> Prices:
        """What its tokens cost (USD per 1M)."""
        ...

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResult:
        """Send one chat completion; raise ModelError when it fails for good.

        ``response_format`` (OpenAI's ``{"type": "json_schema", "json_schema": {...}}``) asks
        for a schema-constrained reply where the endpoint offers it; clients that cannot give
        one answer without it."""
        ...

    async def aclose(self) -> None:
        """Release shared resources (sessions, the local server)."""
        ...


async def check(client: ModelClient) -> None:
    """Preflight: fail fast with a ConfigError that says what to set, before any work.

    Clients without a ``check`` method (scripted fakes) pass.
    """
    probe = getattr(client, "check", None)
    if probe is not None:
        await probe()


# -- the client ----------------------------------------------------------------------------------


class OpenAICompatibleClient:
    """Async client for any OpenAI-compatible ``/chat/completions`` endpoint.

    Clients for the same ``base_url`` (and network settings) share one aiohttp session and
    one semaphore per event loop. Open it with :func:`dealroom.models.open_model`; close it
    with ``aclose()`` or ``async with``. :attr:`refused` lists what the endpoint turned down,
    so it is not asked again: ``stream``, ``json_schema``, ``json_object``.
    """

    def __init__(
        self, spec: ModelSpec, *, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        base = (base_url or spec.base_url or "").rstrip("/")
        if not base:
            raise ConfigError(f"model '{spec.name}' has no base_url: set one in the models file")
        self.spec = spec
        self.name = spec.name
        self.model = spec.model
        self.context_window = spec.context_window
        self.window_from: str = spec.context_window_from
        """Where :attr:`context_window` came from: ``spec``, ``server`` or ``default``."""
        self.served: dict[str, Any] | None = None
        """What the server said about the model when :meth:`check` asked (``id``,
        ``max_model_len``, ``from``); None before."""
        self.prices = spec.prices
        self.base_url = base
        self.refused: set[str] = set() if spec.stream and not spec.tokens else {"stream"}
        self._url = URL(f"{base}/chat/completions")  # parsed once, not per request
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._headers.update(expand_headers(spec))
        add_spec_secrets(spec, api_key)
        self._tls = tls_for(spec, base)
        self.pace = Pace()
        """The endpoint's prefill speed, learned from replies: it sets the first-byte wait
        (``_timing``)."""
        self._extra = dict(spec.options.get("extra_body", {}))
        self._max_field = spec.options.get("max_tokens_field", "max_tokens")
        self._endpoint: Endpoint | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tokenize: bool | None = None
        """Whether the server counts tokens for us (None: not asked yet)."""
        self._facts: ServerFacts | None = None
        """What the server offers besides chat (:func:`probe_server`), asked once."""
        self.opened = spec.reasoning == "open"
        """The chat template opens ``<think>`` in the prompt (the spec says so, the server's
        template does, or a reply came as ``R</think>A``): see ``_shape``."""

    def _get_endpoint(self) -> Endpoint:
        loop = asyncio.get_running_loop()
        if self._endpoint is None or self._loop is not loop or self._endpoint.closed:
            self._endpoint = acquire(self.spec, self.base_url, self._tls)
            self._loop = loop
            if self._facts is not None and self._facts.slots:
                self._endpoint.limit_to(self._facts.slots)
        return self._endpoint

    def _payload(self, messages: list[dict[str, Any]], limit: int | None,
                 temperature: float | None, stop: list[str] | None,
                 response_format: dict[str, Any] | None) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": messages}
        if limit is not None:
            payload[self._max_field] = limit
        if temperature is not None:
            payload["temperature"] = temperature
        if stop:
            payload["stop"] = stop
        form = format_for(response_format, self.refused)
        if form is not None:
            payload["response_format"] = form
        if "stream" not in self.refused:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        if self.spec.tokens:
            payload["logprobs"] = True
            payload["return_token_ids"] = True
        payload.update(self._extra)
        return payload

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResult:
        """POST one chat completion, retrying transient failures; see the module docstring."""
        limit = max_tokens if max_tokens is not None else reply_cap(
            self.context_window, self.spec.max_output_tokens)
        cap = text_cap(limit)
        endpoint = self._get_endpoint()
        wave = current_wave() if self.spec.hedge else None
        if wave is not None:
            wave.joined()
        clock = Deadline(self.spec)
        try:
            async with asyncio.timeout(None) as clock.scope:
                result = await self._call(messages, limit, temperature, stop, response_format,
                                          cap, endpoint, wave, clock)
        except TimeoutError:
            if clock.scope is None or not clock.scope.expired():
                raise
            raise ProviderError(
                deadline_message(self.spec, clock.seconds, clock.sent[0], clock.last),
                model=self.name, kind="timeout", attempts=clock.sent[0]) from None
        except asyncio.CancelledError as exc:
            exc.attempts = clock.sent[0]  # type: ignore[attr-defined]  # for the run's records
            raise
        if result.usage_estimated and self._facts is not None and not self.spec.tokens:
            await self._count_usage(result, messages)  # the server was probed (a run does)
        return result

    async def _count_usage(self, result: ChatResult, messages: list[dict[str, Any]]) -> None:
        """A reply without usage is counted by the server's own tokenizer where it has one
        (``usage_source`` says which); else it stays a words-v1 estimate."""
        facts = await self.server_facts()
        if facts.count_route is None:
            return
        prompt = await count_with(self.request, facts, self.model, messages)
        reply = await count_text(self.request, facts, self.model, result.whole_text)
        if prompt is None or reply is None:
            return
        result.usage = Usage(input_tokens=prompt, output_tokens=reply, calls=1,
                             cost_usd=self.prices.cost(prompt, 0, reply))
        result.usage_estimated = False
        result.usage_source = facts.counts_source

    async def server_facts(self) -> ServerFacts:
        """What the server offers (window, count), probed once; a window it states replaces
        the default, or a larger one the spec named."""
        if self._facts is None:
            self._facts = await probe_server(self.request, self.model)
            self._window_from(self._facts.window)
        if self._facts.slots:
            self._get_endpoint().limit_to(self._facts.slots)
        return self._facts

    @property
    def counts_source(self) -> str:
        """How this model's prompts are counted: ``tokenize``, ``llama.cpp``, ``extras``, or
        ``estimate`` (words-v1; also before the server was probed)."""
        return self._facts.counts_source if self._facts is not None else "estimate"

    async def _call(self, messages: list[dict[str, Any]], limit: int,
                    temperature: float | None, stop: list[str] | None,
                    response_format: dict[str, Any] | None, cap: int, endpoint: Endpoint,
                    wave: HedgeWave | None, clock: Deadline) -> ChatResult:
        """The retry loop of :meth:`chat`."""
        attempt = 0
        sent = clock.sent  # HTTP requests made, hedges included
        unstreamed = False  # an empty stream: ask once without streaming (see _shape)
        while True:
            payload = self._payload(messages, limit, temperature, stop, response_format)
            if unstreamed:
                for key in ("stream", "stream_options"):
                    payload.pop(key, None)
            data = request_body(payload)
            clock.waits = self.pace.waits(self.spec, len(data) // 4, limit)  # ~4 bytes a token
            if not sent[0]:  # the deadline starts with the first request
                clock.seconds = clock.waits.deadline
            attempt += 1
            try:
                reply, latency, hedge = await self._send(endpoint, payload, data, cap, wave,
                                                         clock)
            except Refused as exc:
                self.refused.add(exc.feature)
                attempt -= 1  # the endpoint only turned down an option: ask again at once
                continue
            except Retryable as exc:
                clock.last = str(exc)
                if not unstreamed and empty_stream(exc.kind, payload, str(exc)):
                    unstreamed = True
                    continue
                if attempt > self.spec.max_retries:
                    raise ProviderError(
                        f"{exc} (gave up after {attempt} attempts)",
                        model=self.name, status=exc.status, kind=exc.kind, attempts=sent[0],
                    ) from None
                await asyncio.sleep(exc.wait if exc.wait is not None else self._backoff(attempt))
                continue
            except ProviderError as exc:
                exc.attempts = sent[0]
                raise
            result = self._result(reply, messages, payload, len(data), limit, latency, sent[0],
                                  hedge)
            result.timeouts = clock.waits.record()
            return result

    def _result(self, reply: Reply, messages: list[dict[str, Any]], payload: dict[str, Any],
                request_bytes: int, limit: int, latency: float, attempts: int,
                hedge: HedgeRecord | None) -> ChatResult:
        problem = usage_problem(reply.usage, request_bytes=request_bytes, max_tokens=limit)
        if problem is not None:
            raise ProviderError(f"impossible usage from {self.base_url}: {problem}",
                                model=self.name, status=200, kind="usage", attempts=attempts,
                                served=True)
        # exact tokens: the text stays what they decode to, control characters included
        text, stripped = (reply.text, 0) if self.spec.tokens else strip_controls(reply.text)
        reasoning = reply.reasoning
        if reasoning is not None and not self.spec.tokens:
            reasoning, more = strip_controls(reasoning)
            stripped += more
        usage = parse_usage(reply.usage, self.prices)
        estimated = usage is None
        if usage is None:
            usage = estimate_usage(messages, text, self.prices, reasoning)
        form = payload.get("response_format")
        tokens = None
        if self.spec.tokens:
            try:
                tokens = token_record(reply)
            except BadReply as exc:
                raise ProviderError(f"{exc} (from {self.base_url}; tokens=true needs an "
                                    "endpoint that returns token ids, such as vLLM's "
                                    "OpenAI server, 0.10.2 or newer)", model=self.name,
                                    status=200, kind=exc.kind, attempts=attempts,
                                    served=True) from None
        result = ChatResult(
            text=text, usage=usage, model=reply.model or self.model,
            finish_reason=reply.finish_reason, latency_s=latency, usage_estimated=estimated,
            attempts=attempts, streamed=reply.streamed,
            structured=str(form["type"]) if form else None, cut_bytes=reply.cut_bytes,
            stripped=stripped, hedge=hedge, raw=reply.body, tokens=tokens, reasoning=reasoning,
            max_tokens=limit, opened=self.opened,
            served_model=reply.model, system_fingerprint=reply.fingerprint,
        )
        self.opened = self.opened or learn_opened(self.spec, result)
        window = served_window(result, limit, self.context_window)
        if window != self.context_window:
            self.context_window, self.window_from = window, "server"
        return result

    def _backoff(self, attempt: int) -> float:
        ceiling = min(MAX_BACKOFF_S, self.spec.backoff_s * 2 ** (attempt - 1))
        return float(ceiling / 2 + random.uniform(0, ceiling / 2))

    async def _send(self, endpoint: Endpoint, payload: dict[str, Any], data: bytes, cap: int,
                    wave: HedgeWave | None, clock: Deadline,
                    ) -> tuple[Reply, float, HedgeRecord | None]:
        """One attempt, hedged when it belongs to a wave: (reply, latency, hedge record)."""
        streaming = bool(payload.get("stream"))

        async def attempt(progress: Progress) -> tuple[Reply, float]:
            reply, latency = await self._attempt(endpoint, payload, data, cap, streaming,
                                                 progress, clock)
            if wave is not None:
                wave.answered(latency)
            return reply, latency

        if wave is None:
            reply, latency = await attempt(Progress())
            return reply, latency, None
        try:
            (reply, latency), hedge = await race(wave, self.spec.hedge, attempt)
        except BothStalled as exc:
            raise Retryable(str(exc), kind="timeout") from None
        return reply, latency, hedge

    async def _attempt(self, endpoint: Endpoint, payload: dict[str, Any], data: bytes,
                       cap: int, streaming: bool, progress: Progress,
                       clock: Deadline) -> tuple[Reply, float]:
        async with endpoint.semaphore:
            clock.start()
            progress.start()
            start = time.perf_counter()
            try:
                async with endpoint.session.post(
                    self._url, data=Body(data), headers=self._headers,
                    timeout=timeouts(self.spec, clock.waits, streaming), allow_redirects=False,
                ) as resp:
                    progress.tick()
                    status = resp.status
                    if status != 200:
                        raw = await resp.content.read(65536)
                        wait = retry_after(resp.headers.get("Retry-After"))
                        moved = resp.headers.get("Location")
                    else:
                        reply = await self._read_reply(resp, cap, progress, streaming)
            except TimeoutError as exc:
                raise Retryable(timeout_message(exc, self.spec, streaming, clock.waits,
                                                progress.body is not None),
                                kind="timeout") from None
            except (aiohttp.ClientResponseError, aiohttp.ClientPayloadError) as exc:
                if (reason := not_http(exc)) is None:
                    raise Retryable(failure(exc, endpoint.route)[0], kind="connection") from None
                raise ProviderError(f"{reason} (from {self.base_url})", model=self.name,
                                    kind="protocol") from None
            except (aiohttp.ClientError, OSError) as exc:
                message, again = failure(exc, endpoint.route)
                if again:
                    raise Retryable(message, kind="connection") from None
                raise ProviderError(f"{message} (from {self.base_url})", model=self.name,
                                    kind="connection") from None
            except BadReply as exc:
                exc.__traceback__ = None  # its frames hold the body read so far
                message = f"{exc} (from {self.base_url})"
                if exc.retry:
                    raise Retryable(message, 200, kind=exc.kind) from None
                raise ProviderError(message, model=self.name, status=200, kind=exc.kind,
                                    served=exc.served) from None
            latency = time.perf_counter() - start
        if status == 200:
            self._learn(reply, latency, progress, clock.waits.prompt_tokens)
            return reply, latency
        if status == 101:
            raise ProviderError(
                f"HTTP 101 from {self.base_url}: the server switched protocols (Upgrade: "
                f"{resp.headers.get('Upgrade', '?')}) instead of answering; a chat endpoint "
                "answers over HTTP/1.1", model=self.name, status=status, kind="protocol")
        blame = proxy_reply(Fetched(status, resp.headers, raw), endpoint.route, self.base_url)
        if blame is not None:  # the proxy's own answer, not the endpoint's
            if status >= 500:
                raise Retryable(blame, status, wait)
            raise ProviderError(blame, model=self.name, status=status, kind="proxy")
        message = (f"HTTP {status} from {self.base_url}: {error_message(raw)}"
                   + proxy_hint(status, endpoint.route))
        if 300 <= status < 400 and moved:
            message += f" (redirected to {moved}: set base_url to the endpoint itself)"
        if (feature := refused_feature(status, message, payload)) is not None:
            raise Refused(feature)
        too_long, counted = length_refusal(status, message)
        if too_long:  # never retried as is: the caller must send less
            raise ProviderError(message, model=self.name, status=status, kind="context_length",
                                prompt_tokens=counted)
        if status in (408, 409, 429) or status >= 500:
            raise Retryable(message, status, wait)
        raise ProviderError(message, model=self.name, status=status, kind="http")

    def _learn(self, reply: Reply, latency: float, progress: Progress, estimate: int) -> None:
        """Learn the endpoint's speeds from a reply (``_timing``)."""
        first = None if progress.body is None or progress.started is None else (
            progress.body - progress.started)
        self.pace.learn(prompt_tokens(reply.usage) or estimate, first)
        self.pace.learn_decode(completion_tokens(reply.usage), latency - (first or 0.0))

    async def _read_reply(self, resp: aiohttp.ClientResponse, cap: int,
                          progress: Progress, streaming: bool = True) -> Reply:
        """The 200's reply, buffered under a lease of the loop's byte budget (``_budget``)
        until it is parsed."""
        content_type = resp.headers.get("Content-Type", "")
        lease = Lease()
        try:
            if content_type.startswith("text/event-stream"):
                return await read_stream(resp.content.iter_any(), cap, progress.chunk, lease)
            raw = await read_body(resp.content.iter_any(), lease=lease,
                                  declared=resp.content_length)
            reply = parse_body(raw, content_type, cap)
        finally:
            lease.release()
        if streaming and "stream" not in self.refused:
            self.refused.add("stream")  # asked to stream, it answered in one body: it does not
        return reply

    async def check(self) -> None:
        """Preflight: ``GET /models``, then a 1-token chat if the model is not listed; learns
        the window the server reports (``/v1/models``' ``max_model_len``, else llama.cpp's
        ``/props``) and what it says it serves (:attr:`served`)."""
        source = self.spec.source or "the spec"
        key_hint = (
            f"set {self.spec.api_key_env} to a valid key"
            if self.spec.api_key_env
            else f"add api_key_env to [models.{self.name}] in {source}"
        )
        session, way = open_session(self.spec, self.base_url, 1, self._tls)
        chat: Fetched | None = None
        try:
            async with asyncio.timeout(min(CHECK_TIMEOUT_S, self.spec.timeout)):
                listed = await fetch(session, "GET", f"{self.base_url}/models", None,
                                     self._headers, MAX_CHECK_BYTES)
                status, raw = listed.status, listed.body
                if (blame := proxy_reply(listed, way, self.base_url)) is not None:
                    raise ConfigError(f"model '{self.name}': {blame}")
                if status in (401, 403):
                    raise ConfigError(
                        f"model '{self.name}': {self.base_url} rejected the API key "
                        f"(HTTP {status}): {key_hint}"
                    )
                if status == 200 and self.model in listed_models(raw):
                    self.served = served_listing(raw, self.model)
                    self._window_from(self.served["max_model_len"])
                else:
                    probe = json.dumps({"model": self.model, "max_tokens": 1,
                                        "messages": [{"role": "user", "content": "ping"}]})
                    chat = await fetch(session, "POST", self._url, probe.encode(),
                                       self._headers, MAX_CHECK_BYTES)
                if chat is None or chat.status == 200:
                    await self._props(session)
        except (aiohttp.ClientError, OSError) as exc:  # TimeoutError too
            raise ConfigError(self._unreachable(exc, way, source)) from None
        finally:
            await session.close()
        if chat is not None:
            self._chat_checked(chat, raw, way, key_hint)
        if self.window_from == "default":
            warn_default_window(self.spec)

    def _chat_checked(self, chat: Fetched, listing: bytes, way: Route, key_hint: str) -> None:
        """Raise the ConfigError the check's 1-token chat calls for, or note its model."""
        if chat.status == 200:
            self.served = served_chat(chat.body)
            return
        if (blame := proxy_reply(chat, way, self.base_url)) is not None:
            raise ConfigError(f"model '{self.name}': {blame}")
        if chat.status in (401, 403):
            raise ConfigError(
                f"model '{self.name}': {self.base_url} rejected the API key "
                f"(HTTP {chat.status}): {key_hint}"
            )
        served = ", ".join(sorted(listed_models(listing))[:10]) or "unknown"
        fix = (f"Fix `model` in [models.{self.name}] in {self.spec.source}" if self.spec.source
               else f"Fix the model id before '@' in the spec ({self.name.partition('#')[0]})")
        raise ConfigError(
            f"model '{self.name}': {self.base_url} did not answer a 1-token chat for model "
            f"{self.model!r} (HTTP {chat.status}: {error_message(chat.body)}); the endpoint "
            f"serves: {served}. {fix}"
        )

    async def _props(self, session: aiohttp.ClientSession) -> None:
        """Read llama.cpp's ``GET /props``, where the server has one: its window (when
        neither the spec nor ``/v1/models`` gave one) and whether its chat template opens
        ``<think>`` (vLLM, SGLang and llama-cpp-python serve none)."""
        try:
            answer = await fetch(session, "GET", self._url.join(URL("/props")), None,
                                 self._headers, PROPS_BYTES)
        except (aiohttp.ClientError, OSError):
            return
        if answer.status != 200:
            return
        self.opened = self.opened or props_opened(answer.body)
        window = props_window(answer.body) if self.window_from == "default" else None
        if window is not None:
            self._window_from(window)
            self.served = {**(self.served or {"id": None, "from": "/props"}),
                           "max_model_len": window}

    def _unreachable(self, exc: BaseException, way: Route, source: str) -> str:
        """Why the check could not reach the endpoint, naming the proxy when it failed."""
        message, again = failure(exc, way)
        if isinstance(exc, TimeoutError):
            message = f"no answer within {min(CHECK_TIMEOUT_S, self.spec.timeout):g}s" + (
                f" through {way.describe()}" if way.proxy else "")
        if isinstance(exc, aiohttp.ClientProxyConnectionError | aiohttp.ClientHttpProxyError):
            fix = (f"fix proxy in [models.{self.name}] in {source}" if way.source == "proxy"
                   else f"fix {way.source}")
            return (f"model '{self.name}': cannot reach {self.base_url}: {message}. {fix}, or "
                    f"bypass the proxy (add the host to NO_PROXY, or set proxy = \"\" for the "
                    "model)")
        if not again:  # the server answered, and what it said is the problem
            return f"model '{self.name}': cannot reach {self.base_url}: {message}"
        return (f"model '{self.name}': cannot reach {self.base_url} ({message}): start the "
                f"server there, or fix base_url in {source}")

    async def request(self, method: str, path: str, body: Any = None,
                      limit: int = MAX_CHECK_BYTES) -> Fetched:
        """One request besides chat calls (a probe such as vLLM's ``POST /tokenize``) on the
        model's session, so its proxy, TLS settings and headers apply: ``path`` is relative to
        ``base_url``, or to the server's root when it starts with ``/``; ``body`` is sent as
        JSON. Failures raise as aiohttp's (``aiohttp.ClientError``, ``TimeoutError``)."""
        url = self._url.join(URL(path)) if path.startswith("/") else URL(
            f"{self.base_url}/{path}")
        data = None if body is None else request_body(body)
        timeout = aiohttp.ClientTimeout(total=min(CHECK_TIMEOUT_S, self.spec.timeout))
        return await fetch(self._get_endpoint().session, method, url, data, self._headers,
                           limit, timeout)

    def _window_from(self, served: int | None) -> None:
        """Take the window the server reports (vLLM's ``max_model_len``) when the spec gave
        none or named a larger one than the server has."""
        if served is not None and (served < self.context_window
                                   or self.window_from == "default"):
            self.context_window = served
            self.window_from = "server"

    async def count_prompt(self, messages: list[dict[str, Any]]) -> int | None:
        """The prompt's tokens by the server's own tokenizer (vLLM's and SGLang's ``POST
        /tokenize``, llama.cpp's, llama-cpp-python's ``/extras/tokenize/count``: see
        :func:`probe_server`); None where the server has none."""
        if self._tokenize is False:
            return None
        facts = await self.server_facts()
        count = await count_with(self.request, facts, self.model, messages)
        self._tokenize = count is not None
        if count is None:  # the route the probe assumed is not there: counts are estimates
            facts.count_route = None
        return count

    async def aclose(self) -> None:
        """Drop this client's hold on the shared session; the last one closes it."""
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None and self._loop is asyncio.get_running_loop():
            await release(self.spec, self.base_url, endpoint)

    async def __aenter__(self) -> OpenAICompatibleClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(name={self.name!r}, base_url={self.base_url!r})"


def create(spec: ModelSpec) -> OpenAICompatibleClient:
    """Provider factory for ``openai``; reads the key from ``spec.api_key_env`` (secrets only)."""
    key = None
    if spec.api_key_env:
        key = os.environ.get(spec.api_key_env) or None
        if key is None and not spec.api_key_optional:
            where = f" (api_key_env of [models.{spec.name}] in {spec.source})"
            where = where if spec.source else ""
            error = ConfigError(f"model '{spec.name}' needs an API key: set the environment "
                                f"variable {spec.api_key_env}{where}")
            error.variable = spec.api_key_env  # type: ignore[attr-defined]  # for doctor
            raise error
    if not spec.base_url:
        raise ConfigError(f"model '{spec.name}' has no base_url: set base_url in the models file")
    return OpenAICompatibleClient(spec, api_key=key)
