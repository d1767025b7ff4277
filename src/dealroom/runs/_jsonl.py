"""The one reader of JSONL records, and the repair that keeps an interrupted file appendable."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dealroom._util.redact import dumps_redacted
from dealroom.errors import InputError


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSONL file; stop at a torn last line (a kill mid-write leaves
    one). A line that is not a JSON object with records after it, or one nested too deep to
    read, is an :class:`InputError`: the file was damaged, not cut by a kill."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except RecursionError:
                raise InputError(f"{path}: line {n} is nested too deep to read") from None
            except json.JSONDecodeError as exc:
                if any(rest.strip() for rest in fh):
                    raise InputError(f"{path}: line {n} is not JSON ({exc}) and records follow "
                                     "it: the file is damaged (only a kill's torn last line "
                                     "is left out)") from None
                return
            if not isinstance(record, dict):
                raise InputError(f"{path}: line {n} is {type(record).__name__}, not a JSON "
                                 "object")
            yield record


def drop_torn_tail(path: Path) -> None:
    """Cut a half-written last line so that appended records stay valid JSONL."""
    if not path.is_file():
        return
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with open(path, "r+b") as fh:
            fh.truncate(end)


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one record as a JSON line, flushed, so a kill loses at most that line (known
    secrets redacted from its strings)."""
    line = dumps_redacted(record, ensure_ascii=False)[1] + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
