"""What company networks need, end to end on loopback: a real forwarding proxy (pproxy), TLS
with a CA made in the test, client certificates, extra headers kept out of every record."""

import asyncio
import socket
from pathlib import Path

import pytest

from dealroom.errors import ConfigError
from dealroom.models import ModelSpec, ProviderError, check, open_model, resolve_model_spec
from dealroom.runs import RunFolder
from dealroom.testing import MockOpenAIServer

HELLO = [{"role": "user", "content": "Is consent required?"}]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def models_file(folder: Path, base_url: str, **keys: str) -> Path:
    """A models file with one model, ``corp``; ``keys`` are TOML values as written."""
    lines = ["[models.corp]", f'base_url = "{base_url}"', 'model = "mock"',
             "context_window = 8192", "max_retries = 0"]
    lines += [f"{key} = {value}" for key, value in keys.items()]
    path = folder / "models.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


async def chat_and_check(spec, **kwargs):
    async with open_model(spec, **kwargs) as client:
        await check(client)
        return await client.chat(HELLO)


def tls_server(pki, **kwargs) -> MockOpenAIServer:
    return MockOpenAIServer(ssl_context=pki.server_context(**kwargs))


# -- proxies -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY"])
def test_calls_go_through_the_proxy_the_environment_names(variable, pki, forward_proxy,
                                                          monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pki.ca))
    monkeypatch.setenv(variable, forward_proxy.url)

    async def go():
        secure = variable.lower() == "https_proxy"
        async with (tls_server(pki) if secure else MockOpenAIServer()) as srv:
            result = await chat_and_check(f"mock@{srv.base_url}")
            return result, srv.port

    result, port = asyncio.run(go())
    assert result.text.startswith("echo: ")
    assert forward_proxy.forwarded_to(port) >= 2  # the check's and the chat's connections


@pytest.mark.parametrize("no_proxy", ["example.com,127.0.0.1", "10.0.0.0/8, 127.0.0.0/8"])
def test_no_proxy_bypasses_the_proxy(pki, forward_proxy, monkeypatch, no_proxy):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pki.ca))
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)

    async def go():
        async with tls_server(pki) as srv:
            await chat_and_check(f"mock@{srv.base_url}")
            through = forward_proxy.forwarded_to(srv.port)
            monkeypatch.setenv("NO_PROXY", no_proxy)
            await chat_and_check(f"mock@{srv.base_url}")
            return through, forward_proxy.forwarded_to(srv.port), srv.calls

    through, after, calls = asyncio.run(go())
    assert through >= 1 and after == through and calls == 2


