"""The lean HTTP/1.1 client, against raw loopback servers that send exact bytes: framing
(length, chunks, to the close), kept-alive reuse, dropped connections, time-outs, bad replies."""

import asyncio
import random

import pytest

from dealroom.models._http import ConnectTimeout, HTTPPool, IdleTimeout, TransportError

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\": true}"


class RawServer:
    """Answers each request with the next script: a list of byte strings (floats: pauses in
    seconds, None: close the connection). Records the requests and the connections made."""

    def __init__(self, *scripts):
        self.scripts = list(scripts)
        self.requests: list[bytes] = []
        self.connections = 0

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _serve(self, reader, writer):
        self.connections += 1
        try:
            while self.scripts:
                head = await reader.readuntil(b"\r\n\r\n")
                size = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                             if line.lower().startswith(b"content-length:")), 0)
                self.requests.append(head + await reader.readexactly(size))
                for step in self.scripts.pop(0):
                    if step is None:
                        writer.close()
                        return
                    if isinstance(step, float):
                        await writer.drain()
                        await asyncio.sleep(step)
                    else:
                        writer.write(step)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


async def fetch(pool, body=b"{}", read=None, connect=None):
    async with pool.request("POST", "/v1/chat/completions", body,
                            {"Content-Type": "application/json"}, read=read,
                            connect=connect) as resp:
        return resp.status, resp.headers, b"".join([c async for c in resp.chunks()])


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_a_request_carries_its_head_and_body_and_the_reply_is_read_by_length():
    async def go():
        async with RawServer([OK]) as srv:
            pool = HTTPPool(srv.url)
            got = await fetch(pool, b'{"model": "m"}')
            await pool.close()
            return got, srv.requests[0]

    (status, headers, body), request = run(go())
    assert (status, body) == (200, b'{"a": true}')
    assert headers["content-type"] == "application/json"
    head, _, sent = request.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    assert "Content-Length: 14" in lines and sent == b'{"model": "m"}'
    assert any(line.startswith("Host: 127.0.0.1:") for line in lines)
    assert any(line.startswith("User-Agent: dealroom/") for line in lines)


CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream"
           b"\r\n\r\n5;ext=1\r\ndata:\r\n10\r\n 0123456789abcde\r\n0\r\nX-Trailer: t\r\n\r\n")


def test_chunked_replies_split_at_any_byte_give_the_same_body():
    rng = random.Random(5)
    cuts = [sorted(rng.sample(range(1, len(CHUNKED)), 6)) for _ in range(25)]
    cuts += [[n] for n in range(1, len(CHUNKED), 7)]

    def pieces(at):
        edges = [0, *at, len(CHUNKED)]
        return [CHUNKED[a:b] for a, b in zip(edges, edges[1:], strict=False)]

    async def go():
        scripts = [[piece for p in pieces(at) for piece in (p, 0.0)] for at in cuts]
        async with RawServer(*scripts) as srv:
            pool = HTTPPool(srv.url)
            bodies = [(await fetch(pool))[2] for _ in cuts]
            await pool.close()
            return bodies, srv.connections

    bodies, connections = run(go())
    assert set(bodies) == {b"data: 0123456789abcde"}
    assert connections == 1, "a chunked reply leaves the connection reusable"


def test_kept_alive_connections_are_reused_and_closed_ones_are_not():
    close = OK.replace(b"Content-Length", b"Connection: close\r\nContent-Length")

    async def go():
        async with RawServer([OK], [OK], [close], [OK]) as srv:
            pool = HTTPPool(srv.url)
            for _ in range(4):
                assert (await fetch(pool))[0] == 200
            await pool.close()
            return srv.connections

    assert run(go()) == 2


def test_a_reply_read_to_the_close_and_an_interim_100_are_handled():
    no_length = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + OK

    async def go():
        async with RawServer([no_length[:30], 0.01, no_length[30:], None], [interim]) as srv:
            pool = HTTPPool(srv.url)
            first, second = await fetch(pool), await fetch(pool)
            await pool.close()
            return first, second, srv.connections

    first, second, connections = run(go())
    assert first[2] == b"until the end" and second[2] == b'{"a": true}'
    assert connections == 2


def test_an_idle_connection_the_server_dropped_is_replaced_without_an_error():
    async def go():
        async with RawServer([OK, 0.05, None], [OK]) as srv:
            pool = HTTPPool(srv.url)
            await fetch(pool)
            await asyncio.sleep(0.2)  # the server has closed the kept-alive connection
            got = await fetch(pool)
            await pool.close()
            return got[0], srv.connections

    assert run(go()) == (200, 2)


def test_a_reused_connection_dropped_on_the_next_request_is_sent_again_on_a_new_one():
    async def go():
        async with RawServer([OK], [None], [OK]) as srv:
            pool = HTTPPool(srv.url)
            await fetch(pool)
            got = await fetch(pool)  # the server closes instead of answering, once
            await pool.close()
            return got[0], srv.connections, len(srv.requests)

    assert run(go()) == (200, 2, 3)


