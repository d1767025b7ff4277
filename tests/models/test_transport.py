"""The client on its HTTP library, against raw loopback servers that send exact bytes:
kept-alive reuse and its expiry, the connection limit, attempts counted (a POST is never
re-sent unseen), redirects, compressed and broken replies."""

import asyncio
import gzip
import json

import pytest

import dealroom.models._endpoint as endpoint_module
from dealroom.models import ModelSpec, ProviderError, open_model

HELLO = [{"role": "user", "content": "hi"}]
BODY = json.dumps({"model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant",
                                                          "content": "ok"}}]}).encode()
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
    len(BODY), BODY)


class RawServer:
    """Answers each request with the next script: a list of byte strings (floats: pauses in
    seconds, None: close the connection). Counts the requests and the connections made."""

    def __init__(self, *scripts):
        self.scripts = list(scripts)
        self.requests = 0
        self.connections = 0
        self.open = 0
        self.most_open = 0

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _serve(self, reader, writer):
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            while self.scripts:
                head = await reader.readuntil(b"\r\n\r\n")
                size = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                             if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(size)
                self.requests += 1
                for step in self.scripts.pop(0):
                    if step is None:
                        return
                    if isinstance(step, float):
                        await writer.drain()
                        await asyncio.sleep(step)
                    else:
                        writer.write(step)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open -= 1
            writer.close()


def spec(url: str, **changes) -> ModelSpec:
    base = {"name": "m", "kind": "openai", "model": "m", "base_url": url, "stream": False,
            "backoff_s": 0.01, "hedge": 0.0}
    return ModelSpec(**{**base, **changes})


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_kept_alive_connections_are_reused():
    async def go():
        async with RawServer([OK], [OK], [OK]) as srv, open_model(spec(srv.url)) as client:
            results = [await client.chat(HELLO) for _ in range(3)]
            return [r.attempts for r in results], srv.connections

    assert run(go()) == ([1, 1, 1], 1)


def test_an_idle_connection_past_the_keep_alive_expiry_is_not_reused(monkeypatch):
    monkeypatch.setattr(endpoint_module, "KEEPALIVE_S", 0.2)

    async def go():
        async with RawServer([OK], [OK]) as srv, open_model(spec(srv.url)) as client:
            await client.chat(HELLO)
            await asyncio.sleep(0.5)  # the server still holds it open; the client gives it up
            result = await client.chat(HELLO)
            return result.attempts, srv.connections

    assert run(go()) == (1, 2)


def test_an_idle_connection_the_server_closed_is_replaced_without_an_error():
    async def go():
        async with RawServer([OK, 0.05, None], [OK]) as srv, \
                open_model(spec(srv.url)) as client:
            await client.chat(HELLO)
            await asyncio.sleep(0.3)  # the server has closed the kept-alive connection
            result = await client.chat(HELLO)
            return result.attempts, srv.connections

    assert run(go()) == (1, 2)


def test_a_post_dropped_on_a_reused_connection_is_counted_as_an_attempt():
    async def go():
        async with RawServer([OK], [None], [OK]) as srv, open_model(spec(srv.url)) as client:
            await client.chat(HELLO)
            result = await client.chat(HELLO)  # the server reads it, then closes, once
            return result.attempts, srv.requests

    attempts, requests = run(go())
    assert requests == 3 and attempts == 2, "the request that reached the server counts"


def test_with_no_retries_left_a_dropped_post_is_an_error_not_a_re_send():
    async def go():
        async with RawServer([OK], [None], [OK]) as srv, \
                open_model(spec(srv.url, max_retries=0)) as client:
            await client.chat(HELLO)
            with pytest.raises(ProviderError) as err:
                await client.chat(HELLO)
            return err.value, srv.requests

    error, requests = run(go())
    assert requests == 2 and error.kind == "connection" and error.attempts == 1


def test_connections_to_an_endpoint_are_at_most_its_concurrency():
    async def go():
        async with RawServer(*[[0.05, OK]] * 12) as srv, \
                open_model(spec(srv.url, concurrency=3)) as client:
            await asyncio.gather(*[client.chat(HELLO) for _ in range(12)])
            return srv.connections, srv.most_open

    connections, most_open = run(go())
    assert connections == 3 and most_open == 3


def test_a_redirect_is_not_followed_and_the_error_names_where_it_points():
    moved = (b"HTTP/1.1 308 Permanent Redirect\r\nLocation: https://api.example.com/v1/chat/"
             b"completions\r\nContent-Length: 0\r\n\r\n")

    async def go():
        async with RawServer([moved]) as srv, \
                open_model(spec(srv.url, max_retries=0)) as client:
            with pytest.raises(ProviderError) as err:
                await client.chat(HELLO)
            return err.value, srv.requests

    error, requests = run(go())
    assert error.status == 308 and error.kind == "http" and requests == 1
    assert "redirected to https://api.example.com/v1/chat/completions" in str(error)


def test_a_compressed_reply_is_decoded():
    packed = gzip.compress(BODY)
    reply = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
             b"Content-Length: %d\r\n\r\n%s" % (len(packed), packed))

    async def go():
        async with RawServer([reply]) as srv, open_model(spec(srv.url)) as client:
            return await client.chat(HELLO)

    assert run(go()).text == "ok"


@pytest.mark.parametrize("reply, kind", [
    (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "protocol"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n", "protocol"),
    (OK[:-4], "connection"),
])
def test_a_reply_that_is_not_http_is_a_protocol_error_and_a_cut_one_a_connection_error(
        reply, kind):
    async def go():
        async with RawServer([reply, None]) as srv, \
                open_model(spec(srv.url, max_retries=0)) as client:
            with pytest.raises(ProviderError) as err:
                await client.chat(HELLO)
            return err.value

    assert run(go()).kind == kind


def test_the_connection_limit_grows_with_the_endpoints_concurrency():
    async def go():
        async with RawServer(*[[0.05, OK]] * 12) as srv:
            a = open_model(spec(srv.url, concurrency=2))
            b = open_model(spec(srv.url, name="other", concurrency=4))
            await a.chat(HELLO)
            await asyncio.gather(*[b.chat(HELLO) for _ in range(8)])
            limit = b._endpoint.session.connector.limit
            await a.aclose()
            await b.aclose()
            return limit, srv.most_open

    assert run(go()) == (4, 4)


def test_a_tls_handshake_that_never_finishes_is_a_connect_timeout():
    async def go():
        async def silent(reader, writer):
            await asyncio.sleep(5)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        try:
            async with open_model(spec(url, connect_timeout=0.3, max_retries=0)) as client:
                with pytest.raises(ProviderError) as err:
                    await client.chat(HELLO)
            return err.value
        finally:
            server.close()

    error = run(go())
    assert error.kind == "timeout" and "could not connect within 0.3s" in str(error)


def test_a_refused_connection_names_the_address():
    async def go():
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        async with open_model(spec(f"http://127.0.0.1:{port}/v1", max_retries=0)) as client:
            with pytest.raises(ProviderError) as err:
                await client.chat(HELLO)
        return err.value, port

    error, port = run(go())
    assert error.kind == "connection" and f"127.0.0.1:{port}" in str(error)
