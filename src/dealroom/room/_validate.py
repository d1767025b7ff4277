"""Checking any room, generated or hand-made, against the room format.

:func:`validate_room` never raises for a broken room: it returns every :class:`Problem` it
finds, errors (the room is invalid) and warnings (it is valid but a judge or agent will miss
something). ``deep=True`` also opens every document and checks its page and token counts and
that every evidence fact of the answer key is on the page it names.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from dealroom._util.records import migrate
from dealroom._util.schema import error_lines
from dealroom.errors import RoomError
from dealroom.room._extract import extract_document, format_of
from dealroom.room._manifest import (
    ANSWER_KEY,
    COPIED,
    DOCUMENTS,
    FORMATS,
    MANIFEST,
    TASK,
    cite_ids,
    document_path,
)
from dealroom.room._names import file_name_problem
from dealroom.room._ocr_store import overlay_ocr
from dealroom.room._room_schema import (
    MIGRATIONS,
    ROOM_VERSION,
    DocumentRecord,
    RoomManifest,
)
from dealroom.room._task_schema import Expect, migrate_task, task_errors
from dealroom.room._tokens import TOKENIZER, count_tokens

SEVERITIES = ("high", "medium", "low")
_DOC_ID = re.compile(r"^D\d{5}$")
_CRITERION_ID = re.compile(r"^C-\d{3,}$")
_ISO = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
Errors = list[tuple[ErrorDetails, str]]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a room."""

    level: str
    """``error`` (the room is invalid) or ``warning``."""
    where: str
    """The file and, inside it, the record: ``task.json: C-012``."""
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.where}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


class _Report:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def error(self, where: str, message: str) -> None:
        self.problems.append(Problem("error", where, message))

    def warn(self, where: str, message: str) -> None:
        self.problems.append(Problem("warning", where, message))


def _read_json(path: Path, report: _Report, required: bool = True) -> Any:
    name = path.relative_to(path.parents[1] if path.parent.name == ANSWER_KEY else path.parent)
    if not path.is_file():
        if required:
            report.error(str(name), "is missing")
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        report.error(str(name), f"is not valid JSON: {exc}")
        return None
    except RecursionError:
        report.error(str(name), "is nested too deep to read")
        return None


def validate_room(path: Path | str, *, deep: bool = False, hashes: bool = True) -> list[Problem]:
    """Every problem of the room at ``path`` (empty: the room is valid).

    ``hashes`` re-hashes every file against ``room.json``; ``deep`` also extracts every
    document (slow on large rooms).
    """
    root = Path(path)
    report = _Report()
    if not root.is_dir():
        report.error(str(root), "is not a folder")
        return report.problems
    manifest = _read_json(root / MANIFEST, report)
    docs = _check_manifest(root, manifest, report, hashes) if manifest is not None else {}
    task = _read_json(root / TASK, report)
    findings_ids: set[str] | None = None
    key = root / ANSWER_KEY
    findings = _read_json(key / "findings.json", report, required=False) if key.is_dir() else None
    if findings is not None:
        findings_ids = _check_findings(findings, docs, task, report)
    if key.is_dir() and not (key / "gold_memo.md").is_file():
        report.warn(f"{ANSWER_KEY}/", "has no gold_memo.md")
    if task is not None:
        _check_task(task, docs, findings_ids, report)
    if deep and docs:
        _check_deep(root, docs, findings, report)
    return report.problems


