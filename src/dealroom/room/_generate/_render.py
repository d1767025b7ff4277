"""Writing the documents: lay out, paginate, encode, hash; in batches across worker processes.

Each document is seeded from ``(key, index)`` alone, so the files do not depend on how the
documents are split between workers. Workers build their own paragraph pools once (the
:class:`~._text.Library` is deterministic) and write each file straight to disk; only the small
:class:`~._model.DocResult` records travel back to the parent.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from collections.abc import Callable, Iterator
from pathlib import Path
from random import Random

from dealroom.room._generate import _formats as fm
from dealroom.room._generate._doctypes import DOCTYPES
from dealroom.room._generate._layouts import LAYOUTS, Item, Writer
from dealroom.room._generate._model import DocPlan, DocResult, RoomContext
from dealroom.room._generate._sheets import build_sheets, sheet_items
from dealroom.room._generate._text import Library
from dealroom.room._tokens import count_tokens

DEFAULT_TERM = "Counterparty"
"""Stands in for ``ZZB`` in documents without a counterparty."""


def paginate(items: list[Item], target: int) -> tuple[list[list[str]], int, dict[int, int]]:
    """Group items into pages of about ``target`` tokens.

    Returns the pages (lists of blocks), the token total and the 1-based page of each mark.
    """
    pages: list[list[str]] = []
    page: list[str] = []
    size = total = 0
    marks: dict[int, int] = {}
    for text, n, mark in items:
        if mark == -2:
            if page:
                pages.append(page)
                page, size = [], 0
            continue
        if page and size + n > target and text:
            pages.append(page)
            page, size = [], 0
        if text:
            page.append(text)
        size += n
        total += n
        if mark >= 0:
            marks.setdefault(mark, len(pages) + 1)
    if page or not pages:
        pages.append(page)
    return pages, total, marks


def _names(text: str, lib: Library, plan: DocPlan) -> str:
    return text.replace("ZZA", lib.ctx.short).replace("ZZB", plan.term or DEFAULT_TERM)


def encode(plan: DocPlan, lib: Library) -> tuple[bytes, int, int, list[int]]:
    """The file's bytes, its page and token counts, and the page of each insert."""
    rng = Random(f"doc:{lib.ctx.key}:{plan.index}")
    w = Writer(plan, lib, rng)
    layout = DOCTYPES[plan.doctype].layout
    if layout == "sheet":
        sheets = build_sheets(w)
        if plan.fmt == "xlsx":
            where = {m: i + 1 for i, s in enumerate(sheets) for m in s.marks.values()}
            tokens = sum(s.page_text_tokens() for s in sheets)
            pages_of = [where.get(i, 1) for i in range(len(plan.inserts))]
            return fm.xlsx_bytes(sheets), len(sheets), tokens, pages_of
        items = sheet_items(w, sheets)
    else:
        LAYOUTS[layout](w)
        items = w.items
    if plan.fmt == "eml":
        body = _names("\n\n".join(text for text, _, m in items if text), lib, plan)
        head = "\n".join(f"{k}: {v}" for k, v in w.headers)
        tokens = count_tokens(head) + sum(n for _, n, _ in items)
        message_id = f"{plan.id.lower()}.{lib.ctx.codename.lower()}@dealroom.invalid"
        data = fm.eml_bytes(w.headers, body, message_id)
        return data, 1, tokens, [1] * len(plan.inserts)
    pages, tokens, marks = paginate(items, rng.randint(380, 600))
    texts = [_names("\n\n".join(page), lib, plan) for page in pages]
    if plan.fmt == "pdf":
        data = fm.pdf_bytes(texts, plan.title)
    elif plan.fmt == "docx":
        data = fm.docx_bytes(texts)
    else:
        data = fm.text_bytes(texts)
    return data, len(pages), tokens, [marks.get(i, 1) for i in range(len(plan.inserts))]


def render(plan: DocPlan, lib: Library, root: Path) -> DocResult:
    """Write one document under ``root`` and describe it."""
    data, pages, tokens, insert_pages = encode(plan, lib)
    (root / plan.path).write_bytes(data)
    return DocResult(plan.id, pages, tokens, hashlib.sha256(data).hexdigest(), len(data),
                     insert_pages)


_STATE: dict[str, object] = {}
_START = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
"""Fork where available: spawn would re-run a caller's unguarded ``__main__`` in each worker.
Workers only compute and write files, so they never wait on a lock a parent thread holds."""


def _init(ctx: RoomContext, root: str) -> None:
    _STATE["lib"] = Library(ctx)
    _STATE["root"] = Path(root)


def _render_batch(plans: list[DocPlan]) -> list[DocResult]:
    lib, root = _STATE["lib"], _STATE["root"]
    assert isinstance(lib, Library) and isinstance(root, Path)
    return [render(p, lib, root) for p in plans]


def batches(plans: list[DocPlan], tokens: int = 600_000, docs: int = 48) -> list[list[DocPlan]]:
    """Split plans into consecutive batches of bounded size."""
    out: list[list[DocPlan]] = [[]]
    size = 0
    for plan in plans:
        if out[-1] and (size + plan.budget > tokens or len(out[-1]) >= docs):
            out.append([])
            size = 0
        out[-1].append(plan)
        size += plan.budget
    return [b for b in out if b]


def render_all(
    ctx: RoomContext,
    plans: list[DocPlan],
    root: Path,
    workers: int,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[DocResult]:
    """Write every document, yielding results in plan order; ``progress(done, total)``."""
    groups = batches(plans)
    done = 0
    if workers <= 1 or len(groups) <= 1:
        _init(ctx, str(root))
        results: Iterator[list[DocResult]] = map(_render_batch, groups)
        pool = None
    else:
        pool = multiprocessing.get_context(_START).Pool(
            min(workers, len(groups)), initializer=_init, initargs=(ctx, str(root))
        )
        results = pool.imap(_render_batch, groups)
    try:
        for batch in results:
            yield from batch
            done += len(batch)
            if progress is not None:
                progress(done, len(plans))
        if pool is not None:
            pool.close()
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        _STATE.clear()
