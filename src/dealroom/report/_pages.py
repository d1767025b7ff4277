"""Data beside the HTML as script files: each ``NAME.js`` calls ``DR.put(key, data)``.

Pages open from disk (``file://``), where a browser refuses ``fetch``; a ``<script src>`` it
loads. So every piece of data a page needs lazily (event pages, documents, the memo history)
is a small script that hands its JSON to the page's registration function, loaded when needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from dealroom._util.files import json_safe, write_bytes_atomic

T = TypeVar("T")


def script_json(data: object) -> str:
    """``data`` as JSON safe inside ``<script>``: no ``</`` or ``<!--`` can end the script."""
    text = json.dumps(json_safe(data), ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def write_script(path: Path, key: str, data: object) -> int:
    """Write ``path`` as ``DR.put(key, data);`` (via a temp file and rename: a page served
    while it is rewritten, as ``view --serve`` does, never reads half of it); the bytes
    written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = f"DR.put({json.dumps(key)},{script_json(data)});\n".encode()
    write_bytes_atomic(path, body)
    return len(body)


def chunks(items: list[T], size: int) -> list[list[T]]:
    """``items`` cut into pages of ``size`` (one empty page when there are none).

    >>> chunks([1, 2, 3], 2), chunks([], 2)
    ([[1, 2], [3]], [[]])
    """
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]
