"""``dealroom view --serve`` answers the viewer's own files to this machine's browser only: a
foreign ``Host`` (DNS rebinding) gets 421, a path out of the folder (``..``, a symlink placed
in it) 404, a malformed path (``%00``) 400, and none of them a traceback."""

from __future__ import annotations

import http.client
import os
import threading

import pytest

from dealroom.errors import InputError
from dealroom.report import make_server, write_trace


@pytest.fixture
def served(child_run, tmp_path):
    """A running server of a viewer folder that also holds a link to a secret outside it."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the answer key")
    out = write_trace(child_run, tmp_path / "view").parent
    os.symlink(secret, out / "data" / "leak.js")
    os.symlink(tmp_path, out / "up")
    server = make_server(out, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], out
    server.shutdown()
    server.server_close()


def get(port: int, path: str, host: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("GET", path, skip_host=True)
    conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
    conn.endheaders()
    reply = conn.getresponse()
    body = reply.read()
    conn.close()
    return reply.status, body


def test_only_local_host_names_with_the_served_port_are_answered(served):
    port, _ = served
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}",
                 f"LOCALHOST:{port}"):
        status, body = get(port, "/data/meta.js", host)
        assert status == 200 and body.startswith(b'DR.put("meta",'), host
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}",
                 f"127.0.0.1.evil.example:{port}", ""):
        status, body = get(port, "/data/meta.js", host)
        assert status == 421 and b"DR.put" not in body, host


def test_no_path_resolving_outside_the_folder_is_served(served):
    port, out = served
    assert get(port, "/")[0] == 200
    assert get(port, "/index.html")[0] == 200
    for path in ("/data/leak.js", "/up/secret.txt", "/../secret.txt", "/%2e%2e/secret.txt",
                 "/data/../../secret.txt", "//etc/passwd", "/data/", "/up/",
                 "/etc/passwd", "/data/nothing.js"):
        status, body = get(port, path)
        assert status == 404 and b"the answer key" not in body, path
    assert (out / "data" / "leak.js").read_text() == "the answer key"  # the link is there


def test_malformed_paths_get_400_without_a_traceback(served, capfd):
    port, _ = served
    for path in ("/data/meta.js%00", "/%00", "/data%5cmeta.js", "/%zz", "/%e9", "/a%"):
        status, body = get(port, path)
        assert status == 400, path
    status, _ = get(port, "/data/meta.js")
    assert status == 200
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("port", [99999, -1, 65536])
def test_a_port_out_of_range_is_an_input_error(child_run, tmp_path, port):
    with pytest.raises(InputError, match=f"--port {port} is not a port"):
        make_server(tmp_path, port)
