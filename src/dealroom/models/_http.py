"""A lean HTTP/1.1 client for one endpoint: what the model client sends its calls through.

    pool = HTTPPool("https://api.example.com/v1")
    async with pool.request("POST", "/v1/chat/completions", body, headers,
                            connect=10, read=None) as resp:
        resp.status, resp.headers.get("content-type")      # header names in lower case
        async for chunk in resp.chunks(): ...              # de-chunked body bytes

A request is a head built as one string, then the body as it is (never copied onto the head);
a reply is parsed from the bytes as they arrive (``Content-Length``, ``chunked`` or read to the
close). Connections are kept alive and reused; one the server closed while idle is noticed,
and a request whose reused connection drops before any byte of the reply is sent once more on
a fresh one. TLS verifies against the system's certificates. There are no proxies, cookies,
redirects or compression: an OpenAI-compatible API needs none, and each costs CPU on every
call. At wide fan-out this spends about 0.1 ms of host CPU per 290 KB POST where aiohttp
spends 0.2 ms (``benchmarks/bench_http.py``).
"""

from __future__ import annotations

import asyncio
import collections
import re
import socket
import ssl
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from dealroom import __version__

DNS_TTL_S = 300.0
MAX_HEAD_BYTES = 64 * 1024
MAX_PENDING_READS = 16
"""Socket reads (at most 256 KB each) held for a reader that is behind, before reading pauses."""
USER_AGENT = f"dealroom/{__version__}"


class ConnectTimeout(TimeoutError):
    """No connection (TCP and TLS) within the connect time-out."""


class IdleTimeout(TimeoutError):
    """No byte of the reply within the read (idle) time-out."""


class TransportError(ConnectionError):
    """The connection failed or closed, or the reply is not HTTP/1.x."""


