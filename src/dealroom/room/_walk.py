"""Walking a source folder for ingestion: files found, odd names made safe, problems noted.

The walk uses :func:`os.scandir` and follows symbolic links that stay inside the source folder,
but never into a folder that is already one of its own ancestors (a symlink loop) or that it
has visited through another link. A link that leads outside the source folder (``passwd.txt ->
/etc/passwd``, a link to ``/etc``) is never followed: it is reported as ``symlink_outside``.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

HIDDEN_NAMES = frozenset({"thumbs.db", "desktop.ini", "__macosx", ".ds_store"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Found:
    """A regular file to ingest."""

    source: Path
    """Where it is read from (through any symlinked folder)."""
    rel: str
    """Its path relative to the source folder, printable (see :func:`display_name`)."""
    dest: PurePosixPath
    """Its path relative to ``documents/`` in the room, after any renaming."""
    size: int


@dataclass(frozen=True)
class Problem:
    """Something the walk could not or would not take, or a renamed folder or file."""

    rel: str
    reason: str
    detail: str
    original: str = ""


def display_name(name: str) -> str:
    """A file name as text that is valid UTF-8, escaping bytes that were not (``caf\\xe9``)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def safe_name(name: str) -> str:
    """``name`` with control characters as ``_`` and invalid UTF-8 bytes as U+FFFD.

    Everything else (spaces, accents, CJK, punctuation) is kept as the file system gave it.
    """
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return _CONTROL.sub("_", text) or "_"


def _unique(name: str, taken: set[str]) -> str:
    if name.casefold() not in taken:
        return name
    stem, suffix = os.path.splitext(name)
    n = 2
    while f"{stem} ({n}){suffix}".casefold() in taken:
        n += 1
    return f"{stem} ({n}){suffix}"


def _is_hidden(name: str) -> bool:
    return name.startswith((".", "~$")) or name.casefold() in HIDDEN_NAMES


@dataclass
class Walk:
    """The result of :func:`walk`: files to ingest and problems to report."""

    files: list[Found] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


Key = tuple[int, int]
_Folder = tuple[Path, PurePosixPath, str, tuple[Key, ...]]


def walk(src: Path, follow_symlinks: bool = True, include_hidden: bool = False) -> Walk:
    """Find every file under ``src`` in sorted order, noting loops, links and odd names."""
    return _Walker(follow_symlinks, include_hidden, Path(src)).run(Path(src))


def inside(path: str | Path, root: str | Path) -> bool:
    """Whether ``path``, every link resolved, lies in the folder ``root`` (itself resolved)."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


class _Walker:
    def __init__(self, follow_symlinks: bool, include_hidden: bool, root: Path) -> None:
        self.follow = follow_symlinks
        self.hidden = include_hidden
        self.root = os.path.realpath(root)
        self.result = Walk()
        self.seen: set[Key] = set()

    def note(self, rel: str, reason: str, detail: str, original: str = "") -> None:
        self.result.problems.append(Problem(rel, reason, detail, original))

    def run(self, src: Path) -> Walk:
        root = os.stat(src)
        key = (root.st_dev, root.st_ino)
        self.seen.add(key)
        stack: list[_Folder] = [(src, PurePosixPath(), "", (key,))]
        while stack:
            stack.extend(reversed(self.scan(*stack.pop())))
        return self.result

    def scan(
        self, folder: Path, dest: PurePosixPath, rel: str, ancestors: tuple[Key, ...]
    ) -> list[_Folder]:
        """Take one folder's entries; return its subfolders to visit, in order."""
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.note(rel or ".", "unreadable", f"cannot list folder: {exc}")
            return []
        taken: set[str] = set()
        subdirs = []
        for entry in entries:
            name_rel = f"{rel}/{display_name(entry.name)}" if rel else display_name(entry.name)
            if not self.hidden and _is_hidden(entry.name):
                self.note(name_rel, "hidden", "hidden or system file")
                continue
            st = self.stat(entry, name_rel)
            if st is None:
                continue
            new_name = self.rename(entry.name, name_rel, taken)
            if stat.S_ISDIR(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if self.enter(key, name_rel, ancestors):
                    subdirs.append((Path(entry.path), dest / new_name, name_rel, (*ancestors, key)))
            elif stat.S_ISREG(st.st_mode):
                found = Found(Path(entry.path), name_rel, dest / new_name, st.st_size)
                self.result.files.append(found)
            else:
                self.note(name_rel, "unreadable", "not a regular file (device, pipe or socket)")
        return subdirs

    def rename(self, name: str, rel: str, taken: set[str]) -> str:
        new_name = _unique(safe_name(name), taken)
        taken.add(new_name.casefold())
        if new_name != name:
            detail = f"renamed to {new_name!r}: the name had control characters or invalid bytes"
            self.note(rel, "renamed", detail, display_name(name))
        return new_name

    def enter(self, key: Key, rel: str, ancestors: tuple[Key, ...]) -> bool:
        """Whether to walk into a folder: not a loop back to an ancestor, not seen before."""
        if key in ancestors:
            self.note(rel, "symlink_loop", "a symbolic link back to a folder that contains it")
            return False
        if key in self.seen:
            self.note(rel, "duplicate", "a folder already ingested through another path")
            return False
        self.seen.add(key)
        return True

    def stat(self, entry: os.DirEntry, rel: str) -> os.stat_result | None:
        """Stat an entry through links; note loops and broken or refused links."""
        if entry.is_symlink():
            if not self.follow:
                self.note(rel, "symlink", "symbolic link (not followed)")
                return None
            if not inside(entry.path, self.root):
                target = display_name(_readlink(entry.path))
                self.note(rel, "symlink_outside",
                          f"a symbolic link to {target!r}, outside the source folder (never "
                          "followed)")
                return None
        try:
            return entry.stat(follow_symlinks=True)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self.note(rel, "symlink_loop", "a symbolic link that resolves to itself")
            elif exc.errno == errno.ENOENT:
                self.note(rel, "unreadable", "broken symbolic link")
            else:
                self.note(rel, "unreadable", str(exc))
            return None


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"
