"""Model specs: the models file and the spec strings given to ``--root``, ``--sub`` and ``--judge``.

A spec string is one of

* ``NAME`` — a ``[models.NAME]`` table of the models file;
* ``local`` — the embedded SmolLM2-135M-Instruct served by llama.cpp on loopback;
* ``scripted`` — the scripted root policy (root only; the harness builds it), or a variant
  with options: ``scripted:coverage=0.3,seed=2``, ``scripted:waves=1``, ``scripted:memo=end``;
* ``oracle`` — the answer-key simulator sub-agent (``oracle:recall=0.7,noise=0.1,seed=3``);
* ``MODEL@BASE_URL`` — any OpenAI-compatible endpoint, e.g. ``qwen3-35b@http://127.0.0.1:8000/v1``,
  optionally followed by ``#key=value,...`` options (:data:`SPEC_OPTIONS`), e.g.
  ``qwen3-35b@http://127.0.0.1:8000/v1#price_input=0.2,price_output=0.8,context_window=65536``;
* ``hf:PATH[,key=value...]`` — a transformers model run in-process (``hf:local`` is the embedded
  SmolLM2 GGUF; PATH is a model folder, a ``.gguf`` file or a LoRA checkpoint), see ``_hf``.

Resolving reads files, and environment variables only to learn the secrets a spec uses, so
that they are redacted from records; a missing key is no error here. The API key is looked up
by the provider when a client for a real endpoint is opened (see ``_client.open_openai``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from dealroom._util.schema import Schema, explain, field_reader
from dealroom.errors import ConfigError, InputError
from dealroom.models._net import NET_KEYS, add_spec_secrets, check_settings, redact
from dealroom.types import ROLES

DEFAULT_CONCURRENCY = 64
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_READ_TIMEOUT_S = 60.0
DEFAULT_DEADLINE_S = 300.0
DEFAULT_HEDGE = 3.0
DEFAULT_CONTEXT_WINDOW = 32_768
LOCAL_MODEL = "smollm2-135m-instruct"
RESERVED = ("local", "scripted", "oracle")
WITH_OPTIONS = ("scripted", "oracle")
"""Reserved names that take ``:KEY=VALUE,...`` options."""

Price = Annotated[float, Field(ge=0, allow_inf_nan=False,
                               json_schema_extra={"why": "USD per 1M tokens"})]
"""A list price: USD per million tokens, finite and at least 0."""
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Concurrency = Annotated[int, Field(ge=1, le=100_000)]
Deadline = Annotated[float, Field(ge=0, allow_inf_nan=False, json_schema_extra={
    "why": "seconds for a whole call, retries included; 0: none"})]
Hedge = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Retries = Annotated[int, Field(ge=0, le=100)]
Tokens = Annotated[int, Field(ge=1)]
URL = Annotated[str, Field(pattern=r"^https?://", json_schema_extra={
    "allowed": "an http:// or https:// URL such as http://127.0.0.1:8000/v1"})]


class Prices(Schema):
    """List prices in USD per million tokens; cached input is a part of input."""

    model_config = ConfigDict(frozen=True)

    input: Price = 0.0
    """Uncached prompt tokens."""
    cached_input: Price = 0.0
    """Prompt tokens served from the provider's cache."""
    output: Price = 0.0
    """Completion tokens."""

    def __init__(self, *args: float, **data: Any) -> None:
        """By keyword, or in field order: ``Prices(2.0, 0.5, 8.0)``."""
        super().__init__(**dict(zip(type(self).model_fields, args, strict=False)), **data)

    def cost(self, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> float:
        """Cache-aware cost in USD.

        >>> Prices(input=2.0, cached_input=0.5, output=8.0).cost(1_000_000, 400_000, 100_000)
        2.2
        """
        uncached = max(input_tokens - cached_input_tokens, 0)
        total = uncached * self.input + cached_input_tokens * self.cached_input
        return round((total + output_tokens * self.output) / 1e6, 12)


class ModelSpec(Schema):
    """A resolved model: everything needed to open a client, and to rebuild it from a run log.

    Holds the *name* of the environment variable with the API key, never the key itself.
    Validated when built, and again by :meth:`replace` (a bad value is an InputError that
    names the model, the key, what is allowed and what was given).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    """The spec string as given (``gpt-4o-mini``, ``local``, ``qwen@http://...``); logged."""
    kind: str
    """Provider name in the ``dealroom.providers`` registry: ``openai``, ``local``, ``scripted``,
    or a third-party provider named by ``provider =`` in the models file."""
    model: str = ""
    """Model id sent to the endpoint."""
    base_url: URL | None = None
    """OpenAI-compatible base URL ending in ``/v1`` (``None`` for ``local`` until it starts)."""
    api_key_env: str | None = None
    """Environment variable holding the API key; ``None`` sends no key."""
    api_key_optional: bool = False
    """Send no key when ``api_key_env`` is unset instead of failing (``MODEL@BASE_URL`` specs)."""
    context_window: Tokens = DEFAULT_CONTEXT_WINDOW
    """Prompt plus completion tokens the model accepts."""
    context_window_from: Literal["spec", "default"] = "spec"
    """Whether ``context_window`` was given (``spec``) or is the default (``default``: not
    given, so the server's ``max_model_len`` is taken when it says; see ``check()``). Unset:
    ``spec`` when ``context_window`` is given."""
    prices: Prices = Field(default_factory=Prices)
    """List prices used when the provider reports no cost."""
    priced: bool = False
    """Whether ``prices`` were given (models file or spec options), so a zero is a real zero;
    ``--max-cost`` refuses a model that is not priced. ``local`` is priced (it is free)."""
    concurrency: Concurrency = DEFAULT_CONCURRENCY
    """Calls in flight at once to this endpoint, shared by every client of the endpoint."""
    timeout: Seconds = DEFAULT_TIMEOUT_S
    """Seconds allowed for one HTTP attempt, start to last byte."""
    connect_timeout: Seconds = DEFAULT_CONNECT_TIMEOUT_S
    """Seconds allowed to open the connection."""
    read_timeout: Seconds = DEFAULT_READ_TIMEOUT_S
    """When streaming: seconds allowed before the first byte and between two reads, so a dead
    connection fails in seconds however long ``timeout`` is."""
    deadline: Deadline | None = None
    """Seconds one call may take in all, retries, back-off and hedges included, from its
    first send; None: DEFAULT_DEADLINE_S (300), or ``timeout`` when larger; 0: none."""
    stream: bool = True
    """Ask for a streamed reply (SSE); an endpoint that answers in one body, or refuses, is
    then read that way."""
    hedge: Hedge = DEFAULT_HEDGE
    """In a wave of parallel calls, re-send a call still unanswered after this multiple of
    the wave's median latency (at least 1 s) and take the first answer; 0 turns it off."""
    tokens: bool = False
    """Ask for the prompt and completion token ids and each sampled token's logprob (vLLM's
    ``return_token_ids`` and ``logprobs``) and record them in the run's ``tokens.jsonl``,
    as ``hf:`` models do; the reply is then not streamed, and its text is kept as the tokens
    decode to (control characters are not stripped)."""
    max_output_tokens: Tokens | None = None
    """The reply cap (``max_tokens``) of a call that gives none; None: :func:`reply_cap` of
    the window (a quarter, at most 4,096), so no call goes out without a cap."""
    reasoning: Literal["auto", "open"] = "auto"
    """``open``: the model's chat template opens ``<think>`` in the prompt, so a reply without
    ``</think>`` is reasoning only; ``auto``: learned from the server (llama.cpp's ``GET
    /props`` template) and from the model's replies (one in the shape ``R</think>A``)."""
    schema_via: Literal["auto", "response_format", "prompt"] = "auto"
    """How a sub-call's ``schema=`` is asked for: ``response_format`` or ``prompt``;
    ``auto``: as the server was probed to be (``dealroom.models.schema_via``)."""
    max_retries: Retries = 4
    """Retries after a 429, 5xx, connection error, time-out or malformed body."""
    backoff_s: Seconds = 0.5
    """First retry delay; doubles each retry, full jitter, capped at 30 s (Retry-After wins)."""
    proxy: str | None = None
    """The HTTP(S) proxy to reach ``base_url`` through; ``None``: the environment's
    (``HTTPS_PROXY``/``HTTP_PROXY``, minus ``NO_PROXY``), ``""``: none (see ``_net``)."""
    ca_bundle: str | None = None
    """PEM file of the CA certificates to trust (else ``REQUESTS_CA_BUNDLE``, else the
    system's, or ``SSL_CERT_FILE``)."""
    client_cert: str | None = None
    """PEM file of a client certificate, for servers that require mutual TLS."""
    client_key: str | None = None
    """PEM file of ``client_cert``'s key (when not in the same file)."""
    verify: bool = True
    """Check the server's certificate; ``false`` (models file only) is warned about once."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """Extra request headers; ``${NAME}`` in a value is the environment variable NAME. Never
    recorded: :meth:`to_dict` leaves them out."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific settings: ``extra_body`` (merged into each request),
    ``max_tokens_field`` (``max_completion_tokens`` for OpenAI reasoning models), or anything
    a third-party provider reads."""
    source: str | None = None
    """The models file this spec came from, if any."""

    def __init__(self, **data: Any) -> None:
        try:
            BaseModel.__init__(self, **data)
        except ValidationError as exc:
            raise InputError(f"{_where(data.get('name'), data.get('source'))}: "
                             f"{explain(exc, type(self))}") from None

    @model_validator(mode="before")
    @classmethod
    def _window_source(cls, data: Any) -> Any:
        if isinstance(data, dict) and "context_window_from" not in data:
            data = {**data, "context_window_from": "spec" if "context_window" in data
                    else "default"}
        return data

    @field_validator("base_url")
    @classmethod
    def _no_trailing_slash(cls, url: str | None) -> str | None:
        return None if url is None else url.rstrip("/")

    @model_validator(mode="after")
    def _check(self) -> ModelSpec:
        where = _where(self.name, self.source)
        if self.kind not in ("local", "scripted") and not self.model:
            raise ConfigError(f"{where}: set `model` (the model id the endpoint serves)")
        if self.base_url is not None:
            check_url(where, "base_url", self.base_url)
        check_settings(where, **{key: getattr(self, key) for key in NET_KEYS})
        return self

    def replace(self, **changes: Any) -> ModelSpec:
        """A copy with ``changes``, validated as a new spec is (``dataclasses.replace``'s
        counterpart; ``model_copy(update=...)`` would not validate)."""
        return type(self)(**{**dict(self), **changes})

    __replace__ = replace  # copy.replace (Python 3.13)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record for ``config.json``; :meth:`from_dict` rebuilds the spec. The
        extra headers are left out and a proxy's password is hidden: records hold no secret."""
        record = self.model_dump(exclude={"headers"})
        if self.proxy:
            record["proxy"] = redact(self.proxy)
        return record

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelSpec:
        """The spec a :meth:`to_dict` record holds; keys this version does not know are
        ignored (records of later versions still open)."""
        return cls(**{k: v for k, v in data.items() if k in cls.model_fields})

    @property
    def call_deadline(self) -> float:
        """The deadline in force, in seconds (0: none); see :attr:`deadline`."""
        if self.deadline is None:
            return max(DEFAULT_DEADLINE_S, self.timeout)
        return float(self.deadline)

    def with_concurrency(self, concurrency: int | None) -> ModelSpec:
        """This spec with another ``concurrency`` (None: this one), validated."""
        return self if concurrency is None else self.replace(concurrency=concurrency)


REPLY_CAP = 4096
"""The most tokens :func:`reply_cap` gives a reply by default."""


def reply_cap(window: int, given: int | None = None) -> int:
    """The reply cap of a call: ``given`` (the spec's ``max_output_tokens``), else a quarter
    of the window, at most :data:`REPLY_CAP`; the window counting reserves the same.

    >>> reply_cap(32_768), reply_cap(4096), reply_cap(4096, given=300)
    (4096, 1024, 300)
    """
    return int(given or max(1, min(REPLY_CAP, window // 4)))


def _where(name: Any, source: Any) -> str:
    return f"model '{name}'" + (f" in {source}" if source else "")


def check_url(where: str, key: str, url: str) -> None:
    """Raise InputError unless ``url`` parses with a host and a port in 1-65535."""
    import urllib.parse

    from dealroom.errors import InputError

    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InputError(f"{where}: {key} {url!r} is not a URL ({exc})") from None
    if not parts.hostname or port == 0:
        raise InputError(f"{where}: {key} {url!r} names no host (or port 0): give e.g. "
                         "http://127.0.0.1:8000/v1")


LOCAL_OPTIONS = ("timeout", "connect_timeout", "read_timeout", "deadline", "max_output_tokens",
                 "max_retries")
"""Options the embedded ``local`` model takes after ``#`` (``local#deadline=900``)."""


def local_spec(text: str = "local") -> ModelSpec:
    """The embedded default: SmolLM2-135M-Instruct on a llama.cpp server dealroom starts;
    ``text`` may carry :data:`LOCAL_OPTIONS` after ``#`` (its time-outs, its reply cap)."""
    spec = _local_base()
    extra = text.partition("#")[2]
    if not extra:
        return spec
    from dealroom.models._file import ModelEntry

    options = _spec_options(text, extra, LOCAL_OPTIONS)
    reader = field_reader(ModelEntry, LOCAL_OPTIONS, text=True)
    try:
        typed = reader.model_validate(options).model_dump(exclude_unset=True)
    except ValidationError as exc:
        raise InputError(f"bad model spec {text!r}: {explain(exc, reader)}") from None
    return spec.replace(name=text, **typed)


def _local_base() -> ModelSpec:
    return ModelSpec(
        name="local",
        kind="local",
        model=LOCAL_MODEL,
        context_window=4096,
        priced=True,
        concurrency=1,  # the server computes one request at a time (_local.SLOTS)
        timeout=300.0,
        stream=False,
        proxy="",  # a server dealroom starts on loopback: never through a proxy
    )


# -- spec strings -------------------------------------------------------------------------------


def resolve_model_spec(
    spec: str, *, models_file: Path | None = None, role: str = "sub"
) -> ModelSpec:
    """Turn a spec string into a :class:`ModelSpec`, or raise a ConfigError that says the fix.

    ``models_file`` defaults to ``./models.toml``, else ``~/.config/dealroom/models.toml``; it
    is read only when ``spec`` is a name. The secrets the spec uses are redacted from every
    file this process writes from now on (:func:`~dealroom.models._net.add_spec_secrets`), so
    a process that only collects results (a sweep's) leaves them out too.
    """
    resolved = _resolve(spec, models_file, role)
    add_spec_secrets(resolved)
    return resolved


def _resolve(spec: str, models_file: Path | None, role: str) -> ModelSpec:
    if role not in ROLES:
        raise ConfigError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    text = spec.strip() if isinstance(spec, str) else ""
    if not text:
        raise ConfigError("empty model spec: give a models-file name, `local`, or MODEL@BASE_URL")
    base, options = split_spec(text)
    if base == "scripted":
        if role != "root":
            raise ConfigError(
                f"`scripted` is reserved for --root (the scripted root policy), not the {role} "
                "model: give a models-file name, `local`, or MODEL@BASE_URL"
            )
        return ModelSpec(name=text, kind="scripted", context_window=1_000_000, options=options,
                         priced=True)
    if base == "oracle":
        from dealroom.models._oracle import oracle_spec

        if role != "sub":
            raise ConfigError(f"`oracle` is a simulated sub-agent (--sub), not a {role} model")
        return oracle_spec(text, options)
    if text == "local" or text.startswith("local#"):
        return local_spec(text)
    if text.startswith(HF_PREFIX):
        return hf_spec(text)
    if "@" in text:
        return _endpoint_spec(text)
    from dealroom.models._file import default_models_file, load_models_file

    path = models_file if models_file is not None else default_models_file()
    if path is None:
        raise ConfigError(
            f"unknown model {text!r}: no models file found (looked for ./models.toml and "
            "~/.config/dealroom/models.toml). Define [models." + text + "] in one, pass "
            "--models FILE, or give `local` or MODEL@BASE_URL (e.g. "
            "qwen3-35b@http://127.0.0.1:8000/v1)"
        )
    table = load_models_file(path)
    if text not in table:
        known = ", ".join(sorted(table)) or "none"
        raise ConfigError(
            f"unknown model {text!r}: not defined in {path} (defined: {known}). Add "
            f"[models.{text}], or give `local` or MODEL@BASE_URL"
        )
    return table[text]


def split_spec(text: str) -> tuple[str, dict[str, str]]:
    """``(name, options)`` of a spec string; only ``scripted`` and ``oracle`` take options.

    >>> split_spec("oracle:recall=0.7,seed=3")
    ('oracle', {'recall': '0.7', 'seed': '3'})
    >>> split_spec("qwen@http://127.0.0.1:8000/v1")
    ('qwen@http://127.0.0.1:8000/v1', {})
    """
    base, sep, rest = text.partition(":")
    if base not in WITH_OPTIONS:
        return text, {}
    options: dict[str, str] = {}
    for part in rest.split(",") if sep else []:
        key, eq, value = (p.strip() for p in part.partition("="))
        if not eq or not key or not value or key in options:
            raise ConfigError(f"bad option {part.strip()!r} in {text!r}: write "
                              f"{base}:KEY=VALUE,KEY=VALUE, each key once")
        options[key] = value
    return base, options


SPEC_OPTIONS = ("price_input", "price_cached_input", "price_output", "context_window",
                "concurrency", "max_output_tokens", "timeout", "connect_timeout", "read_timeout",
                "deadline", "stream", "hedge", "tokens", "proxy", "max_retries", "backoff_s",
                "reasoning", "schema_via")
"""Options a ``MODEL@BASE_URL#key=value,...`` spec may carry after ``#``: models-file keys,
typed and bounded as :class:`~dealroom.models.ModelEntry` says (``stream=off``, ``hedge=4``,
``reasoning=open``)."""


def _endpoint_spec(text: str) -> ModelSpec:
    address, _, extra = text.partition("#")
    model, _, base_url = address.rpartition("@")
    if not model or not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"bad model spec {text!r}: expected MODEL@BASE_URL with an http(s) URL, e.g. "
            "qwen3-35b@http://127.0.0.1:8000/v1"
        )
    options = _spec_options(text, extra)
    if "@" in options.get("proxy", ""):
        raise ConfigError(f"bad model spec {text!r}: a spec string is recorded with every run, "
                          "so its proxy cannot carry credentials; set HTTPS_PROXY, or proxy "
                          "in a models file")
    from dealroom.models._file import ModelEntry

    reader = field_reader(ModelEntry, SPEC_OPTIONS, text=True)  # "65536", "off": typed
    try:
        typed = reader.model_validate(options).model_dump(exclude_unset=True)
        entry = ModelEntry(model=model, base_url=base_url, api_key_env="OPENAI_API_KEY",
                           **typed)
    except ValidationError as exc:
        raise InputError(f"bad model spec {text!r}: {explain(exc, reader)}") from None
    except ConfigError as exc:
        raise type(exc)(f"bad model spec {text!r}: {exc}") from None
    return entry.to_spec(text, api_key_optional=True)


def _spec_options(text: str, extra: str,
                  keys: tuple[str, ...] = SPEC_OPTIONS) -> dict[str, str]:
    """The ``key=value`` pairs after ``#``, as text (:class:`ModelEntry` types them)."""
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in extra.split(","))):
        key, eq, value = (x.strip() for x in item.partition("="))
        if key not in keys or not eq:
            raise ConfigError(
                f"bad model spec {text!r}: unknown option {item!r}; after '#' give key=value "
                f"pairs separated by commas, keys: {', '.join(keys)}"
            )
        out[key] = value
    return out


def require_prices(models: list[Any], what: str = "--max-cost") -> None:
    """Refuse a cost budget over a model without prices (its calls would count $0).

    ``models`` are :class:`ModelSpec` objects or open clients (``client.spec``); clients
    without a spec (a ``ScriptedModel``) carry their own prices and pass.
    """
    for model in models:
        spec = getattr(model, "spec", model)
        if not isinstance(spec, ModelSpec) or spec.priced:
            continue
        if spec.source:
            how = (f"add price_input and price_output (USD per 1M tokens) to [models.{spec.name}] "
                   f"in {spec.source}")
        elif spec.kind == "openai" and "@" in spec.name:
            how = (f"give them in the spec, e.g. {spec.name.partition('#')[0]}"
                   "#price_input=0.5,price_output=1.5 (USD per 1M tokens), or name the model "
                   "in a models file with price_input and price_output")
        else:
            how = "give it price_input and price_output in the models file"
        raise ConfigError(
            f"{what} cannot govern model '{spec.name}': it has no prices, so its calls would "
            f"count as $0. {how[0].upper()}{how[1:]}; or budget with --max-tokens instead"
        )


# -- hf: specs ----------------------------------------------------------------------------------

HF_PREFIX = "hf:"


class HFOptions(Schema):
    """Options of an ``hf`` model: ``hf:PATH,key=value,...`` in a spec string, or the
    ``[models.NAME.options]`` table of a models file."""

    adapter: str | None = None
    """A LoRA adapter folder to load over the model."""
    device: Annotated[str, Field(pattern=r"^(auto|cpu|cuda(:[0-9]+)?)$", json_schema_extra={
        "allowed": "cpu, cuda, cuda:N or auto"})] = "auto"
    """Where the weights run: ``cpu``, ``cuda``, ``cuda:N``, or ``auto`` (cuda when present)."""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """The weights' dtype; ``auto``: the checkpoint's."""
    seed: Annotated[int, Field(ge=0)] = 0
    """Seed of the sampler (temperature above 0)."""
    max_tokens: Tokens | None = None
    """Default reply cap in tokens (the spec's ``max_output_tokens``)."""
    top_p: Annotated[float, Field(gt=0, le=1)] = 1.0
    """Nucleus sampling: the smallest set of tokens whose probabilities reach this share."""
    top_k: Annotated[int, Field(ge=0)] = 0
    """Sample among the K likeliest tokens; 0: all."""
    threads: Annotated[int, Field(ge=1)] | None = None
    """CPU threads torch may use."""


def hf_spec(text: str) -> ModelSpec:
    """Parse ``hf:PATH[,adapter=DIR][,device=cpu|cuda][,dtype=...][,seed=N][,max_tokens=N]
    [,top_p=P][,top_k=K][,threads=N]`` into a spec of kind ``hf``.

    >>> hf_spec("hf:local,device=cpu,seed=3").options
    {'device': 'cpu', 'seed': 3}
    """
    path, *items = text[len(HF_PREFIX):].split(",")
    if not path.strip():
        raise ConfigError(
            f"bad model spec {text!r}: give hf:local, hf:PATH (a model folder, a .gguf file or "
            "a training checkpoint), optionally followed by ,adapter=DIR,device=cpu|cuda,..."
        )
    raw = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not value:
            raise ConfigError(f"bad model spec {text!r}: {item!r} is not key=value")
        raw[key.strip()] = value.strip()
    options = hf_options(raw, where=f"model spec {text!r}", strict=False)
    return ModelSpec(name=text, kind="hf", model=path.strip(), concurrency=1, options=options,
                     max_output_tokens=options.get("max_tokens"), priced=True)


def hf_options(raw: dict[str, Any], where: str, strict: bool = True) -> dict[str, Any]:
    """The options of an ``hf`` model that ``raw`` gives, validated by :class:`HFOptions`
    (``strict=False``: text from a spec string, read as the types the keys take)."""
    reader = field_reader(HFOptions, text=not strict)
    try:
        options = reader.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"{where}: {explain(exc, reader, key='option')}") from None
    return options.model_dump(exclude_unset=True)
