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
from dealroom.room._ingest import (
    INGEST_REASONS,
    IngestProgress,
    IngestReport,
    IngestSettings,
    ReportEntry,
    ingest,
)
from dealroom.room._lab import classify_criterion, export_lab, import_lab
from dealroom.room._manifest import (
    DocumentRecord,
    RoomManifest,
    load_manifest,
    load_task,
)
from dealroom.room._tokens import TOKENIZER, count_tokens

__all__ = [
    "INGEST_REASONS",
    "REASONS",
    "TOKENIZER",
    "DocumentRecord",
    "Extraction",
    "ExtractionError",
    "ExtractionWarning",
    "IngestProgress",
    "IngestReport",
    "IngestSettings",
    "ReportEntry",
    "RoomManifest",
    "classify_criterion",
    "count_tokens",
    "decode_text",
    "extract_document",
    "export_lab",
    "extract_pages",
    "format_of",
    "import_lab",
    "ingest",
    "load_manifest",
    "load_task",
]