def _check_manifest(root: Path, data: Any, report: _Report,
                    hashes: bool) -> dict[str, DocumentRecord]:
    """room.json against :class:`RoomManifest` (each problem where it is), then each record
    that has the right types against the room; the records by id."""
    if not isinstance(data, dict):
        report.error(MANIFEST, "must be a JSON object")
        return {}
    try:
        data = migrate(data, ROOM_VERSION, MIGRATIONS, MANIFEST, RoomError)
    except RoomError as exc:
        report.error(MANIFEST, str(exc).removeprefix(f"{MANIFEST}: "))
        return {}
    errors = _manifest_errors(data)
    for error, line in errors:
        loc = error["loc"]
        report.error(f"{MANIFEST}: documents[{loc[1]}]" if len(loc) > 1 and loc[0] == "documents"
                     else MANIFEST, line)
    if data.get("tokenizer", TOKENIZER) != TOKENIZER:
        report.warn(MANIFEST, f"tokenizer {data.get('tokenizer')!r} is not {TOKENIZER}: token "
                    "counts will not match dealroom's")
    listed = data.get("documents") if _clean(errors, "documents") is not None else None
    docs: dict[str, DocumentRecord] = {}
    paths: set[str] = set()
    for n, raw in enumerate(listed if isinstance(listed, list) else []):
        if _clean(errors, "documents", n) != set():
            continue  # reported above
        doc = DocumentRecord.model_validate(raw)
        where = f"{MANIFEST}: documents[{n}]"
        _check_record(root, doc, report, hashes)
        if doc.id in docs:
            report.error(where, f"duplicate id {doc.id}")
        if doc.path in paths:
            report.error(where, f"duplicate path {doc.path}")
        docs[doc.id] = doc
        paths.add(doc.path)
    if _clean(errors, "totals") == set():
        _check_totals(data.get("totals"), list(docs.values()), report)
    copied = (data.get("meta") or {}).get(COPIED) if isinstance(data.get("meta"), dict) else None
    _check_unlisted(root, paths, copied if isinstance(copied, dict) else {}, report)
    return docs


def _manifest_errors(data: dict[str, Any]) -> Errors:
    """Every problem :class:`RoomManifest` finds in ``data``, as (pydantic's details, line)."""
    try:
        RoomManifest.model_validate(data)
    except ValidationError as exc:
        return error_lines(exc, RoomManifest)
    return []


def _clean(errors: Errors, *path: int | str) -> set[int | str] | None:
    """The keys under ``path`` that the schema found a problem in (empty: none); None when
    the value at ``path`` itself is wrong (missing, or of the wrong type)."""
    keys: set[int | str] = set()
    for error, _ in errors:
        loc = tuple(error["loc"])
        if loc == path:
            return None
        if loc[:len(path)] == path:
            keys.add(loc[len(path)])
    return keys


def _check_record(root: Path, doc: DocumentRecord, report: _Report, hashes: bool) -> None:
    where = doc.path
    if not _DOC_ID.match(doc.id):
        report.error(where, f"id {doc.id!r} is not D followed by five digits")
    parts = doc.path.split("/")
    if parts[0] != DOCUMENTS or len(parts) < 2 or {"", ".", ".."} & set(parts[1:]):
        report.error(where, f"path must be {DOCUMENTS}/[folder/.../]file, without '.' or '..'")
        return
    if "/".join(parts[1:-1]) != doc.folder:
        report.error(where, f"folder {doc.folder!r} is not the file's folder")
    if doc.folder.split("/")[0] != doc.category:
        report.error(where, f"category {doc.category!r} is not the top folder")
    if doc.format not in FORMATS:
        report.error(where, f"format {doc.format!r} is not one of {', '.join(FORMATS)}")
    elif format_of(Path(doc.path)) != doc.format:
        report.error(where, f"format {doc.format!r} does not match the file name")
    if doc.pages < 1:
        report.error(where, "pages must be at least 1")
    if not os.path.lexists(root / doc.path):
        report.error(where, "file is missing")
        return
    try:
        file = document_path(root, doc.path)
    except RoomError as exc:
        report.error(where, f"{exc}: it is never read")
        return
    size = file.stat().st_size
    if doc.bytes and doc.bytes != size:
        report.error(where, f"bytes {doc.bytes} but the file has {size}")
    if not _SHA.match(doc.sha256):
        report.error(where, "sha256 is not 64 lowercase hex digits")
    elif hashes and hashlib.sha256(file.read_bytes()).hexdigest() != doc.sha256:
        report.error(where, "sha256 does not match the file (changed since room.json was written)")


