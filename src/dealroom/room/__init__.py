"""The environment: room format, text layer and index, generator, rubric, ingestion, LAB I/O."""

from dealroom.room._extract import (
    REASONS,
    Extraction,
    ExtractionError,
    ExtractionWarning,
    decode_text,
    deliverable_text,
    extract_document,
    extract_pages,
    format_of,
)
from dealroom.room._generate import GenerateSettings, generate_room
from dealroom.room._index import index_status
from dealroom.room._ingest import (
    INGEST_REASONS,
    IngestProgress,
    IngestReport,
    IngestSettings,
    ReportEntry,
    ingest,
)
from dealroom.room._inspect import inspect_room
from dealroom.room._lab import classify_criterion, export_lab, import_lab
from dealroom.room._manifest import (
    DocumentRecord,
    RoomManifest,
    load_manifest,
    load_task,
)
from dealroom.room._normalize import normalize_text
from dealroom.room._store import Doc, Hit, HitList, Room, RoomKeyError, build_index
from dealroom.room._tokens import TOKENIZER, count_tokens
from dealroom.room._validate import Problem, validate_room

__all__ = [
    "INGEST_REASONS",
    "REASONS",
    "TOKENIZER",
    "Doc",
    "DocumentRecord",
    "GenerateSettings",
    "Extraction",
    "ExtractionError",
    "ExtractionWarning",
    "Hit",
    "HitList",
    "IngestProgress",
    "IngestReport",
    "IngestSettings",
    "Problem",
    "ReportEntry",
    "Room",
    "RoomKeyError",
    "RoomManifest",
    "build_index",
    "classify_criterion",
    "count_tokens",
    "decode_text",
    "deliverable_text",
    "extract_document",
    "export_lab",
    "extract_pages",
    "format_of",
    "generate_room",
    "import_lab",
    "index_status",
    "ingest",
    "inspect_room",
    "load_manifest",
    "load_task",
    "normalize_text",
    "validate_room",
]
