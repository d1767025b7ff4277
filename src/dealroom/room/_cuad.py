"""``dealroom cuad import``: a room and a rubric from a copy of CUAD v1.

CUAD (The Atticus Project, CC BY 4.0) is 510 real commercial contracts with 41 clause
categories labelled by lawyers, distributed as a folder::

    CUAD_v1/
      CUAD_v1.json           SQuAD format: data[] = {title, paragraphs[0] = {context, qas[]}};
                             a qa's id is "<title>__<Category>", its answers are the labelled
                             spans ({text, answer_start} in context), is_impossible when none
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
from dealroom.room._cuad_rubric import TERMS, build_rubric, build_task, gold_memo
from dealroom.room._ingest import IngestReport, IngestSettings, ProgressFn, ingest
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
"""The largest ``CUAD_v1.json`` read (or ``max_bytes``, if larger)."""
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

    def __post_init__(self) -> None:
        if self.contracts is not None and self.ids:
            raise ConfigError("give --contracts N or --ids, not both")
        if self.contracts is not None and self.contracts < 1:
            raise ConfigError(f"--contracts must be at least 1, got {self.contracts}")
        if self.max_bytes < 1:
            raise InputError(f"--max-mb must be positive, got {self.max_bytes} bytes")


@dataclass
class Contract:
    """One contract of CUAD_v1.json: its text and its labelled spans by category."""

    title: str
    text: str
    spans: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """Category → ``(text, answer_start)`` of each labelled span; ``[]``: labelled absent."""


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


def load_cuad(folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Contract]:
    """The contracts of ``folder/CUAD_v1.json``; an :class:`InputError` says what is wrong
    (a field of the wrong type, a span outside its contract, a title used twice or too long
    for a file name, a contract over ``max_bytes``)."""
    path = Path(folder) / CUAD_JSON
    if not path.is_file():
        raise ConfigError(f"{folder} is not a CUAD folder: {CUAD_JSON} is missing (give the "
                          "folder that holds CUAD_v1.json, full_contract_txt/ and "
                          "full_contract_pdf/)")
    data = parse_json(_read_json(path, folder, max(MAX_JSON_BYTES, max_bytes)), str(path),
                      InputError)
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


def _read_json(path: Path, folder: Path, limit: int) -> str:
    """The text of CUAD_v1.json, read only inside ``folder`` and up to ``limit`` bytes."""
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
        return raw.decode("utf-8")
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
    if len(title.encode("utf-8")) > MAX_TITLE_BYTES:
        raise InputError(f"{where}: the title is {len(title.encode('utf-8'))} bytes long, over "
                         f"{MAX_TITLE_BYTES}: the contract's file is named after it")
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


def _pick(contracts: list[Contract], settings: CuadSettings) -> list[Contract]:
    by_title = {c.title: c for c in contracts}
    if settings.ids:
        unknown = [i for i in settings.ids if i not in by_title]
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(by_title), n=3, cutoff=0.4)
            hint = f"; close: {', '.join(close)}" if close else ""
            raise ConfigError(f"no contract {unknown[0]!r} in {CUAD_JSON}{hint}")
        return [by_title[i] for i in dict.fromkeys(settings.ids)]
    chosen = sorted(by_title)
    if settings.contracts is not None and settings.contracts < len(chosen):
        chosen = sorted(random.Random(settings.seed).sample(chosen, settings.contracts))
    return [by_title[t] for t in chosen]


def _categories(contracts: list[Contract], wanted: tuple[str, ...]) -> list[str]:
    known = {c.casefold(): c for contract in contracts for c in contract.spans}
    if not wanted:
        return [c for c in DILIGENCE if c.casefold() in known]
    out = []
    for name in wanted:
        if name.casefold() not in known:
            raise ConfigError(f"no category {name!r} in {CUAD_JSON}; known: "
                              f"{', '.join(sorted(known.values()))}")
        out.append(known[name.casefold()])
    return list(dict.fromkeys(out))


def _sources(folder: Path, contracts: list[Contract], src: Path,
             max_bytes: int) -> dict[str, str]:
    """Copy each contract (its PDF where CUAD has one, else its text file, else its text in
    the JSON) into ``src``; return title → file name. A title is never a path: files are found
    by listing CUAD's folders, and each copy is named by :func:`file_names`."""
    pdfs, pdf_out = _listed(folder, "full_contract_pdf", ".pdf")
    txts, txt_out = _listed(folder, "full_contract_txt", ".txt")
    stems = file_names([c.title for c in contracts])
    names = {}
    for c in contracts:
        outside = pdf_out.get(c.title) or txt_out.get(c.title)
        if outside:
            raise InputError(f"{outside}: cuad import never follows a link out of its source; "
                             "put the file itself there, or remove the link to use the text "
                             f"in {CUAD_JSON}")
        found = pdfs.get(c.title) or txts.get(c.title)
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
    return names


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
    """Build a room at ``out`` from the CUAD folder ``folder``: documents, rubric, answer key."""
    settings = settings or CuadSettings()
    folder, out = Path(folder), Path(out)
    contracts = _pick(load_cuad(folder, settings.max_bytes), settings)
    categories = _categories(contracts, settings.categories)
    ingest_settings = IngestSettings(name=f"cuad-{len(contracts)}", workers=settings.workers,
                                     overwrite=settings.overwrite, ocr=settings.ocr,
                                     max_bytes=settings.max_bytes)
    meta = {"kind": "real", "cuad": {"source": str(folder.resolve()), "contracts":
                                     len(contracts), "categories": categories,
                                     "seed": settings.seed}}
    with tempfile.TemporaryDirectory(prefix="dealroom-cuad-") as tmp:
        src = Path(tmp) / "contracts"
        src.mkdir()
        names = _sources(folder, contracts, src, settings.max_bytes)
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
        "categories": categories, "contracts": located})
    (out / ANSWER_KEY / "gold_memo.md").write_text(gold_memo(located), encoding="utf-8")
    return report