def _check_totals(totals: dict[str, int] | None, docs: list[DocumentRecord],
                  report: _Report) -> None:
    if totals is None:
        return
    actual = RoomManifest(name="", documents=docs).totals()
    for key, value in actual.items():
        if key in totals and totals[key] != value:
            report.error(MANIFEST, f"totals.{key} is {totals[key]} but the documents add up to "
                         f"{value}")


def _check_unlisted(root: Path, paths: set[str], copied: dict[str, Any],
                    report: _Report) -> None:
    """Files in documents/ that room.json does not list: an error, unless ingest copied them
    there as not documents (``meta.copied``) or they are hidden (warnings)."""
    folder = root / DOCUMENTS
    if not folder.is_dir():
        report.error(f"{DOCUMENTS}/", "is missing")
        return
    for file in sorted(folder.rglob("*")):
        rel = file.relative_to(root).as_posix()
        if file.is_file() and rel not in paths:
            if rel in copied:
                report.warn(rel, f"copied by ingest but not a document ({copied[rel]}): agents "
                            "do not see it")
            elif file.name.startswith("."):
                report.warn(rel, "hidden file not listed in room.json")
            else:
                report.error(rel, "is not listed in room.json")
        if file.is_dir() and file.name == ANSWER_KEY:
            report.error(rel, f"{ANSWER_KEY} must sit beside {DOCUMENTS}/, never inside it")


def task_problems(task: Any) -> list[Problem]:
    """What ``validate`` would say of ``task`` (a task.json's content) before any room exists:
    every check but those that need the room's documents."""
    report = _Report()
    _check_task(task, None, None, report)
    return report.problems


_FILE_NAME = re.compile(r"[^/\\\s][^/\\]{0,99}\.[A-Za-z0-9]{1,8}")


def _check_deliverables(deliverables: dict[str, str], report: _Report) -> None:
    """Each deliverable's value is a file name (``memo.md``), not a description of it."""
    for name, value in deliverables.items():
        if _FILE_NAME.fullmatch(value) and value.count(" ") <= 4 and \
                not file_name_problem(value):
            continue
        stem = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "memo"
        suffix = ".docx" if re.search(r"\b(docx|word)\b", f"{name} {value}", re.I) else ".md"
        report.error(TASK, f"deliverables[{name!r}] is {value[:60]!r}, not a file name: give "
                     f"one such as {stem.removesuffix(suffix.strip('.'))}{suffix} "
                     "(describe the deliverable in the instructions)")


def _check_task(task: Any, docs: dict[str, DocumentRecord] | None, findings: set[str] | None,
                report: _Report) -> None:
    """task.json against :class:`RoomTask` (each problem where it is), then what the schema
    cannot say, on every part that has the right types."""
    if not isinstance(task, dict):
        report.error(TASK, "must be a JSON object")
        return
    try:
        task = migrate_task(task)
    except RoomError as exc:
        report.error(TASK, str(exc).removeprefix(f"{TASK}: "))
        return
    errors = task_errors(task)
    for error, line in errors:
        report.error(_where(task, error["loc"]), line)
    for field in ("title", "instructions"):
        if isinstance(task.get(field), str) and not task[field].strip():
            report.error(TASK, f"needs a non-empty {field!r}")
    deliverables: dict[str, str] = {}
    if _clean(errors, "deliverables") == set():
        deliverables = task.get("deliverables") or {}
        if not deliverables:
            report.error(TASK, "deliverables must map names to file names, e.g. "
                         '{"memo": "memo.md"}')
    _check_deliverables(deliverables, report)
    if _clean(errors, "criteria") is None:
        return  # missing, or not a list: reported
    if not task["criteria"]:  # an ingested room before anyone wrote its rubric
        report.warn(TASK, "has no criteria: agents can review the room, but there is nothing "
                    "to judge a memo against (add a rubric, e.g. dealroom ingest --task)")
        return
    if docs:  # a document may be named by its path: checked as the id it names
        task = cite_ids(task, docs.values())
    rubric = _Rubric(set(), docs, set(deliverables) | set(deliverables.values()), findings)
    for n, criterion in enumerate(task["criteria"]):
        bad = _clean(errors, "criteria", n)
        if bad is not None:  # None: not an object, reported
            _check_criterion(criterion, n, bad, rubric, report,
                             _clean(errors, "criteria", n, "expect"))


