"""The one reader of JSONL records, and the repair that keeps an interrupted file appendable."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dealroom._util.files import nested_too_deep, too_deep
from dealroom._util.redact import dumps_redacted
from dealroom.errors import InputError

MAX_LINE = 256 * 2**20
"""The longest record line read, in characters: a longer one is refused as too large rather
than read whole into memory (no record dealroom writes comes near it)."""


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSONL file; stop at a torn last line (a kill mid-write leaves
    one). A line that is not a JSON object with records after it, one nested deeper than
    :data:`~dealroom._util.files.MAX_JSON_DEPTH` or one longer than :data:`MAX_LINE` is an
    :class:`InputError`: the file was damaged, not cut by a kill."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = iter(lambda: fh.readline(MAX_LINE + 1), "")  # "\n" is the one character over
        for n, line in enumerate(lines, 1):
            if len(line) > MAX_LINE and not line.endswith("\n"):
                raise InputError(f"{path}: line {n} is too large to read (over {MAX_LINE:,} "
                                 "characters): the file is damaged or was edited")
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except RecursionError:
                raise too_deep(f"{path}: line {n}", InputError) from None
            except json.JSONDecodeError as exc:
                if any(rest.strip() for rest in lines):
                    raise InputError(f"{path}: line {n} is not JSON ({exc}) and records follow "
                                     "it: the file is damaged (only a kill's torn last line "
                                     "is left out)") from None
                return
            if nested_too_deep(record, line):
                raise too_deep(f"{path}: line {n}", InputError)
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
