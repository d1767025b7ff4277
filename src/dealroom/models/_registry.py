"""Provider registry: model providers by name, loaded lazily through one entry-point hook.

A provider is a factory ``create(spec: ModelSpec) -> ModelClient`` registered in the
``dealroom.providers`` entry-point group. Third-party packages declare theirs in
``pyproject.toml``::

    [project.entry-points."dealroom.providers"]
    myprovider = "my_package.dealroom_provider:create"

and a models file selects it with ``provider = "myprovider"``. The built-ins (``openai``,
``local``, ``hf``, ``oracle``) go through the same hook
(:class:`dealroom._util.plugins.Registry`), as harnesses and judges do; a built-in name cannot
be taken over by a plug-in. Nothing is imported until a provider is used.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

from dealroom._util.plugins import Registry
from dealroom.errors import ConfigError, DealroomError
from dealroom.models._client import ModelClient
from dealroom.models._spec import ModelSpec, resolve_model_spec

GROUP = "dealroom.providers"
BUILTIN_PROVIDERS = {
    "openai": "dealroom.models._client:create",
    "local": "dealroom.models._local:create",
    "hf": "dealroom.models._hf:create",
    "oracle": "dealroom.models._oracle:create",
}

Provider = Callable[[ModelSpec], ModelClient]
PROVIDERS = Registry(GROUP, BUILTIN_PROVIDERS, "model provider")


def provider_names() -> list[str]:
    """Names of every registered provider, built-in and installed."""
    return PROVIDERS.names()


def get_provider(name: str) -> Provider:
    """Load the factory registered as ``name``; a ConfigError lists the known names."""
    factory = PROVIDERS.load(name, unknown="install the package that provides it")
    if not callable(factory):
        raise ConfigError(f"model provider {name!r} is not callable")
    return cast(Provider, factory)


def open_model(
    spec: str | ModelSpec,
    *,
    models_file: Path | None = None,
    role: str = "sub",
    concurrency: int | None = None,
) -> ModelClient:
    """Open a client for ``spec`` (a spec string or a :class:`ModelSpec` from a run log).

    ``concurrency`` overrides the spec's per-endpoint limit. ``scripted`` is refused: the
    harness builds the scripted root itself (branch on ``resolve_model_spec(...).kind``).
    Run :func:`dealroom.models.check` on the result to fail fast on a dead endpoint.
    """
    resolved = (
        spec
        if isinstance(spec, ModelSpec)
        else resolve_model_spec(spec, models_file=models_file, role=role)
    )
    if resolved.kind == "scripted":
        raise ConfigError(
            "`scripted` names the scripted root policy, which the harness builds itself: "
            "branch on resolve_model_spec(spec).kind == 'scripted', or pass a "
            "dealroom.models.ScriptedModel as model="
        )
    resolved = resolved.with_concurrency(concurrency)
    client = get_provider(resolved.kind)(resolved)
    if not isinstance(client, ModelClient):
        raise DealroomError(
            f"model provider {resolved.kind!r} returned {type(client).__name__}, which is "
            "not a ModelClient (needs name, model, context_window, prices, chat, aclose)"
        )
    return client
