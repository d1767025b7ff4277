"""Endpoints: the aiohttp session every OpenAI-compatible call of a model goes through.

    clients of one base_url with the same network settings, in one event loop
        ──▶ one Endpoint: an aiohttp ClientSession and a semaphore of ``concurrency`` slots
            (the largest any of its clients asked for; it only grows)
    the session's connector: at most ``concurrency`` connections, each kept alive
        KEEPALIVE_S after its last reply; DNS answers cached DNS_TTL_S; happy eyeballs
    the proxy (see ``_net``) is resolved once per endpoint, not per request; TLS context from
        the model's settings; no cookies, no redirects followed

aiohttp sends a POST once: a reused connection that drops under it is an error the client
counts as an attempt (its retry loop decides), never a silent re-send.
"""

from __future__ import annotations

import asyncio
import ssl
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.http_exceptions import ContentLengthError, HttpProcessingError
from yarl import URL

from dealroom import __version__
from dealroom.models._net import Route, route, ssl_context
from dealroom.models._rules import error_message, html_text, is_html

if TYPE_CHECKING:
    from aiohttp.abc import AbstractStreamWriter
    from multidict import CIMultiDictProxy

    from dealroom.models._spec import ModelSpec

KEEPALIVE_S = 4.0
"""Seconds an idle connection is kept for reuse: under the 5 s after which uvicorn (vLLM,
SGLang, llama-cpp-python's server) closes it, so a request never races the server's close."""
DNS_TTL_S = 300
USER_AGENT = f"dealroom/{__version__}"


def tls_for(spec: ModelSpec, base_url: str) -> ssl.SSLContext | None:
    """The TLS context ``spec``'s calls to ``base_url`` need (None for plain http); a bad CA
    bundle or client certificate is a ConfigError here, when the client opens."""
    way = route(spec, base_url)
    secure = urlsplit(base_url).scheme == "https" or (way.proxy or "").startswith("https:")
    return ssl_context(spec) if secure else None


def open_session(spec: ModelSpec, base_url: str, limit: int,
                 tls: ssl.SSLContext | None = None) -> tuple[aiohttp.ClientSession, Route]:
    """A session for ``spec``'s calls to ``base_url`` with at most ``limit`` connections and
    the TLS context ``tls`` (see :func:`tls_for`), and the route it takes (its proxy)."""
    way = route(spec, base_url)
    connector = aiohttp.TCPConnector(
        limit=limit, ttl_dns_cache=DNS_TTL_S, keepalive_timeout=KEEPALIVE_S,
        ssl=tls if tls is not None else True)
    session = aiohttp.ClientSession(
        connector=connector, proxy=way.proxy, trust_env=False,
        cookie_jar=aiohttp.DummyCookieJar(), headers={"User-Agent": USER_AGENT})
    return session, way


