"""The environment: room format, text layer and index, generator, rubric, ingestion, LAB I/O."""

from typing import TYPE_CHECKING

from dealroom._util.lazy import lazy_exports

_EXPORTS = {
    "AgentFile": "dealroom.room._agent_files",
    "agent_files": "dealroom.room._agent_files",
    "CuadSettings": "dealroom.room._cuad",
    "import_cuad": "dealroom.room._cuad",
    "load_cuad": "dealroom.room._cuad",
    "write_cuad_sample": "dealroom.room._cuad_sample",
    "deliverable_text": "dealroom.room._deliverable",
    "file_name_problem": "dealroom.room._names",
    "decode_text": "dealroom.room._extract",
    "extract_document": "dealroom.room._extract",
    "extract_pages": "dealroom.room._extract",
    "Extraction": "dealroom.room._extract",
    "ExtractionError": "dealroom.room._extract",
    "ExtractionWarning": "dealroom.room._extract",
    "format_of": "dealroom.room._extract",
    "REASONS": "dealroom.room._extract",
    "generate_room": "dealroom.room._generate",
    "GenerateSettings": "dealroom.room._generate",
    "parse_count": "dealroom.room._generate",
    "dense_installed": "dealroom.room._dense:installed",
    "ensure_index": "dealroom.room._index",
    "index_status": "dealroom.room._index",
    "ingest": "dealroom.room._ingest",
    "INGEST_REASONS": "dealroom.room._ingest",
    "INGEST_REPORT": "dealroom.room._ingest:REPORT",
    "IngestProgress": "dealroom.room._ingest",
    "IngestReport": "dealroom.room._ingest",
    "IngestSettings": "dealroom.room._ingest",
    "ReportEntry": "dealroom.room._ingest",
    "inspect_room": "dealroom.room._inspect",
    "classify_criterion": "dealroom.room._lab",
    "export_lab": "dealroom.room._lab",
    "import_lab": "dealroom.room._lab",
    "load_lab_task_file": "dealroom.room._lab",
    "to_room_task": "dealroom.room._lab",
    "ANSWER_KEY": "dealroom.room._manifest",
    "DocumentRecord": "dealroom.room._room_schema",
    "load_answer_key": "dealroom.room._manifest",
    "load_manifest": "dealroom.room._manifest",
    "load_task": "dealroom.room._manifest",
    "RoomManifest": "dealroom.room._room_schema",
    "TASK_FILE": "dealroom.room._manifest:TASK",
    "Criterion": "dealroom.room._task_schema",
    "Expect": "dealroom.room._task_schema",
    "LabCriterion": "dealroom.room._task_schema",
    "LabTask": "dealroom.room._task_schema",
    "RoomTask": "dealroom.room._task_schema",
    "fold_quotes": "dealroom.room._normalize",
    "normalize_text": "dealroom.room._normalize",
    "OCR_MODES": "dealroom.room._ocr",
    "OcrLimits": "dealroom.room._ocr",
    "ocr_status": "dealroom.room._ocr",
    "build_index": "dealroom.room._store",
    "Doc": "dealroom.room._store",
    "Hit": "dealroom.room._store",
    "HitList": "dealroom.room._store",
    "Room": "dealroom.room._store",
    "RoomKeyError": "dealroom.room._store",
    "char_classes": "dealroom.room._tables",
    "char_codes": "dealroom.room._tables",
    "line_hashes": "dealroom.room._tables",
    "line_units": "dealroom.room._tables",
    "normalize_line": "dealroom.room._tables",
    "PREFIX_CHARS": "dealroom.room._tables",
    "prefix_hashes": "dealroom.room._tables",
    "token_bounds": "dealroom.room._tables",
    "DEFAULT_DELIVERABLES": "dealroom.room._task",
    "DEFAULT_INSTRUCTIONS": "dealroom.room._task",
    "Instructions": "dealroom.room._task",
    "load_instructions": "dealroom.room._task",
    "count_tokens": "dealroom.room._tokens",
    "TOKENIZER": "dealroom.room._tokens",
    "Problem": "dealroom.room._validate",
    "validate_room": "dealroom.room._validate",
}
"""Public name → the module that defines it (``module:name`` where renamed)."""

if TYPE_CHECKING:  # what type checkers and editors see (a test keeps it to _EXPORTS)
    from dealroom.room._agent_files import AgentFile, agent_files
    from dealroom.room._cuad import CuadSettings, import_cuad, load_cuad
    from dealroom.room._cuad_sample import write_cuad_sample
    from dealroom.room._deliverable import deliverable_text
    from dealroom.room._dense import installed as dense_installed
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
    from dealroom.room._index import ensure_index, index_status
    from dealroom.room._ingest import (
        INGEST_REASONS,
        IngestProgress,
        IngestReport,
        IngestSettings,
        ReportEntry,
        ingest,
    )
    from dealroom.room._ingest import REPORT as INGEST_REPORT
    from dealroom.room._inspect import inspect_room
    from dealroom.room._lab import (
        classify_criterion,
        export_lab,
        import_lab,
        load_lab_task_file,
        to_room_task,
    )
    from dealroom.room._manifest import (
        ANSWER_KEY,
        load_answer_key,
        load_manifest,
        load_task,
    )
    from dealroom.room._manifest import TASK as TASK_FILE
    from dealroom.room._names import file_name_problem
    from dealroom.room._normalize import fold_quotes, normalize_text
    from dealroom.room._ocr import OCR_MODES, OcrLimits, ocr_status
    from dealroom.room._room_schema import DocumentRecord, RoomManifest
    from dealroom.room._store import Doc, Hit, HitList, Room, RoomKeyError, build_index
    from dealroom.room._tables import (
        PREFIX_CHARS,
        char_classes,
        char_codes,
        line_hashes,
        line_units,
        normalize_line,
        prefix_hashes,
        token_bounds,
    )
    from dealroom.room._task import (
        DEFAULT_DELIVERABLES,
        DEFAULT_INSTRUCTIONS,
        Instructions,
        load_instructions,
    )
    from dealroom.room._task_schema import Criterion, Expect, LabCriterion, LabTask, RoomTask
    from dealroom.room._tokens import TOKENIZER, count_tokens
    from dealroom.room._validate import Problem, validate_room

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
