"""Rollouts sampled by a served policy: vLLM's OpenAI-compatible server with runtime LoRA.

    before step S's rollouts:  policy adapter ──save──▶ CKPT/served/step-S/
                               POST {serve}/load_lora_adapter {lora_name: dealroom-step-S,
                                                              lora_path: CKPT/served/step-S}
                               POST {serve}/unload_lora_adapter {lora_name: the previous one}
    each rollout:              root = dealroom-step-S@{serve}#tokens=true (seeded, not
                               streamed): prompt and completion token ids and logprobs come
                               back with every reply and are the behaviour policy's record

The server is started with the policy's base model and ``--enable-lora`` (``--max-lora-rank``
at least ``lora_rank``), with ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`` in its environment and,
for temperatures other than 1, ``--logprobs-mode processed_logprobs`` (the logprobs of the
distribution sampled from). The update stays in this process; only the adapter travels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError

if TYPE_CHECKING:
    from dealroom.models import ModelClient

SERVED = "served"
"""``CKPT/served/step-S/``: the adapter pushed before step S's rollouts."""
PREFIX = "dealroom-step-"
SERVER_HINT = ("start vLLM with the policy's base model, --enable-lora and --max-lora-rank "
               "at least lora_rank, and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True in its environment")


def adapter_name(step: int) -> str:
    """The name the adapter of step ``step`` (0-based) is served under."""
    return f"{PREFIX}{step + 1:04d}"


def publish(model: Any, out: Path, serve: str, step: int) -> str:
    """Save the policy's adapter for ``step`` and load it into the server; unload the one
    before. Returns the name rollouts ask for."""
    folder = out / SERVED / f"step-{step + 1:04d}"
    model.save_pretrained(str(folder))
    name = adapter_name(step)
    _post(serve, "unload_lora_adapter", {"lora_name": name}, missing_ok=True)  # a resumed step
    _post(serve, "load_lora_adapter", {"lora_name": name, "lora_path": str(folder.resolve())})
    if step:
        _post(serve, "unload_lora_adapter", {"lora_name": adapter_name(step - 1)},
              missing_ok=True)
    return name


def served_client(serve: str, name: str, seed: int, max_new_tokens: int,
                  context_window: int) -> ModelClient:
    """A client for the served adapter ``name`` that records exact tokens and samples with
    ``seed``."""
    from dealroom.models import ModelSpec, open_model

    spec = ModelSpec(name=f"{name}@{serve}", kind="openai", model=name, base_url=serve,
                     api_key_optional=True, context_window=context_window, tokens=True,
                     stream=False, max_output_tokens=max_new_tokens,
                     options={"extra_body": {"seed": seed}})
    return open_model(spec)


def _post(serve: str, path: str, body: dict[str, Any], *, missing_ok: bool = False) -> None:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{serve.rstrip('/')}/{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        if missing_ok and exc.code in (400, 404) and "not" in detail.lower():
            return
        raise ConfigError(f"the policy server at {serve} refused POST /{path} (HTTP {exc.code}: "
                          f"{detail}): {SERVER_HINT}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise ConfigError(f"cannot reach the policy server at {serve} ({exc}): "
                          f"{SERVER_HINT}") from None
