"""The one reader of JSONL records, and the repair that keeps an interrupted file appendable."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSONL file; stop at a torn line (a kill mid-write leaves one)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                return


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
    """Append one record as a JSON line, flushed, so a kill loses at most that line."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
