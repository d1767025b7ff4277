"""Typed, validated records: pydantic models whose errors read as dealroom's own.

A :class:`Schema` refuses unknown keys and wrong types (no coercion: ``"5"`` is not an
integer, ``true`` is not a number); each field's docstring is its description (the CLI's help,
the generated JSON Schemas in ``docs/schemas/``). A failed validation raises one InputError
(a ConfigError the CLI exits 2 on) naming the key, what is allowed and what was given, e.g.
``lora_rank must be an integer of at least 1, got 0``; a field's ``json_schema_extra``
``{"why": ...}`` is added to its message. Checks across fields live in
``model_validator(mode="after")`` methods and raise ConfigError themselves.
"""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from dealroom.errors import InputError

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


def explain(exc: ValidationError, cls: type[BaseModel], limit: int | None = None) -> str:
    """One line per problem of ``exc``, each naming the key, what is allowed and what came;
    past ``limit`` problems, a count of the rest."""
    lines = [line for _, line in error_lines(exc, cls)]
    more = f" (and {len(lines) - limit} more)" if limit is not None and len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


def error_lines(exc: ValidationError, cls: type[BaseModel]) -> list[tuple[ErrorDetails, str]]:
    """Each problem of ``exc`` as (pydantic's details, its line): a key nested in records
    reads ``documents[3].pages``."""
    return [(e, _line(e, cls)) for e in exc.errors()]


def _line(error: ErrorDetails, cls: type[BaseModel]) -> str:
    name = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    name = name.lstrip(".") or cls.__name__
    kind, given = error["type"], error.get("input")
    owner, field = _owner(cls, error["loc"])
    if kind == "extra_forbidden":
        return f"unknown key {name!r}; the keys are {', '.join(owner.model_fields)}"
    extra = getattr(field, "json_schema_extra", None)
    why = f": {extra['why']}" if isinstance(extra, dict) and "why" in extra else ""
    if kind == "missing":
        return f"missing required key {name!r}{why}"
    types, bounds = _parts(field.annotation) if field is not None else ([], [])
    if field is not None:
        bounds += list(field.metadata)
    noun = next((_NOUNS[t] for t in types if t in _NOUNS), "")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal",
                "finite_number"):
        allowed = " ".join(p for p in (noun, _range(bounds)) if p)
        return f"{name} must be {allowed}, got {given!r}{why}"
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
    if kind.endswith("_type") and noun:
        return f"{name} must be {noun}, got {given!r}"
    return f"{name}: {error['msg']}"


def _owner(cls: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[type[BaseModel],
                                                                       FieldInfo | None]:
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
        field = owner.model_fields.get(part)
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


def field_help(cls: type[BaseModel]) -> dict[str, str]:
    """Each field's docstring, by name, on one line: the CLI's help and the docs use them."""
    return {name: " ".join((f.description or "").split()).replace("``", "")
            for name, f in cls.model_fields.items()}
