"""The environment: room format, text layer and index, generator, rubric, ingestion, LAB I/O."""

from dealroom.room._deliverable import deliverable_text
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
from dealroom.room._generate import GenerateSettings, generate_room, parse_count
from dealroom.room._index import index_status
from dealroom.room._ingest import (
    INGEST_REASONS,
    IngestProgress,
    IngestReport,
    IngestSettings,
    ReportEntry,
    ingest,
)
from dealroom.room._ingest import (
    REPORT as INGEST_REPORT,
)
from dealroom.room._inspect import inspect_room
from dealroom.room._lab import (
    classify_criterion,
    export_lab,
    import_lab,
    load_lab_task_file,
    to_room_task,
)
from dealroom.room._manifest import (
    DocumentRecord,
    RoomManifest,
    load_answer_key,
    load_manifest,
    load_task,
)
from dealroom.room._normalize import normalize_text
from dealroom.room._store import Doc, Hit, HitList, Room, RoomKeyError, build_index
from dealroom.room._task import (
    DEFAULT_DELIVERABLES,
    DEFAULT_INSTRUCTIONS,
    Instructions,
    load_instructions,
)
from dealroom.room._tokens import TOKENIZER, count_tokens
from dealroom.room._validate import Problem, validate_room

__all__ = [
    "DEFAULT_DELIVERABLES",
    "DEFAULT_INSTRUCTIONS",
    "INGEST_REASONS",
    "INGEST_REPORT",
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
    "Instructions",
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
    "load_answer_key",
    "load_instructions",
    "load_lab_task_file",
    "load_manifest",
    "load_task",
    "normalize_text",
    "parse_count",
    "to_room_task",
    "validate_room",
]