def _where(task: dict[str, Any], loc: tuple[int | str, ...]) -> str:
    """``task.json``, or ``task.json: C-012`` for a problem inside a criterion."""
    if len(loc) < 2 or loc[0] != "criteria" or not isinstance(loc[1], int):
        return TASK
    criterion = task["criteria"][loc[1]]
    cid = criterion.get("id") if isinstance(criterion, dict) else None
    return f"{TASK}: {cid if isinstance(cid, str) else f'criteria[{loc[1]}]'}"


@dataclass
class _Rubric:
    """What a criterion is checked against: the ids seen so far, the room's documents (None:
    no room yet), the deliverables' names and file names, the answer key's findings."""

    seen: set[str]
    docs: dict[str, DocumentRecord] | None
    names: set[str]
    findings: set[str] | None


def _check_criterion(c: dict[str, Any], n: int, bad: set[int | str], rubric: _Rubric,
                     report: _Report, expect_bad: set[int | str] | None) -> None:
    """One criterion's values; a key the schema found wrong (``bad``) is reported already."""
    def ok(key: str) -> bool:
        return key in c and key not in bad and c[key] is not None

    where = f"{TASK}: {c['id'] if ok('id') else f'criteria[{n}]'}"
    if ok("id"):
        if not _CRITERION_ID.match(c["id"]):
            report.error(where, f"id {c['id']!r} is not like C-001")
        elif c["id"] in rubric.seen:
            report.error(where, "duplicate id")
        rubric.seen.add(c["id"])
    for field in ("title", "match_criteria"):
        if ok(field) and not c[field].strip():
            report.error(where, f"needs a non-empty {field!r}")
    if ok("match_criteria") and "PASS if" not in c["match_criteria"]:
        report.error(where, "match_criteria must read 'PASS if ... [FAIL if ...]'")
    graded = c["deliverables"] if ok("deliverables") else None  # None: grades every one
    if graded is not None and not (graded and set(graded) <= rubric.names):
        report.error(where, f"deliverables must list names or file names from task "
                     f"deliverables ({', '.join(sorted(rubric.names)) or 'none'}), or be left out")
    if c.get("type") is None:
        report.warn(where, "has no type: it cannot be counted by type")
    if rubric.findings is not None and ok("finding") and c["finding"] not in rubric.findings:
        report.error(where, f"finding {c['finding']!r} is not in answer_key/findings.json")
    if "expect" not in c:
        report.warn(where, "has no expect block: the reference judge cannot score it")
    elif not c["expect"]:
        report.error(where, "expect must be a non-empty object")
    elif expect_bad is not None:
        expect = Expect.model_validate({k: v for k, v in c["expect"].items()
                                        if k not in expect_bad})
        _check_expect(expect, where, rubric.docs, report)


def _check_pages(pages: dict[str, list[int]], where: str, docs: dict[str, DocumentRecord] | None,
                 report: _Report) -> None:
    """``expect.pages``: documents of the room, pages it has."""
    if docs is None:
        return
    for doc, listed in pages.items():
        if doc not in docs:
            report.error(where, f"expect.pages names {doc!r}, which is not in room.json")
        elif not (listed and all(1 <= p <= docs[doc].pages for p in listed)):
            report.error(where, f"expect.pages[{doc!r}] must list pages 1-{docs[doc].pages}")


