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
headers of each endpoint. :func:`add_spec_secrets` hands the secrets a spec uses (its key,
header values, proxy and URL passwords) to :mod:`dealroom._util.redact`, so every file the
process writes leaves them out, whatever an endpoint echoes.
"""

from __future__ import annotations

import ipaddress
import os
import re
import ssl
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from dealroom._util.redact import add_secret
from dealroom.errors import ConfigError

if TYPE_CHECKING:
    from dealroom.models._spec import ModelSpec

NET_KEYS = ("proxy", "ca_bundle", "client_cert", "client_key", "verify", "headers")
"""The models-file keys (and ``ModelSpec`` fields) this module reads."""
_PATHS = ("ca_bundle", "client_cert", "client_key")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
"""An HTTP header name (RFC 9110 token)."""
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                    "ALL_PROXY")
"""The environment's proxy URLs, whose passwords are secrets."""
_OWNED = {"host", "content-length", "transfer-encoding", "connection", "content-type"}
"""Headers the transport writes itself; a models file cannot replace them."""
_warned: set[str] = set()


@dataclass(frozen=True)
class Route:
    """How an endpoint is reached: the proxy (None: directly) and where it was set."""

    proxy: str | None
    source: str = ""
    """``HTTPS_PROXY`` (the variable's name as set), ``proxy`` (the spec), or ""."""
    trust: str = ""
    """The CA certificates checked against, in words (see :func:`trust_store`)."""

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
        way = Route(spec.proxy or None, "proxy" if spec.proxy else "")
    else:
        way = env_route(url)
    return Route(way.proxy, way.source, trust_store(spec))


def trust_store(spec: ModelSpec) -> str:
    """The CA certificates a model's TLS is checked against, in words: its ``ca_bundle``,
    else ``REQUESTS_CA_BUNDLE``, else OpenSSL's ``SSL_CERT_FILE``/``SSL_CERT_DIR``, else the
    system's."""
    if spec.ca_bundle:
        where = f" of [models.{spec.name}] in {spec.source}" if spec.source else ""
        return f"the CA bundle {spec.ca_bundle} (ca_bundle{where})"
    for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        if os.environ.get(name):
            return f"the CA certificates in {os.environ[name]} (from {name})"
    return "the system's CA certificates"


def env_route(url: str) -> Route:
    """The proxy the environment sets for ``url`` as curl and requests read it: ``https_proxy``
    or ``HTTPS_PROXY`` (``http_...`` for http URLs; lower case first), unless ``no_proxy`` (else
    ``NO_PROXY``) names the host (see :func:`bypasses_proxy`)."""
    parts = urlsplit(url)
    for name in (f"{parts.scheme}_proxy", f"{parts.scheme.upper()}_PROXY"):
        if name in os.environ:
            proxy = os.environ[name].strip()
            break
    else:
        return Route(None)
    no_proxy = os.environ.get("no_proxy") or os.environ.get("NO_PROXY") or ""
    if not proxy or bypasses_proxy(url, no_proxy):
        return Route(None)
    return Route(proxy if "://" in proxy else f"http://{proxy}", name)


def bypasses_proxy(url: str, no_proxy: str) -> bool:
    """True when ``no_proxy`` (comma-separated) names ``url``'s host, as requests
    (``should_bypass_proxies``) reads it: ``*`` alone for every host; a name for itself and
    the hosts under it (``.corp.com`` or ``corp.com``: ``api.corp.com``, not ``mycorp.com``;
    ``host:port`` for that port only); an IPv4 address for itself, and an IPv4 network in
    CIDR form (``10.0.0.0/8``) for the addresses in it. Beyond requests, as curl: an IPv6
    network (``fd00::/8``) for the IPv6 addresses in it.

    >>> bypasses_proxy("http://10.1.2.3:8000/v1", "localhost,10.0.0.0/8")
    True
    >>> bypasses_proxy("https://api.example.com/v1", ".corp.com")
    False
    """
    parts = urlsplit(url)
    host = parts.hostname
    if host is None:
        return True
    entries = [entry for entry in no_proxy.replace(" ", "").split(",") if entry]
    address = _address(host)
    if isinstance(address, ipaddress.IPv4Address):
        if any(entry == host or address in _network(entry, 4) for entry in entries):
            return True
    else:
        try:
            port = parts.port
        except ValueError:
            port = None
        named = (host, f"{host}:{port}" if port else host)
        for entry in (e.lstrip(".") for e in entries):
            if any(n == entry or n.endswith(f".{entry}") for n in named):
                return True
        if address is not None and any(address in _network(e, 6) for e in entries):
            return True
    return bool(no_proxy) and urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
        host, {"no": no_proxy})


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _network(entry: str, version: int) -> ipaddress.IPv4Network | ipaddress.IPv6Network | tuple[()]:
    """The network a CIDR entry names (``()`` when it names none): IPv4 masks 1 to 32, as
    requests takes them."""
    if entry.count("/") != 1:
        return ()
    try:
        network = ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return ()
    if network.version != version or (version == 4 and network.prefixlen == 0):
        return ()
    return network


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
                error = ConfigError(f"model '{spec.name}': header {name} needs the environment "
                                    f"variable {variable}{where}: set it")
                error.variable = variable  # type: ignore[attr-defined]  # what doctor says to set
                raise error
            return os.environ[variable]

        text = _VARIABLE.sub(lookup, template)
        if "\r" in text or "\n" in text:
            raise ConfigError(f"model '{spec.name}': header {name} holds a line break")
        return text

    return {name: value(name, template) for name, template in spec.headers.items()}


# -- the secrets a spec uses ---------------------------------------------------------------------


def add_spec_secrets(spec: ModelSpec, api_key: str | None = None) -> None:
    """Have everything this process writes leave out the secrets ``spec`` uses: ``api_key``
    (else the value of ``api_key_env``), each header value with its ``${NAME}`` expanded (and
    the variables' values), and the passwords of its proxy, its base URL and the
    environment's proxies. Missing variables are skipped: this never fails."""
    if api_key is None and spec.api_key_env:
        api_key = os.environ.get(spec.api_key_env)
    add_secret(api_key)
    for template in spec.headers.values():
        add_secret(_VARIABLE.sub(lambda m: os.environ.get(m[1], m[0]), template))
        for variable in _VARIABLE.findall(template):
            add_secret(os.environ.get(variable))
    for url in (spec.proxy, spec.base_url, *map(os.environ.get, _PROXY_VARIABLES)):
        password = url_password(url)
        if password:
            add_secret(password)
            add_secret(unquote(password))


def url_password(url: str | None) -> str | None:
    """The password in ``url``'s user part as written (a proxy variable may leave out the
    scheme), or None.

    >>> url_password("me:s3cret@proxy:3128")
    's3cret'
    """
    if not url:
        return None
    try:
        return urlsplit(url if "://" in url else f"http://{url}").password
    except ValueError:
        return None
