"""Typed, validated records: pydantic models whose errors read as dealroom's own.

A :class:`Schema` refuses unknown keys and wrong types (no coercion: ``"5"`` is not an
integer, ``true`` is not a number); each field's docstring is its description (the CLI's help,
the generated JSON Schemas in ``docs/schemas/``). A failed validation raises one InputError
(a ConfigError the CLI exits 2 on) naming the key, what is allowed and what was given, e.g.
``lora_rank must be an integer of at least 1, got 0``; a field's ``json_schema_extra``
``{"why": ...}`` is added to its message, and ``{"allowed": ...}`` replaces the generated
words for what is allowed (``cpu, cuda, cuda:N or auto`` for a pattern). Checks across fields
live in ``model_validator(mode="after")`` methods and raise ConfigError themselves.
"""

from __future__ import annotations

import functools
from types import UnionType
from typing import (
    Annotated,
    Any,
    ClassVar,
    Literal,
    TypeVar,
    Union,
    dataclass_transform,
    get_args,
    get_origin,
)

import annotated_types as at
import pydantic.dataclasses
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from dealroom.errors import InputError

_T = TypeVar("_T")
_NOUNS: dict[Any, str] = {int: "an integer", float: "a number", bool: "true or false",
                          str: "a string"}


class Schema(BaseModel):
    """A record validated when built; a bad value is an :class:`InputError` (a ConfigError
    the CLI exits 2 on), not a traceback."""

    model_config = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True,
                              validate_assignment=True)
    object_noun: ClassVar[str] = "a table"
    """What an error calls a key that must hold a mapping: a TOML spec's "a table"; a JSON
    file's records say "an object"."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InputError(explain(exc, type(self))) from None

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (``config.json``, ``train.json``, ...)."""
        return self.model_dump(mode="json")


@dataclass_transform(field_specifiers=(Field,))
def schema_dataclass(cls: type[_T]) -> type[_T]:
    """``cls`` as a pydantic dataclass checked as a :class:`Schema` is, with the same errors:
    for settings that stay dataclasses (a harness's settings, which ``dataclasses.fields``,
    ``asdict`` and ``replace`` serve as the Harness protocol says; ``replace`` validates)."""
    out: Any = pydantic.dataclasses.dataclass(cls, config=Schema.model_config)
    init = out.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            init(self, *args, **kwargs)
        except ValidationError as exc:
            raise InputError(explain(exc, out)) from None

    out.__init__ = __init__
    return out  # type: ignore[no-any-return]


def explain(exc: ValidationError, cls: type[Any], limit: int | None = None,
            key: str = "key") -> str:
    """One line per problem of ``exc``, each naming the key, what is allowed and what came;
    past ``limit`` problems, a count of the rest. ``key`` is what the record's keys are
    called (``option`` for a spec string's)."""
    lines = [line for _, line in error_lines(exc, cls, key)]
    more = f" (and {len(lines) - limit} more)" if limit is not None and len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


def error_lines(exc: ValidationError, cls: type[Any],
                key: str = "key") -> list[tuple[ErrorDetails, str]]:
    """Each problem of ``exc`` as (pydantic's details, its line): a key nested in records
    reads ``documents[3].pages``."""
    return [(e, _line(e, cls, key)) for e in exc.errors()]


def _line(error: ErrorDetails, cls: type[Any], key: str = "key") -> str:
    name = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    name = name.lstrip(".") or cls.__name__
    kind, given = error["type"], error.get("input")
    owner, field = _owner(cls, error["loc"])
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return f"unknown {key} {name!r}; the {key}s are {', '.join(_fields(owner))}"
    extra = _extra(field.annotation) if field is not None else {}
    own = getattr(field, "json_schema_extra", None)
    extra.update(own if isinstance(own, dict) else {})
    why = f": {extra['why']}" if "why" in extra else ""
    if kind == "missing":
        return f"missing required {key} {name!r}{why}"
    if "allowed" in extra:
        return f"{name} must be {extra['allowed']}, got {given!r}{why}"
    types, bounds = _parts(field.annotation) if field is not None else ([], [])
    if field is not None:
        bounds += list(field.metadata)
    noun = next((_NOUNS[t] for t in types if t in _NOUNS), "")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal",
                "finite_number"):
        return f"{name} must be {_allowed(noun, bounds)}, got {given!r}{why}"
    if kind == "literal_error":
        choices = [str(c) for t in types for c in get_args(t)] if types and get_origin(
            types[0]) is Literal else [str(error.get("ctx", {}).get("expected"))]
        allowed = " or ".join([", ".join(choices[:-1]), choices[-1]] if len(choices) > 1
                              else choices)
        return f"{name} must be {allowed}, got {given!r}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        noun = getattr(cls, "object_noun", "a table")
        return f"{name} must be {noun}, got {given!r}{why}"
    if kind in ("list_type", "tuple_type"):
        return f"{name} must be a list, got {given!r}{why}"
    if kind.endswith(("_type", "_parsing")) and noun:  # parsing: a spec string's text
        return f"{name} must be {noun}, got {given!r}"
    if kind == "too_short":
        least = error.get("ctx", {}).get("min_length")
        return f"{name} must hold at least {least} item{'' if least == 1 else 's'}, got " \
               f"{given!r}{why}"
    if kind == "string_pattern_mismatch":
        return f"{name} must match {error.get('ctx', {}).get('pattern')}, got {given!r}{why}"
    return f"{name}: {error['msg']}"


