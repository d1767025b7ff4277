"""Fixtures for the network tests: a certificate authority made here, TLS contexts for the
loopback servers, and a real forwarding proxy (pproxy) on loopback."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class PKI:
    """PEM files: a CA, a server certificate for 127.0.0.1 it signed, a client certificate
    it signed, and a second CA that signed nothing here."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path

    def server_context(self, *, require_client: bool = False) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.server_cert, self.server_key)
        if require_client:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(self.ca)
        return context


def _write_pem(path: Path, cert, key=None) -> Path:
    from cryptography.hazmat.primitives import serialization

    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    if key is not None:
        path.with_suffix(".key").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))
    return path


def _certificate(subject: str, issuer=None, *, ca: bool = False, server: bool = False):
    """(certificate, key); self-signed when ``issuer`` (certificate, key) is None."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name, signer = (name, key) if issuer is None else (issuer[0].subject, issuer[1])
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
            encipher_only=False, decipher_only=False), critical=True)
        builder = builder.add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    else:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()),
            critical=False)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False)
    return builder.sign(signer, hashes.SHA256()), key


@pytest.fixture(scope="session")
def pki(tmp_path_factory) -> PKI:
    """A CA made for this test session, and what it signed."""
    folder = tmp_path_factory.mktemp("pki")
    ca = _certificate("dealroom test CA", ca=True)
    server = _certificate("127.0.0.1", ca, server=True)
    client = _certificate("dealroom test client", ca)
    other = _certificate("another CA", ca=True)
    return PKI(ca=_write_pem(folder / "ca.pem", ca[0]),
               server_cert=_write_pem(folder / "server.pem", *server),
               server_key=folder / "server.key",
               client_cert=_write_pem(folder / "client.pem", *client),
               client_key=folder / "client.key",
               other_ca=_write_pem(folder / "other-ca.pem", other[0]))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ForwardProxy:
    """pproxy forwarding HTTP and CONNECT on loopback; :meth:`log` lists what it forwarded."""

    def __init__(self, folder: Path, auth: str = "") -> None:
        pytest.importorskip("pproxy", reason="the proxy tests need pproxy (the dev extra)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._listen = self.url + (f"#{auth}" if auth else "")  # pproxy's user:password
        self._out = folder / f"pproxy-{self.port}.log"
        self._proc: subprocess.Popen | None = None

    def start(self) -> ForwardProxy:
        with self._out.open("wb") as out:
            self._proc = subprocess.Popen(
                [sys.executable, "-u", "-m", "pproxy", "-l", self._listen, "-v"],
                stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while "Serving on" not in self.log():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"pproxy did not start: {self.log()}")
            time.sleep(0.05)
        return self

    def log(self) -> str:
        return self._out.read_text(errors="replace") if self._out.exists() else ""

    def forwarded_to(self, port: int) -> int:
        """Connections it forwarded to 127.0.0.1:``port``."""
        return self.log().count(f"-> 127.0.0.1:{port}")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait(10)


@pytest.fixture
def forward_proxy(tmp_path):
    """A real forwarding proxy (pproxy) on 127.0.0.1, stopped after the test."""
    proxy = ForwardProxy(tmp_path).start()
    yield proxy
    proxy.stop()


@pytest.fixture
def proxy_with_password(tmp_path):
    """The same, asking for the credentials ``alice:s3cret``."""
    proxy = ForwardProxy(tmp_path, auth="alice:s3cret").start()
    yield proxy
    proxy.stop()
