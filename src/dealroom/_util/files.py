"""Atomic JSON writes and append-only JSONL records."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as pretty JSON to ``path`` via a temp file and rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; others (the sandbox's uid) must read it
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path, error: type[Exception], missing: str) -> Any:
    """Parse the JSON file ``path``; raise ``error(missing)`` if absent, ``error`` if invalid."""
    path = Path(path)
    if not path.is_file():
        raise error(missing)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{path} is not valid JSON: {exc}") from exc


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one record as a JSON line and flush it to disk."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSONL file, skipping a torn last line left by a crash."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                return


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
