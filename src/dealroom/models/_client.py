"""The ModelClient protocol and the OpenAI-compatible client every real endpoint goes through.

One call, as the client makes it::

    chat(messages) ──> endpoint semaphore (shared per base_url, per event loop)
                          │  POST {base_url}/chat/completions   (one aiohttp session per endpoint)
                          ▼
                  200 ──> ChatResult(text, usage, model, finish_reason, latency_s)
                  429 / 5xx / 408 / connection error / time-out / malformed body
                      ──> release the slot, sleep (Retry-After, else jittered exponential), retry
                  other 4xx, or retries spent ──> ModelError(model=name, status=...)

Plain ``aiohttp`` with stdlib ``json`` is used on purpose: it is the leanest async transport
measured for wide fan-out (see ``benchmarks/bench_fanout.py``).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import aiohttp

from dealroom.errors import ConfigError, ModelError
from dealroom.models._spec import ModelSpec, Prices
from dealroom.models._tokens import TokenRecord
from dealroom.types import Usage

MAX_BACKOFF_S = 30.0
MAX_RETRY_AFTER_S = 60.0
CHECK_TIMEOUT_S = 10.0


@dataclass
class ChatResult:
    """One model reply."""

    text: str
    """The assistant message content ("" when the model returned none)."""
    usage: Usage
    """Tokens and cost of this call (``calls == 1``)."""
    model: str
    """The model id the endpoint reports (falls back to the requested one)."""
    finish_reason: str
    """``stop``, ``length``, ... as reported; ``unknown`` when missing."""
    latency_s: float
    """Seconds of the successful HTTP attempt (queueing and retries excluded)."""
    usage_estimated: bool = False
    """True when the provider sent no usage and tokens were counted with ``count_tokens``."""
    attempts: int = 1
    """HTTP attempts made, retries included."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    """The response body as received (empty for scripted replies)."""
    tokens: TokenRecord | None = field(default=None, repr=False)
    """The exact prompt and completion token ids and logprobs, from providers that generate
    in-process (``hf:``); ``None`` from endpoints."""


@runtime_checkable
class ModelClient(Protocol):
    """What harnesses and judges talk to; every provider returns one of these."""

    name: str
    """The spec string the client was opened with; recorded in run logs."""
    model: str
    context_window: int
    prices: Prices

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
    ) -> ChatResult:
        """Send one chat completion; raise ModelError when it fails for good."""
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


# -- usage ---------------------------------------------------------------------------------------


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def estimate_usage(messages: list[dict[str, Any]], text: str, prices: Prices) -> Usage:
    """Count tokens with ``dealroom.room.count_tokens`` when a provider reports none."""
    from dealroom.room import count_tokens

    inp = sum(count_tokens(_content_text(m.get("content"))) for m in messages)
    out = count_tokens(text)
    return Usage(input_tokens=inp, output_tokens=out, cost_usd=prices.cost(inp, 0, out), calls=1)


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else None


def parse_usage(raw: Any, prices: Prices) -> Usage | None:
    """Read an OpenAI-style ``usage`` object; ``None`` when absent or unusable.

    Cached tokens come from ``prompt_tokens_details.cached_tokens`` (or DeepSeek's
    ``prompt_cache_hit_tokens``). Cost is the provider's ``cost`` when reported (OpenRouter's
    ``cost_details.upstream_inference_cost`` when ``cost`` is 0), else the cache-aware prices.
    """
    if not isinstance(raw, dict) or _number(raw.get("prompt_tokens")) is None:
        return None
    inp = int(raw["prompt_tokens"])
    out = int(_number(raw.get("completion_tokens")) or 0)
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if _number(cached) is None:
        cached = raw.get("prompt_cache_hit_tokens")
    cached = min(int(_number(cached) or 0), inp)
    cost = _number(raw.get("cost"))
    upstream = raw.get("cost_details")
    if not cost and isinstance(upstream, dict):
        cost = _number(upstream.get("upstream_inference_cost")) or cost
    if cost is None:
        cost = prices.cost(inp, cached, out)
    return Usage(
        input_tokens=inp, cached_input_tokens=cached, output_tokens=out, cost_usd=cost, calls=1
    )


# -- shared endpoints ------------------------------------------------------------------------------


class _Endpoint:
    """One aiohttp session and one concurrency limit for a base_url within one event loop."""

    def __init__(self, concurrency: int) -> None:
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
        self.session = aiohttp.ClientSession(connector=connector)
        self.semaphore = asyncio.Semaphore(concurrency)
        self.limit = concurrency
        self.refs = 0

    def raise_limit(self, concurrency: int) -> None:
        """The limit is the largest any client of the endpoint asked for; it only grows."""
        for _ in range(concurrency - self.limit):
            self.semaphore.release()
        self.limit = max(self.limit, concurrency)


_ENDPOINTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Endpoint]] = (
    weakref.WeakKeyDictionary()
)


def _acquire(base_url: str, concurrency: int) -> _Endpoint:
    pool = _ENDPOINTS.setdefault(asyncio.get_running_loop(), {})
    endpoint = pool.get(base_url)
    if endpoint is None or endpoint.session.closed:
        endpoint = pool[base_url] = _Endpoint(concurrency)
    endpoint.raise_limit(concurrency)
    endpoint.refs += 1
    return endpoint


def endpoint_limit(base_url: str) -> int | None:
    """The concurrency limit now shared by clients of ``base_url`` in the running loop."""
    endpoint = _ENDPOINTS.get(asyncio.get_running_loop(), {}).get(base_url.rstrip("/"))
    return endpoint.limit if endpoint else None


# -- the client ----------------------------------------------------------------------------------


class _Retryable(Exception):
    def __init__(self, message: str, status: int | None = None, wait: float | None = None):
        super().__init__(message)
        self.status = status
        self.wait = wait


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def _error_message(raw: bytes) -> str:
    try:
        body = json.loads(raw)
        err = body.get("error", body) if isinstance(body, dict) else body
        message = err.get("message", err) if isinstance(err, dict) else err
        return str(message)[:500]
    except ValueError:
        return raw[:500].decode("utf-8", "replace")


class OpenAICompatibleClient:
    """Async client for any OpenAI-compatible ``/chat/completions`` endpoint.

    Clients for the same ``base_url`` share one aiohttp session and one semaphore per event
    loop. Open it with :func:`dealroom.models.open_model`; close it with ``aclose()`` or
    ``async with``.
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
        self.prices = spec.prices
        self.base_url = base
        self._url = f"{base}/chat/completions"
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._timeout = aiohttp.ClientTimeout(total=spec.timeout)
        self._extra = dict(spec.options.get("extra_body", {}))
        self._max_field = spec.options.get("max_tokens_field", "max_tokens")
        self._endpoint: _Endpoint | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _get_endpoint(self) -> _Endpoint:
        loop = asyncio.get_running_loop()
        if self._endpoint is None or self._loop is not loop or self._endpoint.session.closed:
            self._endpoint = _acquire(self.base_url, self.spec.concurrency)
            self._loop = loop
        return self._endpoint

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
    ) -> ChatResult:
        """POST one chat completion, retrying transient failures; see the module docstring."""
        payload: dict[str, Any] = {"model": self.model, "messages": messages}
        limit = max_tokens if max_tokens is not None else self.spec.max_output_tokens
        if limit is not None:
            payload[self._max_field] = limit
        if temperature is not None:
            payload["temperature"] = temperature
        if stop:
            payload["stop"] = stop
        payload.update(self._extra)
        data = json.dumps(payload).encode()
        endpoint = self._get_endpoint()
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._attempt(endpoint, data, messages, attempt)
            except _Retryable as exc:
                if attempt > self.spec.max_retries:
                    raise ModelError(
                        f"{exc} (gave up after {attempt} attempts)",
                        model=self.name,
                        status=exc.status,
                    ) from None
                await asyncio.sleep(exc.wait if exc.wait is not None else self._backoff(attempt))

    def _backoff(self, attempt: int) -> float:
        ceiling = min(MAX_BACKOFF_S, self.spec.backoff_s * 2 ** (attempt - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    async def _attempt(
        self, endpoint: _Endpoint, data: bytes, messages: list[dict[str, Any]], attempt: int
    ) -> ChatResult:
        async with endpoint.semaphore:
            start = time.perf_counter()
            try:
                async with endpoint.session.post(
                    self._url, data=data, headers=self._headers, timeout=self._timeout
                ) as resp:
                    raw = await resp.read()
                    status = resp.status
                    wait = _retry_after(resp.headers.get("Retry-After"))
            except TimeoutError:
                raise _Retryable(f"timed out after {self.spec.timeout:g}s") from None
            except aiohttp.ClientError as exc:
                raise _Retryable(f"connection error: {exc or type(exc).__name__}") from None
            latency = time.perf_counter() - start
        if status != 200:
            message = f"HTTP {status} from {self.base_url}: {_error_message(raw)}"
            if status in (408, 409, 429) or status >= 500:
                raise _Retryable(message, status, wait)
            raise ModelError(message, model=self.name, status=status)
        try:
            body = json.loads(raw)
            choice = body["choices"][0]
            text = _content_text(choice["message"].get("content"))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise _Retryable(f"malformed response body: {raw[:200]!r}", 200) from None
        usage = parse_usage(body.get("usage"), self.prices)
        estimated = usage is None
        if usage is None:
            usage = estimate_usage(messages, text, self.prices)
        return ChatResult(
            text=text,
            usage=usage,
            model=str(body.get("model") or self.model),
            finish_reason=str(choice.get("finish_reason") or "unknown"),
            latency_s=latency,
            usage_estimated=estimated,
            attempts=attempt,
            raw=body,
        )

    async def check(self) -> None:
        """Preflight: ``GET /models``, then a 1-token chat if the model is not listed."""
        source = self.spec.source or "the spec"
        key_hint = (
            f"set {self.spec.api_key_env} to a valid key"
            if self.spec.api_key_env
            else f"add api_key_env to [models.{self.name}] in {source}"
        )
        timeout = aiohttp.ClientTimeout(total=min(CHECK_TIMEOUT_S, self.spec.timeout))
        try:
            async with aiohttp.ClientSession(timeout=timeout) as session:
                async with session.get(f"{self.base_url}/models", headers=self._headers) as r:
                    status, raw = r.status, await r.read()
                if status in (401, 403):
                    raise ConfigError(
                        f"model '{self.name}': {self.base_url} rejected the API key "
                        f"(HTTP {status}): {key_hint}"
                    )
                if status == 200 and self.model in _listed_models(raw):
                    return
                probe = json.dumps(
                    {
                        "model": self.model,
                        "max_tokens": 1,
                        "messages": [{"role": "user", "content": "ping"}],
                    }
                )
                async with session.post(self._url, data=probe, headers=self._headers) as r:
                    chat_status, chat_raw = r.status, await r.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise ConfigError(
                f"model '{self.name}': cannot reach {self.base_url} "
                f"({exc or type(exc).__name__}): start the server there, or fix base_url in "
                f"{source}"
            ) from None
        if chat_status == 200:
            return
        if chat_status in (401, 403):
            raise ConfigError(
                f"model '{self.name}': {self.base_url} rejected the API key "
                f"(HTTP {chat_status}): {key_hint}"
            )
        served = ", ".join(sorted(_listed_models(raw))[:10]) or "unknown"
        raise ConfigError(
            f"model '{self.name}': {self.base_url} did not answer a 1-token chat for model "
            f"{self.model!r} (HTTP {chat_status}: {_error_message(chat_raw)}); the endpoint "
            f"serves: {served}. Fix `model` in {source} or the spec"
        )

    async def aclose(self) -> None:
        """Drop this client's hold on the shared session; the last one closes it."""
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is None:
            return
        endpoint.refs -= 1
        if endpoint.refs <= 0 and self._loop is asyncio.get_running_loop():
            pool = _ENDPOINTS.get(self._loop, {})
            if pool.get(self.base_url) is endpoint:
                del pool[self.base_url]
            await endpoint.session.close()

    async def __aenter__(self) -> OpenAICompatibleClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(name={self.name!r}, base_url={self.base_url!r})"


def _listed_models(raw: bytes) -> set[str]:
    try:
        data = json.loads(raw).get("data", [])
        return {str(m.get("id")) for m in data if isinstance(m, dict)}
    except (ValueError, AttributeError):
        return set()


def create(spec: ModelSpec) -> OpenAICompatibleClient:
    """Provider factory for ``openai``; reads the key from ``spec.api_key_env`` (secrets only)."""
    key = None
    if spec.api_key_env:
        key = os.environ.get(spec.api_key_env) or None
        if key is None and not spec.api_key_optional:
            where = f" (api_key_env of [models.{spec.name}] in {spec.source})"
            where = where if spec.source else ""
            raise ConfigError(
                f"model '{spec.name}' needs an API key: set the environment "
                f"variable {spec.api_key_env}{where}"
            )
    if not spec.base_url:
        raise ConfigError(f"model '{spec.name}' has no base_url: set base_url in the models file")
    return OpenAICompatibleClient(spec, api_key=key)
