"""``dealroom cuad import``: a room and a rubric from a copy of CUAD v1.

CUAD (The Atticus Project, CC BY 4.0) is 510 real commercial contracts with 41 clause
categories labelled by lawyers, distributed as a folder::

    CUAD_v1/
      CUAD_v1.json           SQuAD format: data[] = {title, paragraphs[0] = {context, qas[]}};
                             a qa's id is "<title>__<Category>", its answers are the labelled
                             spans ({text, answer_start} in context), is_impossible when none
      master_clauses.csv     the same labels, a row per contract: span texts, no offsets
      full_contract_txt/     <title>.txt, the context as text
      full_contract_pdf/     Part_I/.../<title>.pdf, the filed contracts (used where present,
                             so real PDF extraction is what the agent reads)

::

    contracts (picked) ──copy──► SRC ──ingest──► OUT (room) ──locate spans──► pages
                                                                                 │
    labels of the categories ────────────────────────────────────────────────────┤
                                           task.json: a criterion per contract and category
                                           answer_key/cuad_labels.json, gold_memo.md

For a labelled category: a criterion that the memo identifies the clause in that contract and
cites a page the labelled span is on (``expect.pages``); for a category labelled absent: a
negative criterion that the memo does not claim it. The task names the categories to review,
never the answers; the spans stay in the answer key.

The labels come from ``CUAD_v1.json`` or, in a copy without it, from ``master_clauses.csv``
(:mod:`~dealroom.room._cuad_csv`: span texts without offsets, each found in the room's text;
one not found is reported and left out). ``labels`` (``--labels``) chooses where both exist;
the room's ``meta.cuad.labels`` says which was used.

A CUAD folder is input like any other: files are found by listing its folders (a title is
never a path) and copied by :func:`~dealroom.room._safecopy.safe_copy` (no link followed out
of the folder), room files are named by :func:`file_names` (unique, never a path), and a
malformed or oversized field is an :class:`~dealroom.errors.InputError` naming it.
"""

from __future__ import annotations

import difflib
import random
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dealroom._util.files import parse_json, write_json_atomic
from dealroom._util.schema import explain
from dealroom.errors import ConfigError, InputError
from dealroom.room._cuad_csv import CUAD_CSV, CellError, parse_clauses
from dealroom.room._cuad_rubric import TERMS, build_rubric, build_task, gold_memo
from dealroom.room._ingest import (
    REPORT,
    IngestReport,
    IngestSettings,
    ProgressFn,
    ReportEntry,
    ingest,
)
from dealroom.room._manifest import ANSWER_KEY
from dealroom.room._normalize import normalize_text
from dealroom.room._safecopy import CopyRefused, folder_inside, resolve_inside, safe_copy
from dealroom.room._walk import Found, walk

CUAD_JSON = "CUAD_v1.json"
DILIGENCE = tuple(TERMS)
"""The diligence-relevant categories imported by default (CUAD's names)."""
DEFAULT_MAX_BYTES = 20 * 2**20
"""The largest contract imported (``--max-mb``): its text in the JSON (characters) or file."""
MAX_JSON_BYTES = 256 * 2**20
"""The largest ``CUAD_v1.json`` or ``master_clauses.csv`` read (or ``max_bytes``, if larger)."""
LABELS = ("auto", "json", "csv")
"""Where the labels come from: ``auto`` (the JSON where it exists, else the CSV), or one."""
MAX_TITLE_BYTES = 200
"""The longest title (UTF-8 bytes): a room file is named after it, and names stop at 255."""
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class CuadSettings:
    """What :func:`import_cuad` takes from the CUAD folder."""

    contracts: int | None = None
    """Pick this many contracts at random (with ``seed``); ``None``: all (or ``ids``)."""
    ids: tuple[str, ...] = ()
    """Contract titles (file names without suffix) to import, instead of a random pick."""
    categories: tuple[str, ...] = ()
    """CUAD category names (any case); empty: :data:`DILIGENCE`."""
    seed: int = 0
    workers: int = 2
    overwrite: bool = False
    ocr: str = "auto"
    max_bytes: int = DEFAULT_MAX_BYTES
    """A contract larger than this (its text in the JSON, its PDF or text file) is refused."""
    labels: str = "auto"
    """One of :data:`LABELS`: ``CUAD_v1.json``, ``master_clauses.csv``, or the JSON where
    both exist."""
    dense: bool = False
    """Also embed the contracts' passages for hybrid search (the ``[search]`` extra)."""

    def __post_init__(self) -> None:
        if self.labels not in LABELS:
            raise InputError(f"--labels must be one of {', '.join(LABELS)}, got {self.labels!r}")
        if self.contracts is not None and self.ids:
            raise ConfigError("give --contracts N or --ids, not both")
        if self.contracts is not None and self.contracts < 1:
            raise ConfigError(f"--contracts must be at least 1, got {self.contracts}")
        if self.max_bytes < 1:
            raise InputError(f"--max-mb must be positive, got {self.max_bytes} bytes")