def _fields(cls: type[Any]) -> dict[str, FieldInfo]:
    """The fields of a record: a model's, or a :func:`schema_dataclass`'s."""
    fields: dict[str, FieldInfo] = cls.model_fields if issubclass(cls, BaseModel) else \
        cls.__pydantic_fields__
    return fields


def _owner(cls: type[Any], loc: tuple[int | str, ...]) -> tuple[type[Any], FieldInfo | None]:
    """The record that holds the last key of ``loc`` (through nested records and lists of
    them) and that key's field; a dict's keys stay on the dict's field."""
    owner, field = cls, None
    for part in loc:
        if isinstance(part, int):
            continue
        if field is not None:
            inner = _model_of(field.annotation)
            if inner is None:
                break
            owner = inner
        field = _fields(owner).get(part)
        if field is None:
            break
    return owner, field


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The record type inside ``annotation`` (``X``, ``X | None``, ``list[X]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if (found := _model_of(arg)) is not None:
            return found
    return None


def _parts(annotation: Any) -> tuple[list[Any], list[Any]]:
    """The plain types in ``annotation`` (through ``X | None`` and ``Annotated``) and the
    constraints attached to them."""
    if get_origin(annotation) is Annotated:
        base, *meta = get_args(annotation)
        types, bounds = _parts(base)
        for m in meta:
            bounds += list(getattr(m, "metadata", [m]))
        return types, bounds
    if get_origin(annotation) in (tuple, list):  # the bounds of each item
        types, bounds = [], []
        for arg in get_args(annotation):
            if arg is not Ellipsis:
                more = _parts(arg)
                types, bounds = types + more[0], bounds + more[1]
        return types, bounds
    if get_origin(annotation) is dict:  # the bounds of each value
        return _parts(get_args(annotation)[1])
    if get_origin(annotation) in (Union, UnionType):
        types, bounds = [], []
        for arg in get_args(annotation):
            more = _parts(arg)
            types, bounds = types + more[0], bounds + more[1]
        return types, bounds
    return [annotation], []


def _extra(annotation: Any) -> dict[str, Any]:
    """The ``json_schema_extra`` of the ``Field(...)`` in ``annotation`` (``Price | None``)."""
    out: dict[str, Any] = {}
    for arg in get_args(annotation):
        extra = getattr(arg, "json_schema_extra", None)
        out.update(extra if isinstance(extra, dict) else _extra(arg))
    return out


def _allowed(noun: str, bounds: list[Any]) -> str:
    """``an integer of at least 1``, ``a positive finite number``: a bounded value in words."""
    limits = _range(bounds)
    if noun == "a number" and limits == "above 0" and any(
            getattr(m, "allow_inf_nan", True) is False for m in bounds):
        return "a positive finite number"
    return " ".join(p for p in (noun, limits) if p)


def _range(bounds: list[Any]) -> str:
    """``in (0, 1)``, ``of at least 1``, ``at most 2``: constraints in words."""
    low = high = None
    for m in bounds:
        if isinstance(m, at.Ge | at.Gt):
            low = ("[" if isinstance(m, at.Ge) else "(", m.ge if isinstance(m, at.Ge) else m.gt)
        if isinstance(m, at.Le | at.Lt):
            high = ("]" if isinstance(m, at.Le) else ")", m.le if isinstance(m, at.Le) else m.lt)
    if low and high:
        return f"in {low[0]}{low[1]}, {high[1]}{high[0]}"
    if low:
        return f"of at least {low[1]}" if low[0] == "[" else f"above {low[1]}"
    if high:
        return f"at most {high[1]}" if high[0] == "]" else f"below {high[1]}"
    return "finite"


def as_tuple(value: Any) -> Any:
    """A spec's list key as the tuple the model keeps: a TOML scalar stands for a list of one
    (a ``mode="before"`` field validator of specs written by hand).

    >>> as_tuple("rooms/a"), as_tuple([4, 16]), as_tuple((1,))
    (('rooms/a',), (4, 16), (1,))
    """
    return tuple(value) if isinstance(value, list) else (
        value if isinstance(value, tuple) else (value,))


@functools.cache
def field_reader(cls: type[BaseModel], keys: tuple[str, ...] | None = None, *,
                 text: bool = False) -> type[BaseModel]:
    """A plain model of ``cls``'s fields (``keys`` of them, default all), bounds and all,
    whose :class:`ValidationError` the caller words with :func:`explain` (its own context,
    ``option`` for its keys). ``text=True`` reads text as the types the fields take
    (``"65536"``, ``"off"``, ``"0.2"``): a spec string's ``key=value`` options. ``cls``'s
    checks across fields are not in it: build ``cls`` from what it gives."""
    fields: dict[str, Any] = {k: (f.annotation, f) for k, f in cls.model_fields.items()
                              if keys is None or k in keys}
    config = ConfigDict(extra="forbid", strict=not text, use_attribute_docstrings=True)
    model: type[BaseModel] = create_model(cls.__name__, __config__=config, **fields)
    return model


def field_help(cls: type[BaseModel]) -> dict[str, str]:
    """Each field's docstring, by name, on one line: the CLI's help and the docs use them."""
    return {name: " ".join((f.description or "").split()).replace("``", "")
            for name, f in cls.model_fields.items()}