class Response:
    """The status and headers of a reply, and its body as it arrives."""

    def __init__(self, conn: _Connection, read: float | None) -> None:
        self._conn, self._read = conn, read
        self.status: int = conn.status
        self.headers: dict[str, str] = conn.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes, piece by piece, until its end."""
        while chunk := await self._conn.next_chunk(self._read):
            yield chunk

    async def read(self, limit: int | None = None) -> bytes:
        """The body (its first ``limit`` bytes; the rest is not waited for)."""
        parts, size = [], 0
        async for chunk in self.chunks():
            parts.append(chunk)
            size += len(chunk)
            if limit is not None and size >= limit:
                break
        return b"".join(parts)[:limit]


class _Connection(asyncio.Protocol):
    """One socket: writes a request, parses its reply into a status, headers and chunks."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.transport: asyncio.Transport | None = None
        self.status = 0
        self.headers: dict[str, str] = {}
        self.keep_alive = False
        self.done = False
        self._buf = bytearray()
        self._body: collections.deque[bytes] = collections.deque()
        self._state = "idle"  # head, length, chunk-size, chunk, chunk-end, trailer, to-close, done
        self._left = 0
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.received = 0
        self._paused = False

    # -- the caller's side --------------------------------------------------------------------
    def send(self, head: bytes, body: bytes) -> None:
        """Write one request and wait for its reply from here on."""
        if self.transport is None or self.transport.is_closing():
            raise TransportError("the connection is closed")
        self.status, self.headers, self.done, self.received = 0, {}, False, 0
        self._state, self._error = "head", None
        self._buf.clear()
        self._body.clear()
        if self._paused:  # the last reply was left unread: this one must be read
            self._paused = False
            self.transport.resume_reading()
        self.transport.write(head)
        if body:
            self.transport.write(body)  # not joined to the head: no copy of a large body

    async def head(self, read: float | None) -> None:
        """Wait until the status line and headers are in."""
        while self._state == "head":
            await self._wait(read)

    async def next_chunk(self, read: float | None) -> bytes:
        """The body's bytes received since the last call (waiting for some), ``b""`` at its end."""
        while True:
            if self._body:
                body = self._body
                piece = body.popleft() if len(body) == 1 else b"".join(body)
                body.clear()
                if self._paused and self.transport is not None:
                    self._paused = False
                    self.transport.resume_reading()
                return piece
            if self.done:
                return b""
            await self._wait(read)

    async def _wait(self, read: float | None) -> None:
        if self._error is not None:
            raise self._error
        self._waiter = self._loop.create_future()
        try:
            if read is None:
                await self._waiter
            else:
                try:
                    await asyncio.wait_for(self._waiter, read)
                except TimeoutError:
                    raise IdleTimeout(f"no bytes for {read:g}s") from None
        finally:
            self._waiter = None
        if self._error is not None and not self._body and not self.done:
            raise self._error

    def usable(self) -> bool:
        """Idle, open and kept alive: fit to carry the next request."""
        return (self.done and self.keep_alive and self.transport is not None
                and not self.transport.is_closing())

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    # -- the event loop's side ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        if self._state == "to-close":
            self._finish()
        elif self._state not in ("idle", "done"):
            where = "before the reply" if self._state == "head" else "in the middle of the reply"
            self._fail(TransportError(f"the server closed the connection {where}"
                                      + (f" ({exc})" if exc else "")))
        self.keep_alive = False
        self._wake()

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        if self._state in ("idle", "done"):
            self._fail(TransportError("the server sent bytes no request asked for"))
            self.close()
            return
        self._buf += data
        try:
            self._parse()
        except TransportError as exc:
            self._fail(exc)
            self.close()
        if len(self._body) >= MAX_PENDING_READS and not self._paused and self.transport:
            self._paused = True  # the reader is behind: stop reading until it catches up
            self.transport.pause_reading()
        self._wake()

    # -- parsing ------------------------------------------------------------------------------
    def _parse(self) -> None:
        while self._buf and self._state not in ("done", "idle"):
            if not _STEPS[self._state](self):
                return

    def _on_head(self) -> bool:
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buf) > MAX_HEAD_BYTES:
                raise TransportError(f"reply headers over {MAX_HEAD_BYTES:,} bytes")
            return False
        lines = bytes(self._buf[:end]).decode("latin-1").split("\r\n")
        del self._buf[:end + 4]
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise TransportError(f"not an HTTP/1.x reply: {lines[0][:80]!r}")
        status = int(code)
        if 100 <= status < 200:
            return True  # an interim reply (100 Continue, 103 Early Hints): the real one follows
        self.status, self.headers = status, _headers(lines[1:])
        self._frame(version)
        return True

    def _frame(self, version: str) -> None:
        """How the body ends: a length, chunks, the close, or no body at all."""
        headers = self.headers
        connection = headers.get("connection", "").lower()
        self.keep_alive = "close" not in connection and (
            version != "HTTP/1.0" or "keep-alive" in connection)
        if self.status in (204, 304):  # never a body, whatever the headers say
            self._finish()
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._state = "chunk-size"
        elif "content-length" in headers:
            try:
                self._left = int(headers["content-length"])
            except ValueError:
                raise TransportError(
                    f"bad Content-Length {headers['content-length']!r}") from None
            self._state = "length"
            if self._left == 0:
                self._finish()
        else:
            self._state, self.keep_alive = "to-close", False

    def _on_length(self) -> bool:
        piece = bytes(self._buf[:self._left])
        del self._buf[:self._left]
        self._left -= len(piece)
        self._body.append(piece)
        if self._left == 0:
            self._finish()
        return True

    def _on_chunked(self) -> bool:
        """Every whole piece of a chunked body in the buffer, in one pass over it."""
        buf, pos, pieces = self._buf, 0, []
        with memoryview(buf) as view:
            while pos < len(buf) and self._state != "done":
                pos, more = self._chunk_step(buf, view, pos, pieces)
                if not more:
                    break
        del buf[:pos]
        if pieces:
            self._body.append(b"".join(pieces))
        if self._state == "done":
            self._finish()  # here, not in the loop: the buffer cannot shrink under a view
        return self.done

    def _chunk_step(self, buf: bytearray, view: memoryview, pos: int,
                    pieces: list[bytes]) -> tuple[int, bool]:
        """One step from ``pos``: (the position after it, whether it could be taken)."""
        state = self._state
        if state == "chunk":
            stop = min(len(buf), pos + self._left)
            pieces.append(bytes(view[pos:stop]))
            self._left -= stop - pos
            if not self._left:
                self._state = "chunk-end"
            return stop, True
        if state == "chunk-end":
            if len(buf) - pos < 2:
                return pos, False
            if buf[pos:pos + 2] != b"\r\n":
                raise TransportError("a chunk does not end with CRLF")
            self._state = "chunk-size"
            return pos + 2, True
        if state == "chunk-size" and (match := _CHUNK_SIZE.match(buf, pos)):
            size, start = int(match[1], 16), match.end()
        else:
            end = buf.find(b"\r\n", pos)
            if end < 0:
                if len(buf) - pos > MAX_HEAD_BYTES:
                    raise TransportError(f"a chunk header or trailer over {MAX_HEAD_BYTES:,} "
                                         "bytes")
                return pos, False
            if state == "chunk-size":
                raise TransportError(f"bad chunk size {bytes(view[pos:end])[:20]!r}")
            if end == pos:  # the empty line after the trailers
                self._state = "done"
            return end + 2, True
        if size and buf[start + size:start + size + 2] == b"\r\n":  # the whole chunk is in
            pieces.append(bytes(view[start:start + size]))
            return start + size + 2, True
        self._left = size
        self._state = "chunk" if size else "trailer"
        return start, True

    def _on_to_close(self) -> bool:
        self._body.append(bytes(self._buf))
        self._buf.clear()
        return False

    def _finish(self) -> None:
        self._state, self.done = "done", True
        if self._buf:  # bytes past the reply's end: the connection cannot be trusted again
            self.keep_alive = False
            self._buf.clear()

    def _fail(self, exc: BaseException) -> None:
        if self._error is None and not self.done:
            self._error = exc

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


