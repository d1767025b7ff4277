"""A model's network settings: which proxy, which certificates, which extra headers.

    setting       models file                       default
    proxy         proxy = "http://proxy:3128"        HTTPS_PROXY / HTTP_PROXY by the URL's
                  (a spec: #proxy=...; "" : none)    scheme, lower case first; NO_PROXY bypasses
    trust         ca_bundle = "corp-ca.pem"          REQUESTS_CA_BUNDLE, else SSL_CERT_FILE /
                                                     SSL_CERT_DIR, else the system's
    identity      client_cert, client_key            none (mutual TLS when given)
    verify        verify = false                     true (false is warned about, once)
    headers       headers = {X-Org = "${ORG_TOKEN}"} none; never recorded

Paths in a models file are relative to its folder. ``${NAME}`` in a header value is the
environment variable NAME, read when the client opens, so secrets stay out of files; headers
are left out of :meth:`ModelSpec.to_dict <dealroom.models.ModelSpec.to_dict>` and every
record. The transport (``_endpoint``) asks this module for the proxy, the TLS context and the
headers of each endpoint.
"""

from __future__ import annotations

import os
import re
import ssl
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from dealroom.errors import ConfigError

if TYPE_CHECKING:
    from dealroom.models._spec import ModelSpec

NET_KEYS = ("proxy", "ca_bundle", "client_cert", "client_key", "verify", "headers")
"""The models-file keys (and ``ModelSpec`` fields) this module reads."""
_PATHS = ("ca_bundle", "client_cert", "client_key")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
"""An HTTP header name (RFC 9110 token)."""
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_OWNED = {"host", "content-length", "transfer-encoding", "connection", "content-type"}
"""Headers the transport writes itself; a models file cannot replace them."""
_warned: set[str] = set()


@dataclass(frozen=True)
class Route:
    """How an endpoint is reached: the proxy (None: directly) and where it was set."""

    proxy: str | None
    source: str = ""
    """``HTTPS_PROXY`` (the variable's name as set), ``proxy`` (the spec), or ""."""

    def describe(self) -> str:
        """``the proxy http://proxy:3128 (from HTTPS_PROXY)``, credentials hidden."""
        return f"the proxy {redact(self.proxy or '')}" + (
            f" (from {self.source})" if self.source else "")


# -- reading and checking the settings ------------------------------------------------------------


def file_settings(table: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The network settings of a models-file table, paths made absolute against ``folder``."""
    out: dict[str, Any] = {k: table[k] for k in NET_KEYS if k in table}
    for key in _PATHS:
        if key in out:
            path = Path(out[key]).expanduser()
            out[key] = str(path if path.is_absolute() else (folder / path).resolve())
    if "headers" in out:
        out["headers"] = dict(out["headers"])
    return out


def check_settings(where: str, proxy: str | None = None, ca_bundle: str | None = None,
                   client_cert: str | None = None, client_key: str | None = None,
                   verify: bool = True, headers: dict[str, Any] | None = None) -> None:
    """Raise a ConfigError naming the setting that cannot work, and what to write instead."""
    if proxy:
        parts = urlsplit(proxy)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"{where}: proxy must be an http:// or https:// URL such as "
                              f"http://proxy.example.com:3128 (or \"\" for none), got {proxy!r}")
    if not isinstance(verify, bool):
        raise ConfigError(f"{where}: verify must be true or false, got {verify!r}")
    if client_key and not client_cert:
        raise ConfigError(f"{where}: client_key needs client_cert (the certificate it signs)")
    for key, value in (("ca_bundle", ca_bundle), ("client_cert", client_cert),
                       ("client_key", client_key)):
        if value is not None and not Path(value).is_file():
            raise ConfigError(f"{where}: {key} {value} is not a file: give the path of a PEM "
                              "file (relative to the models file's folder)")
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not _TOKEN.match(name):
            raise ConfigError(f"{where}: header name {name!r} is not an HTTP header name")
        if name.lower() in _OWNED:
            raise ConfigError(f"{where}: header {name} is set by dealroom itself; remove it")
        if not isinstance(value, str) or "\r" in value or "\n" in value:
            raise ConfigError(f"{where}: header {name} must be a one-line string, e.g. "
                              "\"${ORG_TOKEN}\" to send that environment variable")


def redact(url: str) -> str:
    """The URL with its password (if any) replaced by ``***``.

    >>> redact("http://me:secret@proxy:3128")
    'http://me:***@proxy:3128'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


# -- what the transport asks --------------------------------------------------------------------


def route(spec: ModelSpec, url: str) -> Route:
    """The proxy for ``url``: the spec's (``""``: none), else the environment's."""
    if spec.proxy is not None:
        return Route(spec.proxy or None, "proxy" if spec.proxy else "")
    return env_route(url)


def env_route(url: str) -> Route:
    """The proxy the environment sets for ``url`` as curl and requests read it: ``https_proxy``
    or ``HTTPS_PROXY`` (``http_...`` for http URLs; lower case first), unless ``no_proxy`` or
    ``NO_PROXY`` names the host (a suffix, ``*`` for all)."""
    parts = urlsplit(url)
    for name in (f"{parts.scheme}_proxy", f"{parts.scheme.upper()}_PROXY"):
        if name in os.environ:
            proxy = os.environ[name].strip()
            break
    else:
        return Route(None)
    no_proxy = os.environ.get("no_proxy", os.environ.get("NO_PROXY", ""))
    host = parts.hostname or ""
    if not proxy or (no_proxy and urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
            host, {"no": no_proxy})):
        return Route(None)
    return Route(proxy if "://" in proxy else f"http://{proxy}", name)


