"""The environment: room format, text layer and index, generator, rubric, ingestion, LAB I/O."""

from dealroom.room._extract import (
    REASONS,
    Extraction,
    ExtractionError,
    ExtractionWarning,
    decode_text,
    extract_document,
    extract_pages,
    format_of,
)
from dealroom.room._manifest import (
    DocumentRecord,
    RoomManifest,
    load_manifest,
    load_task,
)
from dealroom.room._tokens import TOKENIZER, count_tokens

__all__ = [
    "REASONS",
    "TOKENIZER",
    "DocumentRecord",
    "Extraction",
    "ExtractionError",
    "ExtractionWarning",
    "RoomManifest",
    "count_tokens",
    "decode_text",
    "extract_document",
    "extract_pages",
    "format_of",
    "load_manifest",
    "load_task",
]
