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
"""

from __future__ import annotations

import difflib
import json
import random
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealroom._util.files import write_json_atomic
from dealroom.errors import ConfigError
from dealroom.room._cuad_rubric import TERMS, build_rubric, build_task, gold_memo
from dealroom.room._ingest import IngestReport, IngestSettings, ProgressFn, ingest
from dealroom.room._manifest import ANSWER_KEY
from dealroom.room._normalize import normalize_text

CUAD_JSON = "CUAD_v1.json"
DILIGENCE = tuple(TERMS)
"""The diligence-relevant categories imported by default (CUAD's names)."""


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

    def __post_init__(self) -> None:
        if self.contracts is not None and self.ids:
            raise ConfigError("give --contracts N or --ids, not both")
        if self.contracts is not None and self.contracts < 1:
            raise ConfigError(f"--contracts must be at least 1, got {self.contracts}")


@dataclass
class Contract:
    """One contract of CUAD_v1.json: its text and its labelled spans by category."""

    title: str
    text: str
    spans: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """Category → ``(text, answer_start)`` of each labelled span; ``[]``: labelled absent."""


def load_cuad(folder: Path) -> list[Contract]:
    """The contracts of ``folder/CUAD_v1.json``; a ConfigError says what is wrong."""
    path = Path(folder) / CUAD_JSON
    if not path.is_file():
        raise ConfigError(f"{folder} is not a CUAD folder: {CUAD_JSON} is missing (give the "
                          "folder that holds CUAD_v1.json, full_contract_txt/ and "
                          "full_contract_pdf/)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [_contract(item) for item in data["data"]]
    except (json.JSONDecodeError, KeyError, TypeError, IndexError, ValueError) as exc:
        raise ConfigError(f"{path} is not in CUAD's SQuAD format: {exc!r}") from exc


def _contract(item: dict[str, Any]) -> Contract:
    paragraph = item["paragraphs"][0]
    contract = Contract(str(item["title"]), str(paragraph["context"]))
    for qa in paragraph["qas"]:
        category = str(qa["id"]).rsplit("__", 1)[1]
        answers = [] if qa.get("is_impossible") else qa.get("answers") or []
        contract.spans[category] = [(str(a["text"]), int(a["answer_start"])) for a in answers]
    return contract


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


def _sources(folder: Path, contracts: list[Contract], src: Path) -> dict[str, str]:
    """Copy each contract (its PDF where CUAD has one, else its text) into ``src``; return
    title → file name."""
    pdfs = {p.stem: p for p in (folder / "full_contract_pdf").rglob("*") if
            p.suffix.lower() == ".pdf"} if (folder / "full_contract_pdf").is_dir() else {}
    names = {}
    for c in contracts:
        pdf = pdfs.get(c.title)
        txt = folder / "full_contract_txt" / f"{c.title}.txt"
        if pdf is not None:
            names[c.title] = f"{_safe(c.title)}.pdf"
            shutil.copyfile(pdf, src / names[c.title])
        else:
            names[c.title] = f"{_safe(c.title)}.txt"
            if txt.is_file():
                shutil.copyfile(txt, src / names[c.title])
            else:  # the JSON's context is the contract's text
                (src / names[c.title]).write_text(c.text, encoding="utf-8")
    return names


def _safe(title: str) -> str:
    return re.sub(r"[\\/:*?\"<>|\x00-\x1f]", "_", title).strip() or "contract"


def import_cuad(folder: Path | str, out: Path | str, settings: CuadSettings | None = None,
                progress: ProgressFn | None = None) -> IngestReport:
    """Build a room at ``out`` from the CUAD folder ``folder``: documents, rubric, answer key."""
    settings = settings or CuadSettings()
    folder, out = Path(folder), Path(out)
    contracts = _pick(load_cuad(folder), settings)
    categories = _categories(contracts, settings.categories)
    ingest_settings = IngestSettings(name=f"cuad-{len(contracts)}", workers=settings.workers,
                                     overwrite=settings.overwrite, ocr=settings.ocr)
    meta = {"kind": "real", "cuad": {"source": str(folder.resolve()), "contracts":
                                     len(contracts), "categories": categories,
                                     "seed": settings.seed}}
    with tempfile.TemporaryDirectory(prefix="dealroom-cuad-") as tmp:
        src = Path(tmp) / "contracts"
        src.mkdir()
        names = _sources(folder, contracts, src)
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
            if doc is None:  # not ingested (the report says why)
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