NO_PROXY_FORMS = [  # (NO_PROXY, URL): the usual forms, each read as requests reads it
    ("localhost", "http://localhost:8000/v1"),
    ("example.com", "https://example.com/v1"),
    ("example.com", "https://api.example.com/v1"),
    (".example.com", "https://api.example.com/v1"),
    (".example.com", "https://example.com/v1"),
    ("example.com", "https://notexample.com/v1"),  # a domain, not any suffix
    ("example.com", "https://example.org/v1"),
    ("EXAMPLE.com", "https://api.example.com/v1"),
    ("*", "https://api.openai.com/v1"),
    ("localhost,*", "https://api.openai.com/v1"),  # `*` counts alone only
    ("example.com:8443", "https://example.com:8443/v1"),
    ("example.com:8443", "https://example.com/v1"),
    ("example.com:8443", "https://example.com:9443/v1"),
    ("127.0.0.1", "http://127.0.0.1:8000/v1"),
    ("127.0.0.1", "http://127.0.0.2:8000/v1"),
    ("127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
    ("127.0.0.0/8", "http://127.0.0.1:8000/v1"),
    ("10.0.0.0/8", "http://10.20.30.40/v1"),
    ("10.0.0.0/8", "http://11.0.0.1/v1"),
    ("192.168.1.0/24", "http://192.168.2.1/v1"),
    ("10.1.2.3/8", "http://10.200.0.1/v1"),  # host bits set: still the /8
    ("10.0.0.0/0", "http://10.0.0.1/v1"),  # a /0 is no network to requests
    ("10.0.0.0/8", "http://internal.corp/v1"),
    (" localhost , 10.0.0.0/8 ", "http://10.0.0.9/v1"),
    ("::1", "http://[::1]:8000/v1"),
    ("[::1]", "http://[::1]:8000/v1"),
    ("", "http://127.0.0.1/v1"),
    (",,", "http://127.0.0.1/v1"),
]


@pytest.mark.parametrize("no_proxy,url", NO_PROXY_FORMS)
def test_no_proxy_is_read_as_requests_reads_it(no_proxy, url, monkeypatch):
    requests_utils = pytest.importorskip("requests.utils")
    from dealroom.models import _net

    scheme = url.partition(":")[0]
    monkeypatch.setenv(f"{scheme.upper()}_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    direct = not requests_utils.get_environ_proxies(url).get(scheme)
    assert (_net.env_route(url).proxy is None) == direct
    assert _net.bypasses_proxy(url, no_proxy) == requests_utils.should_bypass_proxies(url,
                                                                                      no_proxy)


def test_no_proxy_takes_ipv6_networks_as_curl_does():
    from dealroom.models._net import bypasses_proxy

    assert bypasses_proxy("http://[fd12::1]:8000/v1", "fd00::/8")
    assert bypasses_proxy("http://[::1]:8000/v1", "localhost,::1/128")
    assert not bypasses_proxy("http://[fe80::1]:8000/v1", "fd00::/8")
    assert not bypasses_proxy("http://10.0.0.1/v1", "::/0")  # an IPv6 network: not for IPv4


def test_a_models_file_proxy_is_used_and_an_empty_one_bypasses_the_environment(
        tmp_path, forward_proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port()}")  # dead

    async def go():
        async with MockOpenAIServer() as srv:
            path = models_file(tmp_path, srv.base_url, proxy=f'"{forward_proxy.url}"')
            await chat_and_check("corp", models_file=path)
            through = forward_proxy.forwarded_to(srv.port)
            path = models_file(tmp_path, srv.base_url, proxy='""')
            await chat_and_check("corp", models_file=path)
            return through, forward_proxy.forwarded_to(srv.port), srv.calls

    through, after, calls = asyncio.run(go())
    assert through >= 1 and after == through and calls == 2


def test_a_spec_string_names_its_proxy(forward_proxy):
    async def go():
        async with MockOpenAIServer() as srv:
            await chat_and_check(f"mock@{srv.base_url}#proxy={forward_proxy.url},hedge=0")
            return forward_proxy.forwarded_to(srv.port)

    assert asyncio.run(go()) >= 1
    with pytest.raises(ConfigError, match="cannot carry credentials"):
        resolve_model_spec("m@http://127.0.0.1:8000/v1#proxy=http://me:pw@proxy:3128")


def test_a_proxy_that_asks_for_credentials_gets_them_from_its_url(tmp_path,
                                                                    proxy_with_password):
    userinfo = proxy_with_password.url.replace("http://", "http://alice:s3cret@")

    async def go():
        async with MockOpenAIServer() as srv:
            path = models_file(tmp_path, srv.base_url, proxy=f'"{proxy_with_password.url}"')
            with pytest.raises(ProviderError) as refused:
                async with open_model("corp", models_file=path) as client:
                    await client.chat(HELLO)
            path = models_file(tmp_path, srv.base_url, proxy=f'"{userinfo}"')
            result = await chat_and_check("corp", models_file=path)
            return refused.value, result, proxy_with_password.forwarded_to(srv.port)

    refused, result, forwarded = asyncio.run(go())
    assert refused.status == 407 and "asks for credentials" in str(refused)
    assert refused.kind == "proxy" and f"the proxy {proxy_with_password.url} (from proxy)" in \
        str(refused), "pproxy's own 407 on plain HTTP is named as the proxy's"
    assert result.text.startswith("echo: ") and forwarded >= 1


def test_a_dead_proxy_is_named_by_the_call_and_by_the_check(monkeypatch):
    dead = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HTTPS_PROXY", dead)

    async def go():
        async with MockOpenAIServer() as srv:
            spec = srv.spec.replace(base_url=srv.base_url.replace("http:", "https:"),
                                       max_retries=1)
            async with open_model(spec) as client:
                with pytest.raises(ProviderError) as failed:
                    await client.chat(HELLO)
                with pytest.raises(ConfigError) as checked:
                    await check(client)
            return failed.value, str(checked.value), srv.calls

    failed, checked, calls = asyncio.run(go())
    assert failed.kind == "connection" and failed.attempts == 2 and calls == 0
    assert f"the proxy {dead} (from HTTPS_PROXY)" in str(failed)
    assert f"cannot connect to the proxy {dead} (from HTTPS_PROXY)" in checked
    assert "fix HTTPS_PROXY" in checked and "NO_PROXY" in checked


# -- TLS ---------------------------------------------------------------------------------------


def test_a_ca_made_here_is_trusted_through_requests_ca_bundle(pki, monkeypatch):
    async def go():
        async with tls_server(pki) as srv:
            spec = srv.spec.replace(max_retries=3)
            with pytest.raises(ProviderError) as untrusted:
                async with open_model(spec) as client:
                    await client.chat(HELLO)
            with pytest.raises(ConfigError, match="not trusted.*ca_bundle"):
                await chat_and_check(spec)
            monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pki.ca))
            return untrusted.value, await chat_and_check(spec), srv.calls

    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    untrusted, result, calls = asyncio.run(go())
    assert "not trusted" in str(untrusted) and "ca_bundle" in str(untrusted)
    assert untrusted.attempts == 1, "an untrusted certificate is not asked again"
    assert result.text.startswith("echo: ") and calls == 1