_CHUNK_SIZE = re.compile(rb"[ \t]*([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r\n")
"""A chunk's size line: hex digits, then extensions, which are ignored."""
_STEPS = {"head": _Connection._on_head, "length": _Connection._on_length,
          "chunk-size": _Connection._on_chunked, "chunk": _Connection._on_chunked,
          "chunk-end": _Connection._on_chunked, "trailer": _Connection._on_chunked,
          "to-close": _Connection._on_to_close}
"""The parser's step for each state, as it reads the bytes received so far."""


def _headers(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep:
            raise TransportError(f"a header line without a colon: {line[:80]!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


class HTTPPool:
    """Kept-alive connections to one ``http``/``https`` origin, made as they are needed."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = self.port == (443 if parts.scheme == "https" else 80)
        self.authority = host if default else f"{host}:{self.port}"
        self._ssl = ssl.create_default_context() if parts.scheme == "https" else None
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._addrs: tuple[float, list[Any]] | None = None
        self.closed = False

    def head(self, method: str, path: str, size: int, headers: dict[str, str]) -> bytes:
        """The request line and headers for a body of ``size`` bytes."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.authority}",
                 f"User-Agent: {USER_AGENT}", "Accept: */*"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if method != "GET" or size:
            lines.append(f"Content-Length: {size}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    @asynccontextmanager
    async def request(self, method: str, path: str, body: bytes | None,
                      headers: dict[str, str], *, connect: float | None = None,
                      read: float | None = None) -> AsyncIterator[Response]:
        """Send one request; yield its reply once its head is in. ``read``: the longest wait
        for any byte of the reply (None: no limit); ``connect``: for a new connection."""
        body = body or b""
        conn = await self._exchange(self.head(method, path, len(body), headers), body,
                                    connect, read)
        try:
            yield Response(conn, read)
        except BaseException:
            self._discard(conn)
            raise
        if conn.usable() and not self.closed:
            self._idle.append(conn)
        else:
            self._discard(conn)

    async def _exchange(self, head: bytes, body: bytes, connect: float | None,
                        read: float | None) -> _Connection:
        """Write the request and wait for the reply's head: on an idle connection, and once
        more on a new one when the idle one turns out dropped before any byte came back."""
        conn: _Connection | None = self._take_idle()
        while True:
            reused = conn is not None
            conn = conn or await self._connect(connect)
            try:
                conn.send(head, body)
                await conn.head(read)
                return conn
            except TransportError:
                self._discard(conn)
                if not reused or conn.received:
                    raise
            except BaseException:
                self._discard(conn)
                raise
            conn = None

    def _take_idle(self) -> _Connection | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                return conn
            self._discard(conn)
        return None

    async def _connect(self, timeout: float | None) -> _Connection:
        if self.closed:
            raise TransportError("the connection pool is closed")
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                addrs = await self._resolve(loop)
                error: OSError | None = None
                for family, _, proto, _, address in addrs:
                    try:
                        _, conn = await loop.create_connection(
                            lambda: _Connection(loop), address[0], address[1], family=family,
                            proto=proto, ssl=self._ssl,
                            server_hostname=self.host if self._ssl else None)
                        break
                    except OSError as exc:
                        error = exc
                else:
                    raise TransportError(f"cannot connect to {self.authority}: {error}")
        except TimeoutError:
            raise ConnectTimeout(f"could not connect within {timeout:g}s") from None
        self._open.add(conn)
        return conn

    async def _resolve(self, loop: asyncio.AbstractEventLoop) -> list[Any]:
        """The host's addresses, looked up once every :data:`DNS_TTL_S`."""
        if self._addrs is not None and time.monotonic() - self._addrs[0] < DNS_TTL_S:
            return self._addrs[1]
        try:
            addrs = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise TransportError(f"cannot resolve {self.host}: {exc}") from None
        self._addrs = (time.monotonic(), addrs)
        return addrs

    def _discard(self, conn: _Connection) -> None:
        conn.close()
        self._open.discard(conn)

    async def close(self) -> None:
        """Close every connection; the pool takes no more requests."""
        self.closed = True
        for conn in list(self._open):
            self._discard(conn)
        self._idle.clear()
        await asyncio.sleep(0)  # let the transports finish closing