def _check_expect(expect: Expect, where: str, docs: dict[str, DocumentRecord] | None,
                  report: _Report) -> None:
    _check_pages(expect.pages, where, docs, report)
    for doc in expect.cite:
        if docs is not None and doc not in docs:
            report.error(where, f"expect.cite names {doc!r}, which is not in room.json")
    for day in expect.dates:
        if not _ISO.match(day):
            report.error(where, f"expect.dates entry {day!r} is not an ISO date")
    for group in expect.terms:
        if not (group and all(t.strip() for t in group)):
            report.error(where, f"expect.terms entry {group!r} is not a list of phrases")
    if expect.negative and not (expect.terms or expect.cite):
        report.error(where, "a negative criterion needs the claim's terms or cite")


def _check_findings(data: Any, docs: dict[str, DocumentRecord], task: Any,
                    report: _Report) -> set[str]:
    where = f"{ANSWER_KEY}/findings.json"
    items = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(items, list):
        report.error(where, "needs a list 'findings'")
        return set()
    listed = task.get("criteria") if isinstance(task, dict) else None
    criteria = {c.get("id") for c in listed or [] if isinstance(c, dict)} \
        if isinstance(listed, list) else set()
    ids: set[str] = set()
    for n, f in enumerate(items):
        fid = f.get("id") if isinstance(f, dict) else None
        here = f"{where}: {fid or f'findings[{n}]'}"
        if not isinstance(fid, str) or fid in ids:
            report.error(here, "needs a unique string id")
            continue
        ids.add(fid)
        if f.get("severity") not in SEVERITIES:
            report.error(here, f"severity must be one of {', '.join(SEVERITIES)}")
        for ev in f.get("evidence", []):
            doc = docs.get(ev.get("doc", "")) if isinstance(ev, dict) else None
            if doc is None:
                report.error(here, f"evidence names {ev!r}, which is not in room.json")
            elif not (isinstance(ev.get("page"), int) and 1 <= ev["page"] <= doc.pages):
                report.error(here, f"evidence page {ev.get('page')!r} is outside {ev['doc']} "
                             f"(1-{doc.pages})")
        for cid in f.get("criteria", []):
            if task is not None and cid not in criteria:
                report.error(here, f"criterion {cid!r} is not in task.json")
    return ids


def _flat(text: str) -> str:
    return " ".join(text.split())


def _check_deep(root: Path, docs: dict[str, DocumentRecord], findings: Any,
                report: _Report) -> None:
    pages_of: dict[str, list[str]] = {}
    for doc in docs.values():
        try:
            path = document_path(root, doc.path)
        except RoomError:  # missing or unsafe: already reported, never read
            continue
        try:  # the OCR text ingest kept is part of the document's text
            pages = overlay_ocr(root, doc.path, extract_document(path, doc.format), path).pages
        except RoomError as exc:
            report.error(doc.path, f"cannot be read: {exc}")
            continue
        pages_of[doc.id] = [_flat(p) for p in pages]
        if len(pages) != doc.pages:
            report.error(doc.path, f"has {len(pages)} pages, room.json says {doc.pages}")
        tokens = sum(count_tokens(p) for p in pages)
        if tokens != doc.tokens:
            report.warn(doc.path, f"has {tokens} tokens, room.json says {doc.tokens}")
    items = findings.get("findings", []) if isinstance(findings, dict) else []
    for f in items:
        for ev in f.get("evidence", []) if isinstance(f, dict) else []:
            cited = pages_of.get(ev.get("doc", "")) if isinstance(ev, dict) else None
            page = ev.get("page") if isinstance(ev, dict) else None
            on_page = (cited and isinstance(page, int) and 1 <= page <= len(cited)
                       and _flat(str(ev.get("fact", ""))) in cited[page - 1])
            if cited and not on_page:
                report.error(f"{ANSWER_KEY}/findings.json: {f.get('id')}",
                             f"fact {ev.get('fact')!r} is not on {ev['doc']} p.{page}")