@dataclass
class Contract:
    """One contract of CUAD: its text and its labelled spans by category."""

    title: str
    text: str
    """The text in CUAD_v1.json; ``""`` from the CSV (the contract's file holds it)."""
    spans: dict[str, list[tuple[str, int | None]]] = field(default_factory=dict)
    """Category → ``(text, answer_start)`` of each labelled span (``answer_start`` None from
    the CSV: found by its text); ``[]``: labelled absent."""
    label_file: str = CUAD_JSON
    """Where the labels came from: ``CUAD_v1.json`` or ``master_clauses.csv``."""


class _Squad(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    object_noun: ClassVar[str] = "an object"


class _Answer(_Squad):
    text: str
    answer_start: int = Field(ge=0)


class _Qa(_Squad):
    id: str = Field(pattern=r"__.")
    is_impossible: bool = False
    answers: list[_Answer] = []


class _Paragraph(_Squad):
    context: str
    qas: list[_Qa]


class _Item(_Squad):
    title: str = Field(min_length=1)
    paragraphs: list[_Paragraph] = Field(min_length=1)


def label_file(folder: Path, labels: str = "auto") -> Path:
    """The file the labels are read from (see :data:`LABELS`); an InputError when it is not
    there."""
    folder = Path(folder)
    json_path, csv_path = folder / CUAD_JSON, folder / CUAD_CSV
    if labels == "json" or (labels == "auto" and json_path.is_file()):
        chosen = json_path
    elif labels == "csv" or csv_path.is_file():
        chosen = csv_path
    else:
        raise InputError(f"{folder} is not a CUAD folder: neither {CUAD_JSON} nor {CUAD_CSV} "
                         "is there (give the folder that holds them, full_contract_txt/ and "
                         "full_contract_pdf/)")
    if not chosen.is_file():
        raise InputError(f"{folder} has no {chosen.name} (--labels {labels}); leave --labels "
                         "out to use the labels the folder has")
    return chosen


def load_cuad(folder: Path, max_bytes: int = DEFAULT_MAX_BYTES,
              labels: str = "auto") -> list[Contract]:
    """The contracts of ``folder``'s ``CUAD_v1.json`` or ``master_clauses.csv`` (see
    :func:`label_file`); an :class:`InputError` says what is wrong (a field of the wrong type,
    a malformed cell, a span outside its contract, a title used twice or too long for a file
    name, a contract over ``max_bytes``)."""
    path = label_file(folder, labels)
    limit = max(MAX_JSON_BYTES, max_bytes)
    if path.name == CUAD_CSV:
        return _load_csv(path, _read_text(path, folder, limit, "utf-8-sig"))
    data = parse_json(_read_text(path, folder, limit), str(path), InputError)
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InputError(f"{path} is not in CUAD's SQuAD format: it must hold an object "
                         "whose 'data' is a list of contracts")
    contracts: dict[str, Contract] = {}
    for n, item in enumerate(items):
        contract = _contract(item, f"{path}: data[{n}]", max_bytes)
        if contract.title in contracts:
            raise InputError(f"{path}: data[{n}]: the title {_short(contract.title)} is used "
                             "twice; each contract needs its own")
        contracts[contract.title] = contract
    return list(contracts.values())


def _load_csv(path: Path, text: str) -> list[Contract]:
    """The contracts of a ``master_clauses.csv``: titles and span texts, no offsets."""
    try:
        rows = parse_clauses(text, DILIGENCE)
    except CellError as exc:
        raise InputError(f"{path}: {exc}") from None
    contracts: dict[str, Contract] = {}
    for title, spans, line in rows:
        where = f"{path}: line {line} ({_short(title)})"
        _check_title(title, where)
        if title in contracts:
            raise InputError(f"{where}: the Filename is used twice; each contract needs its "
                             "own")
        contracts[title] = Contract(title, "", {c: [(t, None) for t in texts]
                                               for c, texts in spans.items()}, CUAD_CSV)
    return list(contracts.values())


def _check_title(title: str, where: str) -> None:
    size = len(title.encode("utf-8"))
    if size > MAX_TITLE_BYTES:
        raise InputError(f"{where}: the title is {size} bytes long, over {MAX_TITLE_BYTES}: "
                         "the contract's file is named after it")


def _read_text(path: Path, folder: Path, limit: int, encoding: str = "utf-8") -> str:
    """The text of a label file, read only inside ``folder`` and up to ``limit`` bytes."""
    try:
        real = resolve_inside(path, folder)
        with open(real, "rb") as fh:
            raw = fh.read(limit + 1)
    except CopyRefused as exc:
        raise InputError(f"{path} {exc.detail}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise InputError(f"{path} is over {limit / 2**20:,.0f} MB; "
                         "raise --max-mb if your copy is larger")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text: {exc}") from None


def _contract(item: Any, where: str, max_bytes: int) -> Contract:
    """One entry of ``data``, checked: an InputError names the entry and the field."""
    title = item.get("title") if isinstance(item, dict) else None
    if isinstance(title, str):
        where = f"{where} ({_short(_clean(title))})"
    try:
        checked = _Item.model_validate(item)
    except ValidationError as exc:
        problems = explain(exc, _Item, limit=3)
        cut = problems if len(problems) <= 400 else problems[:400] + "..."
        raise InputError(f"{where} is not in CUAD's SQuAD format: {cut}") from None
    title, paragraph = checked.title, checked.paragraphs[0]
    _check_title(title, where)
    if len(paragraph.context) > max_bytes:
        raise InputError(f"{where}: the contract's text is {len(paragraph.context):,} "
                         f"characters, over the {_mb(max_bytes)} limit (raise --max-mb)")
    contract = Contract(title, paragraph.context)
    for qa in paragraph.qas:
        category = qa.id.rsplit("__", 1)[1].strip()
        if not category:
            raise InputError(f"{where}: qa id {_short(qa.id)} names no category after '__'")
        answers = [] if qa.is_impossible else qa.answers
        for a in answers:
            if a.answer_start > len(contract.text):
                raise InputError(f"{where}: {category}: answer_start {a.answer_start} is past "
                                 f"the end of the contract's text ({len(contract.text)} "
                                 "characters)")
        contract.spans[category] = [(a.text, a.answer_start) for a in answers]
    return contract


def _clean(text: str) -> str:
    """``text`` with lone surrogates (JSON's unpaired ``\\ud800``, refused by the check) as
    U+FFFD, to be printed in an error."""
    return _SURROGATE.sub("\ufffd", text)


def _short(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB"


def _pick(contracts: list[Contract], settings: CuadSettings, source: str) -> list[Contract]:
    by_title = {c.title: c for c in contracts}
    if settings.ids:
        unknown = [i for i in settings.ids if i not in by_title]
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(by_title), n=3, cutoff=0.4)
            hint = f"; close: {', '.join(close)}" if close else ""
            raise ConfigError(f"no contract {unknown[0]!r} in {source}{hint}")
        return [by_title[i] for i in dict.fromkeys(settings.ids)]
    chosen = sorted(by_title)
    if settings.contracts is not None and settings.contracts < len(chosen):
        chosen = sorted(random.Random(settings.seed).sample(chosen, settings.contracts))
    return [by_title[t] for t in chosen]


def _categories(contracts: list[Contract], wanted: tuple[str, ...], source: str) -> list[str]:
    known = {c.casefold(): c for contract in contracts for c in contract.spans}
    if not wanted:
        return [c for c in DILIGENCE if c.casefold() in known]
    out = []
    for name in wanted:
        if name.casefold() not in known:
            raise ConfigError(f"no category {name!r} in {source}; known: "
                              f"{', '.join(sorted(known.values()))}")
        out.append(known[name.casefold()])
    return list(dict.fromkeys(out))


def _sources(folder: Path, contracts: list[Contract], src: Path,
             max_bytes: int) -> tuple[dict[str, str], list[str]]:
    """Copy each contract (its PDF where CUAD has one, else its text file, else its text in
    the JSON) into ``src``; return title → file name, and the titles of contracts from the CSV
    that have no file (left out). A title is never a path: files are found by listing CUAD's
    folders, and each copy is named by :func:`file_names`."""
    pdfs, pdf_out = _listed(folder, "full_contract_pdf", ".pdf")
    txts, txt_out = _listed(folder, "full_contract_txt", ".txt")
    loose_pdfs, loose_txts = _loose(pdfs), _loose(txts)
    stems = file_names([c.title for c in contracts])
    names, missing = {}, []
    for c in contracts:
        outside = pdf_out.get(c.title) or txt_out.get(c.title)
        if outside:
            instead = f" to use the text in {CUAD_JSON}" if c.label_file == CUAD_JSON else ""
            raise InputError(f"{outside}: cuad import never follows a link out of its source; "
                             f"put the file itself there, or remove the link{instead}")
        found = pdfs.get(c.title) or txts.get(c.title)
        if found is None and c.label_file == CUAD_CSV:  # CSV names may differ in case, spaces
            found = loose_pdfs.get(_loose_key(c.title)) or loose_txts.get(_loose_key(c.title))
        if found is None and c.label_file == CUAD_CSV:
            missing.append(c.title)
            continue
        suffix = found.source.suffix.lower() if found else ".txt"
        names[c.title] = f"{stems[c.title]}{suffix}"
        if found is None:  # the JSON's context is the contract's text
            (src / names[c.title]).write_text(c.text, encoding="utf-8")
            continue
        try:
            safe_copy(found.source, folder, src / names[c.title], max_bytes)
        except CopyRefused as exc:
            hint = " (raise --max-mb)" if exc.reason == "too_large" else ""
            raise InputError(f"{found.source}: {exc.detail}{hint}") from None
    return names, missing


def _loose_key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _loose(files: dict[str, Found]) -> dict[str, Found]:
    out: dict[str, Found] = {}
    for name, found in files.items():
        out.setdefault(_loose_key(name), found)
    return out


def _listed(folder: Path, sub: str, suffix: str) -> tuple[dict[str, Found], dict[str, str]]:
    """The files of ``folder/sub`` ending in ``suffix`` by name without it, and the names of
    those that are links out of ``sub`` (never followed) with what is wrong."""
    top = folder / sub
    if not top.is_dir():
        return {}, {}
    folder_inside(top, folder, f"CUAD's {sub}/")
    found = walk(top)
    files: dict[str, Found] = {}
    for f in found.files:
        if f.source.suffix.lower() == suffix:
            files.setdefault(f.source.name[: -len(suffix)], f)
    outside = {}
    for p in found.problems:
        name = p.rel.rsplit("/", 1)[-1]
        if p.reason == "symlink_outside" and name.lower().endswith(suffix):
            outside[name[: -len(suffix)]] = f"{sub}/{p.rel} is {p.detail}"
    return files, outside


_UNSAFE = re.compile(r"[\\/:*?\"<>|\x00-\x1f\x7f\ufffd]")


def file_names(titles: list[str]) -> dict[str, str]:
    """A file name (without suffix) for each title: never a path (``/``, ``..`` and control
    characters become ``_``, no leading dot), and unique whatever the case (``a/b`` and
    ``a_b`` give ``a_b`` and ``a_b (2)``, in the order given).

    >>> file_names(["a/b", "a_b", "../../etc/x", "/etc/y"])
    {'a/b': 'a_b', 'a_b': 'a_b (2)', '../../etc/x': '_.._etc_x', '/etc/y': '_etc_y'}
    """
    taken: set[str] = set()
    out = {}
    for title in titles:
        base = _UNSAFE.sub("_", title).strip().lstrip(".~ ") or "contract"
        stem, n = base, 2
        while stem.casefold() in taken:
            stem, n = f"{base} ({n})", n + 1
        taken.add(stem.casefold())
        out[title] = stem
    return out


def import_cuad(folder: Path | str, out: Path | str, settings: CuadSettings | None = None,
                progress: ProgressFn | None = None) -> IngestReport:
    """Build a room at ``out`` from the CUAD folder ``folder``: documents, rubric, answer key.
    The report also lists, as ``cuad_*`` entries, contracts of the CSV with no file and
    labelled spans not found in their contract's text."""
    settings = settings or CuadSettings()
    folder, out = Path(folder), Path(out)
    source = label_file(folder, settings.labels)
    contracts = _pick(load_cuad(folder, settings.max_bytes, settings.labels), settings,
                      source.name)
    categories = _categories(contracts, settings.categories, source.name)
    ingest_settings = IngestSettings(name=f"cuad-{len(contracts)}", workers=settings.workers,
                                     overwrite=settings.overwrite, ocr=settings.ocr,
                                     max_bytes=settings.max_bytes, dense=settings.dense)
    other = CUAD_CSV if source.name == CUAD_JSON else CUAD_JSON
    meta = {"kind": "real", "cuad": {"source": str(folder.resolve()), "contracts":
                                     len(contracts), "categories": categories,
                                     "seed": settings.seed, "labels": source.name,
                                     "labels_also": [other] if (folder / other).is_file()
                                     else []}}
    with tempfile.TemporaryDirectory(prefix="dealroom-cuad-") as tmp:
        src = Path(tmp) / "contracts"
        src.mkdir()
        names, missing = _sources(folder, contracts, src, settings.max_bytes)
        if not names:
            raise InputError(f"none of the {len(contracts)} contracts of {source} has a file "
                             "in full_contract_pdf/ or full_contract_txt/ (their text is not in "
                             f"{source.name})")
        report = ingest(src, out, ingest_settings, meta=meta, progress=progress,
                        task=build_task([], categories, len(contracts)))
    by_file = {d.path.rsplit("/", 1)[-1]: d for d in report.manifest.documents}
    located = _locate(out, contracts, names, by_file, categories)
    task, findings = build_rubric(located, categories, len(contracts))
    write_json_atomic(out / "task.json", task)
    (out / ANSWER_KEY).mkdir(exist_ok=True)
    write_json_atomic(out / ANSWER_KEY / "findings.json",
                      {"version": 1, "room": out.name, "findings": findings})
    write_json_atomic(out / ANSWER_KEY / "cuad_labels.json", {
        "version": 1, "source": "CUAD v1 (The Atticus Project, CC BY 4.0)",
        "labels": source.name, "categories": categories, "contracts": located})
    (out / ANSWER_KEY / "gold_memo.md").write_text(gold_memo(located), encoding="utf-8")
    notes = _notes(missing, located, by_file)
    if notes:
        report.entries.extend(notes)
        write_json_atomic(out / REPORT, report.to_dict())
    return report


def _notes(missing: list[str], located: list[dict[str, Any]],
           by_file: dict[str, Any]) -> list[ReportEntry]:
    """Report entries for contracts left out (no file) and spans not found."""
    paths = {d.id: d.path for d in by_file.values()}
    notes = [ReportEntry(title, "cuad_no_file", "skipped", f"no file named after it in "
                         f"full_contract_pdf/ or full_contract_txt/ ({CUAD_CSV} holds no "
                         "text)") for title in missing]
    for contract in located:
        for lost in contract.get("not_found", []):
            text = " ".join(lost["text"].split())
            notes.append(ReportEntry(
                paths.get(contract["doc"], contract["title"]), "cuad_span_not_found",
                "ingested", f"{lost['category']}: {_short(text)} is not in the contract's "
                "text: left out of the rubric", doc_id=contract["doc"]))
    return notes


def _locate(out: Path, contracts: list[Contract], names: dict[str, str], by_file: dict[str, Any],
            categories: list[str]) -> list[dict[str, Any]]:
    """Each imported contract's document id and, per category, its spans with their pages.
    A span from the CSV not found in the text is listed under ``not_found``; a category none
    of whose spans is found is left out of ``labels`` (no criterion: neither claimed nor
    denied)."""
    from dealroom.room._store import Room

    located = []
    with Room.open(out) as room:
        for c in contracts:
            doc = by_file.get(names.get(c.title, ""))
            if doc is None or not doc.pages:  # not ingested (the report says why), or empty
                continue
            pages = [room.text(doc.id, n) for n in range(1, doc.pages + 1)]
            labels, lost = {}, []
            for category in categories:
                spans = c.spans.get(category, [])
                found = [_span(pages, text, start, len(c.text)) for text, start in spans]
                lost += [{"category": category, "text": text}
                         for (text, _), hit in zip(spans, found, strict=True) if hit is None]
                if found and all(hit is None for hit in found):
                    continue
                labels[category] = [hit for hit in found if hit is not None]
            entry = {"title": c.title, "doc": doc.id, "labels": labels}
            located.append(entry | ({"not_found": lost} if lost else {}))
    return located


def _span(pages: list[str], text: str, start: int | None,
          total: int) -> dict[str, Any] | None:
    """A labelled span with the pages it is on and ``fact``: as much of its opening as its
    first page holds word for word (the answer key's evidence, checked by validate --deep).
    Without ``start`` (the CSV) the span must be found by its text: None when it is not."""
    if start is None:
        on = find_span(pages, text)
        if on is None:
            return None
    else:
        on = span_pages(pages, text, start / max(1, total))
    page = " ".join(pages[on[0] - 1].split())
    words = " ".join(normalize_text(text).split())[:300].split(" ")
    fact = ""
    for n in range(len(words), 0, -1):
        if " ".join(words[:n]) in page:
            fact = " ".join(words[:n])
            break
    return {"text": text, "answer_start": start, "pages": on, "fact": fact}


def _dense(text: str) -> str:
    """``text`` normalized, in lower case, without whitespace: a span matches a page however
    the PDF broke its lines, or a word, across them."""
    return "".join(normalize_text(text).split()).casefold()


def span_pages(pages: list[str], span: str, where: float) -> list[int]:
    """The pages (1-based) a labelled span is on, found by its text (whitespace and case aside);
    among several places, the one nearest ``where`` (its relative position in the contract).
    A span found nowhere (a PDF that extracts differently) falls back to its opening words,
    then to the page at ``where``.

    >>> span_pages(["a b c", "the Change  of\\nControl clause", "x"], "change of control", 0.5)
    [2]
    """
    return _search(pages, span, where, short=True) or \
        [min(len(pages), int(where * len(pages)) + 1)]


def find_span(pages: list[str], span: str) -> list[int] | None:
    """The pages of the first place a span is, found by its text (whitespace and case aside),
    or by its first 80 characters, or by its first and last six words close together (a span
    cut by a page's header or footer); None when it is not there.

    >>> find_span(["a b", "Neither party may as", "sign the Agreement"], "neither party MAY assign")
    [2, 3]
    """
    hit = _search(pages, span, None, short=False)
    words = normalize_text(span).casefold().split()
    if hit is not None or len(words) < 8:
        return hit
    joined, starts = _joined(pages)
    head, tail = "".join(words[:6]), "".join(words[-6:])
    for m in re.finditer(re.escape(head), joined):
        end = joined.find(tail, m.end(), m.start() + len("".join(words)) + 300)
        if end >= 0:
            return _pages_between(starts, m.start(), end + len(tail))
    return None


def _joined(pages: list[str]) -> tuple[str, list[int]]:
    """The pages' dense text joined, and where each page starts in it."""
    dense = [_dense(p) for p in pages]
    starts = [0]
    for page in dense:
        starts.append(starts[-1] + len(page))
    return "".join(dense), starts


def _search(pages: list[str], span: str, where: float | None,
            short: bool) -> list[int] | None:
    joined, starts = _joined(pages)
    words = normalize_text(span).casefold().split()
    target = "".join(words)
    probes = (target, target[:80], "".join(words[:6])) if short else (target, target[:80])
    for probe in probes:
        if len(probe) < 12 and probe != target:
            continue
        hits = [m.start() for m in re.finditer(re.escape(probe), joined)] if probe else []
        if hits:
            best = hits[0] if where is None else \
                min(hits, key=lambda h: abs(h / max(1, len(joined)) - where))
            return _pages_between(starts, best, best + len(target))
    return None


def _pages_between(starts: list[int], lo: int, hi: int) -> list[int]:
    first = max(i for i in range(len(starts) - 1) if starts[i] <= lo)
    last = max(i for i in range(len(starts) - 1) if starts[i] < max(hi, lo + 1))
    return list(range(first + 1, last + 2))