def ssl_context(spec: ModelSpec) -> ssl.SSLContext:
    """The TLS context of a model: its CA bundle (else ``REQUESTS_CA_BUNDLE``, else OpenSSL's
    ``SSL_CERT_FILE``/``SSL_CERT_DIR`` and the system's), its client certificate, and
    ``verify``."""
    where = f"model '{spec.name}'"
    cafile = spec.ca_bundle or os.environ.get("REQUESTS_CA_BUNDLE") or None
    try:
        context = ssl.create_default_context(cafile=cafile)
    except (OSError, ssl.SSLError) as exc:
        what = "ca_bundle" if spec.ca_bundle else "REQUESTS_CA_BUNDLE"
        raise ConfigError(f"{where}: cannot load the CA certificates of {what} {cafile}: "
                          f"{exc}; give a PEM file of CA certificates") from None
    if spec.client_cert:
        try:
            context.load_cert_chain(spec.client_cert, spec.client_key)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"{where}: cannot load client_cert {spec.client_cert}"
                              + (f" with client_key {spec.client_key}" if spec.client_key else "")
                              + f": {exc}; give PEM files of the certificate and its key, "
                              "unencrypted") from None
    if not spec.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        warn_unverified(spec)
    return context


def warn_unverified(spec: ModelSpec) -> None:
    """Say once per model, on stderr, that its certificates are not checked."""
    if spec.name in _warned:
        return
    _warned.add(spec.name)
    where = f" in {spec.source}" if spec.source else ""
    print(f"warning: model '{spec.name}': verify = false{where}, so the server's TLS "
          "certificate is not checked and anyone on the path can read and change its "
          "traffic; give its CA with ca_bundle instead", file=sys.stderr)


def expand_headers(spec: ModelSpec) -> dict[str, str]:
    """The spec's extra headers with each ``${NAME}`` replaced by that environment variable."""

    def value(name: str, template: str) -> str:
        def lookup(match: re.Match[str]) -> str:
            variable = match[1]
            if variable not in os.environ:
                where = f" in {spec.source}" if spec.source else ""
                raise ConfigError(f"model '{spec.name}': header {name} needs the environment "
                                  f"variable {variable}{where}: set it")
            return os.environ[variable]

        text = _VARIABLE.sub(lookup, template)
        if "\r" in text or "\n" in text:
            raise ConfigError(f"model '{spec.name}': header {name} holds a line break")
        return text

    return {name: value(name, template) for name, template in spec.headers.items()}
