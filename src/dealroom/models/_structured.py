"""Schema-typed answers: how a JSON Schema is asked for, and how an answer is read against it.

    schema ──> schema_via(client) ──"response_format"──> response_format={"type":
          │                                                 "json_schema", ...} (the server
          │                                                 constrains the reply)
          └──────────────────────── "prompt" ──────────> the schema in the prompt
    reply text (reasoning apart) ──> read_structured ──> (value, None) | (None, why)

A client says how: the spec's ``schema_via`` (``response_format`` or ``prompt``), else, with
``auto``, what the server was probed to be (vLLM, SGLang, llama.cpp, llama-cpp-python and
Ollama honour ``response_format``; so does OpenAI), else a client's own ``schema_via``
attribute (the ``oracle`` answers schemas), else ``prompt``. Answers are read leniently
(the whole text, a fenced block, or the first JSON value in prose that matches) and checked
with ``jsonschema``, whatever way they were asked for.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from dealroom.errors import InputError

VIA = ("response_format", "prompt")
HONOURING = frozenset({"vllm", "llama.cpp", "llama-cpp-python", "ollama"})
"""Server families (``ServerFacts.family``) that constrain a reply to ``response_format``."""
MAX_CANDIDATES = 64
"""Most JSON values tried in one answer's prose."""
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n(.*?)```", re.S)
_OPEN = re.compile(r"[\[{]")

FINDINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"findings": {"type": "array", "items": {
        "type": "object",
        "properties": {
            "issue": {"type": "string"},
            "severity": {"type": "string", "enum": ["high", "medium", "low"]},
            "amount": {"type": ["string", "null"]},
            "document": {"type": "string"},
            "page": {"type": ["integer", "null"]},
        },
        "required": ["issue", "severity", "amount", "document", "page"],
    }}},
    "required": ["findings"],
}
"""The findings of a reading sub-call (the scripted root asks for them; the ``oracle``
answers any schema call in this shape)."""


def schema_via(client: Any) -> str:
    """How ``client`` is asked for a schema: ``response_format`` or ``prompt`` (see the
    module docstring); a server not probed yet counts as not honouring it."""
    spec = getattr(client, "spec", None)
    chosen = getattr(spec, "schema_via", "auto")
    if chosen in VIA:
        return str(chosen)
    refused: set[str] = getattr(client, "refused", set())
    if {"json_schema", "json_object"} <= refused:
        return "prompt"  # the endpoint turned both shapes down
    facts = getattr(client, "_facts", None)
    if getattr(facts, "family", None) in HONOURING:
        return "response_format"
    base = str(getattr(client, "base_url", None) or "")
    if base.startswith("https://api.openai.com/"):
        return "response_format"
    own = getattr(client, "schema_via", None)
    return own if own in VIA else "prompt"


def schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` that asks for ``schema``."""
    name = str(schema.get("title") or "answer")
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "answer"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def schema_prompt(schema: dict[str, Any]) -> str:
    """What a prompt gets when the schema goes in the prompt."""
    return ("\n\nAnswer with one JSON value and nothing else, matching this JSON Schema:\n"
            + json.dumps(schema, ensure_ascii=False))


def retry_note(error: str, schema: dict[str, Any]) -> str:
    """The note of the one re-ask after an answer that did not validate."""
    return (f"\n\nYour previous answer was rejected: {error[:500]}. Answer again with one "
            "JSON value and nothing else, matching this JSON Schema:\n"
            + json.dumps(schema, ensure_ascii=False))


def check_schema(schema: Any) -> Any:
    """The validator of ``schema`` (made once per distinct schema), or an InputError that
    says what is wrong with it."""
    if not isinstance(schema, dict | bool):
        raise InputError(f"schema must be a JSON Schema (a dict), got {type(schema).__name__}")
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InputError(f"schema is not JSON: {exc}") from None
    return _validator(key)


@functools.lru_cache(maxsize=64)
def _validator(key: str) -> Any:
    from jsonschema import SchemaError, validators

    schema = json.loads(key)
    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise InputError(f"schema is not a valid JSON Schema: {exc.message}") from None
    return cls(schema)


def schema_error(validator: Any, value: Any) -> str | None:
    """Why ``value`` does not match (the most relevant error, with where), or None."""
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = error.json_path if error.path else "the answer"
    return f"{error.message} (at {where})"


def read_structured(text: str, validator: Any, *,
                    cut: bool = False) -> tuple[Any, str | None]:
    """``(value, None)``: the first JSON value in ``text`` that matches (the whole text, a
    fenced block, then each ``{`` or ``[`` in the prose); else ``(None, why)``. Strings may
    hold raw line breaks (as grammar-constrained servers write them). A ``cut`` reply (it
    ended at the reply cap) may also be read as its complete elements, the rest dropped."""
    first_error: str | None = None
    tail = [_closed(text)] if cut else []
    for value in itertools.chain(_candidates(text), _parsed(tail)):
        error = schema_error(validator, value)
        if error is None:
            return value, None
        first_error = first_error or error
    return None, first_error or "the answer holds no JSON value"


def _candidates(text: str) -> Iterator[Any]:
    text = text.strip()
    try:
        yield json.loads(text, strict=False)
        return  # the whole answer is JSON: nothing else in it
    except ValueError:
        pass
    yield from _parsed(_FENCE.findall(text))
    decoder = json.JSONDecoder(strict=False)
    for n, match in enumerate(_OPEN.finditer(text)):
        if n >= MAX_CANDIDATES:
            return
        try:
            yield decoder.raw_decode(text, match.start())[0]
        except ValueError:
            continue


def _parsed(texts: list[str]) -> Iterator[Any]:
    for text in texts:
        try:
            yield json.loads(text, strict=False)
        except ValueError:
            continue


_CLOSER = {"{": "}", "[": "]"}


def _closed(text: str) -> str:
    """A reply cut inside a JSON value, kept up to its last complete element and closed:
    ``{"a": [1, {"b": 2}, {"c`` → ``{"a": [1, {"b": 2}]}`` ("" when nothing is complete).

    >>> _closed('{"findings": [{"x": 1}, {"x": "two')
    '{"findings": [{"x": 1}]}'
    """
    start = _OPEN.search(text)
    if start is None:
        return ""
    stack: list[str] = []
    best = ""
    in_string = escaped = False
    for i in range(start.start(), len(text)):
        ch = text[i]
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            in_string = True
        elif ch in _CLOSER:
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
            if not stack:
                return text[start.start():i + 1]
            best = text[start.start():i + 1] + "".join(_CLOSER[c] for c in reversed(stack))
        elif ch == "," and stack:
            best = text[start.start():i] + "".join(_CLOSER[c] for c in reversed(stack))
    return best
