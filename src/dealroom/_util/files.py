"""Atomic file writes, JSON and TOML reads, and guarded output folders.

Every write here leaves out the secrets the process knows (:mod:`dealroom._util.redact`).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any, TypeVar, cast

from dealroom._util.redact import dumps_redacted, redact, redact_bytes

T = TypeVar("T")


def read_toml(path: Path, what: str, missing: str = "") -> dict[str, Any]:
    """The TOML table in ``path``; a ConfigError names ``what`` (``"sweep spec PATH"``) when it
    does not exist (``missing`` is appended as a hint) or is not valid TOML."""
    from dealroom.errors import ConfigError

    if not Path(path).is_file():
        raise ConfigError(f"{what} does not exist{missing}")
    from dealroom.errors import InputError

    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{what} is not valid TOML: {exc}") from None
    except RecursionError:
        raise InputError(f"{what} is nested too deep to read") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror or exc}") from None


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as pretty JSON to ``path`` via a temp file and rename (known secrets
    redacted from its strings)."""
    text = dumps_redacted(data, indent=2, ensure_ascii=False)[1] + "\n"
    _write_atomic(path, text.encode("utf-8"))


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file (``.NAME.*.tmp`` beside it) and rename
    (known secrets redacted)."""
    _write_atomic(path, redact(text).encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file (``.NAME.*.tmp`` beside it) and rename
    (known secrets, UTF-8, redacted)."""
    _write_atomic(path, redact_bytes(data))


def _write_atomic(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; others (the sandbox's uid) must read it
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path, error: type[Exception], missing: str) -> Any:
    """Parse the JSON file ``path``; raise ``error(missing)`` if absent, ``error`` if invalid
    (an :class:`~dealroom.errors.InputError` when ``error`` is ConfigError and the JSON is
    nested too deep to read)."""
    path = Path(path)
    if not path.is_file():
        raise error(missing)
    return parse_json(path.read_text(encoding="utf-8", errors="replace"), str(path), error)


def parse_json(text: str, where: str, error: type[Exception]) -> Any:
    """``json.loads(text)``; ``error`` says that ``where`` is not valid JSON, or is nested
    deeper than :data:`MAX_JSON_DEPTH` (an InputError when ``error`` is ConfigError, as it
    is a subclass)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where} is not valid JSON: {exc}") from None
    except RecursionError:
        raise too_deep(where, error) from None
    if nested_too_deep(data, text):
        raise too_deep(where, error)
    return data


MAX_JSON_DEPTH = 100
"""The deepest nesting of lists and objects a record read from disk may have (``config.json``,
``metrics.json``, ``scores.json``, a trajectory line, ``room.json``, ``task.json``,
``sweep.json``): deeper ones are refused on read, before any reader walks them recursively."""


def nested_too_deep(data: Any, text: str = "") -> bool:
    """Whether lists and objects nest in ``data`` more than :data:`MAX_JSON_DEPTH` deep,
    walked without recursion; ``text``, the JSON ``data`` was parsed from, spares the walk
    when it holds too few brackets to nest that deep.

    >>> nested_too_deep({"a": [1, {"b": []}]}), nested_too_deep(json.loads("[" * 101 + "]" * 101))
    (False, True)
    """
    if text and text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = value.values()
        elif not isinstance(value, list):
            continue
        if depth > MAX_JSON_DEPTH:
            return True
        stack.extend((v, depth + 1) for v in value if isinstance(v, dict | list))
    return False


def too_deep(where: str, error: type[Exception]) -> Exception:
    """The error saying that ``where`` nests deeper than :data:`MAX_JSON_DEPTH`: an InputError
    when ``error`` is one of its bases (ConfigError), else ``error``."""
    from dealroom.errors import InputError

    deep = InputError if issubclass(InputError, error) else error
    return deep(f"{where} is nested too deep to read (lists and objects more than "
                f"{MAX_JSON_DEPTH} deep)")


def json_safe(value: T) -> T:
    """``value`` with every NaN or infinity replaced by ``None`` so it is valid JSON.

    >>> json_safe({"rate": float("nan"), "runs": [1.0, float("inf")]})
    {'rate': None, 'runs': [1.0, None]}

    Typed as returning what it is given: a dict stays a dict (tuples become lists and floats
    may become ``None`` inside it).
    """
    return cast(T, _json_safe(value))


def _json_safe(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def make_dir(path: Path, what: str) -> Path:
    """Make the folder ``path`` (parents included); an InputError naming ``what`` (``--out``)
    when it cannot be made there (``/proc/x``, no permission, a file in the way)."""
    from dealroom.errors import InputError

    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise InputError(f"cannot make {what} {path}: {reason}: give a folder that can be "
                         "written") from None
    return Path(path)


def clear_output_dir(out: Path, *, marker: str, kind: str, overwrite: bool) -> None:
    """Make ``out`` an empty folder; replace an existing one only with ``overwrite`` and only if
    it holds ``marker`` (so it is a ``kind`` dealroom wrote, not someone's other files)."""
    from dealroom.errors import ConfigError

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        if not overwrite:
            raise ConfigError(f"{out} already exists: choose another path or pass --force")
        if not (out / marker).is_file():
            raise ConfigError(f"{out} exists and is not a {kind}: refusing to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
