"""On-disk records (``metrics.json``, ``scores.json``, ``sweep.json``, trajectory events):
read leniently, written strictly, versioned.

A record type is a TypedDict (the files stay plain JSON, the readers plain dicts that a type
checker follows) validated by a pydantic TypeAdapter built once. Reading keeps keys the type
does not name and allows keys older files lack, but a key present has its type, with no
coercion: a damaged file is an InputError naming the file and the key. Writing refuses a key
the type does not name, a key it needs that is missing, and a value of another type: a
ValueError (a bug in the writer, found by the tests), and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from dealroom.errors import ConfigError, DealroomError, InputError

T = TypeVar("T")

NOUNS = {"int_type": "an integer", "float_type": "a number", "string_type": "a string",
         "dict_type": "an object", "typed_dict_type": "an object", "list_type": "a list",
         "bool_type": "true or false"}
"""pydantic's error type → the kind it asked for, in words."""

Migration = Callable[[dict[str, Any]], dict[str, Any]]


class Record(Generic[T]):
    """One record type's reader and write check (``tagged``: a discriminated union, whose
    tag leads each error's location; ``damaged``: what a reader is told a bad file means)."""

    def __init__(self, kind: Any, *, tagged: bool = False,
                 damaged: str = "the run folder is damaged or was edited") -> None:
        self.kind, self.tagged, self.damaged = kind, tagged, damaged
        self._adapter: TypeAdapter[T] | None = None

    @property
    def adapter(self) -> TypeAdapter[T]:
        if self._adapter is None:
            self._adapter = TypeAdapter(self.kind)
        return self._adapter

    def read(self, record: Any, where: str) -> T:
        """``record`` as its type, or an InputError naming ``where`` and the key."""
        if not isinstance(record, dict):
            raise InputError(f"{where} holds {type(record).__name__}, not a JSON object")
        try:
            self.adapter.validate_python(record)
        except ValidationError as exc:
            raise InputError(explain(exc, where, self.damaged, skip=self.tagged)) from None
        return record  # type: ignore[return-value]  # validated: the dict itself, kept as read

    def check_written(self, record: Any, what: str, required: Iterable[str],
                      keys: str = "") -> None:
        """Raise ValueError unless ``record`` holds every key of ``required``, no key its type
        does not name, and each of its type (``keys``: the keys it may hold, in words, added
        to the error for a key missing or unknown)."""
        hint = f"; {keys}" if keys else ""
        missing = [k for k in required if k not in record]
        if missing:
            raise ValueError(f"{what} written without {', '.join(missing)}{hint}")
        try:
            self.adapter.validate_python(record, extra="forbid")
        except ValidationError as exc:
            error = exc.errors()[0]
            name = _name(error["loc"][int(self.tagged):])
            if error["type"] == "extra_forbidden":
                raise ValueError(f"{what} written with {name}, a key its record does not "
                                 f"name{hint}") from None
            noun = NOUNS.get(error["type"], error["msg"])
            raise ValueError(f"{what} written with {name} {show(error.get('input'))}, "
                             f"not {noun}") from None


def explain(exc: ValidationError, where: str, damaged: str, skip: int = 0) -> str:
    """``where: turn is 'x', not an integer: ...``: the first problem of ``exc`` in words."""
    error = exc.errors()[0]
    name = _name(error["loc"][skip:])
    if error["type"] == "missing":
        return f"{where}: {name or 'a key'} is missing: {damaged}"
    noun = NOUNS.get(error["type"])
    if noun is None:
        return f"{where}: {name}: {error['msg']}: {damaged}"
    return f"{where}: {name} is {show(error['input'])}, not {noun}: {damaged}"


def migrate(data: dict[str, Any], current: int, migrations: dict[int, Migration],
            where: str = "", error: type[DealroomError] = ConfigError) -> dict[str, Any]:
    """``data`` brought to version ``current``: each migration from its ``version`` on (none
    is 1) applied in turn. A version newer than ``current``, or not a number, is an ``error``
    (a ConfigError unless told; ``where``, the file, leads its message).

    >>> migrate({"a": 1}, 2, {1: lambda d: {"b": d["a"]}})
    {'b': 1, 'version': 2}
    """
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= current:
        raise error(f"{where}: " * bool(where) + f"format version {version!r}; this dealroom "
                    f"reads 1 to {current}: upgrade dealroom to read it")
    data = {**data, "version": version}
    while data["version"] < current:
        data = {**migrations[data["version"]](data), "version": data["version"] + 1}
    return data


def _name(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def show(value: Any) -> str:
    """``repr(value)``, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
