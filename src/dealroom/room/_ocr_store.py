"""OCR text kept beside the room, so an index rebuilt later keeps it without OCR'ing again.

    ROOM/ocr/<path under documents/>.json
      {"version": 1, "engine": "tesseract 5.3.0", "sha256": "<the document's>",
       "pages": {"3": {"text": "...", "confidence": 91.4, "dpi": 300}}}

``dpi`` is the resolution a PDF page was rendered at (lower than 300 for a large page; absent
for an image file).

Written by ingest for each document it OCR'd; read by the index builder, which lays the pages
over the document's own extraction when the file's SHA-256 still matches (a replaced document
is extracted afresh, without the stale OCR).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from dealroom._util.files import write_json_atomic
from dealroom.room._extract import Extraction
from dealroom.room._manifest import DOCUMENTS
from dealroom.room._normalize import normalize_text

OCR_DIR = "ocr"


def ocr_file(room_dir: Path, rel: str) -> Path:
    """Where the OCR text of the document at ``rel`` (``documents/...``) is kept."""
    inner = rel[len(DOCUMENTS) + 1:] if rel.startswith(DOCUMENTS + "/") else rel
    return Path(room_dir) / OCR_DIR / f"{inner}.json"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def write_ocr(room_dir: Path, rel: str, sha256: str, engine: str,
              pages: dict[int, tuple[str, float, int]]) -> None:
    """Keep the OCR'd ``pages`` (1-based page → text, confidence, dpi) of the document
    ``rel``."""
    path = ocr_file(room_dir, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {
        "version": 1, "engine": engine, "sha256": sha256,
        "pages": {str(p): {"text": t, "confidence": c, **({"dpi": d} if d else {})}
                  for p, (t, c, d) in sorted(pages.items())},
    })


def read_ocr(room_dir: Path, rel: str) -> dict[str, Any] | None:
    """The kept OCR record of ``rel``, or ``None`` when there is none (or it is unreadable)."""
    path = ocr_file(room_dir, rel)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("pages"), dict) else None


def overlay_ocr(room_dir: Path, rel: str, extraction: Extraction, path: Path) -> Extraction:
    """``extraction`` with the kept OCR pages of ``rel`` (read from ``path``, the file as
    :func:`~dealroom.room._manifest.document_path` resolved it) laid over it when current."""
    record = read_ocr(room_dir, rel)
    if record is None or record.get("sha256") != _sha256(path):
        return extraction
    for key, page in record["pages"].items():
        n = int(key)
        if 1 <= n <= len(extraction.pages):
            extraction.pages[n - 1] = normalize_text(page.get("text", ""))
            extraction.ocr[n] = float(page.get("confidence", 0.0))
    return extraction