def test_a_connection_that_drops_before_or_during_the_reply_is_a_transport_error():
    async def go():
        errors = []
        for script in ([None], [OK[:-4], None], [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: "
                                                  b"chunked\r\n\r\n5\r\nab", None]):
            async with RawServer(script) as srv:
                pool = HTTPPool(srv.url)
                with pytest.raises(TransportError) as err:
                    await fetch(pool)
                errors.append(str(err.value))
                await pool.close()
        return errors

    before, during, mid_chunk = run(go())
    assert "before the reply" in before
    assert "in the middle of the reply" in during and "in the middle" in mid_chunk


@pytest.mark.parametrize("reply", [
    b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nX-Big: " + b"x" * 70_000,
])
def test_a_reply_that_is_not_http_is_a_clear_transport_error(reply):
    async def go():
        async with RawServer([reply, 0.5]) as srv:
            pool = HTTPPool(srv.url)
            with pytest.raises(TransportError) as err:
                await fetch(pool)
            await pool.close()
            return str(err.value)

    message = run(go())
    assert any(word in message for word in ("not an HTTP", "colon", "Content-Length",
                                             "chunk size", "headers over"))


def test_no_byte_within_the_read_time_out_is_an_idle_timeout():
    async def go():
        async with RawServer([OK[:20], 1.0, OK[20:]]) as srv:
            pool = HTTPPool(srv.url)
            with pytest.raises(IdleTimeout, match="no bytes for 0.2s"):
                await fetch(pool, read=0.2)
            await pool.close()

    run(go())


def test_a_tls_handshake_that_never_finishes_is_a_connect_timeout():
    async def go():
        async def silent(reader, writer):
            await asyncio.sleep(5)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        pool = HTTPPool(f"https://127.0.0.1:{port}/v1")
        with pytest.raises(ConnectTimeout, match="could not connect within 0.3s"):
            await fetch(pool, connect=0.3)
        await pool.close()
        server.close()

    run(go())


def test_a_refused_connection_names_the_address():
    async def go():
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        pool = HTTPPool(f"http://127.0.0.1:{port}")
        with pytest.raises(TransportError, match=f"cannot connect to 127.0.0.1:{port}"):
            await fetch(pool)

    run(go())


def test_only_http_urls_make_a_pool():
    with pytest.raises(ValueError, match="not an http"):
        HTTPPool("ftp://example.com/v1")
    assert HTTPPool("https://api.example.com/v1").authority == "api.example.com"
    assert HTTPPool("http://[::1]:8000/v1").authority == "[::1]:8000"


def _self_signed(tmp_path):
    """A certificate for 127.0.0.1 and its key, made here (the dev extra has cryptography)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dealroom test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_https_verifies_the_server_against_the_trusted_certificates(tmp_path, monkeypatch):
    import ssl

    cert_file, key_file = _self_signed(tmp_path)

    async def go(trusted):
        if trusted:
            monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert_file, key_file)

        async def answer(reader, writer):
            try:
                await reader.readuntil(b"\r\n\r\n")
                await reader.readexactly(2)
                writer.write(OK)
                await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
                pass
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
        pool = HTTPPool(f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1")
        try:
            return await fetch(pool)
        finally:
            await pool.close()
            server.close()

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
        run(go(trusted=False))
    status, _, body = run(go(trusted=True))
    assert (status, body) == (200, b'{"a": true}')


def test_a_redirect_is_not_followed_and_the_error_names_where_it_points():
    from dealroom.models import ProviderError, open_model
    from dealroom.models._spec import ModelSpec

    moved = (b"HTTP/1.1 308 Permanent Redirect\r\nLocation: https://api.example.com/v1/chat/"
             b"completions\r\nContent-Length: 0\r\n\r\n")

    async def go():
        async with RawServer([moved]) as srv:
            spec = ModelSpec(name="m", kind="openai", model="m", base_url=srv.url,
                             stream=False, max_retries=0)
            async with open_model(spec) as client:
                with pytest.raises(ProviderError) as err:
                    await client.chat([{"role": "user", "content": "hi"}])
            return err.value, len(srv.requests)

    error, requests = run(go())
    assert error.status == 308 and error.kind == "http" and requests == 1
    assert "redirected to https://api.example.com/v1/chat/completions" in str(error)


def test_a_reader_that_falls_behind_pauses_the_socket_and_still_gets_every_byte():
    size = 8 * 2**20
    big = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size + b"z" * size

    async def go():
        async with RawServer([big]) as srv:
            pool = HTTPPool(srv.url)
            paused, got = [], 0
            async with pool.request("POST", "/v1/x", b"{}", {}) as resp:
                await asyncio.sleep(0.3)  # the server sends everything meanwhile
                paused.append(resp._conn._paused)
                async for chunk in resp.chunks():
                    got += len(chunk)
            await pool.close()
            return paused[0], got

    paused, got = run(go())
    assert paused and got == size