def test_ssl_cert_file_is_still_honoured(pki, monkeypatch):
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca))

    async def go():
        async with tls_server(pki) as srv:
            return await chat_and_check(srv.spec)

    assert asyncio.run(go()).text.startswith("echo: ")


def test_a_models_file_ca_bundle_wins_over_the_environment(pki, tmp_path, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pki.other_ca))
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "corp-ca.pem").write_bytes(pki.ca.read_bytes())

    async def go():
        async with tls_server(pki) as srv:
            path = models_file(tmp_path, srv.base_url, ca_bundle='"certs/corp-ca.pem"')
            return await chat_and_check("corp", models_file=path)

    assert asyncio.run(go()).text.startswith("echo: ")


def test_an_untrusted_certificate_names_the_bundle_in_use(pki, tmp_path, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pki.other_ca))  # set, but the wrong CA

    async def go():
        async with tls_server(pki) as srv:
            with pytest.raises(ConfigError) as by_env:
                await chat_and_check(srv.spec.replace(max_retries=0))
            path = models_file(tmp_path, srv.base_url, ca_bundle=f'"{pki.other_ca}"')
            with pytest.raises(ConfigError) as by_file:
                await chat_and_check("corp", models_file=path)
            return str(by_env.value), str(by_file.value)

    by_env, by_file = asyncio.run(go())
    assert f"not trusted by the CA certificates in {pki.other_ca} (from REQUESTS_CA_BUNDLE)" \
        in by_env
    assert "or REQUESTS_CA_BUNDLE" not in by_env and "add the CA that signed it" in by_env
    assert f"not trusted by the CA bundle {pki.other_ca} (ca_bundle of [models.corp]" in by_file


def test_a_server_that_requires_a_client_certificate(pki, tmp_path, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pki.ca))

    async def go():
        async with tls_server(pki, require_client=True) as srv:
            path = models_file(tmp_path, srv.base_url)
            with pytest.raises((ProviderError, ConfigError)):
                await chat_and_check("corp", models_file=path)
            path = models_file(tmp_path, srv.base_url, client_cert=f'"{pki.client_cert}"',
                               client_key=f'"{pki.client_key}"')
            return await chat_and_check("corp", models_file=path), srv.calls

    result, calls = asyncio.run(go())
    assert result.text.startswith("echo: ") and calls == 1


def test_verify_false_is_per_model_and_warned_about_once(pki, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)

    async def go():
        async with tls_server(pki) as srv:
            path = models_file(tmp_path, srv.base_url, verify="false")
            for _ in range(2):
                await chat_and_check("corp", models_file=path)
            return srv.calls

    assert asyncio.run(go()) == 2
    assert capsys.readouterr().err.count("verify = false") == 1
    with pytest.raises(ConfigError, match="unknown option 'verify=false'"):
        resolve_model_spec("m@https://127.0.0.1:8000/v1#verify=false")


