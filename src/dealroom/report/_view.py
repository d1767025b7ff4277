"""``dealroom view RUN``: write a run's trace viewer, a folder that opens from disk.

    OUT/
      index.html         the viewer (scripts and styles inline)
      data/meta.js       the run's summary, usage, scores, coverage tree, document index
      data/items-NNNN.js the timeline, ITEMS_PER_PAGE items a page, loaded as the page scrolls
      data/memo.js       the memo as delivered and as of each turn it changed, with by-turn scores
      docs/DNNNNN.js     the text of each document the run sent, opened or cited, page by page

A report writes the documents of each room once, in a folder its traces share (``docs_dir``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from dealroom._util.files import make_dir
from dealroom.errors import ConfigError, DealroomError
from dealroom.report._html import page
from dealroom.report._pages import chunks, write_script
from dealroom.report._trace import referenced_docs, trace_items, trace_summary
from dealroom.runs import RunFolder

if TYPE_CHECKING:
    from dealroom.room import DocumentRecord

ITEMS_PER_PAGE = 150


def write_trace(run: Path, out: Path, *, docs_dir: Path | None = None,
                title: str | None = None) -> Path:
    """Write the viewer of the run folder ``run`` into ``out``; its ``index.html``.

    ``docs_dir``: where document texts go (default ``out/docs``); files already there are kept.
    """
    folder = RunFolder.open(Path(run))
    out = Path(out)
    made = not out.exists()
    _check_out(out)
    try:
        return _write_viewer(folder, out, docs_dir, title)
    except BaseException:
        if made:  # a run that cannot be shown leaves no half-written folder
            shutil.rmtree(out, ignore_errors=True)
        raise


def _write_viewer(folder: RunFolder, out: Path, docs_dir: Path | None,
                  title: str | None) -> Path:
    events = folder.events()
    settings = folder.config.get("settings") or {}
    items = trace_items(events, settings.get("max_turns"))
    memo = folder.read_deliverable(_primary(folder)) or ""
    manifest = _manifest(folder)
    summary = trace_summary(folder, events, manifest)
    docs_dir = Path(docs_dir) if docs_dir is not None else out / "docs"
    pages = chunks(items, ITEMS_PER_PAGE)
    for n, chunk in enumerate(pages):
        write_script(out / "data" / f"items-{n:04d}.js", f"items:{n}", chunk)
    history = [{"turn": turn, "memo": text, "html": memo_html(text)}
               for turn, text in folder.memo_history()]
    by_turn = (folder.scores_by_turn() or {}).get("by_turn") or []
    write_script(out / "data" / "memo.js", "memo", {"final": memo, "html": memo_html(memo),
                                                    "history": history, "by_turn": by_turn})
    wanted = referenced_docs(items, "\n".join([memo, *(str(h["memo"]) for h in history)]))
    written = write_docs(folder, wanted, docs_dir) if manifest else set()
    index = {d.id: [d.title, d.pages] for d in manifest}
    write_script(out / "data" / "meta.js", "meta", {
        **summary, "pages": len(pages), "items": len(items),
        "docs_href": os.path.relpath(docs_dir, out).replace(os.sep, "/"),
        "docs": index, "texts": sorted(written), "per_page": ITEMS_PER_PAGE})
    html = page(title or f"dealroom trace: {folder.name}", "viewer", scripts=["data/meta.js"])
    (out / "index.html").write_text(html, encoding="utf-8")
    for ask in summary["asks"]:  # each follow-up question's own turns, beside the run's
        asked = folder.path / "asks" / str(ask["number"])
        _write_viewer(RunFolder.open(asked), out / "asks" / str(ask["number"]), docs_dir,
                      f"dealroom trace: {folder.name}, question {ask['number']}")
    return out / "index.html"


def memo_html(text: str) -> str:
    """The memo's Markdown as HTML (CommonMark and tables; raw HTML escaped, unsafe links
    dropped); each block says the memo lines it came from (``data-lines="3-5"``), so a
    judge's "line N" finds it."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for token in tokens:
        if token.map and token.nesting == 1:
            token.attrSet("data-lines", f"{token.map[0] + 1}-{token.map[1]}")
    return md.renderer.render(tokens, md.options, {})


def write_docs(folder: RunFolder, ids: set[str], docs_dir: Path) -> set[str]:
    """Write ``docs_dir/ID.js`` (the document's pages) for each of ``ids`` in the run's room
    not written yet; the ids that have a file."""
    from dealroom.room import Room

    missing = sorted(i for i in ids if not (docs_dir / f"{i}.js").is_file())
    have = set(ids) - set(missing)
    if not missing:
        return have
    with Room.open(folder.room) as room:
        for doc_id in missing:
            try:
                doc = room.doc(doc_id)
            except (DealroomError, KeyError):
                continue  # a citation of a document the room does not hold
            texts = [room.text(doc, n) for n in range(1, doc.pages + 1)]
            write_script(docs_dir / f"{doc_id}.js", f"doc:{doc_id}",
                         {"id": doc_id, "title": doc.title, "path": doc.path, "pages": texts,
                          "labels": doc.labels, "line_numbers": doc.line_numbers,
                          "ocr": {str(p): c for p, c in doc.ocr.items()}})
            have.add(doc_id)
    return have


def _primary(folder: RunFolder) -> str:
    from dealroom.runs import primary_deliverable

    return primary_deliverable(folder.deliverables)


def _manifest(folder: RunFolder) -> list[DocumentRecord]:
    """The room's document records, or none when the room is gone."""
    from dealroom.room import load_manifest

    try:
        return list(load_manifest(folder.room).documents)
    except DealroomError:
        return []


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file: give --out a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise ConfigError(f"{out} holds other files: give --out a new folder")
    make_dir(out, "the viewer's folder")
