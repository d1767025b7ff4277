"""The models file: ``[models.NAME]`` tables, each a :class:`ModelEntry`.

    [models.vllm]
    base_url = "http://127.0.0.1:8000/v1"
    model = "qwen3-35b"
    context_window = 32768
    price_input = 0.1

A table is validated by :class:`ModelEntry` (unknown keys, wrong types and out-of-range values
are InputErrors naming the file, the table and the key) and turned into a
:class:`~dealroom.models.ModelSpec`. ``MODEL@BASE_URL#key=value`` options pass through the
same schema. ``docs/schemas/models-file.schema.json`` is its JSON Schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from dealroom._util.files import read_toml
from dealroom._util.schema import Schema
from dealroom.errors import ConfigError, InputError
from dealroom.models._net import NET_KEYS, file_settings
from dealroom.models._spec import (
    DEFAULT_CONCURRENCY,
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_HEDGE,
    DEFAULT_READ_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    RESERVED,
    WITH_OPTIONS,
    ModelSpec,
    Price,
    Prices,
    Seconds,
)

_USD: dict[str, Any] = {"why": "USD per 1M tokens"}
_OPENAI_REQUIRED = ("base_url", "model")


class ModelEntry(Schema):
    """One ``[models.NAME]`` table of a models file (``models.toml``)."""

    provider: str = "openai"
    """Provider in the ``dealroom.providers`` registry: ``openai`` (any OpenAI-compatible
    endpoint), ``hf``, or a third-party provider."""
    base_url: str | None = None
    """OpenAI-compatible base URL ending in ``/v1``; required for ``openai``."""
    model: str = ""
    """Model id sent to the endpoint; required for ``openai``."""
    api_key_env: str | None = None
    """Environment variable holding the API key (its name, never the key); unset: no key."""
    context_window: Annotated[int, Field(ge=1)] | None = None
    """Prompt plus completion tokens the model accepts; unset: the server's ``max_model_len``
    (``/v1/models``, llama.cpp's ``/props``) when it says, else 32,768, with a warning."""
    price_input: Price | None = Field(None, json_schema_extra=_USD)
    """USD per million uncached prompt tokens."""
    price_cached_input: Price | None = Field(None, json_schema_extra=_USD)
    """USD per million cached prompt tokens; default: ``price_input``."""
    price_output: Price | None = Field(None, json_schema_extra=_USD)
    """USD per million completion tokens."""
    concurrency: Annotated[int, Field(ge=1, le=100_000)] = DEFAULT_CONCURRENCY
    """Calls in flight at once to this endpoint, shared by every client of the endpoint."""
    timeout: Seconds = DEFAULT_TIMEOUT_S
    """Seconds allowed for one HTTP attempt, start to last byte."""
    connect_timeout: Seconds = DEFAULT_CONNECT_TIMEOUT_S
    """Seconds allowed to open the connection."""
    read_timeout: Seconds = DEFAULT_READ_TIMEOUT_S
    """When streaming: seconds allowed before the first byte and between two reads."""
    deadline: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = Field(
        None, json_schema_extra={"why": "seconds for a whole call, retries included; 0: none"})
    """Seconds one call may take in all, retries, back-off and hedges included; unset: 300,
    or ``timeout`` when larger; 0: none."""
    stream: bool = True
    """Ask for a streamed reply (SSE)."""
    hedge: Annotated[float, Field(ge=0)] = DEFAULT_HEDGE
    """Re-send a call still unanswered after this multiple of its wave's median latency;
    0 (off) or at least 1."""
    tokens: bool = False
    """Record prompt and completion token ids and logprobs (vLLM's ``return_token_ids``)."""
    max_output_tokens: Annotated[int, Field(ge=1)] | None = None
    """The reply cap (``max_tokens``) of a call that gives none; unset: a quarter of the
    window, at most 4,096."""
    reasoning: Literal["auto", "open"] = "auto"
    """``open``: the chat template opens ``<think>`` in the prompt (DeepSeek-R1, Qwen3
    thinking models served without a reasoning parser), so a reply without ``</think>`` is
    reasoning only; ``auto``: learned from the server and the model's replies."""
    schema_via: Literal["auto", "response_format", "prompt"] = "auto"
    """How a sub-call's ``schema=`` is asked for: ``response_format`` (the server constrains
    the reply), ``prompt`` (the schema in the prompt); ``auto``: ``response_format`` where the
    server was probed to honour it (vLLM, SGLang, llama.cpp, llama-cpp-python, Ollama, OpenAI)."""
    max_retries: Annotated[int, Field(ge=0, le=100)] = 4
    """Retries after a 429, 5xx, connection error, time-out or malformed body."""
    backoff_s: Seconds = 0.5
    """First retry delay in seconds; doubles each retry, full jitter, capped at 30 s."""
    extra_body: dict[str, Any] | None = None
    """Merged into each request body (e.g. ``{chat_template_kwargs = {enable_thinking =
    false}}``)."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    """The request field of the reply cap (``max_completion_tokens`` for OpenAI reasoning
    models)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific settings (an ``hf`` model's ``device``, ``dtype``, ...)."""
    proxy: str | None = None
    """HTTP(S) proxy URL to reach ``base_url`` through; ``""``: none; unset: the
    environment's (``HTTPS_PROXY``/``HTTP_PROXY`` minus ``NO_PROXY``)."""
    ca_bundle: str | None = None
    """PEM file of the CA certificates to trust, relative to the models file's folder."""
    client_cert: str | None = None
    """PEM file of a client certificate (mutual TLS), relative to the models file's folder."""
    client_key: str | None = None
    """PEM file of ``client_cert``'s key, when not in the same file."""
    verify: bool = True
    """Check the server's certificate; ``false`` is warned about."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra request headers; ``${NAME}`` in a value is the environment variable NAME, read
    when the client opens. Never recorded."""

    @model_validator(mode="after")
    def _check(self) -> ModelEntry:
        if self.provider in RESERVED:
            raise ConfigError(f"provider '{self.provider}' cannot be configured in a models "
                              "file")
        if self.provider == "openai":
            for key in _OPENAI_REQUIRED:
                if key not in self.model_fields_set:
                    raise ConfigError(f"missing required key `{key}`")
        if 0 < self.hedge < 1:
            raise InputError(f"hedge must be 0 (off) or a multiple >= 1, got {self.hedge!r}")
        return self

    def to_spec(self, name: str, *, source: Path | None = None, **more: Any) -> ModelSpec:
        """The :class:`ModelSpec` of this table, named ``name``; paths in it are relative to
        ``source``'s folder. ``more`` sets spec fields no table holds (``api_key_optional``)."""
        given = self.model_fields_set
        price_input = self.price_input or 0.0
        cached = self.price_cached_input
        prices = Prices(input=price_input, output=self.price_output or 0.0,
                        cached_input=price_input if cached is None else cached)
        options = dict(self.options)
        for key in ("extra_body", "max_tokens_field"):
            if getattr(self, key) is not None:
                options[key] = getattr(self, key)
        net = {k: getattr(self, k) for k in NET_KEYS if k in given}
        return ModelSpec(
            name=name, kind=self.provider, model=self.model, base_url=self.base_url,
            api_key_env=self.api_key_env,
            **({} if self.context_window is None else {"context_window": self.context_window}),
            prices=prices,
            priced=self.provider == "hf" or any(k.startswith("price_") for k in given),
            concurrency=self.concurrency, timeout=self.timeout,
            connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
            deadline=self.deadline, stream=self.stream, hedge=self.hedge, tokens=self.tokens,
            max_output_tokens=self.max_output_tokens, reasoning=self.reasoning,
            schema_via=self.schema_via, max_retries=self.max_retries,
            backoff_s=self.backoff_s, options=options,
            source=None if source is None else str(source),
            **file_settings(net, source.parent if source is not None else Path()),
            **more,
        )


def default_models_file(cwd: Path | None = None, home: Path | None = None) -> Path | None:
    """``./models.toml`` if present, else ``~/.config/dealroom/models.toml`` if present."""
    for candidate in (
        (cwd or Path.cwd()) / "models.toml",
        (home or Path.home()) / ".config" / "dealroom" / "models.toml",
    ):
        if candidate.is_file():
            return candidate
    return None


def load_models_file(path: Path) -> dict[str, ModelSpec]:
    """Parse and validate a models file; every problem is a ConfigError naming file and key."""
    path = Path(path)
    data = read_toml(path, f"models file {path}", ": create it or pass --models FILE")
    unknown_top = set(data) - {"models"}
    if unknown_top:
        raise ConfigError(
            f"models file {path}: unknown top-level key(s) {sorted(unknown_top)}; "
            "define models as [models.NAME] tables"
        )
    tables = data.get("models", {})
    if not isinstance(tables, dict):
        raise ConfigError(f"models file {path}: `models` must be a table of [models.NAME] tables")
    return {name: _spec_from_table(name, table, path) for name, table in tables.items()}


def _spec_from_table(name: str, table: Any, path: Path) -> ModelSpec:
    where = f"models file {path}, [models.{name}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table with base_url, model, ...")
    if name in RESERVED or name.partition(":")[0] in WITH_OPTIONS:
        raise ConfigError(f"{where}: '{name}' is a reserved spec name; choose another name")
    if "@" in name:
        raise ConfigError(f"{where}: a model name cannot contain '@'")
    try:
        entry = ModelEntry(**table)
    except ConfigError as exc:
        raise type(exc)(f"{where}: {exc}") from None
    return entry.to_spec(name, source=path)