class Body(aiohttp.Payload):
    """A JSON request body that aiohttp writes after the head instead of joined onto it: on
    Python before 3.12.9 aiohttp coalesces the head and the first piece of the body with
    ``b"".join``, a copy of the whole body per request (0.05 ms of host CPU per 290 KB
    sub-call). The head leaves with the body's first byte; the rest is written as it is."""

    _autoclose = True

    def __init__(self, data: bytes) -> None:
        super().__init__(data, content_type="application/json")
        self._size = len(data)

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return bytes(self._value).decode(encoding, errors)

    async def as_bytes(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return bytes(self._value)

    async def write(self, writer: AbstractStreamWriter) -> None:
        await self.write_with_length(writer, None)

    async def write_with_length(self, writer: AbstractStreamWriter,
                                content_length: int | None) -> None:
        view = memoryview(self._value)[:content_length]
        await writer.write(view[:1])
        if len(view) > 1:
            await writer.write(view[1:])


class Endpoint:
    """One session and one concurrency limit for a base_url within one event loop."""

    def __init__(self, spec: ModelSpec, base_url: str, concurrency: int,
                 tls: ssl.SSLContext | None) -> None:
        self.session, self.route = open_session(spec, base_url, concurrency, tls)
        self.semaphore = asyncio.Semaphore(concurrency)
        self.limit = concurrency
        self.refs = 0
        self.cap: int | None = None
        """What the server computes at once, where it said (see :meth:`limit_to`)."""
        self._held: list[asyncio.Task[None]] = []

    @property
    def closed(self) -> bool:
        return self.session.closed

    def raise_limit(self, concurrency: int) -> None:
        """The limit is the largest any client of the endpoint asked for, up to the server's
        :attr:`cap`; it only grows."""
        if self.cap is not None:
            concurrency = min(concurrency, self.cap)
        for _ in range(concurrency - self.limit):
            self.semaphore.release()
        if concurrency > self.limit:
            # aiohttp has no setter; its connector reads the limit on every acquire, and no
            # request waits there (the semaphore admits at most the old limit)
            self.session.connector._limit = concurrency  # type: ignore[union-attr]
        self.limit = max(self.limit, concurrency)

    def limit_to(self, slots: int) -> None:
        """Keep at most ``slots`` requests open: the server computes no more at once, and a
        request queued inside it would spend its deadline waiting. Permits above ``slots`` are
        taken and held (as requests in flight finish), so the limit only shrinks here."""
        self.cap = slots if self.cap is None else min(self.cap, slots)
        if self.cap < self.limit:
            self._held.append(asyncio.ensure_future(self._hold(self.limit - self.cap)))
            self.limit = self.cap

    async def _hold(self, permits: int) -> None:
        for _ in range(permits):
            await self.semaphore.acquire()

    async def close(self) -> None:
        for task in self._held:
            task.cancel()
        await self.session.close()


_Key = tuple[Any, ...]
_ENDPOINTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_Key, Endpoint]] = (
    weakref.WeakKeyDictionary()
)


def _key(spec: ModelSpec, base_url: str) -> _Key:
    """Clients share an endpoint when they reach the same URL the same way."""
    return (base_url, spec.proxy, spec.ca_bundle, spec.client_cert, spec.client_key,
            spec.verify)


def acquire(spec: ModelSpec, base_url: str, tls: ssl.SSLContext | None) -> Endpoint:
    """The running loop's endpoint for ``spec`` at ``base_url``, held once more."""
    endpoints = _ENDPOINTS.setdefault(asyncio.get_running_loop(), {})
    key = _key(spec, base_url)
    endpoint = endpoints.get(key)
    if endpoint is None or endpoint.closed:
        endpoint = endpoints[key] = Endpoint(spec, base_url, spec.concurrency, tls)
    endpoint.raise_limit(spec.concurrency)
    endpoint.refs += 1
    return endpoint


async def release(spec: ModelSpec, base_url: str, endpoint: Endpoint) -> None:
    """Drop one hold on ``endpoint``; the last one closes its session."""
    endpoint.refs -= 1
    if endpoint.refs > 0:
        return
    endpoints = _ENDPOINTS.get(asyncio.get_running_loop(), {})
    key = _key(spec, base_url)
    if endpoints.get(key) is endpoint:
        del endpoints[key]
    await endpoint.close()


def endpoint_limit(base_url: str) -> int | None:
    """The concurrency limit now shared by clients of ``base_url`` in the running loop."""
    base_url = base_url.rstrip("/")
    for key, endpoint in _ENDPOINTS.get(asyncio.get_running_loop(), {}).items():
        if key[0] == base_url:
            return endpoint.limit
    return None


@dataclass
class Fetched:
    """A request's status, headers and body (its first ``limit`` bytes)."""

    status: int
    headers: CIMultiDictProxy[str]
    body: bytes


async def fetch(session: aiohttp.ClientSession, method: str, url: URL | str,
                body: bytes | None, headers: dict[str, str], limit: int,
                timeout: aiohttp.ClientTimeout | None = None) -> Fetched:
    """One request on ``session`` (for checks and probes): its reply, the body read up to
    ``limit`` bytes; redirects are not followed."""
    async with session.request(method, url, data=body, headers=headers, timeout=timeout,
                               allow_redirects=False) as resp:
        return Fetched(resp.status, resp.headers, await resp.content.read(limit))


