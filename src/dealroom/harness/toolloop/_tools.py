"""The tool-loop baseline's tools: list, glob, grep, read (paged) and write.

As LAB's harness, but no silent caps: every list that is cut says so and how to narrow it, and
``grep`` runs over the text layer of every format (DOCX, PDF, XLSX, e-mail), not raw bytes.
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MAX_LINES = 200
PAGE_CHARS = 6000

TOOL_SPECS: list[dict[str, Any]] = [
    {"name": "list", "description": "List folders (with document counts) or the documents of "
     "one folder.", "parameters": {"folder": "optional folder path"}},
    {"name": "glob", "description": "Documents whose path matches a glob pattern, e.g. "
     "'*Customer*/*.pdf'.", "parameters": {"pattern": "glob pattern"}},
    {"name": "grep", "description": "Regex search over the text of every document (all "
     "formats); hits with document id, page and snippet.",
     "parameters": {"pattern": "regex", "folder": "optional folder path"}},
    {"name": "read", "description": "Read a document by id or path, a few pages at a time.",
     "parameters": {"doc": "document id or path", "page": "first page (default 1)"}},
    {"name": "write", "description": "Write the deliverable memo.md (replaces it); use "
     "append=true to add to it.", "parameters": {"text": "markdown", "append": "bool"}},
]


@dataclass
class ToolBox:
    """The tools over one room; ``memo`` holds the deliverable as written so far."""

    room: Any
    memo: str = ""
    docs_read: set[str] = field(default_factory=set)

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run a tool; bad calls come back as an error string for the model, never raise."""
        method = getattr(self, f"tool_{name}", None)
        if method is None:
            names = ", ".join(t["name"] for t in TOOL_SPECS)
            return f"error: unknown tool {name!r}; tools are {names}"
        try:
            return method(**args)
        except TypeError as exc:
            return f"error: bad arguments for {name}: {exc}"
        except (KeyError, LookupError, ValueError) as exc:
            return f"error: {exc}"

    def tool_list(self, folder: str | None = None) -> str:
        if folder is None:
            counts = Counter(d.folder for d in self.room.docs)
            lines = [f"{f}/  ({n} documents)" for f, n in sorted(counts.items())]
        else:
            folder = folder.strip("/")
            lines = [f"{d.id}  {d.path}  ({d.pages} pages, {d.tokens} tokens)"
                     for d in self.room.docs if d.folder == folder or
                     d.folder.startswith(folder + "/")]
            if not lines:
                return f"no documents under {folder!r}; call list() for the folders"
        return _capped(lines, "narrow it with list(folder=...)")

    def tool_glob(self, pattern: str) -> str:
        paths = [f"{d.id}  {d.path}" for d in self.room.docs
                 if fnmatch.fnmatch(d.path.removeprefix("documents/"), pattern)
                 or fnmatch.fnmatch(d.path, pattern)]
        return _capped(paths, "use a narrower pattern") if paths else "no match"

    def tool_grep(self, pattern: str, folder: str | None = None) -> str:
        hits = self.room.grep(pattern, folder=folder, max_hits=MAX_LINES)
        lines = [f"{h.doc} p.{h.page}: {h.snippet}" for h in hits]
        total = getattr(hits, "total", len(hits))
        if not lines:
            return "no match"
        out = "\n".join(lines)
        if total > len(lines):
            out += f"\n[{len(lines)} of {total} hits shown: narrow the pattern or folder]"
        return out

    def tool_read(self, doc: str, page: int = 1) -> str:
        record = self.room.doc(doc)
        page = max(1, int(page))
        if page > record.pages:
            return f"error: {record.id} has {record.pages} pages"
        out, last = [], page
        for n in range(page, record.pages + 1):
            text = record.page(n)
            if out and sum(map(len, out)) + len(text) > PAGE_CHARS:
                break
            out.append(f"--- {record.id} page {n} of {record.pages} ---\n{text[:PAGE_CHARS]}")
            last = n
        self.docs_read.add(record.id)
        more = (f"\n[pages {last + 1}-{record.pages} not shown: read(doc, page={last + 1})]"
                if last < record.pages else "")
        return f"{record.title} ({record.path})\n" + "\n".join(out) + more

    def tool_write(self, text: str, append: bool = False) -> str:
        self.memo = (self.memo + "\n" + text) if append else text
        return f"memo.md now has {len(self.memo):,} characters"


def _capped(lines: list[str], hint: str) -> str:
    if len(lines) <= MAX_LINES:
        return "\n".join(lines)
    shown = "\n".join(lines[:MAX_LINES])
    return f"{shown}\n[{MAX_LINES} of {len(lines)} shown: {hint}]"


def tools_prompt() -> str:
    """The tool list as the model sees it."""
    return "\n".join(json.dumps(t) for t in TOOL_SPECS)
