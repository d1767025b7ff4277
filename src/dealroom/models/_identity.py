"""Which endpoint and model a client is: the record a run keeps of each of its models.

    model_record(client) ──▶ {name, kind, model, base_url, context_window,
                              context_window_from, prices, priced, sampling, route,
                              route_from, tls, headers, api_key_env, source, server}

The route is ``direct`` or the proxy's URL without its credentials; TLS settings and headers
are recorded by name, never by value. ``server`` is what the endpoint said about itself when
``check()`` asked (``/v1/models``' id and ``max_model_len``, llama.cpp's ``/props``), None when
it was not asked. A run writes one record per role into ``config.json`` (``models``), and
``dealroom resume`` compares them (:func:`model_change`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from dealroom.models._net import route
from dealroom.models._rules import listed_models
from dealroom.models._spec import DEFAULT_CONTEXT_WINDOW, ModelSpec

SAMPLING_KEYS = ("max_tokens", "top_p", "top_k", "seed", "temperature", "dtype", "device",
                 "adapter")
"""Provider options recorded as sampling settings (an ``hf`` model's, a third party's)."""
_warned: set[str] = set()


def without_credentials(url: str) -> str:
    """``url`` with no user or password.

    >>> without_credentials("http://me:s3cret@proxy:3128")
    'http://proxy:3128'
    """
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def model_record(client: Any) -> dict[str, Any]:
    """The record of an open client (see the module docstring), or of a resolved
    :class:`ModelSpec` (then ``server`` is None: nothing was asked); clients without a spec (a
    ``ScriptedModel``) give their name, model, window and prices."""
    spec = client if isinstance(client, ModelSpec) else getattr(client, "spec", None)
    prices = getattr(client, "prices", None)
    record: dict[str, Any] = {
        "name": str(getattr(client, "name", "")),
        "kind": "scripted" if "Scripted" in type(client).__name__ else type(client).__name__,
        "model": str(getattr(client, "model", "")), "base_url": None,
        "context_window": int(getattr(client, "context_window", 0) or 0),
        "context_window_from": "provider",
        "prices": prices.model_dump() if prices is not None else {},
        "priced": True, "sampling": {}, "route": None, "route_from": None, "tls": [],
        "headers": [], "api_key_env": None, "source": None,
        "server": getattr(client, "served", None)}
    if not isinstance(spec, ModelSpec):
        return record
    base_url = getattr(client, "base_url", None) or spec.base_url
    way = route(spec, base_url) if base_url else None
    tls = [k for k in ("ca_bundle", "client_cert", "client_key") if getattr(spec, k)]
    tls += [] if spec.verify else ["verify"]
    if base_url and spec.ca_bundle is None and os.environ.get("REQUESTS_CA_BUNDLE"):
        tls.append("REQUESTS_CA_BUNDLE")
    extra = spec.options.get("extra_body") or {}
    record.update({
        "kind": spec.kind, "model": spec.model, "base_url": base_url,
        "context_window_from": getattr(client, "window_from", spec.context_window_from),
        "priced": spec.priced,
        "sampling": {"max_output_tokens": spec.max_output_tokens,
                     **{k: spec.options[k] for k in SAMPLING_KEYS if k in spec.options},
                     **({"extra_body": sorted(extra)} if extra else {})},
        "route": None if way is None else (
            without_credentials(way.proxy) if way.proxy else "direct"),
        "route_from": way.source or None if way is not None and way.proxy else None,
        "tls": tls, "headers": sorted(spec.headers), "api_key_env": spec.api_key_env,
        "source": spec.source})
    if spec.kind == "hf":
        record["context_window_from"] = "provider"
    return record


def model_change(recorded: Mapping[str, Any] | None, now: Mapping[str, Any]) -> str | None:
    """How ``now`` differs from the ``recorded`` model in what names the model (its base URL
    and model id), in words; None when they agree or nothing was recorded."""
    if not isinstance(recorded, Mapping) or "model" not in recorded:
        return None
    keys = ("model",) if now.get("kind") == "local" else ("base_url", "model")  # a free port
    changes = [f"{key} {recorded.get(key)!r} → {now.get(key)!r}" for key in keys
               if recorded.get(key) != now.get(key)]
    return ", ".join(changes) or None


# -- what the server says about itself ----------------------------------------------------------


def served_listing(raw: bytes, model: str) -> dict[str, Any]:
    """What ``GET /v1/models`` says of ``model``: its id and ``max_model_len`` (None when
    the server gives none)."""
    window = listed_models(raw, "max_model_len").get(model)
    return {"id": model, "max_model_len": window if _positive(window) else None,
            "from": "/v1/models"}


def served_chat(raw: bytes) -> dict[str, Any] | None:
    """What a 1-token chat's answer says of the model that served it (its ``model``)."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    model = body.get("model") if isinstance(body, dict) else None
    if not isinstance(model, str) or not model:
        return None
    return {"id": model, "max_model_len": None, "from": "chat"}


def props_window(raw: bytes) -> int | None:
    """The context size llama.cpp's server reports at ``GET /props``
    (``default_generation_settings.n_ctx``), or None.

    >>> props_window(b'{"default_generation_settings": {"n_ctx": 8192}}')
    8192
    """
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return props_n_ctx(body)


def props_n_ctx(body: Any) -> int | None:
    """The context size in a parsed ``/props`` answer: ``default_generation_settings.n_ctx``,
    else a top-level ``n_ctx``; None when it gives none."""
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    window = settings.get("n_ctx") if isinstance(settings, dict) else None
    window = window if _positive(window) else body.get("n_ctx")
    return window if _positive(window) else None


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def warn_default_window(spec: ModelSpec) -> None:
    """Say once per model, on stderr, that its window is the default: neither the spec nor
    the server gives it."""
    if spec.name in _warned:
        return
    _warned.add(spec.name)
    where = (f"context_window in [models.{spec.name}] in {spec.source}" if spec.source
             else f"#context_window=N after the spec ({spec.name.partition('#')[0]}"
                  "#context_window=N)")
    print(f"warning: model '{spec.name}': neither the spec nor the server gives the context "
          f"window, so it is taken as {DEFAULT_CONTEXT_WINDOW:,} tokens; set {where}",
          file=sys.stderr)
