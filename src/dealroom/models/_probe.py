"""What a served model's server offers besides chat, probed once per endpoint.

Each serving stack exposes its window and its token count in its own way:

    family              window                          prompt count
    vLLM, SGLang        /v1/models max_model_len        POST /tokenize {model, messages}
    llama.cpp           GET /props n_ctx                POST /tokenize {content} (the prompt
                                                        from POST /apply-template)
    llama-cpp-python    (none)                          POST /extras/tokenize/count {input}
    Ollama              POST /api/show num_ctx          (none)

llama.cpp's ``/props`` also says how many requests the server computes at once
(``total_slots``, its ``--parallel``): the client then keeps no more open (``slots``), so a
request never waits inside the server while its deadline runs.

:func:`probe_server` asks in that order and keeps the first that answers; :class:`ServerFacts`
says which ``counts_source`` a count then has (``tokenize``, ``llama.cpp``, ``extras``), or
``estimate`` where the server offers none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from dealroom.models._identity import props_n_ctx

Request = Callable[[str, str, Any], Awaitable[Any]]
"""``request(method, path, body) -> Fetched`` of the model's client."""

TEMPLATE_OVERHEAD = 4
"""Tokens a chat template adds per message, where the server counts text only."""


@dataclass
class ServerFacts:
    """What one endpoint offers: its family, window (and where it came from), count route."""

    family: str = "unknown"
    window: int | None = None
    window_source: str | None = None
    count_route: str | None = None
    """``messages`` (vLLM ``/tokenize``), ``content`` (llama.cpp), ``extras``
    (llama-cpp-python), or None."""
    slots: int | None = None
    """Requests the server computes at once, where it says (llama.cpp ``total_slots``)."""

    @property
    def counts_source(self) -> str:
        """How a prompt count is made: ``tokenize``, ``llama.cpp``, ``extras`` or ``estimate``."""
        return {"messages": "tokenize", "content": "llama.cpp",
                "extras": "extras"}.get(self.count_route or "", "estimate")

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "window": self.window,
                "window_source": self.window_source, "counts_source": self.counts_source,
                "slots": self.slots}


async def _json(request: Request, method: str, path: str, body: Any = None) -> Any:
    """The JSON a probe answers with (200 only), else None; a failure is no answer."""
    try:
        answer = await request(method, path, body)
        if answer.status != 200:
            return None
        return json.loads(answer.body)
    except (aiohttp.ClientError, OSError, ValueError):  # TimeoutError too
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def probe_server(request: Request, model: str) -> ServerFacts:
    """Ask the server, once, what it offers (see the module docstring)."""
    listed = await _json(request, "GET", "models")
    data = listed.get("data") if isinstance(listed, dict) else None
    served = next((m for m in data or [] if isinstance(m, dict) and m.get("id") == model), None)
    if served is not None and _int(served.get("max_model_len")):
        # vLLM and SGLang serve /tokenize: the first count tells (see forget_count)
        return ServerFacts("vllm", served["max_model_len"], "/v1/models max_model_len",
                           "messages")
    props = await _json(request, "GET", "/props")
    if isinstance(props, dict):
        n_ctx = props_n_ctx(props)
        facts = ServerFacts("llama.cpp", n_ctx, "/props n_ctx" if n_ctx else None,
                            slots=_int(props.get("total_slots")))
        if isinstance((await _json(request, "POST", "/tokenize",
                                   {"content": "ping"}) or {}).get("tokens"), list):
            facts.count_route = "content"
        return facts
    counted = await _json(request, "POST", "/extras/tokenize/count", {"input": "ping"})
    if isinstance(counted, dict) and _int(counted.get("count")):
        return ServerFacts("llama-cpp-python", count_route="extras")
    shown = await _json(request, "POST", "/api/show", {"model": model})
    if isinstance(shown, dict):
        return ServerFacts("ollama", *_ollama_window(shown))
    vllm = await _json(request, "POST", "/tokenize", {"model": model, "messages": _PING})
    if isinstance(vllm, dict) and _int(vllm.get("count")):
        window = _int(vllm.get("max_model_len"))
        return ServerFacts("vllm", window, "/tokenize max_model_len" if window else None,
                           "messages")
    return ServerFacts()


_PING = [{"role": "user", "content": "ping"}]
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)", re.M)


def _ollama_window(shown: dict[str, Any]) -> tuple[int | None, str | None]:
    """Ollama's window: ``num_ctx`` in the model's parameters, else its trained length."""
    match = _NUM_CTX.search(str(shown.get("parameters") or ""))
    if match:
        return int(match.group(1)), "/api/show num_ctx"
    info = shown.get("model_info") or {}
    trained = next((_int(v) for k, v in info.items() if k.endswith(".context_length")), None)
    return trained, "/api/show context_length" if trained else None


async def count_with(request: Request, facts: ServerFacts, model: str,
                     messages: list[dict[str, Any]]) -> int | None:
    """The prompt's tokens by the server's own count (see :class:`ServerFacts`), or None."""
    if facts.count_route == "messages":
        answer = await _json(request, "POST", "/tokenize", {"model": model, "messages": messages})
        return _int((answer or {}).get("count"))
    if facts.count_route == "content":
        templated = await _json(request, "POST", "/apply-template", {"messages": messages})
        prompt = (templated or {}).get("prompt")
        text = prompt if isinstance(prompt, str) else _joined(messages)
        answer = await _json(request, "POST", "/tokenize", {"content": text})
        tokens = (answer or {}).get("tokens")
        if not isinstance(tokens, list):
            return None
        return len(tokens) + (0 if isinstance(prompt, str) else TEMPLATE_OVERHEAD * len(messages))
    if facts.count_route == "extras":
        answer = await _json(request, "POST", "/extras/tokenize/count",
                             {"input": _joined(messages)})
        count = _int((answer or {}).get("count"))
        return None if count is None else count + TEMPLATE_OVERHEAD * len(messages)
    return None


def _joined(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


async def count_text(request: Request, facts: ServerFacts, model: str, text: str) -> int | None:
    """Tokens of a plain text (a reply) by the server's count, or None."""
    if not text:
        return 0
    if facts.count_route == "messages":
        answer = await _json(request, "POST", "/tokenize", {"model": model, "prompt": text})
        return _int((answer or {}).get("count"))
    if facts.count_route == "content":
        answer = await _json(request, "POST", "/tokenize", {"content": text})
        tokens = (answer or {}).get("tokens")
        return len(tokens) if isinstance(tokens, list) else None
    if facts.count_route == "extras":
        answer = await _json(request, "POST", "/extras/tokenize/count", {"input": text})
        return _int((answer or {}).get("count"))
    return None
