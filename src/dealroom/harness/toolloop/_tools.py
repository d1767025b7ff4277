"""The tool-loop baseline's tools over LAB's workspace: list, glob, grep, read (paged), write.

As in LAB, the workspace holds ``documents/`` (the room, read-only) and ``output/`` (the task's
deliverables, by file name). Unlike LAB, no silent caps: every list that is cut says so and how
to narrow it, and ``grep`` runs over the text layer of every format (DOCX, PDF, XLSX, e-mail),
not raw bytes.
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dealroom.runs import OUTPUT, deliverable_key, primary_deliverable

if TYPE_CHECKING:
    from dealroom.room import Room

MAX_LINES = 200
PAGE_CHARS = 6000
DOCUMENTS = "documents"

TOOL_SPECS: list[dict[str, Any]] = [
    {"name": "list", "description": "List the workspace: the folders of documents/ (with "
     "document counts), the documents of one folder, or output/.",
     "parameters": {"folder": "optional folder path, e.g. documents/01 Corporate or output"}},
    {"name": "glob", "description": "Documents whose path matches a glob pattern, e.g. "
     "'documents/*Customer*/*.pdf'.", "parameters": {"pattern": "glob pattern"}},
    {"name": "grep", "description": "Regex search over the text of every document (all "
     "formats); hits with document id, page and snippet.",
     "parameters": {"pattern": "regex", "folder": "optional folder path"}},
    {"name": "read", "description": "Read a document by id or path (documents/...), a few "
     "pages at a time, or a deliverable written so far (output/...).",
     "parameters": {"doc": "document id or path", "page": "first page (default 1)"}},
    {"name": "write", "description": "Write a deliverable under output/ in Markdown (replaces "
     "it; append=true adds to it); it is saved in the file's format (Word for .docx). "
     "documents/ is read-only.",
     "parameters": {"path": "output/<deliverable> (default: the first deliverable)",
                    "text": "markdown", "append": "bool"}},
]


@dataclass
class ToolBox:
    """The tools over one room; ``outputs`` holds each deliverable as written so far."""

    room: Room
    deliverables: dict[str, str] = field(default_factory=lambda: {"memo": "memo.md"})
    """Deliverable name → file name in ``output/`` (the task's)."""
    outputs: dict[str, str] = field(default_factory=dict)
    """Deliverable name → the Markdown written to it."""
    opened: str | None = None
    """The document the last call read (its id), or None."""
    written: str | None = None
    """The deliverable the last call wrote (its name), or None."""

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run a tool; bad calls come back as an error string for the model, never raise."""
        self.opened = self.written = None
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
            lines = [f"{DOCUMENTS}/{f}/  ({n} documents, read-only)"
                     for f, n in sorted(counts.items())]
            return _capped(lines, "narrow it with list(folder=...)") + "\n" + self._outputs()
        folder = _folder(folder)
        if not folder:
            return self.tool_list()
        if folder == OUTPUT:
            return self._outputs()
        lines = [f"{d.id}  {d.path}  ({d.pages} pages, {d.tokens} tokens)"
                 for d in self.room.docs if d.folder == folder or
                 d.folder.startswith(folder + "/")]
        if not lines:
            return f"no documents under {folder!r}; call list() for the folders"
        return _capped(lines, "narrow it with list(folder=...)")

    def _outputs(self) -> str:
        files = [f"{OUTPUT}/{filename}  ("
                 + (f"{len(self.outputs[key]):,} characters written" if key in self.outputs
                    else "not written yet") + ")"
                 for key, filename in self.deliverables.items()]
        return f"{OUTPUT}/  (the deliverables)\n" + "\n".join(files)

    def tool_glob(self, pattern: str) -> str:
        paths = [f"{d.id}  {d.path}" for d in self.room.docs
                 if fnmatch.fnmatch(d.path.removeprefix(f"{DOCUMENTS}/"), pattern)
                 or fnmatch.fnmatch(d.path, pattern)]
        return _capped(paths, "use a narrower pattern") if paths else "no match"

    def tool_grep(self, pattern: str, folder: str | None = None) -> str:
        folder = _folder(folder) if folder is not None else None
        hits = self.room.grep(pattern, folder=folder or None, max_hits=MAX_LINES)
        lines = [f"{h.doc} p.{h.page}: {h.snippet}" for h in hits]
        total = getattr(hits, "total", len(hits))
        if not lines:
            return "no match"
        out = "\n".join(lines)
        if total > len(lines):
            out += f"\n[{len(lines)} of {total} hits shown: narrow the pattern or folder]"
        return out

    def tool_read(self, doc: str, page: int = 1) -> str:
        if str(doc).startswith(f"{OUTPUT}/"):
            key = self._deliverable(doc)
            return f"{doc} (as written so far)\n" + self.outputs.get(key, "(not written yet)")
        record = self.room.doc(doc)
        page = max(1, int(page))
        if page > record.pages:
            return f"error: {record.id} has {record.pages} pages"
        out: list[str] = []
        last = page
        for n in range(page, record.pages + 1):
            text = record.page(n)
            if out and sum(map(len, out)) + len(text) > PAGE_CHARS:
                break
            out.append(f"--- {record.id} page {n} of {record.pages} ---\n{text[:PAGE_CHARS]}")
            last = n
        self.opened = record.id
        more = (f"\n[pages {last + 1}-{record.pages} not shown: read(doc, page={last + 1})]"
                if last < record.pages else "")
        return f"{record.title} ({record.path})\n" + "\n".join(out) + more

    def tool_write(self, text: str, path: str | None = None, append: bool = False) -> str:
        if path is not None and str(path).strip().lstrip("/").split("/")[0] == DOCUMENTS:
            return f"error: {DOCUMENTS}/ is read-only: write the deliverables under {OUTPUT}/"
        key = primary_deliverable(self.deliverables) if path is None else self._deliverable(path)
        before = self.outputs.get(key, "")
        self.outputs[key] = (before + "\n" + str(text)) if append and before else str(text)
        self.written = key
        return f"{OUTPUT}/{self.deliverables[key]} now has {len(self.outputs[key]):,} characters"

    def _deliverable(self, path: str) -> str:
        key = deliverable_key(self.deliverables, str(path).strip("/"))
        if key is None:
            files = ", ".join(f"{OUTPUT}/{f}" for f in self.deliverables.values())
            raise ValueError(f"{path!r} is not a deliverable of this task; write {files}")
        return key


def _folder(path: str) -> str:
    """A folder path as the room names it: ``documents/`` and slashes at the ends dropped."""
    path = str(path).strip().strip("/")
    return path.removeprefix(f"{DOCUMENTS}/") if path != DOCUMENTS else ""


def _capped(lines: list[str], hint: str) -> str:
    if len(lines) <= MAX_LINES:
        return "\n".join(lines)
    shown = "\n".join(lines[:MAX_LINES])
    return f"{shown}\n[{MAX_LINES} of {len(lines)} shown: {hint}]"


def tools_prompt() -> str:
    """The tool list as the model sees it."""
    return "\n".join(json.dumps(t) for t in TOOL_SPECS)