# -- headers -----------------------------------------------------------------------------------


def test_extra_headers_reach_the_server_and_no_record(small_room, tmp_path, monkeypatch):
    from dealroom.harness import run_agent
    from dealroom.models import ScriptedModel

    monkeypatch.setenv("ORG_TOKEN", "tok-5f3a9c")
    root = ScriptedModel(["```python\nprint(llm('Summarise the room.'))\n```",
                          "```python\nsubmit()\n```"])
    with MockOpenAIServer(lambda request: "a finding") as srv:
        path = models_file(tmp_path, srv.base_url,
                           headers='{ "X-Org-Token" = "Bearer ${ORG_TOKEN}", X-Team = "deals" }')
        run = tmp_path / "run"
        result = run_agent(small_room, run, root=root, sub="corp", models_file=path,
                           max_turns=4)
        seen = [(h.get("X-Org-Token"), h.get("X-Team")) for h in srv.headers]
    assert result.status == "submitted" and seen
    assert set(seen) == {("Bearer tok-5f3a9c", "deals")}
    spec = resolve_model_spec("corp", models_file=path)
    assert "headers" not in spec.to_dict() and "tok-5f3a9c" not in repr(spec)
    for file in (p for p in run.rglob("*") if p.is_file()):
        text = file.read_bytes()
        assert b"tok-5f3a9c" not in text and b"Bearer" not in text and b"deals" not in text, file
    # the headers' names are recorded, never their values
    assert RunFolder.open(run).config["models"]["sub"]["headers"] == ["X-Org-Token", "X-Team"]


def test_a_header_naming_an_unset_variable_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.delenv("ORG_TOKEN", raising=False)
    path = models_file(tmp_path, "http://127.0.0.1:8000/v1", headers='{ X-Org = "${ORG_TOKEN}" }')
    with pytest.raises(ConfigError, match="header X-Org needs the environment variable ORG_TOKEN"):
        open_model("corp", models_file=path)


# -- the settings themselves -------------------------------------------------------------------


@pytest.mark.parametrize(("keys", "message"), [
    ({"proxy": '"proxy.example.com:3128"'}, "proxy must be an http:// or https:// URL"),
    ({"ca_bundle": '"missing.pem"'}, "ca_bundle .*missing.pem is not a file"),
    ({"client_key": '"k.pem"'}, "client_key needs client_cert"),
    ({"verify": '"no"'}, "verify must be true or false, got 'no'"),
    ({"headers": '{ "Bad Name" = "x" }'}, "not an HTTP header name"),
    ({"headers": '{ Host = "x" }'}, "set by dealroom itself"),
    ({"headers": '{ X-N = 3 }'}, "headers.X-N must be a string, got 3"),
])
def test_bad_network_settings_are_config_errors(tmp_path, keys, message):
    path = models_file(tmp_path, "https://api.example.com/v1", **keys)
    with pytest.raises(ConfigError, match=message):
        resolve_model_spec("corp", models_file=path)


def test_a_proxy_password_is_never_recorded(tmp_path):
    path = models_file(tmp_path, "https://api.example.com/v1",
                       proxy='"http://me:s3cret@proxy.example.com:3128"')
    spec = resolve_model_spec("corp", models_file=path)
    assert spec.to_dict()["proxy"] == "http://me:***@proxy.example.com:3128"
    assert ModelSpec.from_dict(spec.to_dict()).headers == {}


def test_unreadable_certificates_fail_when_the_model_opens(tmp_path, pki):
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    for keys, message in (({"ca_bundle": '"junk.pem"'}, "cannot load the CA certificates"),
                          ({"client_cert": f'"{pki.client_cert}"', "client_key":
                            f'"{pki.server_key}"'}, "cannot load client_cert")):
        path = models_file(tmp_path, "https://api.example.com/v1", **keys)
        with pytest.raises(ConfigError, match=message):
            open_model("corp", models_file=path)