def _locate(out: Path, contracts: list[Contract], names: dict[str, str], by_file: dict[str, Any],
            categories: list[str]) -> list[dict[str, Any]]:
    """Each imported contract's document id and, per category, its spans with their pages."""
    from dealroom.room._store import Room

    located = []
    with Room.open(out) as room:
        for c in contracts:
            doc = by_file.get(names[c.title])
            if doc is None or not doc.pages:  # not ingested (the report says why), or empty
                continue
            pages = [room.text(doc.id, n) for n in range(1, doc.pages + 1)]
            labels = {}
            for category in categories:
                spans = c.spans.get(category, [])
                labels[category] = [_span(pages, text, start, len(c.text))
                                     for text, start in spans]
            located.append({"title": c.title, "doc": doc.id, "labels": labels})
    return located


def _span(pages: list[str], text: str, start: int, total: int) -> dict[str, Any]:
    """A labelled span with the pages it is on and ``fact``: as much of its opening as its
    first page holds word for word (the answer key's evidence, checked by validate --deep)."""
    on = span_pages(pages, text, start / max(1, total))
    page = " ".join(pages[on[0] - 1].split())
    words = " ".join(normalize_text(text).split())[:300].split(" ")
    fact = ""
    for n in range(len(words), 0, -1):
        if " ".join(words[:n]) in page:
            fact = " ".join(words[:n])
            break
    return {"text": text, "answer_start": start, "pages": on, "fact": fact}


def _squash(text: str) -> str:
    return " ".join(normalize_text(text).split()).casefold()


def span_pages(pages: list[str], span: str, where: float) -> list[int]:
    """The pages (1-based) a labelled span is on, found by its text (whitespace and case aside);
    among several places, the one nearest ``where`` (its relative position in the contract).
    A span found nowhere (a PDF that extracts differently) falls back to its opening words,
    then to the page at ``where``.

    >>> span_pages(["a b c", "the Change  of\\nControl clause", "x"], "change of control", 0.5)
    [2]
    """
    squashed = [_squash(p) for p in pages]
    joined = " ".join(squashed)
    starts = [0]
    for page in squashed:
        starts.append(starts[-1] + len(page) + 1)
    target = _squash(span)
    for probe in (target, target[:80], " ".join(target.split()[:6])):
        if len(probe) < 12 and probe != target:
            continue
        hits = [m.start() for m in re.finditer(re.escape(probe), joined)] if probe else []
        if hits:
            best = min(hits, key=lambda h: abs(h / max(1, len(joined)) - where))
            return _pages_between(starts, best, best + len(target))
    return [min(len(pages), int(where * len(pages)) + 1)]


def _pages_between(starts: list[int], lo: int, hi: int) -> list[int]:
    first = max(i for i in range(len(starts) - 1) if starts[i] <= lo)
    last = max(i for i in range(len(starts) - 1) if starts[i] < max(hi, lo + 1))
    return list(range(first + 1, last + 2))