def failure(exc: BaseException, way: Route) -> tuple[str, bool]:
    """What a connection-level failure was, in words, and whether asking again can help."""
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return f"cannot connect to {way.describe()}: {exc.os_error}", True
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return (f"{way.describe()} refused the connection: HTTP {exc.status} {exc.message}"
                + proxy_hint(exc.status, way), exc.status in (502, 503, 504))
    via = f" (through {way.describe()})" if way.proxy else ""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        trust = way.trust or "the CA certificates in use"
        fix = ("add the CA that signed it to that bundle, or give a bundle that has it with "
               "ca_bundle" if "(from" in trust or "ca_bundle" in trust else
               "give the CA that signed it with ca_bundle (or REQUESTS_CA_BUNDLE)")
        return (f"the server's TLS certificate is not trusted by {trust}{via}: "
                f"{exc.certificate_error}; {fix}", False)
    if isinstance(exc, aiohttp.ClientConnectorSSLError | ssl.SSLError):
        return f"TLS failed{via}: {exc}", True
    return f"connection error{via}: {exc or type(exc).__name__}", True


def not_http(exc: aiohttp.ClientResponseError | aiohttp.ClientPayloadError) -> str | None:
    """Why a reply that aiohttp could not parse is not HTTP/1.1 (bad framing, HTTP/0.9, an
    HTTP/2 preface, endless headers); None for an error the server's answer did not cause."""
    cause = exc.__cause__
    if not isinstance(cause, HttpProcessingError) or isinstance(cause, ContentLengthError):
        return None  # a body cut short is the connection's failure
    what = str(getattr(cause, "message", "") or cause or type(cause).__name__)
    lines = [line.strip() for line in what.splitlines() if line.strip(" ^")]
    return f"the reply is not valid HTTP/1.1: {' '.join(lines)[:200]}"


PROXY_PRODUCTS = ("tinyproxy", "squid", "privoxy", "pproxy", "polipo", "mitmproxy", "ziproxy",
                  "bluecoat", "zscaler", "cntlm", "trafficserver", "apache traffic server")
"""Proxies whose name in a reply's ``Server`` header or page shows that they wrote it."""


def proxy_reply(reply: Fetched, way: Route, base_url: str) -> str | None:
    """What a reply is, in words, when the forward proxy wrote it rather than the endpoint
    behind it (plain-HTTP requests go through the proxy without CONNECT, so its own answers
    come back as replies): a 407 or ``Proxy-Authenticate``, squid's ``X-Squid-Error``, a proxy's
    name in ``Server`` or in an HTML page, or a gateway error on an HTML page with ``Via``.
    None when the reply is the endpoint's, or no proxy is in the way."""
    if not way.proxy or reply.status == 200:
        return None
    headers = reply.headers
    text = reply.body[:65536].decode("utf-8", "replace")
    page = is_html(text)
    words = f"{headers.get('Server', '')} {html_text(text, 2000) if page else ''}".lower()
    product = next((p for p in PROXY_PRODUCTS if p in words), None)
    wants_credentials = reply.status == 407 or "Proxy-Authenticate" in headers
    if not (wants_credentials or product or "X-Squid-Error" in headers
            or (page and "Via" in headers and reply.status in (502, 503, 504))):
        return None
    said = error_message(reply.body)
    name = way.describe() + (f", {product}" if product else "")
    head = f"{name} answered instead of the model (HTTP {reply.status}: {said})"
    if wants_credentials:
        where = "proxy of the model" if way.source == "proxy" else way.source or "the proxy URL"
        return (f"{head}: it asks for credentials; give them in its URL "
                f"(http://user:password@host:port) in {where}")
    return (f"{head}: the proxy could not get an answer from {base_url}; check that the "
            "server is up and that the proxy can reach it, or bypass the proxy (add the host "
            "to NO_PROXY, or set proxy = \"\" for the model)")


def proxy_hint(status: int, way: Route) -> str:
    """What to do about a proxy's 407 (it wants credentials); "" otherwise."""
    if status != 407 or not way.proxy:
        return ""
    return (f" ({way.describe()} asks for credentials: give them in its URL, "
            "http://user:password@host:port)")
